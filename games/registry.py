"""Games by name. The built-in engines are imported on first use."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from games.base import Game
from games.errors import OptionsError

_BUILTIN = {"ishtar": "games.ishtar", "yspahan": "games.yspahan"}
_games: dict[str, Game[Any]] = {}


def register(game: Game[Any]) -> None:
    """Make ``game`` available under ``game.name`` (replacing any game of that name)."""
    _games[game.name] = game


def get(name: str) -> Game[Any]:
    """The game registered as ``name``; raise OptionsError for an unknown game."""
    game = _games.get(name)
    if game is None and name in _BUILTIN:
        try:
            module = importlib.import_module(_BUILTIN[name])
        except ModuleNotFoundError:
            module = None
        if module is not None and hasattr(module, "GAME"):
            register(module.GAME)
            game = _games[name]
    if game is None:
        raise OptionsError(f"unknown game {name!r}; known: {', '.join(names()) or 'none'}")
    return game


def names() -> list[str]:
    """Every game that can be played here, registered or built in and importable."""
    found = set(_games)
    for name, module in _BUILTIN.items():
        if name not in found and importlib.util.find_spec(module) is not None:
            found.add(name)
    return sorted(found)
