"""A seat whose player is gone past the grace period is played by a bot, then handed back.

Real sockets, a real server; the grace period is shrunk to a fraction of a second
(``takeover_grace``, env ``OASIS_TAKEOVER_GRACE``). Seats are driven by clients that know no
rules: they pick a random legal choice from their own view.

The room's rules are proved in process by its twins (tests/server/core/: commands at chosen
times, decoded frames); what stays here proves the shell around them: frames reach real
sockets, timers fire in real time, the store is the app's.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from tests.server.client import Client
from tests.server.conftest import MakeApp
from tests.server.matches import my_turn, over


def _seat_info(client: Client, room: str) -> list[dict[str, Any]]:
    infos = [f for f in client.frames if f["type"] == "room" and f["room"] == room]
    return list(infos[-1]["info"]["seats"]) if infos else []


async def _drive(client: Client, room: str, rng: random.Random, stop: Any = None) -> int:
    """Act whenever this seat must decide, until the match is over (or ``stop()``)."""
    acted = 0
    while True:
        await client.until(
            lambda: my_turn(client, room) or over(client, room) or bool(stop and stop()), wait=30
        )
        if over(client, room) or (stop and stop()):
            return acted
        rev = client.rev(room)
        choices = client.view(room)["own"]["choices"]
        answer = await client.request(
            {"type": "act", "room": room, "rev": rev, "choice": rng.randrange(len(choices))}
        )
        assert answer["type"] == "ack", answer
        acted += 1


async def _url(make_app: MakeApp, **config: Any) -> str:
    app = await make_app(**config)
    return f"ws://127.0.0.1:{app.port}/"


async def test_a_gone_player_is_replaced_by_a_bot_and_gets_the_seat_back(
    make_app: MakeApp,
) -> None:
    url = await _url(make_app, takeover_grace=0.3)
    ann = await Client.open(url, "ann")
    bob = await Client.open(url, "bob")
    created = await ann.request({"type": "create", "game": "yspahan", "players": 2, "seed": 4})
    room = created["room"]
    await ann.request({"type": "join", "room": room, "name": "ann"})
    token = (await bob.request({"type": "join", "room": room, "name": "bob"}))["token"]
    assert (await ann.request({"type": "start", "room": room}))["type"] == "ack"
    rng = random.Random(1)

    # Both play a little; then bob's connection drops.
    await asyncio.gather(
        _drive(ann, room, rng, lambda: ann.rev(room) >= 12),
        _drive(bob, room, rng, lambda: bob.rev(room) >= 12),
    )
    await bob.close()
    gone_at = ann.rev(room)

    # Ann plays on; after the grace period a stand-in (a heuristic bot) makes bob's decisions.
    def taken_over() -> bool:
        seats = _seat_info(ann, room)
        return bool(seats) and seats[1]["standin"] and ann.rev(room) >= gone_at + 30

    await _drive(ann, room, rng, taken_over)
    seat = _seat_info(ann, room)[1]
    assert seat["standin"] is True and seat["bot_kind"] == "heuristic"
    assert seat["connected"] is False and seat["bot"] is False
    history = ann.rooms[room].history
    moved_for_bob = [
        rev
        for rev in range(gone_at, ann.rev(room))
        if rev in history and history[rev]["shared"]["turn"]["seat"] == 1 and rev + 1 in history
    ]
    assert moved_for_bob, "the stand-in never moved"

    # Bob comes back with his token: the seat is his again, the bot no longer moves for it.
    back = await Client.open(url, "bob-again")
    joined = await back.request({"type": "join", "room": room, "token": token})
    assert joined["type"] == "joined" and joined["seat"] == 1
    assert joined["info"]["seats"][1]["standin"] is False
    await ann.until(lambda: bool(_seat_info(ann, room)) and not _seat_info(ann, room)[1]["standin"])
    acted = await asyncio.gather(_drive(ann, room, rng), _drive(back, room, rng))
    assert acted[1] > 0, "bob never had to decide again"
    result = back.view(room)["shared"]["result"]
    assert result is not None and len(result["scores"]) == 2
    for client in (ann, back):
        await client.close()
        assert not client.failures, client.failures


async def test_create_fills_the_last_seats_with_bots_of_the_chosen_kind(
    make_app: MakeApp,
) -> None:
    url = await _url(make_app)
    ann = await Client.open(url, "ann")
    created = await ann.request(
        {"type": "create", "game": "ishtar", "players": 3, "seed": 9, "bots": 2, "bot": "heuristic"}
    )
    assert created["type"] == "ack", created
    room = created["room"]
    joined = await ann.request({"type": "join", "room": room, "name": "ann"})
    assert joined["seat"] == 0
    seats = joined["info"]["seats"]
    assert [(s["bot"], s["bot_kind"]) for s in seats] == [
        (False, None),
        (True, "heuristic"),
        (True, "heuristic"),
    ]
    assert (await ann.request({"type": "start", "room": room}))["type"] == "ack"
    await _drive(ann, room, random.Random(3))
    assert ann.view(room)["shared"]["result"] is not None
    for bad in (
        {"bots": 3, "players": 2},
        {"bot": "genius"},
        {"bots": -1},
    ):
        frame = {"type": "create", "game": "tiny", "players": 2, **bad}
        answer = await ann.request(frame)
        assert answer["type"] == "error" and answer["code"] == "bad_request", answer
    await ann.close()
    assert not ann.failures, ann.failures
