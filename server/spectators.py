"""The spectators of one room and their feed, live or delayed by ``spectator_delay`` seconds.

With a delay, every spectator frame (patches, and chat said by seats) waits in a queue released
by the event loop's timer; the feed keeps the delayed spectator view up to date by applying the
released ops, so a newcomer, a ``sync`` or a resume gets the view as of the latest revision that
is at least the delay old, never a newer one. Only one timer is armed at a time: when the queue
becomes non-empty, then re-armed by :meth:`SpectatorFeed._release` while frames remain, so the
loop's clock and :func:`time.monotonic` can never disagree into a stuck queue.

Fan-out (:class:`Fanout`): one encoded frame per revision, framed for WebSocket once, the same
bytes written to every spectator's transport (no per-socket encode nor frame build; the frame
and byte counters counted once per turn). An audience larger than :data:`FANOUT_AT_ONCE` is
written after the current callback, in turns of the event loop of about :data:`FANOUT_BUDGET`
seconds each: the seats' frames of the revision are already written (the room writes them
first), the room's task goes on (the acting seat's ``ack``, the next command) and other
connections are served between the turns; frames keep their order for every spectator. A slow
spectator costs only its own buffer (:mod:`server.limits`: dropped to resync, or closed).

Quotas: a room takes at most ``spectators_per_room`` spectators and the node
``spectators_per_node`` (:mod:`server.quotas`); the feed counts its members in the node's
tally as they come and go, and gives back the ones left when the room goes (:meth:`release`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from protocol.patch import apply
from server.connection import Connection, ws_frame
from server.quotas import Quotas
from server.views import Revision

NODE = ""
"""The one key of the node-wide spectator tally."""
FANOUT_AT_ONCE = 256
"""An audience up to this size is written at once (see the module); a larger one in turns."""
FANOUT_BUDGET = 0.001
"""Seconds of writing per turn of the event loop for a large audience (checked every
:data:`FANOUT_STEP` sockets): a seat's ``act`` passes through a few turns (its frame read, the
store's answer, the room's task) before its ``ack``, each waiting for at most one of these."""
FANOUT_STEP = 32


class Fanout:
    """Writes frames to ``members`` (a live set): at once when it is small, else in turns of
    about :data:`FANOUT_BUDGET` seconds. A frame is framed for WebSocket once and the same bytes
    written to every socket (:meth:`~server.connection.Connection.send_framed`)."""

    def __init__(self, members: set[Connection]) -> None:
        self.members = members
        self._queue: deque[list[Any]] = deque()
        """[framed frame, its size, the members when it was sent, how many were written]"""
        self.turns = 0
        """Loop turns spent writing large audiences (a figure for the benchmarks)."""

    def send(self, data: bytes) -> None:
        members = self.members
        if not members:
            return
        framed = ws_frame(data)
        if not self._queue and len(members) <= FANOUT_AT_ONCE:
            _count(members, sum(1 for conn in members if conn.send_framed(framed)), len(data))
            return
        if not self._queue:
            asyncio.get_running_loop().call_soon(self._drain)
        self._queue.append([framed, len(data), list(members), 0])

    def _drain(self) -> None:
        self.turns += 1
        members = self.members
        clock = time.perf_counter
        deadline = clock() + FANOUT_BUDGET
        queue = self._queue
        while queue:
            item = queue[0]
            framed, size, conns, done = item
            total = len(conns)
            written = 0
            while done < total:
                end = min(total, done + FANOUT_STEP)
                for conn in conns[done:end]:
                    if conn in members and conn.send_framed(framed):  # (not one that left)
                        written += 1
                done = end
                if clock() >= deadline:
                    break
            _count(conns, written, size)
            if done < total:
                item[3] = done
                break
            queue.popleft()
            if clock() >= deadline:
                break
        if queue:
            asyncio.get_running_loop().call_soon(self._drain)

    @property
    def backlog(self) -> int:
        """Frames not yet written to every member."""
        return len(self._queue)


def _count(conns: Iterable[Connection], written: int, size: int) -> None:
    """The metrics of ``written`` frames of ``size`` bytes (every connection shares them)."""
    if written:
        metrics = next(iter(conns)).metrics
        metrics.frames_out.inc(written)
        metrics.bytes_out.inc(written * size)


@dataclass(frozen=True, slots=True)
class _Delayed:
    due: float
    frame: bytes
    revision: Revision | None


class SpectatorFeed:
    """The room's spectators; with a delay, the frames wait and the delayed view is kept.

    ``view``, ``rev``, ``view_hash``: the spectators' view now (used only with a delay; the
    room passes an empty one without, so that no view is computed for it)."""

    def __init__(
        self,
        delay: float,
        view: dict[str, Any],
        view_hash: str,
        rev: int = 0,
        quotas: Quotas | None = None,
    ) -> None:
        self.delay = delay
        self.quotas = quotas
        self.members: set[Connection] = set()
        self.fanout = Fanout(self.members)
        self._pending: deque[_Delayed] = deque()
        self._doc = view
        self._rev = rev
        self._hash = view_hash
        self.closed = False

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[Connection]:
        return iter(self.members)

    def __contains__(self, conn: object) -> bool:
        return conn in self.members

    def add(self, conn: Connection) -> None:
        """A new spectator, or ``quota_exceeded`` (``spectators_per_room`` or ``_per_node``)."""
        if conn in self.members:
            return
        q = self.quotas
        if q is not None:
            if len(self.members) >= q.spectators_per_room:
                raise q.refuse(
                    "spectators_per_room", f"at most {q.spectators_per_room} spectators per room"
                )
            q.spectators.acquire(NODE)
        self.members.add(conn)

    def discard(self, conn: Connection) -> None:
        if conn in self.members:
            self.members.discard(conn)
            if self.quotas is not None:
                self.quotas.spectators.release(NODE)

    def release(self) -> None:
        """The room goes: its spectators leave the node's tally (idempotent)."""
        for conn in list(self.members):
            self.discard(conn)

    @property
    def delayed(self) -> bool:
        return self.delay > 0

    def delayed_view(self) -> tuple[dict[str, Any], int, str]:
        """The delayed spectator view, its revision and its hash."""
        return self._doc, self._rev, self._hash

    def send(self, frame: bytes, revision: Revision | None) -> None:
        """Send to every spectator now, or after the delay (``revision``: the patch's data)."""
        if not self.delayed:
            self.fanout.send(frame)
            return
        if not self._pending:
            asyncio.get_running_loop().call_later(self.delay, self._release)
        self._pending.append(_Delayed(time.monotonic() + self.delay, frame, revision))

    def _release(self) -> None:
        now = time.monotonic()
        while self._pending and self._pending[0].due <= now:
            item = self._pending.popleft()
            if item.revision is not None:
                self._doc = apply(self._doc, item.revision.ops())
                self._rev = item.revision.rev
                self._hash = item.revision.spectator_hash
            self.fanout.send(item.frame)
        if self._pending and not self.closed:
            wait = max(0.001, self._pending[0].due - now)
            asyncio.get_running_loop().call_later(wait, self._release)
