"""Fixtures for the server tests: a real server on a free loopback port, and clients for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from games import registry
from server import logging as oasis_logging
from server.app import App
from server.config import Config
from server.main import restore_rooms
from server.store.redis import RedisStore
from tests.games.tiny import TINY
from tests.server.client import Client
from tests.services import RedisServer

registry.register(TINY)
oasis_logging.configure("json", "warning")

TEST_CONFIG = Config(
    host="127.0.0.1",
    port=0,
    allow_seed=True,
    rate_per_second=2000.0,
    rate_burst=4000,
    hello_timeout=10.0,
    idle_timeout=60.0,
    close_timeout=0.5,
    # Quotas out of the way of the tests of other things (tests/server/test_quotas*.py set
    # their own); the defaults are checked there and by the benches.
    rooms_per_connection=10_000,
    rooms_per_address=10_000,
    bot_matches_per_address=10_000,
    replays_per_connection=1_000,
    replays_per_address=1_000,
    list_per_second=10_000.0,
    list_burst=10_000,
    create_per_minute=600_000.0,
    create_burst=10_000,
    replay_per_minute=600_000.0,
    replay_burst=10_000,
    half_open_per_address=1_000,
)

MakeApp = Callable[..., Awaitable[App]]
MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
async def make_app() -> AsyncIterator[MakeApp]:
    """Start servers (``make_app(**config overrides)``); every one is stopped at the end."""
    apps: list[App] = []

    async def start(**overrides: Any) -> App:
        import dataclasses

        app = App(dataclasses.replace(TEST_CONFIG, **overrides))
        await app.start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        await app.stop()


@pytest.fixture
async def app(make_app: MakeApp) -> App:
    return await make_app()


@pytest.fixture
async def make_client(app: App) -> AsyncIterator[MakeClient]:
    """Connected clients of ``app`` (after hello unless ``hello=False``), closed at the end."""
    clients: list[Client] = []

    async def open_client(
        name: str = "t",
        *,
        hello: bool = True,
        target: App | None = None,
        hash_rule: int | None = None,
    ) -> Client:
        server = target or app
        url = f"ws://127.0.0.1:{server.port}/"
        client = await Client.open(url, name, hello=hello, hash_rule=hash_rule)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.close()
    for client in clients:
        assert not client.failures, (client.name, client.failures)


@pytest.fixture
async def reader(redis_server: RedisServer) -> AsyncIterator[RedisStore]:
    """A plain RedisStore on the test's redis-server, to read what the servers under test stored
    (archives, leases, snapshots)."""
    store = RedisStore(redis_server.url)
    try:
        yield store
    finally:
        await store.close()


async def redis_app(url: str, config: Config = TEST_CONFIG, *, restore: bool = True) -> App:
    """A started server on the Redis at ``url`` (its store started first), with the rooms that
    Redis holds brought back as ``oasis serve`` does at start (``restore``); the caller stops
    it."""
    store = RedisStore(url)
    await store.start()
    app = App(config, store)
    if restore:
        await restore_rooms(app)
    await app.start()
    return app


OpenStore = Callable[..., Awaitable[RedisStore]]
"""Opens a started :class:`RedisStore` on the test's redis-server: ``deadline`` (its timeout,
0.3 s unless given) and any other keyword of the store's (``fence``, ``archive_ttl``)."""


@pytest.fixture
async def open_redis_store(redis_server: RedisServer) -> AsyncIterator[OpenStore]:
    """Stores on the test's private redis-server (:data:`OpenStore`), closed at the end; short
    timeouts, so Redis trouble shows within a second."""
    made: list[RedisStore] = []

    async def opener(deadline: float = 0.3, **options: Any) -> RedisStore:
        opened = RedisStore(redis_server.url, timeout=deadline, probe_interval=0.05, **options)
        await opened.start()
        made.append(opened)
        return opened

    try:
        yield opener
    finally:
        for opened in made:
            await opened.close()


@pytest.fixture
async def store(open_redis_store: OpenStore) -> RedisStore:
    """A store on the test's private redis-server (:func:`open_redis_store`'s defaults)."""
    return await open_redis_store()
