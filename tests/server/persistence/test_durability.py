"""Durability checked, not assumed (issue 14 item 4): a Redis that does not persist is not ready,
and a Redis that comes back empty pauses the rooms it lost with ``storage_lost``.

The store's checks against real ``redis-server`` processes (AOF on, AOF off, CONFIG refused,
flushed, restarted without its data), then real ``oasis-server`` processes over real sockets:
``/readyz`` on a volatile Redis, and a match whose Redis is emptied under it.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from server.store import StoreError
from server.store.redis import RedisStore
from tests.server.matches import REAL_GAMES
from tests.server.persistence.conftest import tiny_meta, wait_for
from tests.server.persistence.processes import SeatDriver, ServerProcess
from tests.server.persistence.test_crash import _open_room
from tests.server.test_http import http_get
from tests.services import RedisServer, free_port

GAME = REAL_GAMES[-1]  # yspahan: the quicker of the two


@pytest.fixture
def volatile_redis(tmp_path: Path) -> AsyncIterator[RedisServer]:
    server = RedisServer(tmp_path / "volatile", appendonly=False)
    server.start()
    try:
        yield server  # type: ignore[misc]
    finally:
        server.stop()


async def _flushall(redis_server: RedisServer) -> None:
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        await client.flushall()
    finally:
        await client.aclose()


async def test_a_redis_with_the_append_only_file_on_is_trusted(redis_server: RedisServer) -> None:
    store = RedisStore(redis_server.url)
    await store.start()
    try:
        assert store.ready() and store.problem() == ""
    finally:
        await store.close()


async def test_a_redis_without_persistence_is_a_problem_unless_allowed(
    volatile_redis: RedisServer,
) -> None:
    strict = RedisStore(volatile_redis.url)
    allowed = RedisStore(volatile_redis.url, allow_volatile=True)
    await strict.start()
    await allowed.start()
    try:
        assert strict.ready()  # Redis answers and stores: rooms play, but /readyz says 503
        assert "does not persist" in strict.problem() and "appendonly" in strict.problem()
        assert allowed.ready() and allowed.problem() == ""
    finally:
        await strict.close()
        await allowed.close()


async def test_a_redis_that_refuses_config_is_asked_info_instead(tmp_path: Path) -> None:
    for appendonly in (True, False):
        server = RedisServer(
            tmp_path / f"noconfig-{appendonly}",
            appendonly=appendonly,
            extra=["--rename-command", "CONFIG", ""],
        )
        server.start()
        store = RedisStore(server.url)
        try:
            await store.start()
            assert store.ready()
            assert (store.problem() == "") is appendonly, store.problem()
            if not appendonly:
                assert "aof_enabled" in store.problem()
        finally:
            await store.close()
            server.stop()


async def test_persistence_turned_off_later_is_noticed_by_the_watch(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url, watch_interval=0.05)
    await store.start()
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        assert store.problem() == ""
        await client.config_set("appendonly", "no")
        await wait_for(lambda: store.problem() != "")
        await client.config_set("appendonly", "yes")
        await wait_for(lambda: store.problem() == "")
    finally:
        await client.aclose()
        await store.close()


async def test_a_flushed_redis_is_detected_and_its_lost_rooms_named(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url, watch_interval=0.05)
    heard: list[str] = []

    async def lost(detail: str) -> None:
        heard.append(detail)
        assert await store.missing(["r1", "r2"]) == ["r1", "r2"]

    store.on_lost(lost)
    await store.start()
    try:
        await store.create_room("r1", tiny_meta("r1"))
        await store.create_room("r2", tiny_meta("r2"))
        assert await store.missing(["r1", "r2", "r3"]) == ["r3"]
        await store.verify()
        assert heard == []  # the same data: nothing lost
        await _flushall(redis_server)
        await wait_for(lambda: bool(heard))
        assert "emptied" in heard[0] and store.losses == 1
        await asyncio.sleep(0.2)  # the new marker is adopted: told once, not at every check
        assert len(heard) == 1
    finally:
        await store.close()


async def test_a_redis_restarted_without_its_data_is_found_at_the_reconnection(
    volatile_redis: RedisServer,
) -> None:
    # No watch: what finds it is the new connection redis-py opens after the restart (the first
    # call after it succeeds, on the empty Redis, through the client's retry).
    store = RedisStore(volatile_redis.url, allow_volatile=True, watch_interval=0)
    heard: list[str] = []

    async def lost(detail: str) -> None:
        heard.append(detail)

    store.on_lost(lost)
    await store.start()
    try:
        await store.create_room("r1", tiny_meta("r1"))
        volatile_redis.restart()
        await store.create_room("r2", tiny_meta("r2"))
        await wait_for(lambda: bool(heard))
        assert "restarted without its data" in heard[0], heard
    finally:
        await store.close()


async def test_a_redis_back_empty_after_an_outage_is_told_before_it_counts_as_ready(
    volatile_redis: RedisServer,
) -> None:
    store = RedisStore(
        volatile_redis.url, timeout=0.3, probe_interval=0.05, allow_volatile=True, watch_interval=0
    )
    states: list[bool] = []
    heard: list[tuple[str, list[bool]]] = []

    async def lost(detail: str) -> None:
        heard.append((detail, list(states)))

    store.on_ready_change(states.append)
    store.on_lost(lost)
    await store.start()
    try:
        await store.create_room("r1", tiny_meta("r1"))
        volatile_redis.stop()
        with pytest.raises(StoreError, match="unavailable"):
            await store.create_room("r2", tiny_meta("r2"))
        assert states == [False]
        volatile_redis.start()
        await wait_for(store.ready)
        assert len(heard) == 1
        detail, before_ready = heard[0]
        assert "restarted without its data" in detail
        assert before_ready == [False]  # the loss is told before the store is ready again
        assert states == [False, True]
    finally:
        await store.close()


# Over real sockets ---------------------------------------------------------------------------


async def test_readyz_is_503_on_a_volatile_redis_and_the_log_says_why(
    volatile_redis: RedisServer, tmp_path: Path
) -> None:
    strict = ServerProcess(free_port(), volatile_redis.url, tmp_path / "strict.log")
    allowed = ServerProcess(
        free_port(),
        volatile_redis.url,
        tmp_path / "allowed.log",
        {"OASIS_ALLOW_VOLATILE_REDIS": "1", "OASIS_NODE_ID": "allowed"},
    )
    strict.start()
    allowed.start()
    try:
        for process in (strict, allowed):
            await (await process.client("probe")).close()  # listening
        status, _, body = await http_get(strict.port, "/readyz")
        assert status == 503 and "does not persist" in body, body
        assert (await http_get(allowed.port, "/readyz"))[0] == 200
    finally:
        assert await asyncio.to_thread(strict.stop) == 0
        assert await asyncio.to_thread(allowed.stop) == 0
    lines = [json.loads(line) for line in strict.log.read_text().splitlines() if line.strip()]
    (told,) = [line for line in lines if line.get("event") == "redis_volatile"]
    assert "appendonly" in told["detail"] and "OASIS_ALLOW_VOLATILE_REDIS" in told["fix"]


@pytest.mark.parametrize("how", ["flushall", "restart"])
async def test_an_emptied_redis_pauses_its_rooms_with_storage_lost(
    volatile_redis: RedisServer, tmp_path: Path, how: str
) -> None:
    server = ServerProcess(
        free_port(),
        volatile_redis.url,
        tmp_path / "server.log",
        {"OASIS_ALLOW_VOLATILE_REDIS": "1", "OASIS_REDIS_TIMEOUT": "0.3"},
    )
    server.start()
    drivers: list[SeatDriver] = []
    try:
        progress = asyncio.Event()
        room, drivers = await _open_room(server, GAME, 2, 41, False, random.Random(41), progress)
        playing = [asyncio.create_task(d.run()) for d in drivers]
        async with asyncio.timeout(30):  # a few acknowledged choices, soon to be lost
            while sum(len(d.acked) for d in drivers) < 4:
                progress.clear()
                await progress.wait()
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        if how == "flushall":
            await _flushall(volatile_redis)
        else:
            await asyncio.to_thread(volatile_redis.restart)
        for driver in drivers:
            assert driver.client is not None
            pause = await driver.client.wait_for(
                lambda f: f["type"] == "pause" and f["reason"] == "storage lost", wait=20
            )
            assert pause["paused"] and pause["room"] == room
        client = next(
            d.client for d in drivers if d.client and d.client.view(room)["own"]["choices"]
        )
        rev = client.rev(room)
        answer = await client.request({"type": "act", "room": room, "rev": rev, "choice": 0})
        assert answer["type"] == "error" and answer["code"] == "storage_lost", answer
        assert f"rev was {rev}" in answer["message"]
        # The room still answers what needs no storage, and new rooms play normally.
        assert (await client.request({"type": "sync", "room": room}))["type"] == "state"
        fresh = await client.request({"type": "create", "game": GAME, "players": 2})
        assert fresh["type"] == "ack"
        assert (await http_get(server.port, "/readyz"))[0] == 200
    finally:
        for driver in drivers:
            await driver._drop()
        assert await asyncio.to_thread(server.stop) == 0
    lines = [json.loads(line) for line in server.log.read_text().splitlines() if line.strip()]
    (told,) = [line for line in lines if line.get("event") == "storage_lost"]
    assert told["rooms"] == 1 and told["last_revs"] == {room: rev}, told
    assert told["acknowledged_choices"] == rev
