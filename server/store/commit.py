"""Group commit: the writes of many rooms share round trips, and none waits for another.

The Redis store sends its appends, seat updates and snapshots through one (each a script call).

A submission that finds no batch in flight leads: it is sent at once, alone (no added
latency). Submissions that arrive while batches are in flight queue for one loop turn and go
together as the next batch, sent at the next turn without waiting for those in flight (the
sender pipelines them: :mod:`server.store.lane`), so under load a batch holds every write of
one loop turn and waits for no other round trip. Each submitter still waits for its own outcome,
and a room has at most one write in flight, so nothing about order or acknowledgement changes;
what a batch shares is the client's per-call path (for redis-py: connection checkout, timeouts,
a task per command; BENCHMARKS.md has the figures).

The sender is given, so this is testable with no Redis: ``send(batch)`` delivers one batch in
one round trip and returns one outcome per item (``None``: stored; a :class:`StoreError`: that
item only was refused, e.g. a wrong rev), or raises :class:`StoreError` when the batch failed as a
whole (connection lost, deadline): then each item fails, its outcome unknown like any lost
reply (a lone item with that very error, the items of a larger batch with one naming them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from server.store.errors import StoreError

__all__ = ["GroupCommit", "Pending", "Sender"]

P = TypeVar("P")


class Pending(Generic[P]):
    """One queued submission: what to call it in errors, what the sender needs, and the future
    its submitter awaits."""

    __slots__ = ("payload", "reply", "what")

    def __init__(self, what: str, payload: P, reply: asyncio.Future[None]) -> None:
        self.what = what
        self.payload = payload
        self.reply = reply


Sender = Callable[[Sequence[Pending[P]]], Awaitable[Sequence[StoreError | None]]]
"""Delivers one batch in one round trip: one outcome per item, in order (see the module doc)."""


class GroupCommit(Generic[P]):
    """The queue of submissions and the batches in flight, for one sender."""

    def __init__(self, send: Sender[P]) -> None:
        self._send_batch = send
        self._queued: list[Pending[P]] = []
        """Submissions waiting for the next batch."""
        self._flushes: set[asyncio.Task[None]] = set()
        self._forming = False
        """A task will send what is queued at its first step (the next loop turn)."""
        self._in_flight = 0
        """Batches sent and not answered yet."""
        self._closed = False
        self.batches = 0
        """How many batches were sent (with :attr:`items`: the batching at work)."""
        self.items = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop of the first submission, kept: on Python 3.11 asking for the running loop
        costs a ``getpid()`` system call, once per write."""

    async def submit(self, what: str, payload: P) -> None:
        """Deliver ``payload`` now if nothing is in flight, else in the batch of the next loop
        turn; raise its error."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        pending = Pending(what, payload, loop.create_future())
        self._queued.append(pending)
        if not self._in_flight and not self._forming:  # nothing in flight: it leads, now
            batch, self._queued = self._queued, []
            try:
                await self._send(batch)
            except BaseException:  # cancelled: its own reply is not awaited any more
                if pending.reply.done() and not pending.reply.cancelled():
                    pending.reply.exception()  # (marks it retrieved)
                raise
        elif not self._forming:  # the first to queue: its batch goes at the next loop turn
            self._forming = True
            task = loop.create_task(self._flush())
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)
        await pending.reply

    def close(self) -> None:
        """Start no new batch: what is queued fails at the next loop turn."""
        self._closed = True

    async def drain(self) -> None:
        """Wait for the batches on their way (they land and answer their submitters)."""
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)

    async def _flush(self) -> None:
        """Send what queued during the loop turn before (the module doc), without waiting for
        the batches in flight."""
        self._forming = False
        batch, self._queued = self._queued, []
        if self._closed:
            for item in batch:
                item.reply.set_exception(StoreError(f"{item.what}: the store is closed"))
            return
        if batch:
            await self._send(batch)

    async def _send(self, batch: list[Pending[P]]) -> None:
        """One round trip for ``batch``; answer each item. Raises only if cancelled, after
        answering."""
        self.batches += 1
        self.items += len(batch)
        self._in_flight += 1
        try:
            try:
                outcomes = await self._send_batch(batch)
            finally:
                self._in_flight -= 1
        except StoreError as exc:  # the batch as a whole: each item's outcome is unknown
            for item in batch:
                if not item.reply.done():
                    if len(batch) == 1:
                        item.reply.set_exception(exc)
                    else:
                        item.reply.set_exception(StoreError(f"{item.what}: {exc}"))
            return
        except BaseException as stopped:  # cancelled: nobody waits forever
            for item in batch:
                if not item.reply.done():
                    item.reply.set_exception(StoreError(f"{item.what}: not stored ({stopped!r})"))
            raise
        if len(outcomes) != len(batch):  # (a sender's mistake: nobody gets another's outcome)
            wrong = f"{len(outcomes)} outcomes for a batch of {len(batch)}"
            outcomes = [StoreError(f"{item.what}: {wrong}") for item in batch]
        for i in range(len(batch)):  # (not zip(..., strict=True): a call of the builtin)
            item, outcome = batch[i], outcomes[i]
            if item.reply.done():
                continue
            if outcome is None:
                item.reply.set_result(None)
            else:
                item.reply.set_exception(outcome)
