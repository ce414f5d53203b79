"""Redis down, hung or restarted: nothing acknowledged is lost, nothing is stored while down."""

from __future__ import annotations

import os
import signal
import time

import pytest
import redis.asyncio as aioredis

from server.store import Action, StoreError
from server.store.redis import RedisStore
from tests.server.persistence.conftest import tiny_meta, wait_for
from tests.services import RedisServer, free_port


async def test_a_redis_restart_loses_no_appended_action(
    redis_server: RedisServer, store: RedisStore
) -> None:
    await store.create_room("r", tiny_meta("r"))
    for rev in range(1, 6):
        await store.append("r", Action(rev, rev % 3, {"kind": "draw"}))
    await store.snapshot("r", 3, {"any": "state"})
    redis_server.restart()
    # The pooled connection is stale now; the first call reconnects by itself.
    await store.append("r", Action(6, 0, {"kind": "draw"}))
    record = await store.load_room("r")
    assert record is not None and record.snapshot is not None
    assert record.snapshot.rev == 3
    assert [a.rev for a in record.actions] == [4, 5, 6]
    assert len(await store.actions_after("r", 0)) == 6
    assert store.ready()


async def test_append_fails_promptly_while_redis_is_down_and_ready_follows_redis(
    redis_server: RedisServer, store: RedisStore
) -> None:
    changes: list[bool] = []
    store.on_ready_change(changes.append)
    await store.create_room("r", tiny_meta("r"))
    await store.append("r", Action(1, 0, {"kind": "draw"}))
    assert store.ready()

    redis_server.stop()
    started = time.monotonic()
    with pytest.raises(StoreError, match="unavailable"):
        await store.append("r", Action(2, 1, {"kind": "draw"}))
    assert time.monotonic() - started < 1.5
    assert not store.ready()
    assert changes == [False]
    with pytest.raises(StoreError):
        await store.append("r", Action(2, 1, {"kind": "draw"}))

    redis_server.start()
    await wait_for(store.ready)  # the background probe notices by itself
    assert changes == [False, True]
    await store.append("r", Action(2, 1, {"kind": "draw"}))
    record = await store.load_room("r")
    assert record is not None
    assert [a.rev for a in record.actions] == [1, 2]


async def test_a_hung_redis_times_out_instead_of_hanging_the_room(
    redis_server: RedisServer, store: RedisStore
) -> None:
    await store.create_room("r", tiny_meta("r"))
    assert redis_server.process is not None
    pid = redis_server.process.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match="unavailable"):
            await store.append("r", Action(1, 0, {"kind": "draw"}))
        assert time.monotonic() - started < 1.5  # timeout 0.3 s, deadline 0.9 s
        assert not store.ready()
    finally:
        os.kill(pid, signal.SIGCONT)
    await wait_for(store.ready)
    # The timed-out append may or may not have landed; resending it is safe either way.
    await store.append("r", Action(1, 0, {"kind": "draw"}))
    assert [a.rev for a in await store.actions_after("r", 0)] == [1]


async def test_readiness_is_probed_when_nothing_has_been_called_yet(
    redis_server: RedisServer,
) -> None:
    store = RedisStore(redis_server.url, timeout=0.3, probe_interval=0.05)
    try:
        assert not store.ready()  # unknown: starts the probe
        await wait_for(store.ready)
    finally:
        await store.close()


async def test_start_against_no_redis_reports_not_ready(redis_server: RedisServer) -> None:
    url = redis_server.url
    redis_server.stop()
    store = RedisStore(url, timeout=0.3, probe_interval=0.05)
    try:
        await store.start()
        assert not store.ready()
        redis_server.start()
        await wait_for(store.ready)
    finally:
        await store.close()


async def test_a_redis_that_answers_but_refuses_writes_is_not_ready(
    redis_server: RedisServer, store: RedisStore
) -> None:
    """A master demoted to a read-only replica (a failover) answers PING but stores nothing."""
    await store.create_room("r", tiny_meta("r"))
    admin = aioredis.Redis.from_url(redis_server.url)
    try:
        await admin.replicaof("127.0.0.1", free_port())
        with pytest.raises(StoreError, match="refuses writes"):
            await store.append("r", Action(1, 0, {"kind": "draw"}))
        assert not store.ready()
        await admin.replicaof("NO", "ONE")
        await wait_for(store.ready)
        await store.append("r", Action(1, 0, {"kind": "draw"}))
    finally:
        await admin.aclose()
