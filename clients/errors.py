"""Sentences for people from the server's error codes (SPEC section 5) and connection failures.

The server's ``message`` is English already but written for any frontend; here each stable
``code`` gets a sentence that says what happened and what to do in this client. Unknown codes
(a newer server) still read well: the code and the server's message.
"""

from __future__ import annotations

from clients.connection import ClientError, ConnectionLost, ServerError

_EXPLAIN: dict[str, str] = {
    "stale_rev": "The match moved on before your choice arrived; choose again from the new view.",
    "not_your_turn": "It is not your turn: another player must decide now.",
    "illegal_choice": "That choice is not legal now",
    "malformed_choice": "The client sent a choice the server cannot read",
    "game_over": "The match is over; no more choices are taken.",
    "not_allowed": "The server does not allow that now",
    "not_found": "No such room (it may have finished and been closed, or the id is mistyped).",
    "room_full": "That room has no free seat (or that seat is taken).",
    "bad_token": "That seat token does not open a seat in this room.",
    "unavailable": "The server cannot take moves right now (storage down or shutting down); "
    "try again in a moment.",
    "storage_lost": "The server's storage lost this match (its database came back empty); "
    "it cannot go on. Start a new one.",
    # (kept under 78 characters: the full-screen client's notice line at 80 columns)
    "internal": "A server bug (in its log): the board shows whether your move was made.",
    "bad_options": "The server refused the game settings",
    "unsupported_version": "This client speaks a protocol version the server does not.",
    "rate_limited": "Too many messages too fast: the server closed the connection.",
    "bad_request": "The client sent a request the server cannot read",
    "unknown_type": "The server does not know that request",
}


def explain(exc: BaseException) -> str:
    """One or two sentences for the user; never a traceback."""
    if isinstance(exc, ServerError):
        base = _EXPLAIN.get(exc.code)
        if base is None:
            return f"The server refused: {exc.message} ({exc.code})."
        if base.endswith("."):
            detail = f" ({exc.message})" if exc.code in ("not_allowed", "internal") else ""
            return base + detail if not detail else base[:-1] + detail + "."
        return f"{base}: {exc.message}."
    if isinstance(exc, ConnectionLost):
        return f"Connection problem: {exc}."
    if isinstance(exc, ClientError):
        return f"{exc}."
    if isinstance(exc, OSError):
        return f"System error: {exc.strerror or exc}."
    return f"Unexpected {type(exc).__name__}: {exc}"
