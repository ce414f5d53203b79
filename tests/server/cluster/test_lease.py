"""Room leases and fencing on a real redis-server: owned by one node, refused to all others."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis.asyncio as aioredis

from server.lease import Holder, Leases, parse_token
from server.store import Action, NotOwnerError, StoreError
from server.store.fence import Fence
from server.store.redis import RedisStore
from tests.server.persistence.conftest import tiny_meta
from tests.services import RedisServer


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        await client.aclose()


Opener = Callable[[Fence | None], Awaitable[RedisStore]]


@pytest.fixture
async def open_store(redis_server: RedisServer) -> AsyncIterator[Opener]:
    """Opens a store on the test's redis-server, with a node's fence or without; closes them."""
    made: list[RedisStore] = []

    async def opener(fence: Fence | None) -> RedisStore:
        store = RedisStore(redis_server.url, timeout=0.5, probe_interval=0.05, fence=fence)
        await store.start()
        made.append(store)
        return store

    try:
        yield opener
    finally:
        for store in made:
            await store.close()


async def _node(open_store: Opener, node: str, url: str, ttl: float) -> Leases:
    """The leases of one node, on its own store built with its token."""
    return Leases(await open_store(Fence.new(node, url, ttl)))


async def test_a_lease_is_taken_by_one_node_only_and_renewed_only_by_it(
    open_store: Opener, raw: aioredis.Redis
) -> None:
    a = await _node(open_store, "a", "ws://a/", ttl=5.0)
    b = await _node(open_store, "b", "ws://b/", ttl=5.0)
    assert await a.acquire("r1")
    assert not await b.acquire("r1")
    assert await a.holder("r1") == Holder("a", "ws://a/")
    assert await b.renew(["r1"]) == ["r1"]
    assert await a.renew(["r1"]) == []
    assert 4000 < await raw.pttl(a.store.lease_key("r1")) <= 5000
    await b.release(["r1"])  # not b's: nothing happens
    assert await a.holder("r1") == Holder("a", "ws://a/")
    await a.release(["r1"])
    assert await a.holder("r1") is None
    assert await b.acquire("r1")


async def test_a_lease_expires_unless_renewed(open_store: Opener) -> None:
    a = await _node(open_store, "a", "ws://a/", ttl=0.2)
    b = await _node(open_store, "b", "ws://b/", ttl=5.0)
    assert await a.acquire("r1")
    await asyncio.sleep(0.3)
    assert await a.holder("r1") is None
    assert await b.acquire("r1")
    assert await a.renew(["r1"]) == ["r1"]


async def test_a_restarted_node_takes_its_own_leases_back_at_once(open_store: Opener) -> None:
    """A second process with the same node id means the first one is dead."""
    old = await _node(open_store, "a", "ws://a/", ttl=30.0)
    assert await old.acquire("r1")
    new = await _node(open_store, "a", "ws://a2/", ttl=30.0)
    assert new.token != old.token
    assert await new.acquire("r1")
    assert await new.holder("r1") == Holder("a", "ws://a2/")
    assert await old.renew(["r1"]) == ["r1"]


async def test_a_node_that_lost_the_lease_cannot_append_snapshot_store_seats_or_chat(
    open_store: Opener, raw: aioredis.Redis
) -> None:
    """Fencing is in the scripts: the append checks the lease before it writes anything."""
    store = await open_store(Fence.new("a", "ws://a/", 30.0))
    lost: list[str] = []
    store.on_not_owner = lost.append
    await store.create_room("r1", tiny_meta("r1"))  # the lease comes with the room
    assert parse_token(await raw.get(store.lease_key("r1"))) == Holder("a", "ws://a/")
    await store.append("r1", Action(1, 0, {"kind": "draw"}))
    b = await _node(open_store, "b", "ws://b/", ttl=30.0)
    await raw.delete(store.lease_key("r1"))  # a's lease expired...
    assert await b.acquire("r1")  # ...and b took the room
    with pytest.raises(NotOwnerError):
        await store.append("r1", Action(2, 1, {"kind": "draw"}))
    with pytest.raises(NotOwnerError):
        await store.snapshot("r1", 1, {"x": 1})
    with pytest.raises(NotOwnerError):
        await store.update_room("r1", {"state": "playing"})
    with pytest.raises(NotOwnerError):
        await store.append_chat("r1", {"text": "still here?"})
    assert lost == ["r1", "r1", "r1", "r1"]
    assert not await raw.exists(store.keys("r1").chat)
    assert await raw.llen(store.keys("r1").choices) == 1
    assert await raw.xlen(store.keys("r1").log) == 1
    assert not await raw.exists(store.keys("r1").snap)
    # the new owner goes on from rev 1
    await b.store.append("r1", Action(2, 1, {"kind": "draw"}))
    assert await raw.llen(store.keys("r1").choices) == 2


async def test_a_store_without_leases_writes_as_before(open_store: Opener) -> None:
    store = await open_store(None)
    await store.create_room("r1", tiny_meta("r1"))
    await store.append("r1", Action(1, 0, {"kind": "draw"}))
    await store.update_room("r1", {"state": "playing"})
    assert not await store.redis.exists(store.lease_key("r1"))


async def test_the_registry_lists_live_peers(open_store: Opener) -> None:
    a = await _node(open_store, "a", "ws://a/", ttl=5.0)
    b = await _node(open_store, "b", "ws://b/", ttl=0.1)
    await a.heartbeat()
    await b.heartbeat()
    assert await a.peers() == {"b": "ws://b/"}
    await asyncio.sleep(0.15)
    assert await a.peers() == {}
    assert await b.peers() == {"a": "ws://a/"}
    await a.leave()
    assert await b.peers() == {}


async def test_leases_use_the_token_the_store_was_built_with(
    open_store: Opener, raw: aioredis.Redis
) -> None:
    """The token is the store's from its construction: leases read it, nothing sets it."""
    with pytest.raises(ValueError, match="fence"):
        Leases(await open_store(None))
    fence = Fence.new("a", "ws://a/", 30.0)
    leases = Leases(await open_store(fence))
    assert leases.token == fence.token and leases.node == "a" and leases.url == "ws://a/"
    assert await leases.acquire("r1")
    assert await raw.get(leases.store.lease_key("r1")) == fence.token.encode()


