"""The relayed spectator counts on a real redis-server: what one node writes, another reads."""

from __future__ import annotations

from typing import Any, NoReturn

import pytest
import redis.asyncio as aioredis

from server.relay import counts
from server.relay.counts import Census, spectator_counts
from server.relay.wire import COUNT_TTL
from server.store import keys
from server.store.redis import RedisStore
from tests.services import RedisServer


def _no_pipeline(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("the counts went through redis-py's pipeline")


async def test_a_node_s_counts_of_many_rooms_are_read_by_the_others_and_expire(
    store: RedisStore, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (relay). More rooms than one script call takes, on a single
    Redis: every count is written for the other nodes, with its expiry, in script calls on the
    store's own connection (not redis-py's pipeline), and again once Redis lost its scripts."""
    rooms = {f"r{i}": i % 7 + 1 for i in range(counts.COUNTS_PER_CALL + 44)}
    rooms["empty"] = 0
    census = Census(store, "node-a", lambda: rooms)
    monkeypatch.setattr(store.redis, "pipeline", _no_pipeline)
    await census.report()
    monkeypatch.undo()

    seen = await spectator_counts(store, list(rooms), "node-b")
    assert seen == {room: n for room, n in rooms.items() if n}
    assert await spectator_counts(store, list(rooms), "node-a") == {}  # (its own left out)
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        ttl = await raw.pttl(keys.spectators(store.prefix, "r3"))
        assert 0 < ttl <= COUNT_TTL * 2000
        assert not await raw.exists(keys.spectators(store.prefix, "empty"))

        await raw.script_flush()
        rooms["r3"] = 40
        await census.report()
        assert (await spectator_counts(store, ["r3"], "node-b")) == {"r3": 40}
    finally:
        await raw.aclose()
