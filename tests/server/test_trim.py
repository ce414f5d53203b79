"""server/trim.py: memory handed back after rooms close, once per burst, never on the loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from server.trim import FREE_LIST_SIZE, Trimmer, allocator, rotate_free_lists


async def test_a_burst_of_closes_is_trimmed_once_after_it_and_again_after_the_next() -> None:
    trimmer = Trimmer(lambda: 0, interval=0.01)
    for _ in range(50):
        trimmer.room_closed()
    assert trimmer.trims == 0  # (a second later: one trim serves the whole burst)
    async with asyncio.timeout(5):
        while trimmer.trims == 0:  # noqa: ASYNC110 (a timer of the trimmer's own)
            await asyncio.sleep(0.05)
        assert trimmer._running is not None
        await trimmer._running  # the settle pass ran, then malloc_trim in a thread
    assert (trimmer.trims, trimmer.closed) == (1, 0)
    trimmer.room_closed()
    async with asyncio.timeout(5):
        while trimmer.trims == 1:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    trimmer.stop()


def _nothing() -> None:
    pass


async def _rotation_check() -> None:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()
    # An object freed last is the head of its free list: the next one made is that object.
    it = future.__await__()
    freed = id(it)
    del it
    it = future.__await__()
    assert id(it) == freed  # (the premise: asyncio keeps a free list of FutureIter)
    del it
    uvloop = type(loop).__module__.startswith("uvloop")
    handle = loop.call_soon(_nothing)
    handle.cancel()
    await asyncio.sleep(0)  # the loop lets go of the cancelled handle
    freed_handle = id(handle)
    del handle
    if uvloop:  # (the premise for uvloop's handles)
        handle = loop.call_soon(_nothing)
        assert id(handle) == freed_handle
        handle.cancel()
        await asyncio.sleep(0)
        del handle

    await rotate_free_lists()

    # Every object now on the free lists was made by the rotation: the old head is not one.
    iters = [future.__await__() for _ in range(FREE_LIST_SIZE - 1)]
    assert freed not in {id(i) for i in iters}
    handles = [loop.call_soon(_nothing) for _ in range(FREE_LIST_SIZE - 6)]
    if uvloop:
        assert freed_handle not in {id(h) for h in handles}
    del iters
    for h in handles:
        h.cancel()
    # The loop still runs callbacks, timers and futures.
    done = loop.create_future()
    loop.call_soon(done.set_result, 1)
    assert await done == 1
    await asyncio.sleep(0.01)
    future.set_result(7)
    assert await future == 7


async def test_rotation_swaps_the_free_lists_objects_for_new_ones_and_the_loop_runs_on() -> None:
    await _rotation_check()


def test_rotation_on_uvloop_swaps_its_handles_too() -> None:
    uvloop = pytest.importorskip("uvloop")
    uvloop.run(_rotation_check())


async def test_a_settle_pass_runs_when_few_rooms_are_left_and_once_more_later() -> None:
    rooms = [100]
    trimmer = Trimmer(lambda: rooms[0], interval=0.01)
    trimmer.room_closed()
    async with asyncio.timeout(5):
        while trimmer.trims == 0:  # noqa: ASYNC110 (a timer of the trimmer's own)
            await asyncio.sleep(0.05)
    assert trimmer.settles == 0  # many rooms live: no full collection on the loop
    rooms[0] = 0
    trimmer.room_closed()
    async with asyncio.timeout(5):
        while trimmer.settles == 0:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        assert trimmer._running is not None
        await trimmer._running
    assert trimmer._pending is not None  # the one repetition, FOLLOW_UP seconds later
    trimmer.stop()
    assert trimmer._pending is None


async def test_closes_during_a_trim_under_way_get_a_trim_after_it() -> None:
    trimmer = Trimmer(lambda: 0, interval=0.01)
    under_way: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    trimmer._running = under_way  # a trim of a large heap, still running
    trimmer._start()
    assert trimmer.trims == 0
    assert trimmer._pending is not None  # not dropped: again once that one is done
    under_way.set_result(None)
    async with asyncio.timeout(5):
        while trimmer.settles == 0:  # noqa: ASYNC110 (a timer of the trimmer's own)
            await asyncio.sleep(0.05)
    trimmer.stop()


def _allocator_of(env: dict[str, str]) -> dict[str, str]:
    """What ``server.trim.allocator`` reports in a fresh interpreter started with ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "GLIBC_TUNABLES")}
    out = subprocess.run(
        [sys.executable, "-c", "import json, server.trim as t; print(json.dumps(t.allocator()))"],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    found: dict[str, str] = json.loads(out)
    return found


def test_the_allocator_is_measured_in_the_process_that_runs() -> None:
    assert _allocator_of({"PYTHONMALLOC": "pymalloc"})["python"] == "pymalloc"
    glibc = _allocator_of(
        {"PYTHONMALLOC": "malloc", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=100"}
    )
    assert glibc["python"] == "malloc"
    assert glibc["tunables"] == "glibc.malloc.tcache_count=100"
    assert _allocator_of({"PYTHONMALLOC": "malloc_debug"})["python"] == "malloc+debug"


def test_a_preloaded_allocator_is_named_from_the_mappings() -> None:
    maps = "7f00-7f10 r-xp 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
    assert allocator(maps=maps, environ={})["c"] == "jemalloc"
    assert "tunables" not in allocator(maps="", environ={})
