"""Rebuilding rooms from the store: every live room back, a corrupt one reported by id."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import msgpack
import pytest
import redis.asyncio as aioredis

from games import registry
from games.base import Match
from protocol.codec import canonical
from server.app import App
from server.main import restore_rooms
from server.recovery import RecoveryError, rebuild, replay_archive, restore_all
from server.store import SCHEMA_VERSION, Action, CorruptRecordError, RoomRecord, Snapshot, records
from server.store.records import ARCHIVE_MIGRATIONS, SNAPSHOT_MIGRATIONS
from server.store.redis import RedisStore
from tests.games.tiny import TINY
from tests.server.conftest import TEST_CONFIG
from tests.server.persistence.conftest import new_match, next_action, tiny_meta
from tests.server.persistence.processes import archive_of
from tests.services import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()


async def _play(store: RedisStore, room: str, seed: int, revs: int, snap_every: int) -> bytes:
    """Create ``room`` and store ``revs`` random choices; the live state's canonical dump."""
    live = new_match(seed=seed)
    rng = random.Random(seed)
    await store.create_room(room, tiny_meta(room, seed=seed))
    for rev in range(1, revs + 1):
        action = next_action(live, rev, rng)
        await store.append(room, action)
        live.act(action.seat, action.choice)
        if rev % snap_every == 0:
            await store.snapshot(room, rev, TINY.dump(live.state))
    return canonical(TINY.dump(live.state))


