"""Server-side players: what kinds there are, and the one interface the room drives them by.

A bot sees exactly what a client in its seat would see: the audience view document
``{"shared": ..., "own": ...}`` of its seat (:func:`games.base.audience_view`), never the game
state. It answers with an index into ``own["choices"]``.

Every bot is deterministic: its choice is a pure function of the room's seed, its seat, the
revision it moves at and the view. A room restored from the store rebuilds its bots from the
stored seat kinds and they go on exactly as the uninterrupted room would have (the crash tests
check it for the random bot; :mod:`tests.server.test_bots` for the heuristic ones).

Kinds (``BOT_KINDS``): ``random`` (:mod:`server.randombot`, a uniformly random legal choice) and
``heuristic`` (a hand-written evaluation per game, :mod:`server.bots.ishtar` and
:mod:`server.bots.yspahan`; for a game without one it falls back to ``random``).

What a heuristic bot knows of a game beyond its view is the game's static data, the document
``GET /games/<name>`` serves (:func:`server.gamedata.document`, decoded from the very bytes a
client downloads). No bot imports an engine module or reads an engine file
(``tests/test_frontends_know_no_rules.py`` scans for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from server import gamedata
from server.bots import ishtar, yspahan
from server.bots.common import Scorer, ScoringBot
from server.randombot import RandomBot

BOT_KINDS: tuple[str, ...] = ("random", "heuristic")
DEFAULT_KIND = "random"


class Bot(Protocol):
    kind: str

    def choose(self, view: Mapping[str, Any], rev: int) -> int:
        """An index into ``view["own"]["choices"]`` for the decision pending at ``rev``."""
        ...


class RandomPlayer:
    """:class:`~server.randombot.RandomBot` behind the :class:`Bot` interface."""

    kind = "random"

    def __init__(self, seed: int, seat: int) -> None:
        self._bot = RandomBot(seed, seat)

    def choose(self, view: Mapping[str, Any], rev: int) -> int:
        return self._bot.choose(view.get("own"), rev)


_SCORERS: dict[str, Callable[[Mapping[str, Any]], Scorer]] = {
    "ishtar": ishtar.IshtarScorer,
    "yspahan": yspahan.YspahanScorer,
}


def make_bot(kind: str, game: str, seed: int, seat: int) -> Bot:
    """A bot of ``kind`` for ``seat`` of a room of ``game`` (an unknown kind plays randomly)."""
    if kind == "heuristic" and game in _SCORERS:
        return ScoringBot(_SCORERS[game](gamedata.document(game).value), seed, seat)
    return RandomPlayer(seed, seat)


__all__ = ["BOT_KINDS", "DEFAULT_KIND", "Bot", "RandomPlayer", "ScoringBot", "make_bot"]
