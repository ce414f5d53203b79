"""Group commit: the writes of many rooms share round trips, and none waits for another.

The Redis store sends its appends, seat updates and snapshots through one (each a script call).

One batch is in flight at a time. A submission that finds none leads: it is sent at once,
alone (no added latency). Submissions that arrive while a batch is in flight queue, and go
together as the next batch as soon as the batch before it has answered, so under load a batch
holds every append that arrived during the last round trip. Each submitter still waits for its
own outcome, and a room has at most one write in flight, so nothing about order or
acknowledgement changes; what a batch shares is the client's per-call path (for redis-py:
connection checkout, timeouts, a task per command; BENCHMARKS.md has the figures).

The sender is given, so this is testable with no Redis: ``send(batch)`` delivers one batch in
one round trip and returns one outcome per item (``None``: stored; a :class:`StoreError`: that
item only was refused, e.g. a wrong rev), or raises :class:`StoreError` when the batch failed as a
whole (connection lost, deadline): then each item fails, its outcome unknown like any lost
reply (a lone item with that very error, the items of a larger batch with one naming them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from server.store.errors import StoreError

__all__ = ["GroupCommit", "Pending", "Sender"]

P = TypeVar("P")


@dataclass(slots=True)
class Pending(Generic[P]):
    """One queued submission: what to call it in errors, what the sender needs, and the future
    its submitter awaits."""

    what: str
    payload: P
    reply: asyncio.Future[None]


Sender = Callable[[Sequence[Pending[P]]], Awaitable[Sequence[StoreError | None]]]
"""Delivers one batch in one round trip: one outcome per item, in order (see the module doc)."""


class GroupCommit(Generic[P]):
    """The queue of submissions and the one batch in flight, for one sender."""

    def __init__(self, send: Sender[P]) -> None:
        self._send_batch = send
        self._queued: list[Pending[P]] = []
        """Submissions waiting for the next batch."""
        self._flushes: set[asyncio.Task[None]] = set()
        self._flushing = False
        """A batch is in flight (the next submissions queue for the batch after it)."""
        self._closed = False
        self.batches = 0
        """How many batches were sent (with :attr:`items`: the batching at work)."""
        self.items = 0

    async def submit(self, what: str, payload: P) -> None:
        """Deliver ``payload`` in the next batch (now, if none is in flight); raise its error."""
        pending = Pending(what, payload, asyncio.get_running_loop().create_future())
        self._queued.append(pending)
        if not self._flushing:  # nothing in flight: this one leads, and goes now
            self._flushing = True
            try:
                await self._flush()
            except BaseException:  # cancelled: its own reply is not awaited any more
                if pending.reply.done() and not pending.reply.cancelled():
                    pending.reply.exception()  # (marks it retrieved)
                raise
        await pending.reply

    def close(self) -> None:
        """Start no new batch: what is queued when the batch in flight answers fails."""
        self._closed = True

    async def drain(self) -> None:
        """Wait for the batches on their way (they land and answer their submitters)."""
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)

    async def _flush(self) -> None:
        """Send what is queued; what queued meanwhile goes in the next batch, sent by a task
        (the leader goes back to its own work)."""
        batch, self._queued = self._queued, []
        try:
            await self._send(batch)
        finally:
            if self._queued and not self._closed:
                task = asyncio.get_running_loop().create_task(self._flush())
                self._flushes.add(task)
                task.add_done_callback(self._flushes.discard)
            else:
                self._flushing = False
                for item in self._queued:  # closed meanwhile
                    item.reply.set_exception(StoreError(f"{item.what}: the store is closed"))
                self._queued = []

    async def _send(self, batch: list[Pending[P]]) -> None:
        """One round trip for ``batch``; answer each item. Raises only if cancelled, after
        answering."""
        self.batches += 1
        self.items += len(batch)
        try:
            outcomes = await self._send_batch(batch)
        except StoreError as exc:  # the batch as a whole: each item's outcome is unknown
            for item in batch:
                if not item.reply.done():
                    if len(batch) == 1:
                        item.reply.set_exception(exc)
                    else:
                        item.reply.set_exception(StoreError(f"{item.what}: {exc}"))
            return
        except BaseException as exc:  # cancelled: nobody waits forever
            for item in batch:
                if not item.reply.done():
                    item.reply.set_exception(StoreError(f"{item.what}: not stored ({exc!r})"))
            raise
        for item, outcome in zip(batch, outcomes, strict=True):
            if item.reply.done():
                continue
            if outcome is None:
                item.reply.set_result(None)
            else:
                item.reply.set_exception(outcome)
