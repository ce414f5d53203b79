"""Acceptance: ``kill -9`` of a real ``oasis-server`` mid-match, again and again, loses nothing.

Matches of every landed game run against one redis-server, with seats played by clients that
know nothing of the rules and a room where server-side bots hold seats. The server process is
killed (SIGKILL, no warning) after a random number of further acknowledged choices, several
times, and started again on the same port and Redis. Then:

- every room comes back: every seat resumes with its token (a room that is not found must have
  finished and been archived);
- every acknowledged choice is in the archive, at its rev;
- every match finishes, and its archived choices replayed from the seed without interruption
  give the same final view for every seat and the same result;
- bots moved exactly as an uninterrupted room's bots would (their choice is a function of the
  seed, their seat and the rev, also across restores), and never undid.

The seats take back a step now and then where their view says they may (issue 19): the undos
are entries of the log like the choices, so the checks above hold them too (a restored room
must take back exactly what the live one would).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from games import registry
from games.base import Match
from server.randombot import RandomBot
from server.store import ArchiveRecord
from server.store.redis import RedisStore
from tests.server.matches import REAL_GAMES, room_view
from tests.server.persistence.processes import SeatDriver, ServerProcess, archive_of
from tests.services import RedisServer, free_port


@dataclass(frozen=True)
class Plan:
    games: list[str]
    rooms_per_game: int
    players: int
    kills: int
    gap: tuple[int, int]
    """A kill comes after this many (random in the range) further acknowledged choices."""


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> ServerProcess:
    return ServerProcess(free_port(), redis_server.url, tmp_path / "server.log")


@pytest.mark.parametrize("game", REAL_GAMES)
async def test_kill_9_at_random_moments_loses_no_acknowledged_choice(
    game: str, server: ServerProcess, reader: RedisStore
) -> None:
    undos = await _crash_run(
        server, reader, Plan([game], 2, 2, kills=3, gap=(3, 15)), seed=len(game)
    )
    assert undos > 0, "no undo in the logs"


@pytest.mark.slow
async def test_many_kills_many_rooms_both_games(server: ServerProcess, reader: RedisStore) -> None:
    plan = Plan(list(REAL_GAMES), rooms_per_game=4, players=3, kills=15, gap=(5, 40))
    await _crash_run(server, reader, plan, seed=2026)


async def _crash_run(server: ServerProcess, reader: RedisStore, plan: Plan, seed: int) -> int:
    """Play ``plan``, killing the server as it says; the undos acknowledged."""
    rng = random.Random(seed)
    progress = asyncio.Event()
    server.start()
    try:
        drivers: list[SeatDriver] = []
        rooms: dict[str, tuple[str, int, int]] = {}  # room -> (game, players, seed)
        bots: dict[str, list[int]] = {}
        for game in plan.games:
            engine = registry.get(game)
            players = max(engine.min_players, min(plan.players, engine.max_players))
            for i in range(plan.rooms_per_game):
                room_seed = rng.randrange(2**40)
                with_bots = i == 0  # one room per game with server-side bots in every seat but 0
                room, new = await _open_room(
                    server, game, players, room_seed, with_bots, rng, progress
                )
                rooms[room] = (game, players, room_seed)
                bots[room] = list(range(1, players)) if with_bots else []
                drivers.extend(new)
        tasks = [asyncio.create_task(d.run()) for d in drivers]
        done = asyncio.gather(*tasks)

        def acked() -> int:
            return sum(len(d.acked) for d in drivers)

        kills = 0
        while kills < plan.kills and not done.done():
            target = acked() + rng.randint(*plan.gap)
            while acked() < target and not done.done():
                progress.clear()
                waiter = asyncio.ensure_future(progress.wait())
                either: set[asyncio.Future[Any]] = {waiter, done}
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED, timeout=60)
                waiter.cancel()
            if done.done():
                break
            server.kill()
            kills += 1
            server.start()
        async with asyncio.timeout(120):
            await done
        assert kills >= min(plan.kills, 1), "the matches ended before the first kill"
        assert sum(d.resumes for d in drivers) >= kills  # every kill made seats resume
        for room, (game, players, room_seed) in rooms.items():
            archive = await archive_of(reader, room)
            seats = [d for d in drivers if d.room == room]
            _check_room(archive, game, players, room_seed, seats, bots[room])
    finally:
        code = await asyncio.to_thread(server.stop)  # our clients must answer its close
    assert code in (0, None), server.log.read_text()[-2000:]
    return sum(1 for d in drivers for entry in d.acked.values() if entry == {"undo": True})


async def _open_room(
    server: ServerProcess,
    game: str,
    players: int,
    seed: int,
    with_bots: bool,
    rng: random.Random,
    progress: asyncio.Event,
) -> tuple[str, list[SeatDriver]]:
    host = await server.client("host")
    created = await host.request({"type": "create", "game": game, "players": players, "seed": seed})
    assert created["type"] == "ack", created
    room: str = created["room"]
    humans = (
        [host] if with_bots else [host] + [await server.client(f"s{i}") for i in range(1, players)]
    )
    drivers = []
    for i, client in enumerate(humans):
        joined = await client.request({"type": "join", "room": room, "seat": i})
        assert joined["type"] == "joined", joined
        drivers.append(
            SeatDriver(
                server,
                room,
                i,
                joined["token"],
                random.Random(rng.random()),
                client,
                progress,
                undo=0.3,
            )
        )
    started = await host.request({"type": "start", "room": room, "bots": with_bots})
    assert started["type"] == "ack", started
    return room, drivers


def _check_room(
    archive: ArchiveRecord,
    game: str,
    players: int,
    seed: int,
    seats: list[SeatDriver],
    bot_seats: list[int],
) -> None:
    assert archive.seed == seed and archive.game == game
    stored = {a.rev: (a.seat, a.choice) for a in archive.actions}
    for driver in seats:
        for rev, choice in driver.acked.items():
            assert stored.get(rev) == (driver.seat, choice), (archive.room, rev)
    engine = registry.get(game)
    match: Match[Any] = Match.new(engine, players, archive.options, seed)
    for action in archive.actions:
        decision = match.decision
        assert decision is not None and decision.seat == action.seat
        if action.undo:
            assert action.seat not in bot_seats, (archive.room, action.rev, "a bot undid")
            match.undo(action.seat)
            continue
        if action.seat in bot_seats:
            own = {"choices": list(decision.choices)}
            expected = RandomBot(seed, action.seat).choose(own, action.rev - 1)
            assert list(decision.choices).index(action.choice) == expected, (
                archive.room,
                action.rev,
            )
        match.act(action.seat, action.choice)
    assert match.over, archive.room
    result = match.result()
    assert result is not None and result.to_json() == archive.result
    for driver in seats:
        if driver.final_view is not None:
            assert driver.final_view == room_view(match, driver.seat)


async def test_the_server_waits_for_redis_before_it_listens(
    redis_server: RedisServer, server: ServerProcess
) -> None:
    """Restoring needs Redis: with Redis down the server does not come up empty."""
    redis_server.stop()
    server.start()
    try:
        with pytest.raises((OSError, TimeoutError)):
            await server.client("early", within=1.0)
        redis_server.start()
        client = await server.client("late")
        await client.close()
    finally:
        assert await asyncio.to_thread(server.stop) == 0
