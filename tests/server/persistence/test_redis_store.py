"""RedisStore against a real redis-server: key layout, the write path, snapshots, archives."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from protocol.codec import canonical
from server.recovery import rebuild, replay
from server.store import SCHEMA_VERSION, Action, RevisionError, RoomGoneError, Store
from server.store.redis import RedisStore
from tests.games.tiny import TINY
from tests.server.persistence.conftest import new_match, next_action, tiny_meta
from tests.services import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    """A plain client, to look at what the store wrote."""
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()


async def _log_ids(raw: aioredis.Redis, key: str) -> list[bytes]:
    """The entry ids of a stream."""
    entries = await raw.xrange(key)
    assert entries is not None
    return [entry_id for entry_id, _ in entries if isinstance(entry_id, bytes)]


def _crc16(data: bytes) -> int:
    """CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key: bytes) -> int:
    """Redis Cluster's HASH_SLOT: only the first non-empty ``{...}`` is hashed, if any."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1 : end]
    return _crc16(key) % 16384


def test_key_slot_matches_the_redis_cluster_specification() -> None:
    # Examples from the CLUSTER KEYSLOT documentation.
    assert key_slot(b"somekey") == 11058
    assert key_slot(b"foo{hash_tag}") == 2515


async def test_keys_of_a_room_share_one_cluster_slot(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    room = "ab12cd34ef"
    match = new_match()
    rng = random.Random(1)
    await store.create_room(room, tiny_meta(room))
    for rev in range(1, 6):
        action = next_action(match, rev, rng)
        await store.append(room, action)
        match.act(action.seat, action.choice)
    await store.snapshot(room, 3, TINY.dump(match.state))
    await store.append_chat(room, {"text": "hi"})
    written = [k async for k in raw.scan_iter(match=f"*{{{room}}}*")]
    assert len(written) == 5  # meta, log, choices, snap, chat
    named = [k.encode() for k in (*store.keys(room).live(), store.keys(room).archive)]
    assert set(written) <= set(named)
    assert {key_slot(k) for k in named} == {key_slot(room.encode())}
    for key in named:
        assert key.startswith(b"oasis:{" + room.encode() + b"}:")


async def test_a_room_id_with_braces_is_refused(store: RedisStore) -> None:
    with pytest.raises(Exception, match="hash tag"):
        await store.create_room("a}b", tiny_meta("a}b"))


async def test_duplicate_and_out_of_order_revs_are_refused(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    room = "r1"
    await store.create_room(room, tiny_meta(room))
    first, second = Action(1, 0, {"kind": "draw"}), Action(2, 1, {"kind": "draw"})
    await store.append(room, first)
    await store.append(room, second)
    with pytest.raises(RevisionError, match="refused rev 2"):
        await store.append(room, Action(2, 1, {"kind": "play", "card": 3}))
    with pytest.raises(RevisionError, match="refused rev 4"):
        await store.append(room, Action(4, 0, {"kind": "draw"}))
    with pytest.raises(RevisionError, match="refused rev 1"):
        await store.append(room, first)
    await store.append(room, second)  # the same action again: a resend, stored once
    keys = store.keys(room)
    assert await raw.llen(keys.choices) == 2
    assert await raw.xlen(keys.log) == 2
    assert await _log_ids(raw, keys.log) == [b"1-0", b"2-0"]
    await store.append(room, Action(3, 2, {"kind": "draw"}))
    record = await store.load_room(room)
    assert record is not None
    assert [a.rev for a in record.actions] == [1, 2, 3]
    assert store.ready()  # refusals are answers: Redis is fine


async def test_append_to_a_room_that_is_not_live_is_refused(store: RedisStore) -> None:
    with pytest.raises(RoomGoneError):
        await store.append("nowhere", Action(1, 0, {"kind": "draw"}))
    with pytest.raises(RoomGoneError):
        await store.update_room("nowhere", {"state": "playing"})
    assert await store.load_room("nowhere") is None


async def test_update_room_merges_fields_and_keeps_the_seed(store: RedisStore) -> None:
    await store.create_room("r2", tiny_meta("r2", seed=99))
    meta = tiny_meta("r2")
    del meta["seed"]
    meta["state"] = "playing"
    await store.update_room("r2", meta)
    record = await store.load_room("r2")
    assert record is not None
    assert record.meta["seed"] == 99
    assert record.meta["state"] == "playing"


async def test_snapshot_has_a_schema_version_and_trims_the_log(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    room = "r3"
    match = new_match()
    rng = random.Random(3)
    await store.create_room(room, tiny_meta(room))
    dumps: dict[int, dict[str, Any]] = {}
    for rev in range(1, 9):
        action = next_action(match, rev, rng)
        await store.append(room, action)
        match.act(action.seat, action.choice)
        dumps[rev] = TINY.dump(match.state)
    await store.snapshot(room, 6, dumps[6])
    keys = store.keys(room)
    stored = msgpack.unpackb(await raw.hget(keys.snap, "state"))
    assert stored["schema_version"] == SCHEMA_VERSION == 1
    assert stored["rev"] == 6
    assert stored["state"] == dumps[6]
    assert stored["state"]["rng"] == dumps[6]["rng"]
    assert await _log_ids(raw, keys.log) == [b"7-0", b"8-0"]
    assert await raw.llen(keys.choices) == 8

    await store.snapshot(room, 4, dumps[4])  # late and older: ignored
    record = await store.load_room(room)
    assert record is not None and record.snapshot is not None
    assert record.snapshot.rev == 6
    assert [a.rev for a in record.actions] == [7, 8]
    with pytest.raises(RevisionError, match="log ends at 8"):
        await store.snapshot(room, 9, dumps[8])


async def test_recovered_match_equals_the_live_one_at_every_rev(store: RedisStore) -> None:
    """TINY played to the end with a snapshot every 5 revs; a rebuild after every rev is
    byte-identical (canonical dump, generator included) to the live match."""
    room = "r4"
    live = new_match(players=3, seed=2024)
    rng = random.Random(4)
    await store.create_room(room, tiny_meta(room, players=3, seed=2024))
    rev = 0
    while not live.over:
        rev += 1
        action = next_action(live, rev, rng)
        await store.append(room, action)
        live.act(action.seat, action.choice)
        if rev % 5 == 0:
            await store.snapshot(room, rev, TINY.dump(live.state))
        record = await store.load_room(room)
        assert record is not None and record.rev == rev
        assert len(record.actions) == rev % 5
        rebuilt = rebuild(record)
        assert canonical(TINY.dump(rebuilt.state)) == canonical(TINY.dump(live.state))
        assert rebuilt.view(None) == live.view(None)
    assert rev > 10


async def test_archive_holds_the_full_log_after_trims(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    room = "r5"
    live = new_match(players=2, seed=11)
    rng = random.Random(5)
    await store.create_room(room, tiny_meta(room, players=2, seed=11))
    actions: list[Action] = []
    events = []
    while not live.over:
        action = next_action(live, len(actions) + 1, rng)
        await store.append(room, action)
        actions.append(action)
        events.append(live.act(action.seat, action.choice))
        if action.rev % 4 == 0:
            await store.snapshot(room, action.rev, TINY.dump(live.state))
    await store.append_chat(room, {"text": "gg"})
    result = live.result()
    assert result is not None
    assert await store.unfinished_rooms() == [room]
    await store.finish(room, result.to_json())
    await store.finish(room, result.to_json())  # twice: harmless

    archive = await store.load_archive(room)
    assert archive is not None
    assert archive.schema_version == SCHEMA_VERSION
    assert (archive.game, archive.players, archive.seed, archive.options) == ("tiny", 2, 11, {})
    assert archive.actions == actions
    assert archive.result == result.to_json()
    assert archive.chat == [{"text": "gg"}]
    again = replay(archive)
    assert canonical(TINY.dump(again.match.state)) == canonical(TINY.dump(live.state))
    assert again.events == events
    assert again.result == result

    assert await store.unfinished_rooms() == []
    assert await store.archived_rooms() == [room]
    assert [k async for k in raw.scan_iter(match=f"*{{{room}}}*")] == [
        store.keys(room).archive.encode()
    ]
    await store.append_chat(room, {"text": "after the end"})  # not kept, not an error
    assert await store.load_room(room) is None
    await store.delete(room)
    assert await store.load_archive(room) is None
    assert await store.archived_rooms() == []


async def test_chat_is_kept_and_bounded(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url, chat_keep=3)
    try:
        await store.create_room("r6", tiny_meta("r6"))
        for i in range(5):
            await store.append_chat("r6", {"text": str(i)})
        record = await store.load_room("r6")
        assert record is not None
        assert [line["text"] for line in record.chat] == ["2", "3", "4"]
    finally:
        await store.close()


async def test_actions_after_reads_what_landed(store: RedisStore) -> None:
    await store.create_room("r7", tiny_meta("r7"))
    for rev in (1, 2, 3):
        await store.append("r7", Action(rev, rev % 2, {"kind": "draw"}))
    assert await store.actions_after("r7", 1) == [
        Action(2, 0, {"kind": "draw"}),
        Action(3, 1, {"kind": "draw"}),
    ]
    assert await store.actions_after("r7", 3) == []


async def test_unfinished_rooms_are_listed_oldest_first_and_deleted(store: RedisStore) -> None:
    for room in ("c", "a", "b"):
        await store.create_room(room, tiny_meta(room))
    assert await store.unfinished_rooms() == ["c", "a", "b"]
    await store.delete("a")
    assert await store.unfinished_rooms() == ["c", "b"]
    assert await store.load_room("a") is None


async def test_redis_store_drops_in_where_the_room_expects_a_store(
    redis_server: RedisServer,
) -> None:
    store: Store = RedisStore(redis_server.url)  # mypy checks the protocol
    try:
        await store.create_room("d", tiny_meta("d"))
        await store.update_room("d", {"state": "playing"})
        await store.append("d", Action(1, 0, {"kind": "draw"}))
        await store.append_chat("d", {"text": "hello"})
        await store.finish("d", {"scores": [1, 0, 0]})
        assert store.ready()
    finally:
        await store.close()


async def test_more_concurrent_writes_than_pool_connections_wait_instead_of_failing(
    redis_server: RedisServer,
) -> None:
    """A full connection pool is load, not an outage: writes queue and the store stays ready."""
    store = RedisStore(redis_server.url, pool_size=4)
    try:
        rooms = [f"pool-{i}" for i in range(40)]
        for room in rooms:
            await store.create_room(room, {"game": "tiny", "players": 2, "seed": 1})
        await asyncio.gather(
            *(store.append(room, Action(1, 0, {"kind": "draw"})) for room in rooms),
            *(store.update_room(room, {"state": "playing"}) for room in rooms),
        )
        assert store.ready()
        for room in rooms:
            record = await store.load_room(room)
            assert record is not None
            assert [a.rev for a in record.actions] == [1]
    finally:
        await store.close()


async def test_appends_of_one_loop_turn_share_one_pipeline_and_each_gets_its_own_answer(
    store: RedisStore,
) -> None:
    """Group commit: the first append goes alone, the 29 queued behind it share one pipeline,
    yet a refused append fails its room only."""
    rooms = [f"gc-{i}" for i in range(30)]
    for room in rooms:
        if room != "gc-9":  # gc-9 is not live
            await store.create_room(room, tiny_meta(room))
    batches = store.append_batches
    results = await asyncio.gather(
        *(
            store.append(room, Action(2 if room == "gc-7" else 1, 0, {"kind": "draw"}))
            for room in rooms
        ),
        return_exceptions=True,
    )
    assert store.append_batches == batches + 2
    assert isinstance(results[7], RevisionError) and "gc-7" in str(results[7])
    assert isinstance(results[9], RoomGoneError) and "gc-9" in str(results[9])
    assert all(r is None for i, r in enumerate(results) if i not in (7, 9))
    assert store.ready()
    for i, room in enumerate(rooms):
        record = await store.load_room(room)
        if i == 9:
            assert record is None
        else:
            assert record is not None
            assert [a.rev for a in record.actions] == ([] if i == 7 else [1])


async def test_appends_go_on_after_redis_forgets_its_scripts(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    """A restarted Redis has no scripts: the batch loads it and sends the refused ones again."""
    await store.create_room("flush", tiny_meta("flush"))
    await store.append("flush", Action(1, 0, {"kind": "draw"}))
    await raw.script_flush()
    await asyncio.gather(
        store.append("flush", Action(2, 1, {"kind": "draw"})),
        store.create_room("other", tiny_meta("other")),
    )
    await store.append("flush", Action(3, 2, {"kind": "draw"}))
    record = await store.load_room("flush")
    assert record is not None
    assert [a.rev for a in record.actions] == [1, 2, 3]


async def test_a_cancelled_leading_append_does_not_stall_the_ones_queued_behind_it(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    """The append that leads a batch belongs to a room task that may be cancelled (a room
    closing): the appends queued behind it still go, and the store goes on."""
    for room in ("c1", "c2"):
        await store.create_room(room, tiny_meta(room))
    await raw.execute_command("CLIENT", "PAUSE", "150", "WRITE")  # the leader's reply waits
    lead = asyncio.create_task(store.append("c1", Action(1, 0, {"kind": "draw"})))
    await asyncio.sleep(0.02)  # the leader is waiting for Redis
    follower = asyncio.create_task(store.append("c2", Action(1, 0, {"kind": "draw"})))
    await asyncio.sleep(0.02)  # queued behind it
    assert not lead.done() and not follower.done()
    lead.cancel()
    with pytest.raises(asyncio.CancelledError):
        await lead
    await asyncio.wait_for(follower, 5)
    await store.append("c2", Action(2, 1, {"kind": "draw"}))
    record = await store.load_room("c2")
    assert record is not None and [a.rev for a in record.actions] == [1, 2]


async def test_archives_expire_after_the_archive_ttl_and_leave_the_index(
    redis_server: RedisServer,
) -> None:
    # Issue 14: archives had no TTL. Each archive key expires archive_ttl seconds after the
    # finish, and archiving a room drops the index entries that are older than that.
    store = RedisStore(redis_server.url, archive_ttl=30 * 86400.0)
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        await store.create_room("old", tiny_meta("old"))
        await store.finish("old", {"scores": [1, 2, 3]})
        ttl = await client.ttl(store.keys("old").archive)
        assert 30 * 86400 - 60 < ttl <= 30 * 86400
        # An entry as old as the TTL (its archive key already expired): the next archive trims it.
        await client.zadd("oasis:archived", {"ancient": 1.0})
        await store.create_room("new", tiny_meta("new"))
        await store.finish("new", {"scores": [3, 2, 1]})
        assert await store.archived_rooms() == ["old", "new"]
        assert (await store.load_archive("new")) is not None
    finally:
        await client.aclose()
        await store.close()
    forever = RedisStore(redis_server.url)  # archive_ttl 0: kept for ever, as before
    try:
        await forever.create_room("kept", tiny_meta("kept"))
        await forever.finish("kept", {"scores": [0, 0, 0]})
        raw = aioredis.Redis.from_url(redis_server.url)
        assert await raw.ttl(forever.keys("kept").archive) == -1
        await raw.aclose()
    finally:
        await forever.close()
