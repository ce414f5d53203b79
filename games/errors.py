"""Errors raised by rules engines, one hierarchy with stable codes.

::

    GameError (code "game_error")
    +-- OptionsError      "bad_options"       players or options rejected at setup
    +-- EditionError      "bad_edition"       component data file fails validation
    +-- SnapshotError     "bad_snapshot"      a dump that cannot be loaded
    +-- ChoiceError       "bad_choice"        a choice refused; the state is unchanged
        +-- GameOverError     "game_over"         the match has ended
        +-- NotYourTurnError  "not_your_turn"     another seat must decide now
        +-- MalformedChoice   "malformed_choice"  neither an index nor a choice map
        +-- IllegalChoice     "illegal_choice"    well formed, but not among the legal ones
        +-- UndoRefused       "not_allowed"       nothing this seat may take back now (why)

The codes are part of the wire contract: the server maps each to a protocol error code of the
same name. Messages are English text for people; programs must read the code.
"""

from __future__ import annotations

from typing import ClassVar


class GameError(Exception):
    """Base of every error a rules engine raises on purpose."""

    code: ClassVar[str] = "game_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OptionsError(GameError):
    code = "bad_options"


class EditionError(GameError):
    code = "bad_edition"


class SnapshotError(GameError):
    code = "bad_snapshot"


class ChoiceError(GameError):
    code = "bad_choice"


class GameOverError(ChoiceError):
    code = "game_over"


class NotYourTurnError(ChoiceError):
    code = "not_your_turn"


class MalformedChoice(ChoiceError):
    code = "malformed_choice"


class IllegalChoice(ChoiceError):
    code = "illegal_choice"


class UndoRefused(ChoiceError):
    """An undo the barrier forbids (:meth:`games.base.Match.undo`); the message says why."""

    code = "not_allowed"
