"""Protocol errors: one hierarchy, stable codes, and the one table that maps them to the wire.

::

    ProtocolError                 base; ``code`` is an :class:`ErrorCode`
    +-- FrameError                the bytes are not an acceptable frame: the connection closes
    +-- RequestError              a well-formed frame the server refuses: the connection survives
    |   +-- QuotaExceeded         refused by a quota or budget; ``limit`` names it
    +-- ServerFrameError          (a client's side) a server frame not as SPEC section 8 says

Every error that reaches a client is an ``error`` frame ``{type: "error", code, message, id?}``
whose ``code`` is one of :class:`ErrorCode`. Codes are stable: they are never renamed or reused.
:data:`CLOSE_CODES` says which codes also close the connection, and with which WebSocket close
code; no other place decides that. Game errors (``games.errors``) carry the same code names.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CLOSE_CODES",
    "ErrorCode",
    "FrameError",
    "ProtocolError",
    "QuotaExceeded",
    "RequestError",
    "ServerFrameError",
]


class ErrorCode(StrEnum):
    # Frames (close the connection)
    FRAME_TOO_LARGE = "frame_too_large"
    MALFORMED_FRAME = "malformed_frame"
    TOO_DEEP = "too_deep"
    CONTAINER_TOO_LARGE = "container_too_large"
    BAD_TYPE = "bad_type"
    BAD_ENVELOPE = "bad_envelope"
    TEXT_FRAME = "text_frame"
    RATE_LIMITED = "rate_limited"
    UNSUPPORTED_VERSION = "unsupported_version"
    # Requests (the connection survives)
    SLOW_DOWN = "slow_down"
    QUOTA_EXCEEDED = "quota_exceeded"
    UNKNOWN_TYPE = "unknown_type"
    BAD_REQUEST = "bad_request"
    NOT_ALLOWED = "not_allowed"
    NOT_FOUND = "not_found"
    ROOM_FULL = "room_full"
    BAD_TOKEN = "bad_token"
    STALE_REV = "stale_rev"
    UNAVAILABLE = "unavailable"
    STORAGE_LOST = "storage_lost"
    INTERNAL = "internal"
    # Game (the same names as games.errors codes)
    BAD_OPTIONS = "bad_options"
    GAME_OVER = "game_over"
    NOT_YOUR_TURN = "not_your_turn"
    MALFORMED_CHOICE = "malformed_choice"
    ILLEGAL_CHOICE = "illegal_choice"


CLOSE_CODES: dict[ErrorCode, int] = {
    ErrorCode.FRAME_TOO_LARGE: 1009,
    ErrorCode.MALFORMED_FRAME: 1002,
    ErrorCode.TOO_DEEP: 1002,
    ErrorCode.CONTAINER_TOO_LARGE: 1009,
    ErrorCode.BAD_TYPE: 1003,
    ErrorCode.BAD_ENVELOPE: 1002,
    ErrorCode.TEXT_FRAME: 1003,
    ErrorCode.RATE_LIMITED: 1008,
    ErrorCode.UNSUPPORTED_VERSION: 1002,
}
"""Codes that close the connection, with the WebSocket close code (RFC 6455 section 7.4.1)."""


class ProtocolError(Exception):
    """An error with a stable code; ``message`` is for people, ``code`` for programs."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message

    @property
    def close_code(self) -> int | None:
        """The WebSocket close code if this error ends the connection, else None."""
        return CLOSE_CODES.get(self.code)


class FrameError(ProtocolError):
    """The bytes received are not an acceptable frame; the connection is closed."""


class RequestError(ProtocolError):
    """A well-formed request that is refused; the connection survives. ``limit``: the name of
    the limit that refused it, when one did (sent as the error frame's ``limit``)."""

    def __init__(self, code: ErrorCode, message: str, limit: str | None = None) -> None:
        super().__init__(code, message)
        self.limit = limit


class QuotaExceeded(RequestError):
    """A request refused by one of the server's quotas or budgets (SPEC section 14); ``limit``
    is that limit's stable name (``rooms_per_address``, ``list_per_connection``, ...), sent in
    the error frame's ``limit`` field. The connection survives."""

    limit: str

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(ErrorCode.QUOTA_EXCEEDED, message, limit)


class ServerFrameError(ProtocolError):
    """A decoded server frame that does not follow SPEC section 8 (raised on a client's side by
    :func:`protocol.frames.parse_frame`, never sent); its code is always ``malformed_frame``."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.MALFORMED_FRAME, message)
