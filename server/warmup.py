"""The engines' warm-up before the server listens (:func:`load_engines`)."""

from __future__ import annotations

from typing import Any

from games import registry
from games.base import Game
from server import logging as oasis_logging

WARM_CHOICES = 3
"""Choices each engine plays per player count at start-up (:func:`load_engines`)."""


def load_engines() -> None:
    """Import every game engine this server hosts and build what it caches, before it listens.

    Otherwise the first room of each game imports its engine inside a request: 40 to 60 ms of CPU
    (Yspahan, Ishtar) during which the event loop serves no other room. Each engine then sets up
    a match of every player count with its default options and plays a few choices, its views
    and a snapshot round trip included, so that what it builds once and keeps (Ishtar's edition,
    the terrain, grid and names of each preset layout) is made now, in the arenas of start-up,
    and not by the first room of a burst: a long-lived block made among thousands of short-lived
    rooms keeps the allocator's arena of those rooms resident after they are gone
    (``bench/memory.py``, BENCHMARKS.md). A few ms. An engine that fails to import raises here
    (a server must not start without a game it hosts); one whose play fails is a bug that its
    rooms will meet as ``internal`` errors: the warm-up of that game stops with a warning."""
    for name in registry.names():
        game = registry.get(name)
        try:
            _warm(game)
        except Exception as exc:
            oasis_logging.get().warning("engine_warmup_failed", game=name, error=repr(exc))


def _warm(game: Game[Any]) -> None:
    for players in range(game.min_players, game.max_players + 1):
        state = game.setup(players, game.check_options(players, {}), seed=players)
        for _ in range(WARM_CHOICES):
            game.shared_view(state)
            for seat in range(players):
                game.own_view(state, seat)
            decision = game.decision(state)
            if decision is None or not decision.choices:
                break
            game.describe(state, decision)
            game.apply(state, decision.choices[0])
        game.load(game.dump(state))
