"""The lobby over real sockets: list, create, quick match, a whole match against bots, hello.

The room's rules are proved in process by its twins (tests/server/core/: commands at chosen
times, decoded frames); what stays here proves the shell around them: frames reach real
sockets, timers fire in real time, the store is the app's.
"""

from __future__ import annotations

from typing import Any

from server.app import App
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient


async def _create(client: Client, **fields: object) -> str:
    created = await client.request({"type": "create", "game": "tiny", "players": 2, **fields})
    assert created["type"] == "ack", created
    return str(created["room"])


async def test_public_rooms_are_listed_with_their_seats_and_private_ones_are_not(
    app: App, make_client: MakeClient
) -> None:
    client = await make_client()
    public = await _create(client)
    private = await _create(client, public=False)
    await client.request({"type": "join", "room": public, "name": "ann"})
    listing = await client.request({"type": "list_rooms", "game": "tiny"})
    rooms = {r["room"]: r for r in listing["rooms"]}
    assert public in rooms and private not in rooms
    info = rooms[public]
    assert info["state"] == "open" and info["game"] == "tiny" and info["players"] == 2
    assert [s["taken"] for s in info["seats"]] == [True, False]
    assert info["seats"][0]["name"] == "ann"
    other = await client.request({"type": "list_rooms", "game": "yspahan"})
    assert public not in {r["room"] for r in other["rooms"]}


async def test_one_human_plays_a_whole_match_against_random_bots(
    app: App, make_client: MakeClient
) -> None:
    human = await make_client("human")
    room = await _create(human, players=4, seed=11)
    await human.request({"type": "join", "room": room})
    await human.request({"type": "start", "room": room, "bots": True})
    while True:
        await human.until(
            lambda: (
                bool(human.view(room)["own"]["choices"])
                or human.view(room)["shared"]["result"] is not None
            )
        )
        if human.view(room)["shared"]["result"] is not None:
            break
        answer = await human.request(
            {"type": "act", "room": room, "rev": human.rev(room), "choice": 0}
        )
        assert answer["type"] == "ack", answer
    assert app.lobby.rooms[room].state.value == "finished"
    store: Any = app.store
    assert [a.rev for a in store.logs[room]] == list(range(1, human.rev(room) + 1))
    assert store.snapshots[room][0] == human.rev(room)
    assert store.results[room]["scores"] == human.view(room)["shared"]["result"]["scores"]
    assert store.rooms[room]["state"] == "playing"
    assert [s["bot"] for s in store.rooms[room]["seats"]] == [False, True, True, True]


async def test_quick_match_fills_the_oldest_open_room_then_starts_it(
    app: App, make_client: MakeClient
) -> None:
    first = await make_client("first")
    second = await make_client("second")
    a = await first.request({"type": "quick", "game": "tiny", "players": 2, "name": "a"})
    b = await second.request({"type": "quick", "game": "tiny", "players": 2, "name": "b"})
    assert a["type"] == b["type"] == "joined"
    assert a["room"] == b["room"] and {a["seat"], b["seat"]} == {0, 1}
    await first.wait_for(lambda f: f["type"] == "room" and f["info"]["state"] == "playing")
    third = await make_client("third")
    c = await third.request({"type": "quick", "game": "tiny", "players": 2})
    assert c["room"] != a["room"] and c["seat"] == 0


async def test_hello_is_answered_with_the_session_limits_and_games(
    app: App, make_client: MakeClient
) -> None:
    client = await make_client("fresh", hello=False)
    welcome = await client.request({"type": "hello", "version": 1, "client": "fresh"})
    assert welcome["version"] == 1 and len(welcome["session"]) == 16
    assert welcome["limits"]["max_frame_bytes"] == app.config.max_frame_bytes
    assert {"max_depth", "max_container", "max_str", "rate_burst"} <= set(welcome["limits"])
    assert "tiny" in welcome["games"]
    pong = await client.request({"type": "ping"})
    assert pong["type"] == "pong" and isinstance(pong["ts"], float)


async def test_a_flapping_store_pauses_each_room_once_and_resumes_it_once_settled(
    make_app: MakeApp,
) -> None:
    from server.store import MemoryStore
    from tests.server.matches import to_move

    app = await make_app(resume_after=0.3)
    assert isinstance(app.store, MemoryStore)
    url = f"ws://127.0.0.1:{app.port}/"
    seats = [await Client.open(url, f"s{i}") for i in range(2)]
    try:
        room = await _create(seats[0], game="yspahan")
        for i, client in enumerate(seats):
            assert (await client.request({"type": "join", "room": room, "seat": i}))["type"] == (
                "joined"
            )
        assert (await seats[0].request({"type": "start", "room": room}))["type"] == "ack"
        actor = await to_move(seats, room)
        act = {"type": "act", "room": room, "choice": 0}
        for _ in range(6):  # down and up again, each far shorter than resume_after
            app.store.fail = True
            await actor.request({"type": "sync", "room": room})  # (the room saw it)
            app.store.fail = False
            answer = await actor.request({**act, "rev": actor.rev(room)})
            assert answer["type"] == "error" and answer["code"] == "unavailable", answer
        resumed = await actor.wait_for(lambda f: f["type"] == "pause" and not f["paused"])
        assert resumed["reason"] == "storage available"
        for client in seats:
            pauses = [f["paused"] for f in client.frames if f["type"] == "pause"]
            assert pauses == [True, False], (client.name, pauses)
        answer = await actor.request({**act, "rev": actor.rev(room)})
        assert answer["type"] == "ack", answer
    finally:
        for client in seats:
            await client.close()
