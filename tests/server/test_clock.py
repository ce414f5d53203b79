"""Fischer clocks over real sockets: a forfeit on time and its archive, bad clock options.

Times are small (tenths of a second) and every wait is for a frame, never a fixed sleep.

The room's rules are proved in process by its twins (tests/server/core/: commands at chosen
times, decoded frames); what stays here proves the shell around them: frames reach real
sockets, timers fire in real time, the store is the app's.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from server.app import App
from server.store import MemoryStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG, MakeApp
from tests.server.matches import my_turn, over


async def _room(url: str, clock: dict[str, Any], game: str = "tiny", seed: int = 3) -> Any:
    ann = await Client.open(url, "ann")
    bob = await Client.open(url, "bob")
    created = await ann.request(
        {"type": "create", "game": game, "players": 2, "seed": seed, "clock": clock}
    )
    assert created["type"] == "ack", created
    room = created["room"]
    assert created["info"]["clock"] == {
        "initial": float(clock["initial"]),
        "increment": float(clock.get("increment", 0)),
        "on_timeout": clock.get("on_timeout", "bot"),
    }
    await ann.request({"type": "join", "room": room, "seat": 0})
    await bob.request({"type": "join", "room": room, "seat": 1})
    assert (await ann.request({"type": "start", "room": room}))["type"] == "ack"
    return ann, bob, room


async def _play_out(clients: list[Client], room: str, seed: int) -> None:
    rng = random.Random(seed)

    async def drive(client: Client) -> None:
        while True:
            await client.until(lambda: my_turn(client, room) or over(client, room), wait=30)
            if over(client, room):
                return
            choices = client.view(room)["own"]["choices"]
            answer = await client.request(
                {
                    "type": "act",
                    "room": room,
                    "rev": client.rev(room),
                    "choice": rng.randrange(len(choices)),
                }
            )
            # A clock may run out (and the bot move) between our view and our act.
            assert answer["type"] == "ack" or answer["code"] in ("stale_rev", "not_your_turn")
            if rng.random() < 0.3:
                await client.request({"type": "sync", "room": room})

    await asyncio.gather(*(drive(c) for c in clients))


async def test_forfeit_on_time_hands_the_seat_to_the_random_bot_and_is_archived() -> None:
    store = MemoryStore()
    app = App(TEST_CONFIG, store)
    await app.start()
    try:
        url = f"ws://127.0.0.1:{app.port}/"
        ann, bob, room = await _room(url, {"initial": 1, "increment": 5, "on_timeout": "forfeit"})
        # Ann (seat 0, first to move in tiny) never moves.
        await bob.until(
            lambda: any(
                f["type"] == "room" and f["info"]["seats"][0]["forfeited"] for f in bob.frames
            )
        )
        await bob.until(lambda: bob.view(room)["clock"]["forfeited"] == [0])
        seats = next(f for f in reversed(bob.frames) if f["type"] == "room")["info"]["seats"]
        assert seats[0]["bot_kind"] == "random" and seats[0]["forfeited"] is True
        bob_plays = asyncio.create_task(_play_out([bob], room, 4))
        refused = await ann.request(
            {"type": "act", "room": room, "rev": ann.rev(room), "choice": 0}
        )
        assert refused["type"] == "error" and refused["code"] == "not_allowed", refused
        assert "forfeited" in refused["message"]
        await bob_plays
        assert store.results[room]["forfeited"] == [0]
        for c in (ann, bob):
            await c.close()
            assert not c.failures, c.failures
    finally:
        await app.stop()


@pytest.mark.parametrize(
    "clock",
    [
        "fast",
        {},
        {"initial": 0},
        {"initial": -1},
        {"initial": 10, "increment": -1},
        {"initial": 10, "on_timeout": "panic"},
        {"initial": True},
        {"initial": 10**9},
    ],
)
async def test_bad_clock_options_are_refused(make_app: MakeApp, clock: Any) -> None:
    app = await make_app()
    client = await Client.open(f"ws://127.0.0.1:{app.port}/", "c")
    answer = await client.request({"type": "create", "game": "tiny", "players": 2, "clock": clock})
    assert answer["type"] == "error" and answer["code"] == "bad_request", answer
    await client.close()
