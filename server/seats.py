"""Seats and their tokens: who holds a seat, and the secret that lets them take it back.

A token is 32 random bytes (``secrets``) handed out once, on join. The room keeps only its
SHA-256, so a snapshot or a log line never holds a usable token, and compares digests with
:func:`hmac.compare_digest` so the time taken says nothing about how much of a guess matched.
A lookup compares against every seat, also after a match, for the same reason.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.connection import Connection


def new_token() -> str:
    return secrets.token_urlsafe(32)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(slots=True)
class Seat:
    """One seat of a room. ``conn`` is None while nobody (or a bot) is connected to it."""

    index: int
    name: str = ""
    token_digest: bytes = b""
    conn: Connection | None = None
    bot: bool = False
    bot_kind: str = ""
    """The kind of the bot that plays this seat now (a bot seat, or a stand-in), else ""."""
    standin: bool = False
    """A bot plays for the seat's player, who has been gone past the grace period."""
    forfeited: bool = False

    @property
    def taken(self) -> bool:
        return self.bot or bool(self.token_digest)

    def claim(self, name: str, conn: Connection) -> str:
        token = new_token()
        self.name = name
        self.token_digest = digest(token)
        self.conn = conn
        return token

    def release(self) -> None:
        self.name = ""
        self.token_digest = b""
        self.conn = None
        self.bot = False
        self.bot_kind = ""
        self.standin = False

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.index,
            "name": self.name,
            "taken": self.taken,
            "bot": self.bot,
            "connected": self.bot or self.conn is not None,
            "bot_kind": self.bot_kind or None,
            "standin": self.standin,
            "forfeited": self.forfeited,
        }


def find_by_token(seats: list[Seat], token: str) -> Seat | None:
    """The seat whose token this is, comparing against every seat in constant time each."""
    wanted = digest(token)
    found: Seat | None = None
    for seat in seats:
        if seat.token_digest and hmac.compare_digest(seat.token_digest, wanted):
            found = seat
    return found
