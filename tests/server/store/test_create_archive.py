"""A room's creation and its archive are one script each, joined to the group commit (issue 21):
the archive packed in Redis is byte for byte what :func:`records.archive_blob` packs, on a real
redis-server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.store import Action, RoomGoneError, records
from server.store.redis import RedisStore
from tests.server.conftest import OpenStore
from tests.services import RedisServer


def meta(room: str, **extra: Any) -> dict[str, Any]:
    return {
        "room": room,
        "game": "tiny",
        "players": 2,
        "options": {"deck": [1, 2, 3]},
        "public": True,
        "state": "open",
        "rev": 0,
        "seats": [],
        "seed": 7,
        **extra,
    }


@pytest.fixture
async def store(open_redis_store: OpenStore) -> RedisStore:
    return await open_redis_store(deadline=0.5, archive_ttl=3600.0)


async def stored_archive(redis_server: RedisServer, store: RedisStore, room: str) -> bytes:
    raw = aioredis.from_url(redis_server.url)
    try:
        blob: bytes = await raw.get(store.keys(room).archive)
        return blob
    finally:
        await raw.aclose()


async def finish_match(store: RedisStore, room: str, m: dict[str, Any], actions: int) -> None:
    await store.create_room(room, m)
    for rev in range(1, actions + 1):
        await store.append(room, Action(rev, rev % 2, {"kind": "play", "card": rev * 1000}))
    await store.append_chat(room, {"seat": 0, "text": "gg " * 20})
    await store.archive(room, {"winner": 1, "scores": [3, -70000]})


@pytest.mark.parametrize(
    ("actions", "extra"),
    [
        (0, {}),
        (3, {}),
        (70_000 // 1000, {f"field_{i}_{'x' * 30}": i for i in range(20)}),  # map16, str8 keys
        (3, {"long": "y" * 70_000, "game": 5}),  # str32; a game of the wrong type
    ],
)
async def test_the_archive_packed_in_redis_is_the_one_python_packs(
    store: RedisStore, redis_server: RedisServer, actions: int, extra: dict[str, Any]
) -> None:
    room = f"arch-{actions}-{len(extra)}"
    m = meta(room, **extra)
    await finish_match(store, room, m, actions)
    blob = await stored_archive(redis_server, store, room)
    data = records.unpack(blob)
    stored_meta = {name: value for name, value in data["meta"].items()}
    expected = records.archive_blob(
        room, stored_meta, data["actions"], data["result"], data["chat"], data["finished"]
    )
    assert blob == expected
    assert stored_meta == m
    assert len(data["actions"]) == actions
    got = await store.load_archive(room)
    assert got is not None and got.result == {"winner": 1, "scores": [3, -70000]}
    assert got.chat == [{"seat": 0, "text": "gg " * 20}]
    assert await store.unfinished_rooms() == []
    assert room in await store.archived_rooms()
    assert await store.load_room(room) is None


async def test_archiving_twice_is_harmless_and_an_unknown_room_is_refused(
    store: RedisStore, redis_server: RedisServer
) -> None:
    await finish_match(store, "twice", meta("twice"), 2)
    first = await stored_archive(redis_server, store, "twice")
    await store.archive("twice", {"winner": 0})
    assert await stored_archive(redis_server, store, "twice") == first
    with pytest.raises(RoomGoneError):
        await store.archive("never", {})


async def test_creations_and_archives_join_the_batches_of_other_rooms(
    store: RedisStore, redis_server: RedisServer
) -> None:
    await store.create_room("old", meta("old"))
    await store.append("old", Action(1, 0, {"kind": "draw"}))
    before = store.append_batches
    await asyncio.gather(
        store.create_room("lead", meta("lead")),
        store.create_room("new", meta("new")),
        store.archive("old", {"winner": 0}),
        store.append("lead", Action(1, 0, {"kind": "draw"})),  # after its creation, in order
    )
    assert store.append_batches == before + 2
    assert sorted(await store.unfinished_rooms()) == ["lead", "new"]
    assert await store.archived_rooms() == ["old"]
    record = await store.load_room("lead")
    assert record is not None and [a.rev for a in record.actions] == [1]
    raw = aioredis.from_url(redis_server.url)
    try:
        assert 0 < await raw.ttl(store.keys("old").archive) <= 3600
    finally:
        await raw.aclose()


async def test_meta_fields_of_the_wrong_type_are_archived_as_python_reads_them(
    store: RedisStore, redis_server: RedisServer
) -> None:
    m = meta("odd", players="two", options="not a map", seed=True)
    del m["game"]
    await finish_match(store, "odd", m, 2)
    blob = await stored_archive(redis_server, store, "odd")
    data = records.unpack(blob)
    assert [data[f] for f in ("game", "players", "options", "seed")] == [None, None, None, None]
    expected = records.archive_blob(
        "odd", data["meta"], data["actions"], data["result"], data["chat"], data["finished"]
    )
    assert blob == expected
