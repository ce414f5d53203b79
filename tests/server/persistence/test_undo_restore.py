"""Undos in the stored log (issue 19): restarts, replay rooms and ``oasis replay`` give the same
match, byte for byte, on a real redis-server.

The rooms snapshot every 3 revisions, so a snapshot is due between steps and their undos again
and again: the keeper waits for a settled revision (no step open to an undo), and a restored
room can take back exactly what the live one could.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games import registry
from games.base import Match
from protocol.hashing import view_hash
from server.app import App
from server.main import restore_rooms
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import REAL_GAMES, my_turn, over, room_view
from tests.server.persistence.processes import archive_of
from tests.services import RedisServer

ROOT = Path(__file__).parents[3]
CONFIG = dataclasses.replace(TEST_CONFIG, snapshot_every=3)


async def _app(url: str) -> App:
    store = RedisStore(url)
    await store.start()
    app = App(CONFIG, store)
    await restore_rooms(app)
    await app.start()
    return app


async def _move(client: Client, room: str, rng: random.Random, undo: float) -> str:
    """One move of the seat to move: an undo (where its view allows it) or a random choice."""
    own = client.view(room)["own"]
    rev = client.rev(room)
    if own["undo"] and rng.random() < undo:
        answer = await client.request({"type": "undo", "room": room, "rev": rev})
        kind = "undo"
    else:
        index = rng.randrange(len(own["choices"]))
        answer = await client.request({"type": "act", "room": room, "rev": rev, "choice": index})
        kind = "act"
    assert answer["type"] == "ack" and answer["rev"] == rev + 1, answer
    return kind


@pytest.mark.parametrize("game", REAL_GAMES)
async def test_a_room_restored_between_a_step_and_its_undo_takes_it_back_the_same(
    redis_server: RedisServer, game: str
) -> None:
    first = await _app(redis_server.url)
    address = f"ws://127.0.0.1:{first.port}/"
    seats = [await Client.open(address, f"s{i}") for i in range(2)]
    room = (await seats[0].request({"type": "create", "game": game, "players": 2, "seed": 41}))[
        "room"
    ]
    tokens = [(await c.request({"type": "join", "room": room}))["token"] for c in seats]
    await seats[0].request({"type": "start", "room": room})
    rng = random.Random(41)
    undos = 0
    try:
        while True:
            rev = seats[0].rev(room)
            for c in seats:
                await c.until(lambda c=c, r=rev: c.rev(room) == r)  # type: ignore[misc]
            mover = next(c for c in seats if my_turn(c, room))
            due = first.lobby.rooms[room].keeper._due
            if undos >= 4 and due and mover.view(room)["own"]["undo"]:
                break  # a step is open, and a snapshot came due since it (and waits)
            undos += await _move(mover, room, rng, 0.5) == "undo"
    finally:
        for c in seats:
            await c.close()
        await first.stop()
    before = [c.view(room) for c in seats]
    assert any(v["own"]["undo"] for v in before)
    second = await _app(redis_server.url)
    try:
        address = f"ws://127.0.0.1:{second.port}/"
        back = [await Client.open(address, f"b{i}") for i in range(2)]
        for i, c in enumerate(back):
            joined = await c.request({"type": "join", "room": room, "token": tokens[i]})
            assert joined["type"] == "joined" and joined["rev"] == rev
            assert joined["hash"] == view_hash(before[i]) and joined["view"] == before[i]
        mover = next(c for c in back if my_turn(c, room))
        assert await _move(mover, room, rng, 1.0) == "undo"
        # The same undo on a local match of the same record: the same views.
        archive_like = second.lobby.rooms[room].match
        engine = registry.get(game)
        local: Match[Any] = Match(engine, engine.load(engine.dump(archive_like.state)))
        for i, c in enumerate(back):
            await c.until(lambda c=c: c.rev(room) == rev + 1)  # type: ignore[misc]
            assert c.view(room)["shared"] == room_view(local, i)["shared"]
            await c.close()
            assert not c.failures, c.failures
    finally:
        await second.stop()


async def _finished_match_with_undos(url: str, game: str, seed: int) -> tuple[str, Client, int]:
    """A finished match of one human seat (undoing often) against bots, and its spectator."""
    app = await _app(url)
    address = f"ws://127.0.0.1:{app.port}/"
    human = await Client.open(address, "human")
    spectator = await Client.open(address, "spectator")
    undos = 0
    try:
        create = {"type": "create", "game": game, "players": 2, "seed": seed}
        room = (await human.request(create))["room"]
        await human.request({"type": "join", "room": room})
        await spectator.request({"type": "spectate", "room": room})
        await human.request({"type": "start", "room": room, "bots": True})
        rng = random.Random(seed)
        while not over(human, room):
            await human.until(lambda: my_turn(human, room) or over(human, room), wait=60)
            if my_turn(human, room):
                undos += await _move(human, room, rng, 0.4) == "undo"
        final = human.rev(room)
        await spectator.until(lambda: spectator.rev(room) == final)
        await archive_of(app.store, room)  # type: ignore[arg-type]
    finally:
        await human.close()
        await app.stop()
    return room, spectator, undos


@pytest.mark.parametrize("game", REAL_GAMES)
async def test_oasis_replay_and_a_replay_room_play_the_undos_again(
    redis_server: RedisServer, game: str
) -> None:
    room, spectator, undos = await _finished_match_with_undos(redis_server.url, game, 43)
    assert undos > 3
    live = [f for f in spectator.frames if f["type"] == "patch" and f["room"] == room]
    await spectator.close()
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "oasis", "replay", room, "--redis-url", redis_server.url],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [line["events"] for line in lines[:-1]] == [p["events"] for p in live]
    assert sum(line["choice"] == {"undo": True} for line in lines[:-1]) == undos
    assert lines[-1]["matches_archive"] is True
    assert lines[-1]["view_hash"] == live[-1]["hash"]

    app = await _app(redis_server.url)
    viewer = await Client.open(f"ws://127.0.0.1:{app.port}/", "viewer")
    try:
        joined = await viewer.request({"type": "replay", "room": room, "interval": 0})
        assert joined["type"] == "joined", joined
        copy = joined["room"]
        await viewer.until(lambda: viewer.rev(copy) == live[-1]["rev"], wait=60)
        replayed = [f for f in viewer.frames if f["type"] == "patch" and f["room"] == copy]
        assert [p["events"] for p in replayed] == [p["events"] for p in live]
        assert replayed[-1]["hash"] == live[-1]["hash"]
    finally:
        await viewer.close()
        await app.stop()
