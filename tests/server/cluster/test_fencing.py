"""Fencing and hand-off of one node: a node without the lease stores nothing; a stopping node
leaves a snapshot that the next release reads."""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path
from typing import Any

import msgpack

from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.cluster.nodes import node, ready
from tests.server.matches import to_move
from tests.server.persistence.processes import ServerProcess
from tests.services import RedisServer

THIEF = "thief|0000|ws://127.0.0.1:9/"


async def _match(a: ServerProcess, rng: random.Random, moves: int) -> tuple[str, list[Client]]:
    """A started 2-seat yspahan room on ``a`` with ``moves`` choices played."""
    seats = [await a.client(f"s{i}") for i in range(2)]
    created = await seats[0].request({"type": "create", "game": "yspahan", "players": 2})
    room = created["room"]
    for i, c in enumerate(seats):
        assert (await c.request({"type": "join", "room": room, "seat": i}))["type"] == "joined"
    assert (await seats[0].request({"type": "start", "room": room}))["type"] == "ack"
    for _ in range(moves):
        await _act(seats, room, rng, expect="ack")
    for c in seats:  # the actor's ack can come before another seat has read its patch
        await c.until(lambda c=c: c.rev(room) == moves)
    return room, seats


def _turn_ended(client: Client, room: str) -> bool:
    """The last revision ``client`` saw ended a turn (Yspahan's ``end_turn`` event)."""
    rev = client.rev(room)
    patches = [f for f in client.frames if f["type"] == "patch" and f["rev"] == rev]
    return bool(patches) and any(e["kind"] == "end_turn" for e in patches[-1]["events"])


async def _act(seats: list[Client], room: str, rng: random.Random, expect: str) -> dict[str, Any]:
    client = await to_move(seats, room)
    choices = client.view(room)["own"]["choices"]
    answer = await client.request(
        {
            "type": "act",
            "room": room,
            "rev": client.rev(room),
            "choice": rng.randrange(len(choices)),
        }
    )
    if expect == "ack":
        assert answer["type"] == "ack", answer
    return answer


async def test_a_node_whose_lease_was_taken_refuses_choices_and_sends_clients_away(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    a = node(redis_server.url, tmp_path, "a", ttl=30.0)  # no renewal round during the test
    a.start()
    try:
        await ready(a)
        room, seats = await _match(a, random.Random(1), 4)
        stored = await reader.redis.llen(reader.keys(room).choices)
        assert stored == 4
        await reader.redis.set(reader.lease_key(room), THIEF, px=30_000)
        marks = [len(c.frames) for c in seats]
        answer = await _act(seats, room, random.Random(2), expect="refused")
        assert answer["type"] == "error" and answer["code"] == "unavailable", answer
        assert await reader.redis.llen(reader.keys(room).choices) == stored
        # the node gives the room up at once and tells its members where it went
        for client, mark in zip(seats, marks, strict=True):
            moved = await client.wait_for(lambda f: f["type"] == "redirect", mark, 5)
            assert moved["room"] == room and moved["url"] == "ws://127.0.0.1:9/"
        again = await seats[0].request({"type": "sync", "room": room})
        assert again["type"] == "redirect" and again["url"] == "ws://127.0.0.1:9/"
        assert await reader.redis.llen(reader.keys(room).choices) == stored
        for c in seats:
            await c.close()
    finally:
        await asyncio.to_thread(a.stop)


async def test_a_lease_that_expired_is_taken_back_and_play_goes_on(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    """The node's lease vanished (expired while Redis was slow, say) and no node took it: the
    node takes it back at its next renewal and keeps the room, members and all (evicting it
    would bring it back on their next request as a room none of them is in)."""
    a = node(redis_server.url, tmp_path, "a", ttl=0.6)
    a.start()
    try:
        await ready(a)
        rng = random.Random(3)
        room, seats = await _match(a, rng, 3)
        marks = [len(c.frames) for c in seats]
        key = reader.lease_key(room)
        await reader.redis.delete(key)
        for _ in range(250):  # the node's next renewal round (another process: poll Redis)
            if (await reader.redis.get(key) or b"").startswith(b"a|"):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the node did not take its lease back")
        await _act(seats, room, rng, expect="ack")
        assert await reader.redis.llen(reader.keys(room).choices) == 4
        for client, mark in zip(seats, marks, strict=True):
            assert not [f for f in client.frames[mark:] if f["type"] == "redirect"]
        for c in seats:
            await c.close()
    finally:
        await asyncio.to_thread(a.stop)


async def test_a_snapshot_left_by_the_previous_release_restores_under_the_new_one(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    """The old node hands off on SIGTERM (a snapshot at its last rev); the snapshot is rewritten
    in the format of the release before ``schema_version`` (version 0); the new node reads it
    through the migration and the seats resume at the same rev and view."""
    old = node(redis_server.url, tmp_path, "old", ttl=30.0)
    old.start()
    await ready(old)
    rng = random.Random(4)
    room, seats = await _match(old, rng, 5)
    while not _turn_ended(seats[0], room):  # then no step is open to an undo: the hand-off
        await _act(seats, room, rng, expect="ack")  # snapshots the last rev (issue 19)
    rev = seats[0].rev(room)
    for c in seats:
        await c.until(lambda c=c: c.rev(room) == rev)  # type: ignore[misc]
    tokens = [next(f["token"] for f in c.frames if f.get("token")) for c in seats]
    views = [c.view(room) for c in seats]
    assert old.process is not None
    old.process.send_signal(signal.SIGTERM)
    for c in seats:  # the node says goodbye; the clients must close for it to finish
        await c.wait_for(lambda f: f["type"] == "bye", 0, 10)
        await c.close()
    assert await asyncio.to_thread(old.process.wait, 15) == 0
    old.process = None
    snap = await reader.redis.hgetall(reader.keys(room).snap)
    assert snap[b"rev"] == str(rev).encode()
    current = msgpack.unpackb(snap[b"state"], raw=False)
    assert current["schema_version"] == 1
    v0 = msgpack.packb({"rev": rev, "state": current["state"]}, use_bin_type=True)
    await reader.redis.hset(reader.keys(room).snap, "state", v0)
    new = node(redis_server.url, tmp_path, "new", ttl=30.0)
    new.start()
    try:
        await ready(new)
        for i, token in enumerate(tokens):
            client = await new.client(f"back{i}")
            joined = await client.request({"type": "join", "room": room, "token": token})
            assert joined["type"] == "joined" and joined["rev"] == rev, joined
            assert joined["view"] == views[i]
            seats[i] = client
        await _act(seats, room, rng, expect="ack")
        for c in seats:
            await c.close()
    finally:
        await asyncio.to_thread(new.stop)
