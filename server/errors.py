"""The one place where anything raised while serving a request becomes a wire error.

Game errors (:mod:`games.errors`) carry codes with the same names as
:class:`~protocol.errors.ErrorCode` members, so the mapping is by name; a game code the
protocol does not know becomes ``internal`` (and is logged as a bug). Protocol errors keep their
code. Anything else is a bug: the client gets ``internal`` with no details, the log gets the
traceback (STYLE 7).
"""

from __future__ import annotations

from games.errors import GameError
from protocol.errors import CLOSE_CODES, ErrorCode, ProtocolError

_BY_VALUE = {code.value: code for code in ErrorCode}


def wire_error(exc: BaseException) -> tuple[ErrorCode, str, bool]:
    """``(code, message, expected)``; ``expected`` is False for bugs the caller must log."""
    if isinstance(exc, ProtocolError):
        return exc.code, exc.message, True
    if isinstance(exc, GameError):
        code = _BY_VALUE.get(exc.code)
        if code is not None:
            return code, exc.message, True
    return ErrorCode.INTERNAL, "internal error", False


def close_code(code: ErrorCode) -> int | None:
    """The WebSocket close code that ``code`` ends a connection with, or None if it does not."""
    return CLOSE_CODES.get(code)


class Closing(Exception):
    """Raised inside the connection shell to end it with a close code and a reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
