"""Bot seats, stand-ins and clocks after a restart (the room rebuilt from Redis).

Bot seats come back with their kind; every human seat starts a fresh grace period and is then
played by a stand-in; clocks restart at their stored remaining time, the time the server was
down not counted (server.clock, server.takeover).
"""

from __future__ import annotations

import dataclasses
import random

from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG, redis_app
from tests.server.matches import my_turn, over
from tests.services import RedisServer


async def test_bot_seats_and_clocks_survive_a_restart(redis_server: RedisServer) -> None:
    config = dataclasses.replace(TEST_CONFIG, takeover_grace=0.2)
    first = await redis_app(redis_server.url, config)
    ann = await Client.open(f"ws://127.0.0.1:{first.port}/", "ann")
    created = await ann.request(
        {
            "type": "create",
            "game": "yspahan",
            "players": 2,
            "seed": 12,
            "bots": 1,
            "bot": "heuristic",
            "clock": {"initial": 600, "increment": 1},
        }
    )
    room = created["room"]
    token = (await ann.request({"type": "join", "room": room}))["token"]
    await ann.request({"type": "start", "room": room})
    rng = random.Random(3)
    while ann.rev(room) < 20:
        await ann.until(lambda: my_turn(ann, room))
        choices = ann.view(room)["own"]["choices"]
        answer = await ann.request(
            {
                "type": "act",
                "room": room,
                "rev": ann.rev(room),
                "choice": rng.randrange(len(choices)),
            }
        )
        assert answer["type"] == "ack", answer
    await ann.until(lambda: my_turn(ann, room))
    before = ann.view(room)["clock"]["remaining_ms"]
    rev = ann.rev(room)
    await ann.close()
    await first.stop()

    second = await redis_app(redis_server.url, config)
    try:
        restored = second.lobby.rooms[room]
        assert restored.rev == rev
        assert restored.seats[1].bot and restored.seats[1].bot_kind == "heuristic"
        assert restored.timekeeper.clocks is not None
        assert [round(r * 1000) for r in restored.timekeeper.clocks.remaining] == before
        # Nobody resumed seat 0 within the grace period: a stand-in plays it, to the end.
        watcher = await Client.open(f"ws://127.0.0.1:{second.port}/", "watcher")
        await watcher.request({"type": "spectate", "room": room})
        await watcher.until(lambda: over(watcher, room), wait=30)
        assert (
            any(f["type"] == "room" and f["info"]["seats"][0]["standin"] for f in watcher.frames)
            or restored.seats[0].standin
        )
        # The player can still resume the seat of the finished match with the token.
        back = await Client.open(f"ws://127.0.0.1:{second.port}/", "ann-again")
        joined = await back.request({"type": "join", "room": room, "token": token})
        assert joined["type"] == "joined" and joined["seat"] == 0
        assert joined["view"]["clock"]["running"] is None
        for c in (watcher, back):
            await c.close()
            assert not c.failures, c.failures
    finally:
        await second.stop()
