"""``rematch`` (SPEC section 9): the next match with the same players, over real sockets.

A seat of a finished room asks for it; a new room with the room's settings is made, every member
moves into it (``joined`` unasked: players to their seats with new tokens, spectators as
spectators), the match starts when every seat is taken, and the finished room tells them
nothing more. The client of the tests checks every frame against SPEC and the schemas, and
every view hash, as frames arrive.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

from server.app import App
from server.room_state import RoomState
from server.store import MemoryStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG, MakeApp, MakeClient, redis_app
from tests.server.matches import Played, drive_seat, over
from tests.server.persistence.conftest import wait_for
from tests.services import RedisServer


async def _finished(seats: list[Client], watchers: list[Client], seed: int, **create: Any) -> str:
    """A tiny match of ``seats`` (named p0, p1, ...) watched by ``watchers``, played to its end."""
    created = await seats[0].request(
        {"type": "create", "game": "tiny", "players": len(seats), "seed": seed, **create}
    )
    room: str = created["room"]
    for i, client in enumerate(seats):
        assert (await client.request({"type": "join", "room": room, "name": f"p{i}"}))["seat"] == i
    for client in watchers:
        assert (await client.request({"type": "spectate", "room": room}))["type"] == "joined"
    assert (await seats[0].request({"type": "start", "room": room}))["type"] == "ack"
    await _play(seats, room, seed)
    return room


async def _play(seats: list[Client], room: str, seed: int) -> None:
    played = Played(room, seed, len(seats), "tiny")
    rng = random.Random(seed)
    await asyncio.gather(
        *(drive_seat(c, room, i, played, random.Random(rng.random())) for i, c in enumerate(seats))
    )
    for client in seats:
        await client.until(lambda c=client: over(c, room))  # type: ignore[misc]


def _unasked_joined(client: Client, start: int) -> list[dict[str, Any]]:
    return [f for f in client.frames[start:] if f["type"] == "joined" and "id" not in f]


async def test_a_rematch_moves_every_member_into_a_new_started_match(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app: App = await make_app(finished_room_ttl=0.2)
    seats = [
        await make_client(f"s{i}", target=app, hash_rule=2 if i == 1 else None) for i in range(3)
    ]
    watchers = [
        await make_client("w0", target=app),
        await make_client("w1", target=app, hash_rule=2),
    ]
    for client in seats + watchers:
        client.check_sent = True
    old = await _finished(seats, watchers, seed=71, spectator_delay=0, public=False)
    marks = [len(c.frames) for c in seats + watchers]

    ack = await seats[1].request({"type": "rematch", "room": old})
    assert ack["type"] == "ack", ack
    new = ack["room"]
    # (held: the finished room closes 0.2 s after its members moved out, which is checked below)
    old_room = app.lobby.rooms[old]
    assert new != old and ack["rev"] == 0
    info = ack["info"]
    assert info["state"] == "playing" and info["public"] is False and info["players"] == 3
    assert [s["name"] for s in info["seats"]] == ["p0", "p1", "p2"]
    assert all(s["connected"] for s in info["seats"]) and info["spectators"] == 2

    for i, client in enumerate(seats):
        (joined,) = _unasked_joined(client, marks[i])
        assert joined["room"] == new and joined["seat"] == i and joined["rev"] == 0
        assert joined["token"] and joined["info"]["state"] == "playing"
        assert joined["moved_from"] == old
        assert client.rooms[new].rev == 0 and client.view(new)["own"]["seat"] == i
    for j, client in enumerate(watchers):
        (joined,) = _unasked_joined(client, marks[len(seats) + j])
        assert joined["room"] == new and joined["seat"] is None and "token" not in joined
        assert joined["moved_from"] == old
    # The joined frames came before the requester's answer; nothing of the old room after it
    # but the answer itself (the moved members are told nothing more by it).
    for client, mark in zip(seats + watchers, marks, strict=True):
        later = [f for f in client.frames[mark:] if f.get("room") == old and "id" not in f]
        assert later == [], later
    tokens = {f["token"] for c, m in zip(seats, marks, strict=False) for f in _unasked_joined(c, m)}
    assert len(tokens) == 3

    # Asked again (a second player, a retry), it is answered as the first was; a stranger is
    # told where the rematch is. The finished room is left to close (no member in it).
    again = await seats[0].request({"type": "rematch", "room": old})
    assert again["type"] == "ack" and again["room"] == new, again
    stranger = await make_client("x", target=app)
    refused = await stranger.request({"type": "rematch", "room": old})
    assert refused["code"] == "not_allowed" and f"room {new}" in refused["message"], refused
    await wait_for(lambda: old_room.info().get("rematch") == new)
    assert old_room.members() == []
    await wait_for(lambda: old not in app.lobby.rooms, within=10)

    # The new match is played to its end like any other, and can be rematched in turn.
    await _play(seats, new, seed=72)
    for client in watchers:
        await client.until(lambda c=client: over(c, new))  # type: ignore[misc]
    third = await seats[2].request({"type": "rematch", "room": new})
    assert third["type"] == "ack" and third["room"] not in (old, new)


async def test_a_finished_room_every_player_left_for_its_rematch_closes_after_moved_room_ttl(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    # moved_room_ttl, not finished_room_ttl (600 s here): nobody is left to come back to it. A
    # finished room one of whose players was gone when the others moved waits for that player
    # as any finished room does.
    app: App = await make_app(finished_room_ttl=600.0, moved_room_ttl=0.05)
    a, b, c, d = [await make_client(n, target=app) for n in ("a", "b", "c", "d")]
    old = await _finished([a, b], [], seed=21)
    assert (await a.request({"type": "rematch", "room": old}))["type"] == "ack"
    await wait_for(lambda: old not in app.lobby.rooms, within=10)

    waits = await _finished([c, d], [], seed=22)
    assert (await d.request({"type": "leave", "room": waits}))["type"] == "ack"
    assert (await c.request({"type": "rematch", "room": waits}))["type"] == "ack"
    kept = app.lobby.rooms[waits]
    assert kept.core.status.rematch is not None and not kept.core.status.everyone_moved
    await asyncio.sleep(0.3)  # (six times moved_room_ttl)
    assert app.lobby.rooms.get(waits) is kept


async def test_a_rematch_is_refused_before_the_end_to_spectators_and_to_strangers(
    make_client: MakeClient,
) -> None:
    a, b, w, stranger = [await make_client(n) for n in ("a", "b", "w", "x")]
    created = await a.request({"type": "create", "game": "tiny", "players": 2, "seed": 3})
    room = created["room"]
    for client in (a, b):
        await client.request({"type": "join", "room": room})
    await w.request({"type": "spectate", "room": room})

    def refused(answer: dict[str, Any], words: str) -> None:
        assert answer["type"] == "error" and answer["code"] == "not_allowed", answer
        assert words in answer["message"], answer

    refused(await a.request({"type": "rematch", "room": room}), "is open")
    await a.request({"type": "start", "room": room})
    refused(await a.request({"type": "rematch", "room": room}), "is playing")
    await _play([a, b], room, seed=3)
    refused(await w.request({"type": "rematch", "room": room}), "spectators")
    refused(await stranger.request({"type": "rematch", "room": room}), "not in room")
    missing = await a.request({"type": "rematch", "room": "nosuchroom"})
    assert missing["type"] == "error" and missing["code"] == "not_found"
    assert (await b.request({"type": "rematch", "room": room}))["type"] == "ack"


async def test_a_seat_whose_player_left_stays_free_and_bots_come_back_as_bots(
    make_client: MakeClient,
) -> None:
    a, b = await make_client("a"), await make_client("b")
    created = await a.request(
        {"type": "create", "game": "tiny", "players": 3, "seed": 9, "bots": 1, "bot": "heuristic"}
    )
    room = created["room"]
    for client in (a, b):
        await client.request({"type": "join", "room": room})
    await a.request({"type": "start", "room": room})
    await _play([a, b], room, seed=9)
    assert (await b.request({"type": "leave", "room": room}))["type"] == "ack"

    mark = len(a.frames)
    ack = await a.request({"type": "rematch", "room": room})
    assert ack["type"] == "ack", ack
    new, info = ack["room"], ack["info"]
    assert info["state"] == "open"
    assert [(s["taken"], s["bot"], s["bot_kind"]) for s in info["seats"]] == [
        (True, False, None),
        (False, False, None),
        (True, True, "heuristic"),
    ]
    assert [f["seat"] for f in _unasked_joined(a, mark)] == [0]
    assert new not in b.rooms
    # The free seat is anybody's; the match starts as any open room's does.
    assert (await b.request({"type": "join", "room": new}))["seat"] == 1
    assert (await a.request({"type": "start", "room": new}))["type"] == "ack"
    await _play([a, b], new, seed=10)


async def test_a_rematch_is_stored_and_its_seats_resume_on_a_restarted_server(
    redis_server: RedisServer,
) -> None:
    config = dataclasses.replace(TEST_CONFIG, takeover_grace=-1.0)
    first = await redis_app(redis_server.url, config)
    clients = [await Client.open(f"ws://127.0.0.1:{first.port}/", f"c{i}") for i in range(2)]
    try:
        old = await _finished(clients, [], seed=21)
        mark = [len(c.frames) for c in clients]
        ack = await clients[0].request({"type": "rematch", "room": old})
        new = ack["room"]
        tokens = [_unasked_joined(c, m)[0]["token"] for c, m in zip(clients, mark, strict=True)]
        mover = next(c for c in clients if c.view(new)["own"]["choices"])
        moved = await mover.request({"type": "act", "room": new, "rev": 0, "choice": 0})
        assert moved["type"] == "ack" and moved["rev"] == 1
    finally:
        for client in clients:
            await client.close()
        await first.stop()

    second = await redis_app(redis_server.url, config)
    back = [await Client.open(f"ws://127.0.0.1:{second.port}/", f"b{i}") for i in range(2)]
    try:
        for i, client in enumerate(back):
            joined = await client.request(
                {"type": "join", "room": new, "token": tokens[i], "rev": 0}
            )
            assert joined["type"] == "joined" and joined["seat"] == i, joined
            await client.until(lambda c=client: c.rev(new) == 1)  # type: ignore[misc]
        assert second.lobby.rooms[new].state is RoomState.PLAYING
        assert [s.name for s in second.lobby.rooms[new].seats] == ["p0", "p1"]
        for client in back:
            assert not client.failures, client.failures
    finally:
        for client in back:
            await client.close()
        await second.stop()


async def test_a_rematch_the_store_cannot_record_moves_nobody_and_can_be_asked_again() -> None:
    store = MemoryStore()
    app = App(TEST_CONFIG, store)
    await app.start()
    url = f"ws://127.0.0.1:{app.port}/"
    seats = [await Client.open(url, f"c{i}") for i in range(2)]
    try:
        old = await _finished(seats, [], seed=33)
        store.fail = True
        refused = await seats[0].request({"type": "rematch", "room": old})
        assert refused["type"] == "error" and refused["code"] == "unavailable", refused
        assert [old in c_rooms for c_rooms in _server_rooms(app, seats)] == [True, True]
        assert len(app.lobby.rooms) == 1 and app.lobby.rooms[old].rematch is None
        store.fail = False
        ack = await seats[1].request({"type": "rematch", "room": old})
        assert ack["type"] == "ack" and ack["info"]["state"] == "playing"
        assert [set(rooms) for rooms in _server_rooms(app, seats)] == [{ack["room"]}] * 2
        for client in seats:
            assert not client.failures, client.failures
    finally:
        for client in seats:
            await client.close()
        await app.stop()


def _server_rooms(app: App, clients: list[Client]) -> list[dict[str, int | None]]:
    """The rooms the server holds each client's connection in (by its session)."""
    sessions = [next(f for f in c.frames if f["type"] == "welcome")["session"] for c in clients]
    by_session = {conn.session: conn.rooms for conn in app.connections}
    return [by_session[s] for s in sessions]


async def test_a_delayed_rooms_spectators_see_the_end_then_read_where_the_rematch_is(
    make_client: MakeClient,
) -> None:
    a, b, w = await make_client("a"), await make_client("b"), await make_client("w")
    old = await _finished([a, b], [], seed=41, spectator_delay=0.3)
    assert (await w.request({"type": "spectate", "room": old}))["type"] == "joined"
    ack = await a.request({"type": "rematch", "room": old})
    new = ack["room"]
    assert ack["info"]["spectators"] == 0  # (the spectator stays where its feed is)
    # Its feed shows the whole match, then the finished room names its rematch.
    await w.until(lambda: over(w, old), wait=10)
    assert w.rev(old) == a.rev(old) and new not in w.rooms
    await w.wait_for(lambda f: f["type"] == "room" and f["info"].get("rematch") == new)
    joined = await w.request({"type": "spectate", "room": new})
    assert joined["type"] == "joined" and joined["room"] == new
