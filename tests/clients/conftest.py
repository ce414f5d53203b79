"""Fixtures of the client tests: the server tests' in-process server and clients, reused, and a
server that persists in a real redis-server."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.app import App
from server.store.redis import RedisStore
from tests.server.conftest import TEST_CONFIG, MakeApp, app, make_app, make_client
from tests.services import RedisServer

__all__ = ["app", "make_app", "make_client", "redis_app"]


@pytest.fixture
async def redis_app(redis_server: RedisServer) -> AsyncIterator[MakeApp]:
    """Servers (``redis_app(**config overrides)``) storing their rooms in the test's Redis."""
    apps: list[App] = []

    async def start(**overrides: Any) -> App:
        config = dataclasses.replace(TEST_CONFIG, **overrides)
        store = RedisStore(redis_server.url)
        await store.start()
        server = App(config, store=store)
        await server.start()
        apps.append(server)
        return server

    yield start
    for server in apps:
        await server.stop()
