"""The spectators' fan-out: the writing half of a room's spectator feed (and a relay's).

The room's actor (:mod:`server.room`) carries out each :class:`~server.effects.Watch` effect of
its core through one :class:`Fanout` over the core's set of spectators
(:class:`server.spectators.Spectators`, which holds who watches and the delayed queue as data);
a relayed room (:mod:`server.relay`) has its own.

One encoded frame per revision, framed for WebSocket once, the same
bytes written to every spectator's transport (no per-socket encode nor frame build; the frame
and byte counters counted once per turn). An audience larger than :data:`FANOUT_AT_ONCE` is
written after the current callback, in turns of the event loop of about :data:`FANOUT_BUDGET`
seconds each: the seats' frames of the revision are already written (the room writes them
first), the room's task goes on (the acting seat's ``ack``, the next command) and other
connections are served between the turns; frames keep their order for every spectator. A slow
spectator costs only its own buffer (:mod:`server.limits`: dropped to resync, or closed).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable, Set
from typing import Any, Protocol

from server.connection import ws_frame
from server.metrics import Metrics

FANOUT_AT_ONCE = 256
"""An audience up to this size is written at once (see the module); a larger one in turns."""
FANOUT_BUDGET = 0.001
"""Seconds of writing per turn of the event loop for a large audience (checked every
:data:`FANOUT_STEP` sockets): a seat's ``act`` passes through a few turns (its frame read, the
store's answer, the room's task) before its ``ack``, each waiting for at most one of these."""
FANOUT_STEP = 32


class Viewer(Protocol):
    """What a fan-out writes to: a :class:`~server.connection.Connection` (a protocol, not the
    class, so that a compiled fan-out takes a test's stand-in too)."""

    @property
    def metrics(self) -> Metrics: ...

    def send_framed(self, framed: bytes) -> bool: ...


class Fanout:
    """Writes frames to ``members`` (a live set): at once when it is small, else in turns of
    about :data:`FANOUT_BUDGET` seconds. A frame is framed for WebSocket once and the same bytes
    written to every socket (:meth:`~server.connection.Connection.send_framed`)."""

    def __init__(self, members: Set[Viewer]) -> None:
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


def _count(conns: Iterable[Viewer], written: int, size: int) -> None:
    """The metrics of ``written`` frames of ``size`` bytes (every connection shares them)."""
    if written:
        metrics = next(iter(conns)).metrics
        metrics.frames_out.inc(written)
        metrics.bytes_out.inc(written * size)
