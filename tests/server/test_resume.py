"""Resume with a seat token over a new socket: the missed patches from the room's buffer.

The room's rules are proved in process by its twins (tests/server/core/: commands at chosen
times, decoded frames); what stays here proves the shell around them: frames reach real
sockets, timers fire in real time, the store is the app's.
"""

from __future__ import annotations

import copy
from typing import Any

from server.app import App
from tests.server.client import Client, RoomView
from tests.server.conftest import MakeClient


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
