"""The ``freeze`` policy of the cyclic garbage collector (:mod:`server.collector`), on this
process's own collector: every test puts it back as it was."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from server.collector import Collector
from server.config import parse_args
from server.main import start_collector


class Node:
    """Something a weak reference can follow, to put in a cycle."""

    def __init__(self) -> None:
        self.other: Any = None


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the automatic or explicit collections that run during the test."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(int(info["generation"]))

    was_enabled = gc.isenabled()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def garbage_cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_past_the_threshold_new_objects_are_frozen_not_collected(collections: list[int]) -> None:
    collector = Collector(young=1_000)
    collector.start()
    assert not gc.isenabled()
    frozen = gc.get_freeze_count()
    kept = [[i] for i in range(5_000)]  # (automatic collections off: none runs meanwhile)
    assert collections == []
    assert collector.check() is True
    assert gc.get_freeze_count() >= frozen + len(kept)
    assert gc.get_count()[0] == 0
    assert collector.check() is False  # (nothing new since)
    assert collections == [] and collector.fulls == 0


def test_a_frozen_cycle_waits_for_the_full_collection_the_growth_triggers(
    collections: list[int],
) -> None:
    collector = Collector(young=100, growth=1.0, floor=0)
    collector.start()
    cycle = garbage_cycle()
    kept = [[i] for i in range(200)]
    assert collector.check() is True
    assert cycle() is not None, "a frozen cycle is not collected before the growth"
    assert collector.fulls == 0 and collections == []
    kept += [[i] for i in range(collector.base + 1_000)]  # (the objects doubled)
    assert collector.check() is True
    assert collector.fulls == 1 and collections == [2]
    assert cycle() is None
    assert collector.base >= len(kept) and collector.grown == 0  # (what is alive: frozen again)
    assert not gc.isenabled()


def test_the_collector_looks_from_the_event_loop_until_cancelled(
    collections: list[int],
) -> None:
    async def main() -> None:
        collector = Collector(young=100)
        collector.start()
        task = asyncio.get_running_loop().create_task(collector.run(every=0.001))
        kept = [[i] for i in range(1_000)]
        for _ in range(200):
            await asyncio.sleep(0.001)
            if collector.freezes:
                break
        task.cancel()
        assert collector.freezes >= 1 and len(kept) == 1_000

    asyncio.run(main())


def test_the_server_freezes_by_default_and_collects_when_told(collections: list[int]) -> None:
    async def main(argv: list[str]) -> bool:
        task = start_collector(parse_args(argv, env={}))
        if task is not None:
            task.cancel()
        return task is not None

    threshold = gc.get_threshold()
    try:
        assert asyncio.run(main([])) is True
        assert not gc.isenabled()
        gc.enable()
        assert asyncio.run(main(["--gc", "collect", "--gc-young", "4321"])) is False
        assert gc.isenabled() and gc.get_threshold()[0] == 4321
    finally:
        gc.set_threshold(*threshold)


def test_no_full_collection_below_the_floor_however_the_objects_grew(
    collections: list[int],
) -> None:
    collector = Collector(young=100)
    collector.start()
    collector.floor = collector.base * 10
    kept = [[i] for i in range(collector.base * 3)]  # (doubled, and more)
    assert collector.check() is True
    assert collector.fulls == 0 and collections == [] and len(kept) > 0
    assert collector.grown > collector.base * collector.growth  # (counted: grown past doubling)
