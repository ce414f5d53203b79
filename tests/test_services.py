"""The test services really run: a private redis-server answers, keeps data across a restart."""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.services import RedisServer


async def test_redis_fixture_is_private_and_persists_across_restart(
    redis_server: RedisServer,
) -> None:
    assert redis_server.port != 6379
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        await client.set("k", "v")
        assert await client.config_get("appendonly") == {"appendonly": "yes"}
    finally:
        await client.aclose()
    redis_server.restart()
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        assert await client.get("k") == b"v"
    finally:
        await client.aclose()
