"""Resume with a seat token: missed patches from the room's buffer, else the full view."""

from __future__ import annotations

import copy
from typing import Any

from server.app import App
from tests.server.client import Client, RoomView
from tests.server.conftest import MakeApp, MakeClient


async def _room(host: Client, players: int, seed: int = 5) -> str:
    created = await host.request(
        {"type": "create", "game": "tiny", "players": players, "seed": seed}
    )
    return str(created["room"])


async def _seated(make_client: MakeClient, room: str, players: int) -> list[tuple[Client, str]]:
    out = []
    for i in range(players):
        client = await make_client(f"seat{i}")
        joined = await client.request({"type": "join", "room": room, "seat": i})
        out.append((client, joined["token"]))
    return out


async def _act(client: Client, room: str) -> dict[str, Any]:
    await client.until(lambda: bool(client.view(room)["own"]["choices"]))
    answer = await client.request(
        {"type": "act", "room": room, "rev": client.rev(room), "choice": 0}
    )
    assert answer["type"] == "ack", answer
    return answer


async def _drop_and_miss(make_client: MakeClient, room: str) -> tuple[list[Any], int, RoomView]:
    """Four seats; seat 1 acts then drops; seats 2, 3 and 0 act while it is gone."""
    seats = await _seated(make_client, room, 4)
    await seats[0][0].request({"type": "start", "room": room})
    await _act(seats[0][0], room)
    await _act(seats[1][0], room)
    dropped = seats[1][0]
    last = dropped.rev(room)
    saved = copy.deepcopy(dropped.rooms[room])
    await dropped.close()
    for i in (2, 3, 0):
        await _act(seats[i][0], room)
    return seats, last, saved


async def test_dropped_seat_resumes_with_only_the_missed_patches(
    app: App, make_client: MakeClient
) -> None:
    host = await make_client("host")
    room = await _room(host, 4)
    seats, last, saved = await _drop_and_miss(make_client, room)
    back = await make_client("back")
    back.rooms[room] = saved
    start = len(back.frames)
    joined = await back.request({"type": "join", "room": room, "token": seats[1][1], "rev": last})
    assert joined["type"] == "joined" and joined["seat"] == 1
    assert joined["view"] is None and joined["rev"] == last
    await back.until(lambda: back.rev(room) == last + 3)
    kinds = [f["type"] for f in back.frames[start:] if f.get("room") == room]
    assert kinds.count("patch") == 3 and "state" not in kinds
    state = await back.request({"type": "sync", "room": room})
    assert state["view"] == back.view(room)
    # The seat is usable again: it is seat 1's turn.
    await _act(back, room)


async def test_resume_after_the_buffer_moved_on_gets_the_full_view(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    small = await make_app(patch_buffer=1)
    host = await make_client("host", target=small)

    async def on_small(name: str = "t") -> Client:
        return await make_client(name, target=small)

    room = await _room(host, 4)
    seats, last, _ = await _drop_and_miss(on_small, room)
    back = await make_client("back", target=small)
    joined = await back.request({"type": "join", "room": room, "token": seats[1][1], "rev": last})
    assert joined["view"] is not None and joined["rev"] == last + 3
    assert "token" not in joined


async def test_a_wrong_token_is_refused_and_changes_nothing(
    app: App, make_client: MakeClient
) -> None:
    host = await make_client("host")
    room = await _room(host, 2)
    seats = await _seated(make_client, room, 2)
    thief = await make_client("thief")
    answer = await thief.request(
        {"type": "join", "room": room, "token": seats[0][1][:-2] + "xx", "rev": 0}
    )
    assert answer["type"] == "error" and answer["code"] == "bad_token"
    answer = await thief.request({"type": "join", "room": room, "token": seats[0][1], "seat": 1})
    assert answer["code"] == "bad_token"
    held = app.lobby.rooms[room]
    assert held.seats[0].conn is not None and held.seats[0].conn.client == "seat0"
    assert held.rev == 0 and room not in thief.rooms


async def test_resuming_elsewhere_takes_the_seat_from_the_old_connection(
    app: App, make_client: MakeClient
) -> None:
    host = await make_client("host")
    room = await _room(host, 2)
    seats = await _seated(make_client, room, 2)
    await seats[0][0].request({"type": "start", "room": room})
    second = await make_client("second")
    joined = await second.request({"type": "join", "room": room, "token": seats[0][1]})
    assert joined["seat"] == 0 and joined["view"] is not None
    old = seats[0][0]
    await old.wait_for(lambda f: f["type"] == "error" and f["message"] == "seat resumed elsewhere")
    answer = await old.request({"type": "act", "room": room, "rev": 0, "choice": 0})
    assert answer["code"] == "not_allowed"
    await _act(second, room)


async def test_spectator_resumes_from_its_last_rev(app: App, make_client: MakeClient) -> None:
    host = await make_client("host")
    room = await _room(host, 2)
    seats = await _seated(make_client, room, 2)
    await seats[0][0].request({"type": "start", "room": room})
    watcher = await make_client("watcher")
    await watcher.request({"type": "spectate", "room": room})
    await _act(seats[0][0], room)
    await watcher.until(lambda: watcher.rev(room) == 1)
    saved = copy.deepcopy(watcher.rooms[room])
    await watcher.close()
    await _act(seats[1][0], room)
    again = await make_client("again")
    again.rooms[room] = saved
    joined = await again.request({"type": "spectate", "room": room, "rev": 1})
    assert joined["view"] is None
    await again.until(lambda: again.rev(room) == 2)
    state = await again.request({"type": "sync", "room": room})
    assert state["view"] == again.view(room)
