"""Giving memory back to the system after many rooms closed (issue 14: RSS must come back).

Rooms are freed by reference counting as soon as they close (no timer keeps them, see
:mod:`server.inbox`, and their parts cut their reference cycles when the room's task ends,
:meth:`server.core.RoomCore.detach`), but the allocators keep the freed memory for reuse:

- glibc's ``malloc`` returns the top of its heap only, so the large blocks of closed rooms (dict
  tables, list buffers, encoded frames) stay resident. ``malloc_trim(0)`` gives back every free
  page of every heap.
- Python's small-object allocator (pymalloc) returns a 1 MiB arena only once every block in it is
  free, so one long-lived block made during a burst of rooms keeps that arena resident after the
  burst's rooms are gone, and a burst leaves its objects scattered over all of its arenas.

:class:`Trimmer` acts after rooms closed: at most once per ``interval`` seconds, and once more
after the last close of a burst. ``malloc_trim`` runs in a thread (ctypes releases the GIL, so
the event loop never waits for it); elsewhere than glibc it is skipped.

When few rooms are left (at most :data:`COLLECT_BELOW_ROOMS`), a *settle* pass comes first, on
the loop (a few ms; with many live rooms a full collection would stall every room, 70 to 130 ms
with 200 Ishtar rooms, see :mod:`server.main`, so it waits for the burst to be over):

1. a full collection of the garbage collector: it frees what cycles the burst left and Python's
   own free lists (tuples, lists, dicts, floats, contexts); with the ``freeze`` policy
   (:mod:`server.collector`) the policy's own, which unfreezes everything first;
2. :func:`rotate_free_lists`: the free lists the collector does not clear (asyncio's
   ``FutureIter``, uvloop's ``Handle`` and ``TimerHandle``, 250 to 255 objects each) hold objects
   freed last, in the burst's arenas: each is swapped for a new object, allocated now where the
   allocator puts it (in a pool already in use), and the burst's go back to the allocator;
3. ``sys._clear_type_cache()``: CPython's type attribute cache keeps a strong reference to the
   name of each of its 4,096 entries, and names made at run time (``utcoffset`` from datetime's C
   code, at every log line) are fresh strings, one or two per arena of the burst.

The settle pass runs again :data:`FOLLOW_UP` seconds later, once, for what the store let go of
meanwhile (the pool's idle connections of the burst, closed every 5 s). What each step gives back
is measured by ``bench/memory.py`` (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import ctypes.util
import gc
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

from server import logging as oasis_logging

TRIM_INTERVAL = 10.0
COLLECT_BELOW_ROOMS = 20
FOLLOW_UP = 6.0
"""Seconds from a settle pass to its one repetition (longer than the store's pool trim, 5 s)."""
FREE_LIST_SIZE = 256
"""At least the length of every free list :func:`rotate_free_lists` turns over (CPython 3.11's
``FutureIter`` list holds 255, uvloop's handle lists 250)."""


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


def _nothing() -> None:
    pass


PRELOADED_ALLOCATORS = ("jemalloc", "mimalloc", "tcmalloc")
"""C allocators an operator may ``LD_PRELOAD``, found by name among the process's mappings."""


def allocator(maps: str | None = None, environ: dict[str, str] | None = None) -> dict[str, str]:
    """What allocates the server's memory, as an operator needs to see it at start (one log
    line, ``server.app``): ``python`` is ``pymalloc`` (Python's small-object allocator) or
    ``malloc`` (every object from the C allocator, ``PYTHONMALLOC=malloc``), with ``+debug``
    when the debug hooks are on; ``c`` is the C allocator (``glibc 2.36``, or a preloaded one);
    ``tunables`` the ``GLIBC_TUNABLES`` it runs with, if any.

    Measured, not taken from the environment: pymalloc counts the blocks it holds
    (``sys.getallocatedblocks``) and every other allocator counts 0, and a preloaded allocator
    is mapped into the process. (``maps`` and ``environ`` stand in for ``/proc/self/maps`` and
    ``os.environ`` in tests.)"""
    env = os.environ if environ is None else environ
    python = "pymalloc" if sys.getallocatedblocks() > 0 else "malloc"
    if sys.flags.dev_mode or env.get("PYTHONMALLOC", "").endswith("_debug"):
        python += "+debug"
    if maps is None:
        try:
            with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
                maps = f.read()
        except OSError:
            maps = ""
    c = next((name for name in PRELOADED_ALLOCATORS if f"lib{name}" in maps), None)
    if c is None:
        libc, version = platform.libc_ver()
        c = f"{libc} {version}".strip() or "unknown"
    found = {"python": python, "c": c}
    if env.get("GLIBC_TUNABLES"):
        found["tunables"] = env["GLIBC_TUNABLES"]
    return found


POOL_SIZE = 16384
POOL_HEADER = 48
"""pymalloc's pools (CPython 3.10 and later, 64-bit): 16 KiB, aligned, their first block 48
bytes in. Only :func:`_turn_over`'s placement uses them: were they other, it would place worse,
never wrongly."""
FILL_LIMIT = 50_000
"""At most this many filler blocks per kind (a few ms)."""


def _turn_over(make: Callable[[], object], size: int) -> tuple[list[object], list[object]]:
    """``size`` objects from ``make`` taken off their free list, and ``size`` new ones placed
    in pools of the arenas in most use: ``(old, placed)``.

    pymalloc serves a block from a partly used pool of its size first, and after a burst those
    are the burst's (the pools that hold the free list's objects among them). So holes of that
    size are filled first with filler (bytes objects of the same block size) until the
    allocator opens a pool, which it takes from the arena with the fewest free pools; the
    placed objects come after. The filler is returned with the old ones, to be freed."""
    old = [make() for _ in range(size)]
    block = -(-sys.getsizeof(old[-1]) // 16) * 16
    # (larger objects are not pymalloc's; without pymalloc, PYTHONMALLOC=malloc, it counts 0)
    if block <= 512 and sys.getallocatedblocks() > 0:
        length = block - sys.getsizeof(b"")
        for _ in range(FILL_LIMIT):
            filler = bytes(length)
            old.append(filler)
            if id(filler) % POOL_SIZE == POOL_HEADER:  # a pool just opened for this size
                break
    return old, [make() for _ in range(size)]


async def rotate_free_lists(size: int = FREE_LIST_SIZE) -> int:
    """Replace the objects of the C free lists the garbage collector leaves alone by new ones;
    return how many objects it made (filler included).

    Per kind, :func:`_turn_over` takes ``size`` objects (the free list's first: the objects
    freed last, during the burst) and places ``size`` new ones. The placed ones are dropped
    first: they fill the free list again; the old ones find it full and go back to the
    allocator, which can then release their arena. Handles are made cancelled, so no callback
    runs; the loop lets go of them on its next iteration (uvloop's timers a little later, once
    libuv closed them), and each kind is dropped only when this function holds the last
    references."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    kinds = [_turn_over(future.__await__, size)]
    if type(loop).__module__.startswith("uvloop"):  # (asyncio's handles have no free list)
        context = contextvars.Context()

        def handle() -> object:
            made = loop.call_soon(_nothing, context=context)
            made.cancel()
            return made

        def timer() -> object:
            made = loop.call_later(3600.0, _nothing, context=context)
            made.cancel()
            return made

        kinds += [_turn_over(handle, size), _turn_over(timer, size)]
        for _ in range(100):  # (one or two iterations)
            if all(sys.getrefcount(placed[-1]) <= 2 for _, placed in kinds):
                break
            await asyncio.sleep(0)
    made = sum(len(old) + len(placed) for old, placed in kinds)
    for _, placed in kinds:
        placed.clear()
    for old, _ in kinds:
        old.clear()
    future.cancel()
    return made


class Trimmer:
    def __init__(self, rooms: Callable[[], int], interval: float = TRIM_INTERVAL) -> None:
        self.rooms = rooms
        """How many rooms are live now."""
        self.interval = interval
        self.closed = 0
        """Rooms closed since the last trim."""
        self.trims = 0
        self.settles = 0
        """Settle passes run (see the module docstring)."""
        self._last = float("-inf")
        self._trim = _malloc_trim()
        self._running: asyncio.Future[Any] | None = None
        self._pending: asyncio.TimerHandle | None = None
        self._followed = False
        """The last settle pass has been repeated (no room closed since)."""
        self._following = False
        """``_pending`` is that repetition."""
        self.log = oasis_logging.get(component="trim")
        self.collect: Callable[[], object] = gc.collect
        """The settle pass's full collection: with the ``freeze`` policy, the policy's own
        (:meth:`server.collector.Collector.full`), which sees the frozen objects too."""

    def room_closed(self) -> None:
        self.closed += 1
        self._followed = False
        if self._pending is not None and not self._following:
            return
        if self._pending is not None:  # the repetition waits for this close's own pass
            self._pending.cancel()
        self._following = False
        # (a second at least: the rooms of a burst close together, one trim serves them all)
        wait = max(1.0, self._last + self.interval - time.monotonic())
        self._pending = asyncio.get_running_loop().call_later(wait, self._start)

    def _start(self) -> None:
        self._pending = None
        self._following = False
        loop = asyncio.get_running_loop()
        if self._running is not None and not self._running.done():
            # (a trim of a large heap takes a while: the closes since get theirs after it)
            self._pending = loop.call_later(1.0, self._start)
            return
        self.closed = 0
        self.trims += 1
        self._last = time.monotonic()
        if self.rooms() <= COLLECT_BELOW_ROOMS:
            self._running = loop.create_task(self._settle())
        elif self._trim is not None:
            self._running = loop.run_in_executor(None, self._trim)

    async def _settle(self) -> None:
        started = time.perf_counter()
        self.collect()
        made = await rotate_free_lists()
        sys._clear_type_cache()
        self.settles += 1
        self.log.info(
            "memory_settled", took_ms=round(1000 * (time.perf_counter() - started), 1), made=made
        )
        if self._trim is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._trim)
        if not self._followed and self._pending is None:
            self._followed = self._following = True
            self._pending = asyncio.get_running_loop().call_later(FOLLOW_UP, self._start)

    def stop(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        self._following = False
        if self._running is not None and not self._running.done():
            self._running.cancel()
