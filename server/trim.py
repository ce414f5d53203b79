"""Giving memory back to the system after many rooms closed (issue 14: RSS must come back).

Rooms are freed by reference counting as soon as they close (no timer or cycle keeps them,
see :meth:`server.room.Room._later`), but the C allocator keeps the freed memory for reuse:
glibc's ``malloc`` returns the top of its heap only, so the large blocks of closed rooms (dict
tables, list buffers, encoded frames) stay resident. :class:`Trimmer` calls glibc's
``malloc_trim(0)``, which gives back every free page of every heap, after rooms closed: at most
once per ``interval`` seconds, and once more after the last close of a burst, in a thread (ctypes
releases the GIL, so the event loop never waits for it). Elsewhere than glibc it does nothing.

When few rooms are left (at most :data:`COLLECT_BELOW_ROOMS`), a full collection of the garbage
collector comes first: it frees what cycles the burst left (redis-py's connections that were
closed) and Python's free lists of tuples, lists, dicts and floats, whose blocks otherwise pin
the allocator's arenas of the closed rooms. With many live rooms a full collection would stall
every room (70 to 130 ms with 200 Ishtar rooms, see :mod:`server.main`; a few ms with 20), so it
is skipped.
Measured by ``bench/memory.py`` (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import time
from collections.abc import Callable

TRIM_INTERVAL = 10.0
COLLECT_BELOW_ROOMS = 20


def _malloc_trim() -> Callable[[], object] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


class Trimmer:
    def __init__(self, rooms: Callable[[], int], interval: float = TRIM_INTERVAL) -> None:
        self.rooms = rooms
        """How many rooms are live now."""
        self.interval = interval
        self.closed = 0
        """Rooms closed since the last trim."""
        self.trims = 0
        self._last = float("-inf")
        self._trim = _malloc_trim()
        self._running: asyncio.Future[object] | None = None
        self._pending: asyncio.TimerHandle | None = None

    def room_closed(self) -> None:
        self.closed += 1
        if self._trim is None or self._pending is not None:
            return
        # (a second at least: the rooms of a burst close together, one trim serves them all)
        wait = max(1.0, self._last + self.interval - time.monotonic())
        self._pending = asyncio.get_running_loop().call_later(wait, self._start)

    def _start(self) -> None:
        self._pending = None
        if self._trim is None or (self._running is not None and not self._running.done()):
            return
        self.closed = 0
        self.trims += 1
        if self.rooms() <= COLLECT_BELOW_ROOMS:
            gc.collect()
        self._last = time.monotonic()
        self._running = asyncio.get_running_loop().run_in_executor(None, self._trim)

    def stop(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