async def test_restore_all_brings_every_room_back_and_reports_the_corrupt_one(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    expected = {f"room{i}": await _play(store, f"room{i}", i, 3 + i, 4) for i in range(6)}
    await raw.hset(store.keys("room2").snap, "state", b"\xc1 not msgpack")
    await raw.xadd(store.keys("room5").log, {"a": b"\x93\x01"}, id="99-0")  # a gap

    restored, failed = await restore_all(store)

    assert sorted(f.room for f in failed) == ["room2", "room5"]
    assert any("snapshot" in str(f) and "room2" in str(f) for f in failed)
    assert any("rev 99" in str(f) and "room5" in str(f) for f in failed)
    assert {r.record.room for r in restored} == {"room0", "room1", "room3", "room4"}
    for r in restored:
        assert r.rev == 3 + int(r.record.room[-1])
        assert canonical(TINY.dump(r.match.state)) == expected[r.record.room]
    with pytest.raises(CorruptRecordError, match="room2"):
        await store.load_room("room2")


async def test_a_snapshot_from_a_newer_schema_version_is_refused(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    await _play(store, "new", 1, 4, 4)
    blob = msgpack.packb({"schema_version": SCHEMA_VERSION + 1, "rev": 4, "state": {}})
    await raw.hset(store.keys("new").snap, "state", blob)
    with pytest.raises(CorruptRecordError, match=f"schema_version {SCHEMA_VERSION + 1} is newer"):
        await store.load_room("new")


async def test_a_hand_made_v0_snapshot_is_migrated_and_restores_the_match(
    store: RedisStore, raw: aioredis.Redis
) -> None:
    """Version 0 is the snapshot map before ``schema_version`` existed."""
    expected = await _play(store, "old", 3, 6, 100)  # no snapshot written
    live = new_match(seed=3)
    rng = random.Random(3)
    for rev in range(1, 5):
        action = next_action(live, rev, rng)
        live.act(action.seat, action.choice)
    v0 = msgpack.packb({"rev": 4, "state": TINY.dump(live.state)}, use_bin_type=True)
    await raw.hset(store.keys("old").snap, mapping={"rev": "4", "state": v0})
    record = await store.load_room("old")
    assert record is not None and record.snapshot is not None
    assert record.snapshot.rev == 4 and record.snapshot.schema_version == SCHEMA_VERSION
    assert [a.rev for a in record.actions] == [5, 6]
    assert canonical(TINY.dump(rebuild(record).state)) == expected


def test_every_older_schema_version_has_a_migration_step() -> None:
    for version in range(SCHEMA_VERSION):
        assert version in SNAPSHOT_MIGRATIONS and version in ARCHIVE_MIGRATIONS


def test_a_v0_archive_without_chat_meta_or_finish_time_is_migrated() -> None:
    blob = msgpack.packb(
        {
            "room": "a",
            "game": "tiny",
            "players": 2,
            "options": {},
            "seed": 5,
            "actions": [[0, {"kind": "draw"}]],
            "result": {},
        }
    )
    record = records.archive("a", blob)
    assert record.chat == [] and record.meta == {} and record.finished == 0.0
    assert record.actions == [Action(1, 0, {"kind": "draw"})]


def test_a_failing_migration_is_reported_with_the_room() -> None:
    with pytest.raises(CorruptRecordError, match="room z: snapshot: migration from 0 failed"):
        records.migrate("z", "snapshot", {"schema_version": 0}, {0: lambda d: d["missing"]})


def test_a_stored_choice_that_is_not_legal_is_reported_with_its_room_and_rev() -> None:
    record = RoomRecord("bad", tiny_meta("bad"), None, [Action(1, 2, {"kind": "draw"})])
    with pytest.raises(RecoveryError, match=r"room bad: rev 1 \(seat 2"):
        rebuild(record)


def test_an_unknown_game_is_reported() -> None:
    meta = tiny_meta("x") | {"game": "chess"}
    with pytest.raises(RecoveryError, match="room x: unknown game 'chess'"):
        rebuild(RoomRecord("x", meta, None, []))


def test_rebuild_prefers_the_snapshot_over_the_seed() -> None:
    live = new_match(seed=5)
    rng = random.Random(0)
    for rev in range(1, 4):
        action = next_action(live, rev, rng)
        live.act(action.seat, action.choice)
    # A wrong seed in meta proves the snapshot, not a fresh setup, was used.
    record = RoomRecord("s", tiny_meta("s", seed=6), Snapshot(3, TINY.dump(live.state)), [])
    assert canonical(TINY.dump(rebuild(record).state)) == canonical(TINY.dump(live.state))


async def test_replay_archive_returns_the_events_of_every_rev_and_the_result(
    store: RedisStore,
) -> None:
    live = new_match(players=2, seed=8)
    rng = random.Random(8)
    await store.create_room("done", tiny_meta("done", players=2, seed=8))
    events = []
    rev = 0
    while not live.over:
        rev += 1
        action = next_action(live, rev, rng)
        await store.append("done", action)
        events.append(live.act(action.seat, action.choice))
    result = live.result()
    assert result is not None
    await store.finish("done", result.to_json())
    archive = await store.load_archive("done")
    assert archive is not None
    replayed, final = replay_archive(archive)
    assert replayed == events
    assert final == result
    assert final is not None and final.to_json() == archive.result


async def test_a_restored_match_that_is_over_is_archived_again(store: RedisStore) -> None:
    """The server died after the last choice was stored but before its archive was written."""
    live = new_match(seed=9)
    rng = random.Random(9)
    await store.create_room("end", tiny_meta("end", seed=9) | {"state": "playing"})
    rev = 0
    while not live.over:
        rev += 1
        action = next_action(live, rev, rng)
        await store.append("end", action)
        live.act(action.seat, action.choice)
    app = App(TEST_CONFIG, store)
    await restore_rooms(app)
    try:
        assert app.lobby.rooms["end"].state.value == "finished"
        archive = await archive_of(store, "end")
        assert len(archive.actions) == rev
        result = live.result()
        assert result is not None and archive.result == result.to_json()
        assert await store.unfinished_rooms() == []
    finally:
        await app.lobby.stop()


@pytest.mark.parametrize("game_name", ["ishtar", "yspahan"])
def test_rebuild_fast_forwards_a_tail_to_the_live_state(game_name: str) -> None:
    """The trusted replay of a live room's tail reaches the state the checked path reached."""
    game = registry.get(game_name)
    live = Match.new(game, 4, {}, 11)
    rng = random.Random(11)
    actions: list[Action] = []
    snapshot: Snapshot | None = None
    for rev in range(1, 61):
        action = next_action(live, rev, rng)
        live.act(action.seat, action.choice)
        actions.append(action)
        if rev == 17:
            snapshot = Snapshot(rev, game.dump(live.state))
    meta = tiny_meta("g") | {"game": game_name, "players": 4, "seed": 11}
    for record in (
        RoomRecord("g", meta, snapshot, actions[17:]),
        RoomRecord("g", meta, None, actions),
    ):
        rebuilt = rebuild(record)
        assert canonical(game.dump(rebuilt.state)) == canonical(game.dump(live.state))
        assert rebuilt.decision == live.decision


def test_a_stored_choice_the_engine_cannot_apply_is_reported_with_its_room_and_rev() -> None:
    game = registry.get("ishtar")
    live = Match.new(game, 4, {}, 3)
    decision = live.decision
    assert decision is not None
    meta = tiny_meta("ish") | {"game": "ishtar", "players": 4, "seed": 3}
    record = RoomRecord("ish", meta, None, [Action(1, decision.seat, {"kind": "nonsense"})])
    with pytest.raises(RecoveryError, match=r"room ish: rev 1 \(seat 0, .*KeyError"):
        rebuild(record)


def test_a_stored_choice_after_the_end_is_reported() -> None:
    live = new_match(players=2, seed=8)
    rng = random.Random(8)
    actions = []
    while not live.over:
        action = next_action(live, len(actions) + 1, rng)
        live.act(action.seat, action.choice)
        actions.append(action)
    actions.append(Action(len(actions) + 1, 0, {"kind": "draw"}))
    record = RoomRecord("over", tiny_meta("over", players=2, seed=8), None, actions)
    with pytest.raises(RecoveryError, match=rf"room over: rev {len(actions)} .*the match is over"):
        rebuild(record)


async def test_a_restored_room_with_delayed_spectators_starts_their_feed_at_its_rev(
    store: RedisStore,
) -> None:
    """The delayed spectators' view of a restored room is the room's rev, not rev 0."""
    live = new_match(seed=4)
    rng = random.Random(4)
    meta = tiny_meta("late", seed=4) | {"state": "playing", "spectator_delay": 2.0}
    await store.create_room("late", meta)
    for rev in range(1, 4):
        action = next_action(live, rev, rng)
        await store.append("late", action)
        live.act(action.seat, action.choice)
    app = App(TEST_CONFIG, store)
    await restore_rooms(app)
    try:
        room = app.lobby.rooms["late"]
        assert room.spectators.delayed
        doc, rev, view_hash = room.spectators.delayed_view()
        assert rev == 3
        assert (doc, view_hash) == room.views.full(None)
    finally:
        await app.lobby.stop()
