"""Fixtures of the client tests: the server tests' in-process server and clients, reused."""

from tests.server.conftest import app, make_app, make_client

__all__ = ["app", "make_app", "make_client"]
