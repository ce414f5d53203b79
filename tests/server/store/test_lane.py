"""The group commit's pipelined connection (server.store.lane) on a real redis-server: several
batches in flight answered in order, error replies as values, a lost connection, a timeout and a
cancelled round trip, each failing only what it must."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.lane import Lane
from tests.services import RedisServer


def command(*args: str | bytes | int) -> bytes:
    """One command in RESP, as the store packs its EVALSHAs."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


@pytest.fixture
async def pool(redis_server: RedisServer) -> AsyncIterator[aioredis.BlockingConnectionPool]:
    p = aioredis.BlockingConnectionPool.from_url(redis_server.url, max_connections=4)
    try:
        yield p
    finally:
        await p.aclose()


async def test_batches_in_flight_together_each_get_their_own_replies_in_order(
    pool: aioredis.BlockingConnectionPool,
) -> None:
    lane = Lane(pool, timeout=2.0)
    try:
        batches = [
            [command("SET", f"lane:{i}:{j}", f"{i}.{j}") for j in range(i + 1)]
            + [command("INCR", "lane:count")]
            for i in range(20)
        ]
        # all twenty written before the first reply is read (none awaits another)
        replies = await asyncio.gather(*(lane.round_trip(b) for b in batches))
        for i, got in enumerate(replies):
            assert got[:-1] == [b"OK"] * (i + 1)
        assert sorted(got[-1] for got in replies) == list(range(1, 21))
        assert [got[-1] for got in replies] == list(range(1, 21))  # Redis's order is ours
        got = await lane.round_trip([command("GET", "lane:19:19"), command("GET", "lane:none")])
        assert got == [b"19.19", None]
    finally:
        await lane.close()


async def test_error_replies_are_values_of_redis_pys_classes(
    pool: aioredis.BlockingConnectionPool,
) -> None:
    lane = Lane(pool, timeout=2.0)
    try:
        got = await lane.round_trip(
            [
                command("EVALSHA", "0" * 40, 0),
                command("SET", "lane:e", "x"),
                command("INCR", "lane:e"),
                command("GET", "lane:e"),
            ]
        )
        assert isinstance(got[0], NoScriptError)  # what _with_scripts looks for
        assert got[1] == b"OK"
        assert isinstance(got[2], ResponseError) and "not an integer" in str(got[2])
        assert got[3] == b"x"
    finally:
        await lane.close()


async def test_a_connection_killed_by_redis_fails_the_batches_in_flight_then_opens_again(
    pool: aioredis.BlockingConnectionPool, redis_server: RedisServer
) -> None:
    lane = Lane(pool, timeout=5.0)
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        assert await lane.round_trip([command("CLIENT", "SETNAME", "lane")]) == [b"OK"]
        # a batch that waits in Redis (BLPOP for 3 s), then Redis closes the connection
        waiting = asyncio.create_task(lane.round_trip([command("BLPOP", "lane:never", 3)]))
        behind = asyncio.create_task(lane.round_trip([command("PING")]))
        await asyncio.sleep(0.2)
        assert not waiting.done() and not behind.done()
        assert await raw.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") >= 1
        for task in (waiting, behind):
            with pytest.raises(RedisConnectionError):
                await task
        assert await lane.round_trip([command("PING")]) == [b"PONG"]  # a new connection
    finally:
        await raw.aclose()
        await lane.close()


async def test_a_batch_not_answered_in_time_fails_and_the_next_one_gets_a_new_connection(
    pool: aioredis.BlockingConnectionPool,
) -> None:
    lane = Lane(pool, timeout=0.3)
    try:
        stuck = asyncio.create_task(lane.round_trip([command("BLPOP", "lane:never", 2)]))
        behind = asyncio.create_task(lane.round_trip([command("SET", "lane:t", "1")]))
        with pytest.raises(RedisTimeoutError):
            await stuck
        # the batch behind it on the dropped connection: its reply can no longer be matched
        with pytest.raises((RedisTimeoutError, RedisConnectionError)):
            await behind
        assert await lane.round_trip([command("GET", "lane:t"), command("PING")]) in (
            [b"1", b"PONG"],
            [None, b"PONG"],  # (the SET may or may not have run before the drop)
        )
    finally:
        await lane.close()


async def test_a_cancelled_round_trip_leaves_the_next_batch_its_own_replies(
    pool: aioredis.BlockingConnectionPool, redis_server: RedisServer
) -> None:
    lane = Lane(pool, timeout=20.0)
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        # a batch that waits in Redis until this test releases it (however slow the machine:
        # a block that timed out by itself before the cancel would answer it, not cancel it)
        slow = asyncio.create_task(lane.round_trip([command("BLPOP", "lane:c", 15)]))
        after = asyncio.create_task(lane.round_trip([command("ECHO", "mine")]))
        for _ in range(1500):  # (bounded: 15 s) until Redis holds the BLPOP
            if any(client.get("cmd") == "blpop" for client in await raw.client_list()):
                break
            await asyncio.sleep(0.01)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        assert not after.done()
        await raw.lpush("lane:c", "released")  # the cancelled batch's reply comes now
        assert await after == [b"mine"]  # not the cancelled batch's ["lane:c", "released"]
        assert await lane.round_trip([command("ECHO", "next")]) == [b"next"]
    finally:
        await raw.aclose()
        await lane.close()
