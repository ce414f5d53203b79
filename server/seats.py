"""Seats and their tokens: who holds a seat, and the secret that lets them take it back.

:class:`Seating` is the seats of one room and the bookkeeping of who is connected to which
(picking a seat to join, resuming one with its token, restoring them from the store), no I/O.
:func:`missed` is the rule a resume or a late spectator catches up by: the buffered frames of
the revisions it missed (a room's :class:`PatchBuffer`), or the full view when the buffer no
longer has them all.

A token is 32 random bytes (``os.urandom``, as ``secrets``' tokens) handed out once, on join.
The room keeps only its SHA-256, so a snapshot or a log line never holds a usable token, and
compares digests with :func:`hmac.compare_digest` so the time taken says nothing about how much
of a guess matched.
A lookup compares against every seat, also after a match, for the same reason.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from protocol.errors import ErrorCode, RequestError
from server.store.meta import SeatMeta

if TYPE_CHECKING:
    from server.member import Member
    from server.views import Revision


_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
"""Base64's two symbols to their URL-safe ones (RFC 4648 section 5)."""


def new_token() -> str:
    """A new token: what ``secrets.token_urlsafe(32)`` makes (32 bytes of ``os.urandom``)."""
    return urlsafe(os.urandom(32))


def urlsafe(raw: bytes) -> str:
    """``raw`` in URL-safe base64 without its padding, as ``secrets.token_urlsafe`` writes it,
    encoded here: ``token_urlsafe`` and base64's ``urlsafe_b64encode`` are interpreted calls,
    about 1,500 instructions a token, four at every new match (tests/server/test_units.py
    holds the two equal)."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(_URLSAFE).decode()


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(slots=True, init=False)
class Seat:
    """One seat of a room. ``conn`` is None while nobody (or a bot) is connected to it.

    Made by its own ``__init__`` (of the index only, every field at its default): compiled,
    the one ``dataclass`` writes is an interpreted function of nine arguments, about 3,500
    instructions a seat, four seats at every new room."""

    index: int
    name: str = ""
    token_digest: bytes = b""
    conn: Member | None = None
    bot: bool = False
    bot_kind: str = ""
    """The kind of the bot that plays this seat now (a bot seat, or a stand-in), else ""."""
    standin: bool = False
    """A bot plays for the seat's player, who has been gone past the grace period."""
    forfeited: bool = False
    hash_rule: int = 2
    """The view hash rule of the seat's frames (SPEC section 4): its connection's, or its last
    connection's while it has none (a seat nobody ever held: rule 2, the cheaper)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.forfeited = False
        self.hash_rule = 2
        self.release()  # (every other field at its default: a seat nobody holds)

    @property
    def taken(self) -> bool:
        return self.bot or bool(self.token_digest)

    def claim(self, name: str, conn: Member) -> str:
        token = new_token()
        self.name = name
        self.token_digest = digest(token)
        self.conn = conn
        self.hash_rule = conn.hash_rule
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

    def meta(self) -> SeatMeta:
        """The seat as stored (the record of :meth:`to_json`)."""
        bot = self.bot
        return SeatMeta(
            self.index,
            self.name,
            bot or bool(self.token_digest),
            bot,
            bot or self.conn is not None,
            self.bot_kind or None,
            self.standin,
            self.forfeited,
        )


def find_by_token(seats: list[Seat], token: str) -> Seat | None:
    """The seat whose token this is, comparing against every seat in constant time each."""
    wanted = digest(token)
    found: Seat | None = None
    for seat in seats:
        if seat.token_digest and hmac.compare_digest(seat.token_digest, wanted):
            found = seat
    return found


class Seating:
    """The seats of one room."""

    def __init__(self, room_id: str, players: int) -> None:
        self.room = room_id
        self.seats = [Seat(i) for i in range(players)]

    def free(self) -> int:
        return sum(1 for seat in self.seats if not seat.taken)

    def connected(self) -> list[Member]:
        """The connections that hold a seat."""
        return [seat.conn for seat in self.seats if seat.conn is not None]

    def seat_of(self, conn: Member, watching: bool) -> Seat:
        """The seat ``conn`` holds (``watching``: it is one of the spectators)."""
        seat = conn.rooms.get(self.room)
        if seat is None:
            if watching:
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators never act")
            raise RequestError(ErrorCode.NOT_ALLOWED, f"you hold no seat in room {self.room}")
        return self.seats[seat]

    def pick(self, wanted: int | None) -> Seat:
        """The seat a ``join`` takes: ``wanted``, or the first free one."""
        if wanted is not None:
            if wanted >= len(self.seats):
                raise RequestError(ErrorCode.BAD_REQUEST, f"no seat {wanted} in {self.room}")
            seat = self.seats[wanted]
            if seat.taken:
                raise RequestError(ErrorCode.ROOM_FULL, f"seat {wanted} is taken")
            return seat
        for seat in self.seats:
            if not seat.taken:
                return seat
        raise RequestError(ErrorCode.ROOM_FULL, f"room {self.room} is full")

    def resume(self, conn: Member, token: str, wanted: int | None) -> Member | None:
        """``conn`` takes back the seat of ``token`` (``wanted``: the seat it names, if any);
        the connection that held it before, if another, is the one it displaced."""
        seat = find_by_token(self.seats, token)
        if seat is None or (wanted is not None and wanted != seat.index):
            raise RequestError(ErrorCode.BAD_TOKEN, "no seat of this room has that token")
        if conn.rooms.get(self.room, -1) not in (-1, seat.index):
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.room}")
        old = seat.conn
        if old is not None and old is not conn:
            old.rooms.pop(self.room, None)
        else:
            old = None
        seat.conn = conn
        seat.hash_rule = conn.hash_rule
        conn.rooms[self.room] = seat.index
        return old

    def restore(self, saved: Iterable[SeatMeta], tokens: Iterable[str]) -> list[Seat]:
        """Seats as the store kept them (names, bots, token digests, forfeits); the seats a bot
        plays (a bot's seat, or one forfeited on time)."""
        played: list[Seat] = []
        for seat, kept, token in zip(self.seats, saved, tokens, strict=False):
            seat.name = kept.name
            seat.bot = kept.bot
            seat.token_digest = bytes.fromhex(token) if token else b""
            seat.forfeited = kept.forfeited
            if seat.bot or seat.forfeited:
                seat.bot_kind = kept.bot_kind or "random"
                played.append(seat)
        return played

    def digests(self) -> list[str]:
        """The token digests the store keeps (never the tokens)."""
        return [seat.token_digest.hex() for seat in self.seats]

    def to_json(self) -> list[dict[str, Any]]:
        return [seat.to_json() for seat in self.seats]

    def metas(self) -> tuple[SeatMeta, ...]:
        """The seats as stored (:meth:`Seat.meta`)."""
        return tuple(seat.meta() for seat in self.seats)


class PatchBuffer:
    """The frames of a room's last ``size`` revisions, kept for resumes: a ring of ``size``
    slots, the revision in slot ``rev % size`` (revisions come one after the other, those
    kept being :attr:`first` to :attr:`last`): per slot its frame for each audience
    (:attr:`frames`: the seats', then the spectators'), and the view hash rule each seat's
    frame was made with (:attr:`rules`: the revision's byte per seat, SPEC section 4).

    Lists of fixed length written in place, not deques: compiled, a list's item is set
    natively, where a deque's ``append`` was a generic method call (about 200 instructions,
    ten of them per revision of a four-seat room). Nothing kept here is an object the garbage
    collector tracks or counts: a revision kept as an object (and its tuple of frames) was two
    of them per action, each alive for ``size`` actions of its room, so every young collection
    found them alive, walked them and promoted them (BENCHMARKS.md, the young collections of
    the paced tail)."""

    __slots__ = ("first", "frames", "last", "rules", "size")

    def __init__(self, players: int, size: int) -> None:
        self.size = size
        self.first = 0
        """The oldest revision kept (0: none kept)."""
        self.last = 0
        """The newest revision kept."""
        self.frames: list[list[bytes]] = [[b""] * size for _ in range(players + 1)]
        self.rules: list[bytes] = [b""] * size

    def append(self, revision: Revision) -> None:
        """Keep ``revision`` (the one after the newest kept, or a first one), in place of the
        oldest when the ring is full."""
        rev = revision.rev
        size = self.size
        slot = rev % size
        if self.first == 0 or rev != self.last + 1:
            self.first = rev  # (a first revision, or one that does not follow: start again)
        elif rev - self.first >= size:
            self.first = rev - size + 1
        self.last = rev
        self.rules[slot] = revision.seat_rules
        frames = self.frames
        index = 0
        for frame in revision.seat_frames:
            frames[index][slot] = frame
            index += 1
        frames[index][slot] = revision.spectator_frame

    def __len__(self) -> int:
        return 0 if self.first == 0 else self.last - self.first + 1


def missed(
    buffer: PatchBuffer, seat: int | None, since: int | None, upto: int, rule: int = 1
) -> list[bytes] | None:
    """The frames of revisions ``since+1 .. upto`` for ``seat`` (None: the spectators) if the
    buffer still holds them all, and (a seat's) made with the view hash rule ``rule``, else
    None (the full view then)."""
    if since is None or since > upto:
        return None
    if since == upto:
        return []
    if not buffer.first or buffer.first > since + 1:
        return None
    size = buffer.size
    revs = range(since + 1, min(upto, buffer.last) + 1)
    if seat is None:
        frames = buffer.frames[-1]
        return [frames[rev % size] for rev in revs]
    seat_frames, rules = buffer.frames[seat], buffer.rules
    out = []
    for rev in revs:
        if rules[rev % size][seat] != rule:
            return None
        out.append(seat_frames[rev % size])
    return out
