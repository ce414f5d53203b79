"""``oasis replay ROOM`` prints, byte for byte, what the live match's spectators were sent."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from server import replay
from server.app import App
from server.redis_store import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import my_turn, over
from tests.server.persistence.processes import archive_of
from tests.server.persistence.test_crash import _games
from tests.services import RedisServer

ROOT = Path(__file__).parents[3]


async def _live_match(url: str, game: str, seed: int) -> tuple[str, Client]:
    """A finished match (one human seat, bots in the others) and the spectator that saw it."""
    store = RedisStore(url)
    await store.start()
    app = App(TEST_CONFIG, store)
    await app.start()
    address = f"ws://127.0.0.1:{app.port}/"
    human = await Client.open(address, "human")
    spectator = await Client.open(address, "spectator")
    try:
        room = (await human.request({"type": "create", "game": game, "players": 3, "seed": seed}))[
            "room"
        ]
        await human.request({"type": "join", "room": room})
        await spectator.request({"type": "spectate", "room": room})
        await human.request({"type": "start", "room": room, "bots": True})
        rng = random.Random(seed)
        while not over(human, room):
            await human.until(lambda: my_turn(human, room) or over(human, room), wait=30)
            if my_turn(human, room):
                choices = human.view(room)["own"]["choices"]
                await human.request(
                    {
                        "type": "act",
                        "room": room,
                        "rev": human.rev(room),
                        "choice": rng.randrange(len(choices)),
                    }
                )
        final = human.rev(room)
        await spectator.until(lambda: spectator.rev(room) == final)
        await archive_of(store, room)
    finally:
        await human.close()
        await spectator.close()
        await app.stop()
    return room, spectator


@pytest.mark.parametrize("game", _games())
async def test_oasis_replay_prints_the_live_events_and_final_state_byte_for_byte(
    redis_server: RedisServer, game: str
) -> None:
    room, spectator = await _live_match(redis_server.url, game, seed=77)
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "oasis", "replay", room, "--redis-url", redis_server.url],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    patches = [f for f in spectator.frames if f["type"] == "patch" and f["room"] == room]
    assert len(lines) == len(patches) + 1
    for text, patch in zip(lines, patches, strict=False):
        printed = json.loads(text)
        assert printed["rev"] == patch["rev"]
        expected = {**printed, "events": patch["events"]}
        assert text == replay.line(expected)  # the live events, rendered the same way
    summary = json.loads(lines[-1])
    assert summary["matches_archive"] is True
    assert summary["result"] == spectator.view(room)["shared"]["result"]
    assert summary["view_hash"] == patches[-1]["hash"]
    assert summary["revs"] == patches[-1]["rev"]


async def test_oasis_replay_of_an_unknown_room_says_so(redis_server: RedisServer) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    args = parser.parse_args(["nope", "--redis-url", redis_server.url])
    assert await asyncio.to_thread(replay.run, args) == 1
