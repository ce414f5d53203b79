"""Fixtures for the persistence tests: a RedisStore on the test's private redis-server."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

from games.base import Match
from server.store import Action
from tests.games.tiny import TINY


def tiny_meta(room: str, players: int = 3, seed: int = 7) -> dict[str, Any]:
    """Meta as the lobby writes it at creation (``room.meta()`` plus the seed)."""
    return {
        "room": room,
        "game": "tiny",
        "players": players,
        "options": {},
        "public": True,
        "state": "open",
        "rev": 0,
        "seats": [{"seat": i, "name": "", "taken": False} for i in range(players)],
        "tokens": ["" for _ in range(players)],
        "seed": seed,
    }


def next_action(match: Match[Any], rev: int, rng: random.Random) -> Action:
    """A legal choice picked at random, as a client that knows nothing of the rules would."""
    decision = match.decision
    assert decision is not None
    return Action(rev, decision.seat, dict(rng.choice(list(decision.choices))))


def new_match(players: int = 3, seed: int = 7) -> Match[Any]:
    return Match.new(TINY, players, {}, seed)


async def wait_for(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Poll ``condition`` on the event loop until it holds (no fixed sleeps in the tests)."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within} s")
        await asyncio.sleep(0.01)
