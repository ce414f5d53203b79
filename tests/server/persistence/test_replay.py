"""``oasis replay ROOM`` prints, byte for byte, what the live match's spectators were sent."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.hashing import view_hash
from server import replay
from server.app import App
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import REAL_GAMES, my_turn, over
from tests.server.persistence.processes import archive_of
from tests.services import RedisServer

ROOT = Path(__file__).parents[3]


async def _live_match(
    url: str, game: str, seed: int, clock: dict[str, Any] | None = None, *, idle: bool = False
) -> tuple[str, Client]:
    """A finished match (one human seat, bots in the others) and the spectator that saw it.

    ``clock``: the room's clocks; ``idle``: the human never moves (their clock must decide)."""
    store = RedisStore(url)
    await store.start()
    app = App(TEST_CONFIG, store)
    await app.start()
    address = f"ws://127.0.0.1:{app.port}/"
    human = await Client.open(address, "human")
    spectator = await Client.open(address, "spectator")
    try:
        create: dict[str, Any] = {"type": "create", "game": game, "players": 3, "seed": seed}
        if clock is not None:
            create["clock"] = clock
        room = (await human.request(create))["room"]
        await human.request({"type": "join", "room": room})
        await spectator.request({"type": "spectate", "room": room})
        await human.request({"type": "start", "room": room, "bots": True})
        rng = random.Random(seed)
        while not over(human, room):
            await human.until(
                lambda: (not idle and my_turn(human, room)) or over(human, room), wait=60
            )
            if not idle and my_turn(human, room):
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


async def _replay(url: str, room: str) -> list[str]:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "oasis", "replay", room, "--redis-url", url],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().splitlines()


@pytest.mark.parametrize("game", REAL_GAMES)
async def test_oasis_replay_prints_the_live_events_and_final_state_byte_for_byte(
    redis_server: RedisServer, game: str
) -> None:
    room, spectator = await _live_match(redis_server.url, game, seed=77)
    lines = await _replay(redis_server.url, room)
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


@pytest.mark.parametrize(
    ("clock", "idle"),
    [({"initial": 600, "increment": 2}, False), ({"initial": 0.05, "on_timeout": "forfeit"}, True)],
    ids=["playing", "forfeited"],
)
async def test_oasis_replay_of_a_room_with_clocks_prints_the_spectators_last_hash(
    redis_server: RedisServer, clock: dict[str, Any], idle: bool
) -> None:
    """The spectators' view has a clock part (SPEC section 20): the printed hash covers it, as
    the archive kept the final clocks; a seat forfeited on time is in the stored result, and
    the replay, which knows the clocks, still matches it."""
    room, spectator = await _live_match(redis_server.url, "yspahan", 78, clock, idle=idle)
    summary = json.loads((await _replay(redis_server.url, room))[-1])
    patches = [f for f in spectator.frames if f["type"] == "patch" and f["room"] == room]
    final = spectator.view(room)
    assert final["clock"]["running"] is None
    assert summary["view_hash"] == patches[-1]["hash"] == view_hash(final)
    assert summary["matches_archive"] is True
    if idle:
        assert final["clock"]["forfeited"] == [0]
        assert summary["stored_result"]["forfeited"] == [0]
    else:
        assert final["clock"]["timeouts"] == [0, 0, 0]
        assert all(ms > 600_000 for ms in final["clock"]["remaining_ms"])  # increments gained


async def test_oasis_replay_of_an_unknown_room_says_so(redis_server: RedisServer) -> None:
    import argparse

    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    args = parser.parse_args(["nope", "--redis-url", redis_server.url])
    assert await asyncio.to_thread(replay.run, args) == 1
