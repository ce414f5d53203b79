"""Seat updates and snapshots share the appends' group commit (issue 21, the paced tail): many
rooms' writes of different kinds in one round trip, each outcome to its own room, on a real
redis-server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.store import Action, RoomGoneError
from server.store.redis import RedisStore
from tests.server.conftest import OpenStore
from tests.services import RedisServer


def meta(room: str) -> dict[str, Any]:
    return {
        "room": room,
        "game": "tiny",
        "players": 2,
        "options": {},
        "public": True,
        "state": "open",
        "rev": 0,
        "seats": [],
        "seed": 7,
    }


@pytest.fixture
async def store(open_redis_store: OpenStore) -> RedisStore:
    return await open_redis_store(deadline=0.5)


async def test_appends_seat_updates_and_snapshots_of_many_rooms_share_a_round_trip(
    store: RedisStore,
) -> None:
    rooms = [f"mix-{i}" for i in range(9)]
    for room in rooms[:8]:  # mix-8 is not live
        await store.create_room(room, meta(room))
    before = store.append_batches
    calls = [
        *(store.append(room, Action(1, 0, {"kind": "draw"})) for room in rooms[:3]),
        *(store.update_room(room, {"state": "playing", "rev": 0}) for room in rooms[3:6]),
        store.snapshot(rooms[6], 0, {"deck": [1, 2]}),
        store.update_room(rooms[7], {"state": "playing"}),
        store.update_room(rooms[8], {"state": "playing"}),
    ]
    results = await asyncio.gather(*calls, return_exceptions=True)
    # The first call leads alone, every other one waits for it and goes in the next batch.
    assert store.append_batches == before + 2
    assert all(r is None for r in results[:8]), results
    assert isinstance(results[8], RoomGoneError) and "mix-8" in str(results[8])
    assert store.ready()
    for room in rooms[:3]:
        record = await store.load_room(room)
        assert record is not None and [a.rev for a in record.actions] == [1]
    for room in rooms[3:6]:
        record = await store.load_room(room)
        assert record is not None and record.meta["state"] == "playing"
    assert await store.load_room(rooms[8]) is None


async def test_a_batch_of_several_scripts_goes_on_after_redis_forgets_them(
    store: RedisStore, redis_server: RedisServer
) -> None:
    """A restarted Redis has no scripts: each refused script of a mixed batch is loaded and its
    calls sent again."""
    for room in ("a", "b"):
        await store.create_room(room, meta(room))
    await store.append("a", Action(1, 0, {"kind": "draw"}))
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        await raw.script_flush()
    finally:
        await raw.aclose()
    await asyncio.gather(
        store.append("a", Action(2, 1, {"kind": "draw"})),
        store.append("b", Action(1, 0, {"kind": "draw"})),
        store.update_room("b", {"state": "playing"}),
        store.snapshot("a", 1, {"deck": []}),
    )
    a, b = await store.load_room("a"), await store.load_room("b")
    assert a is not None and b is not None
    assert b.meta["state"] == "playing"
    assert [x.rev for x in b.actions] == [1]
    assert a.snapshot is not None and a.snapshot.rev == 1


async def test_the_group_commit_connection_dropped_by_redis_is_replaced_for_the_next_write(
    store: RedisStore, redis_server: RedisServer
) -> None:
    """The group commit writes on a connection of its own: Redis closing it (every client but
    the killer's) costs the next write one retry on a new connection, not a refusal."""
    await store.create_room("k", meta("k"))
    await store.append("k", Action(1, 0, {"kind": "draw"}))
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        killed = await raw.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        assert killed >= 1
        await store.append("k", Action(2, 1, {"kind": "draw"}))
        await store.update_room("k", {"state": "playing"})
        assert await raw.llen(store.keys("k").choices) == 2
    finally:
        await raw.aclose()
    record = await store.load_room("k")
    assert record is not None and record.meta["state"] == "playing"
    assert [x.rev for x in record.actions] == [1, 2]
    assert store.ready()


async def test_what_the_writes_keep_of_a_room_goes_with_it(store: RedisStore) -> None:
    """The append's packed head is kept per live room (like its key names), and dropped once
    the room is archived or deleted: nothing of a closed room stays (bench/memory.py)."""
    for room in ("kept", "archived", "deleted"):
        await store.create_room(room, meta(room))
        await store.append(room, Action(1, 0, {"kind": "draw"}))
    heads = store._writes._append_heads
    assert {"kept", "archived", "deleted"} <= set(heads)
    await store.finish("archived", {"scores": [1, 2]})
    await store.delete("deleted")
    assert "kept" in heads and "archived" not in heads and "deleted" not in heads
    await store.append("kept", Action(2, 1, {"kind": "draw"}))  # (its kept head, the same bytes)
    record = await store.load_room("kept")
    assert record is not None and [a.rev for a in record.actions] == [1, 2]
    assert await store.load_archive("archived") is not None


async def test_a_stores_append_is_the_compiled_writes_own_unless_a_subclass_has_one(
    store: RedisStore, redis_server: RedisServer
) -> None:
    """RedisStore hands each append on to :meth:`.Writes.append_action` by putting it in the
    instance's ``append`` (no interpreted frame per action); a subclass's own append stays."""
    assert store.append == store._writes.append_action
    await store.create_room("r1", meta("r1"))
    await store.append("r1", Action(1, 0, {"kind": "draw"}))
    await store.append("r1", Action(2, 1, {"kind": "play", "card": 3}), {"rev": 2})
    loaded = await store.load_room("r1")
    assert loaded is not None
    assert [(a.rev, a.seat, a.choice) for a in loaded.actions] == [
        (1, 0, {"kind": "draw"}),
        (2, 1, {"kind": "play", "card": 3}),
    ]
    assert loaded.meta["rev"] == 2

    seen: list[int] = []

    class Counting(RedisStore):
        def append(self, room: str, action: Action, meta: Any = None) -> Any:
            seen.append(action.rev)
            return super().append(room, action, meta)

    other = Counting(redis_server.url, timeout=0.5)
    try:
        await other.start()
        await other.append("r1", Action(3, 0, {"kind": "draw"}))
        assert seen == [3]
    finally:
        await other.close()
