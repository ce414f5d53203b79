"""Games by name. The built-in engines are imported on first use.

An engine that is missing is an unknown game (:class:`~games.errors.OptionsError`); an engine
that is there but broken (it fails to import, whatever the error, or has no ``GAME``) raises
as it is: a server must never mistake a bug in an engine for a game it does not have.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from games.base import Game
from games.errors import OptionsError

__all__ = ["get", "names", "register"]

_BUILTIN = {"ishtar": "games.ishtar", "yspahan": "games.yspahan"}
_games: dict[str, Game[Any]] = {}


def register(game: Game[Any]) -> None:
    """Make ``game`` available under ``game.name`` (replacing any game of that name)."""
    _games[game.name] = game


def get(name: str) -> Game[Any]:
    """The game registered as ``name``; raise OptionsError for an unknown game."""
    game = _games.get(name)
    if game is None and name in _BUILTIN:
        module = _BUILTIN[name]
        if importlib.util.find_spec(module) is not None:
            engine = importlib.import_module(module).GAME  # a broken engine raises here
            if not isinstance(engine, Game):
                raise TypeError(f"{module}.GAME is {type(engine).__name__}, not a Game")
            register(engine)
            game = engine
    if game is None:
        raise OptionsError(f"unknown game {name!r}; known: {', '.join(names()) or 'none'}")
    return game


def names() -> list[str]:
    """Every game that can be played here, registered or built in and present."""
    found = set(_games)
    for name, module in _BUILTIN.items():
        if name not in found and importlib.util.find_spec(module) is not None:
            found.add(name)
    return sorted(found)