async def test_lease_scripts_go_on_the_store_connection_not_a_redis_py_pipeline(
    open_store: Opener, raw: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a single Redis the leases' scripts are the store's own packed calls, one round trip
    each batch (redis-py's pipeline costs about 120,000 instructions a lease), and a Redis that
    lost its scripts gets them loaded again."""
    a = await _node(open_store, "a", "ws://a/", ttl=5.0)
    b = await _node(open_store, "b", "ws://b/", ttl=5.0)

    def no_pipeline(*args: object, **kwargs: object) -> None:
        raise AssertionError("a lease script went through redis-py's pipeline")

    monkeypatch.setattr(a.store.redis, "pipeline", no_pipeline)
    monkeypatch.setattr(a.store.redis, "evalsha", no_pipeline)
    await raw.script_flush()
    assert await a.acquire_many(["r1", "r2"]) == ["r1", "r2"]
    assert await b.acquire_many(["r2", "r3"]) == ["r3"]
    await raw.script_flush()
    assert await a.renew(["r1", "r2", "r3"]) == ["r3"]
    assert 4000 < await raw.pttl(a.store.lease_key("r2")) <= 5000
    await raw.script_flush()
    await a.release(["r1", "r3"])  # r3 is b's: left alone
    assert await b.holders(["r1", "r2", "r3"]) == {
        "r1": None,
        "r2": Holder("a", "ws://a/"),
        "r3": Holder("b", "ws://b/"),
    }
    assert await a.acquire("r1") and not await a.acquire("r3")


async def test_a_lease_script_refused_by_redis_raises_a_store_error(
    open_store: Opener, raw: aioredis.Redis
) -> None:
    """An error reply among a batch of lease calls is raised, as redis-py's pipeline raised it."""
    a = await _node(open_store, "a", "ws://a/", ttl=5.0)
    assert await a.acquire("r1")
    await raw.hset(a.store.lease_key("r2"), "not", "a lease")  # GET on it: WRONGTYPE
    for call in (a.renew, a.release, a.acquire_many):
        with pytest.raises(StoreError, match="WRONGTYPE"):
            await call(["r1", "r2"])
    assert a.store.ready()  # Redis answered
