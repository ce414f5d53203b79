"""Spectators over real sockets: the delayed feed of streamed matches, in real time.

The room's rules are proved in process by its twins (tests/server/core/: commands at chosen
times, decoded frames); what stays here proves the shell around them: frames reach real
sockets, timers fire in real time, the store is the app's.
"""

from __future__ import annotations

import time

from server.app import App
from tests.server.client import Client
from tests.server.conftest import MakeClient

DELAY = 0.3


async def _two_seats(make_client: MakeClient, **fields: object) -> tuple[str, list[Client]]:
    host = await make_client("seat0")
    created = await host.request(
        {"type": "create", "game": "tiny", "players": 2, "seed": 21, **fields}
    )
    room = created["room"]
    other = await make_client("seat1")
    await host.request({"type": "join", "room": room})
    await other.request({"type": "join", "room": room})
    return room, [host, other]


async def _step(seats: list[Client], room: str, sent: dict[int, float]) -> bool:
    """Whoever must move plays its first choice; False once the match is over."""
    view = seats[0].view(room)
    if view["shared"]["result"] is not None:
        return False
    mover = seats[view["shared"]["turn"]["seat"]]
    await mover.until(lambda: bool(mover.view(room)["own"]["choices"]))
    rev = mover.rev(room)
    sent[rev + 1] = time.monotonic()
    answer = await mover.request({"type": "act", "room": room, "rev": rev, "choice": 0})
    assert answer["type"] == "ack", answer
    for seat in seats:
        await seat.until(lambda s=seat: s.rev(room) == rev + 1)  # type: ignore[misc]
    return True


async def test_delayed_spectators_see_each_rev_no_earlier_than_the_delay_and_converge(
    app: App, make_client: MakeClient
) -> None:
    room, seats = await _two_seats(make_client, spectator_delay=DELAY)
    early = await make_client("early")
    await early.request({"type": "spectate", "room": room})
    await seats[0].request({"type": "start", "room": room})
    sent: dict[int, float] = {}
    for _ in range(4):
        await _step(seats, room, sent)
    late = await make_client("late")
    joined = await late.request({"type": "spectate", "room": room})
    received = time.monotonic()
    assert joined["rev"] == 0 or sent[joined["rev"]] + DELAY <= received
    assert joined["rev"] <= seats[0].rev(room)
    while await _step(seats, room, sent):
        pass
    final = seats[0].rev(room)
    for watcher in (early, late):
        await watcher.until(lambda w=watcher: w.rev(room) == final, wait=10)  # type: ignore[misc]
        for rev, at in watcher.rooms[room].patch_times.items():
            assert at >= sent[rev] + DELAY, (watcher.name, rev, at - sent[rev])
        state = await watcher.request({"type": "sync", "room": room})
        assert state["rev"] == final and state["view"] == watcher.view(room)
        assert watcher.view(room)["shared"] == seats[0].view(room)["shared"]
        assert watcher.view(room)["own"] is None


async def test_seat_chat_reaches_delayed_spectators_after_the_delay(
    app: App, make_client: MakeClient
) -> None:
    room, seats = await _two_seats(make_client, spectator_delay=DELAY)
    watcher = await make_client("watcher")
    await watcher.request({"type": "spectate", "room": room})
    said = time.monotonic()
    ack = await seats[0].request({"type": "chat", "room": room, "text": "psst"})
    assert ack["type"] == "ack"
    await seats[1].wait_for(lambda f: f["type"] == "chat")
    late = await make_client("late")
    joined = await late.request({"type": "spectate", "room": room})
    if time.monotonic() < said + DELAY:
        assert joined["chat"] == []
    line = await watcher.wait_for(lambda f: f["type"] == "chat")
    assert line["text"] == "psst" and time.monotonic() >= said + DELAY
