"""Rules engines: pure, deterministic, no I/O. See :mod:`games.base` for the contract."""

from games.base import JSON, Choice, Decision, Event, Game, Match, Result, View, audience_view
from games.errors import (
    ChoiceError,
    EditionError,
    GameError,
    GameOverError,
    IllegalChoice,
    MalformedChoice,
    NotYourTurnError,
    OptionsError,
    SnapshotError,
    UndoRefused,
)
from games.rng import Rng

__all__ = [
    "JSON",
    "Choice",
    "ChoiceError",
    "Decision",
    "EditionError",
    "Event",
    "Game",
    "GameError",
    "GameOverError",
    "IllegalChoice",
    "MalformedChoice",
    "Match",
    "NotYourTurnError",
    "OptionsError",
    "Result",
    "Rng",
    "SnapshotError",
    "UndoRefused",
    "View",
    "audience_view",
]
