"""A choice's append carries fields of the room's metadata (a clock room's clocks) in the same
round trip: written with the choice by the append script, never by a refused append."""

from __future__ import annotations

import asyncio
import random

import pytest

from server.store import MemoryStore, RevisionError, Store
from server.store.redis import RedisStore
from tests.server.conftest import OpenStore
from tests.server.persistence.conftest import new_match, next_action, tiny_meta
from tests.services import RedisServer


@pytest.fixture(params=["redis", "memory"])
async def any_store(request: pytest.FixtureRequest, open_redis_store: OpenStore) -> Store:
    if request.param == "memory":
        return MemoryStore()
    return await open_redis_store(deadline=1.0)


async def _meta(store: Store, room: str) -> dict[str, object]:
    if isinstance(store, MemoryStore):
        return store.rooms[room]
    assert isinstance(store, RedisStore)
    record = await store.load_room(room)
    assert record is not None
    return record.meta


async def test_an_append_writes_its_meta_fields_with_the_choice(any_store: Store) -> None:
    await any_store.create_room("m1", tiny_meta("m1", seed=5))
    match, rng = new_match(), random.Random(1)
    action = next_action(match, 1, rng)
    clocks = {"remaining_ms": [29000, 30000, 30000], "running": None}
    await any_store.append("m1", action, {"clock_state": clocks})
    meta = await _meta(any_store, "m1")
    assert meta["clock_state"] == clocks and meta["seed"] == 5  # merged, the rest kept
    assert [a.rev for a in await any_store.actions_after("m1", 0)] == [1]


async def test_a_refused_append_writes_no_meta(store: RedisStore) -> None:
    await store.create_room("m2", tiny_meta("m2"))
    action = next_action(new_match(), 1, random.Random(2))
    with pytest.raises(RevisionError):
        await store.append("m2", type(action)(3, action.seat, action.choice), {"x": 1})
    assert "x" not in await _meta(store, "m2")


async def test_appends_committed_together_each_write_their_own_meta(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url, timeout=1.0, probe_interval=0.05)
    await store.start()
    try:
        rooms = [f"g{i}" for i in range(5)]
        for room in rooms:
            await store.create_room(room, tiny_meta(room))
        match, rng = new_match(), random.Random(3)
        action = next_action(match, 1, rng)
        before = store.append_batches  # (the creations went through the group commit too)
        await asyncio.gather(
            *(store.append(room, action, {"clock_state": {"n": i}}) for i, room in enumerate(rooms))
        )
        assert store.append_batches - before < len(rooms)  # (some went in one round trip)
        for i, room in enumerate(rooms):
            assert (await _meta(store, room))["clock_state"] == {"n": i}
    finally:
        await store.close()
