"""Acceptance: Redis restarts or goes away under a real ``oasis-server`` in the middle of a match.

- Restart (SIGTERM, or SIGKILL: Redis writes its AOF before it answers, so a killed process
  loses nothing it acknowledged): no acknowledged choice is lost.
- Down for a while: ``/readyz`` says 503, every seat gets a ``pause`` frame, every choice is
  answered ``unavailable`` and none is acknowledged; when Redis is back the room says so
  (``pause`` with ``paused: false``) and the match plays to its end with every acknowledged
  choice in the archive.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.store.redis import RedisStore
from tests.server.matches import REAL_GAMES
from tests.server.persistence.processes import SeatDriver, ServerProcess, archive_of
from tests.server.persistence.test_crash import _check_room, _open_room
from tests.server.test_http import http_get
from tests.services import RedisServer, free_port

GAME = REAL_GAMES[-1]  # yspahan: the quicker of the two
PLAYERS = 2


@pytest.fixture
async def server(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    process = ServerProcess(
        free_port(), redis_server.url, tmp_path / "server.log", {"OASIS_REDIS_TIMEOUT": "0.3"}
    )
    process.start()
    try:
        yield process
    finally:
        # In a thread: the clients on this loop must answer the server's closing handshakes.
        assert await asyncio.to_thread(process.stop) == 0, process.log.read_text()[-2000:]


async def _until(progress: asyncio.Event, cond: object, within: float = 30) -> None:
    async with asyncio.timeout(within):
        while not cond():  # type: ignore[operator]
            progress.clear()
            await progress.wait()


async def _match(
    server: ServerProcess, seed: int
) -> tuple[str, list[SeatDriver], asyncio.Event, asyncio.Future[list[None]]]:
    progress = asyncio.Event()
    room, drivers = await _open_room(
        server, GAME, PLAYERS, seed, False, random.Random(seed), progress
    )
    done = asyncio.gather(*(asyncio.create_task(d.run()) for d in drivers))
    return room, drivers, progress, done


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
async def test_a_redis_restart_mid_match_loses_no_acknowledged_choice(
    redis_server: RedisServer, server: ServerProcess, reader: RedisStore, kill: bool
) -> None:
    room, drivers, progress, done = await _match(server, seed=31)
    await _until(progress, lambda: sum(len(d.acked) for d in drivers) >= 5)
    redis_server.stop(kill=kill)
    redis_server.start()
    async with asyncio.timeout(60):
        await done
    _check_room(await archive_of(reader, room), GAME, PLAYERS, 31, drivers, [])


async def test_while_redis_is_down_nothing_is_acknowledged_and_play_resumes_after(
    redis_server: RedisServer, server: ServerProcess, reader: RedisStore
) -> None:
    room, drivers, progress, done = await _match(server, seed=32)
    await _until(progress, lambda: sum(len(d.acked) for d in drivers) >= 4)
    assert (await http_get(server.port, "/readyz"))[0] == 200
    redis_server.stop(kill=True)
    # Evidence that the outage was seen: a refused choice and a pause frame on every seat.
    await _until(progress, lambda: sum(d.refused for d in drivers) >= 1)
    for driver in drivers:
        client = driver.client
        assert client is not None
        await client.wait_for(lambda f: f["type"] == "pause" and f["paused"])
    acked_while_down = sum(len(d.acked) for d in drivers)
    assert (await http_get(server.port, "/readyz"))[0] == 503
    mover = next(
        d for d in drivers if d.client is not None and d.client.view(room)["own"]["choices"]
    )
    assert mover.client is not None
    answer = await mover.client.request(
        {"type": "act", "room": room, "rev": mover.client.rev(room), "choice": 0}
    )
    assert answer["code"] == "unavailable"
    assert sum(len(d.acked) for d in drivers) == acked_while_down
    redis_server.start()
    async with asyncio.timeout(60):
        await done
    assert (await http_get(server.port, "/readyz"))[0] == 200
    assert sum(len(d.acked) for d in drivers) > acked_while_down
    _check_room(await archive_of(reader, room), GAME, PLAYERS, 32, drivers, [])
