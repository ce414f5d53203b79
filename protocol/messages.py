"""The client frames of protocol v1 (SPEC section 7): requests parsed from untrusted maps.

Client frames arrive as maps already checked by :func:`protocol.codec.decode` (types, depth,
sizes). :func:`parse` turns one into a typed request (frozen, but for :class:`Act`) or raises
:class:`~protocol.errors.RequestError`: ``unknown_type`` for a type this version does not know,
``bad_request`` naming the first wrong field. Unknown extra fields are ignored so that newer
clients can talk to this server. Inside the server only the parsed requests travel (the untrusted
side is the ``dict``, the trusted side the dataclass). The server's frames, typed the same way,
are :mod:`protocol.frames`.

This module imports nothing of the project outside ``protocol``.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from protocol.errors import ErrorCode, RequestError

__all__ = [
    "CLIENT_TYPES",
    "DEFAULT_REPLAY_INTERVAL",
    "LISTED_STATES",
    "MAX_CHAT_CHARS",
    "MAX_CURSOR_CHARS",
    "MAX_DELAY_SECONDS",
    "MAX_ID_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PAGE",
    "MAX_REPLAY_INTERVAL",
    "MAX_ROOM_CHARS",
    "MAX_TOKEN_CHARS",
    "Act",
    "Chat",
    "Create",
    "Hello",
    "Join",
    "Leave",
    "ListRooms",
    "Ping",
    "Quick",
    "Rematch",
    "Replay",
    "Request",
    "RequestId",
    "RoomRequest",
    "Spectate",
    "Start",
    "Sync",
    "Undo",
    "clean_text",
    "parse",
    "request_id",
]

RequestId: TypeAlias = int | str | None
"""What a client puts in ``id`` and the answer echoes: an int or a short string."""

MAX_ID_CHARS: Final = 64
MAX_NAME_CHARS: Final = 32
MAX_ROOM_CHARS: Final = 64
MAX_TOKEN_CHARS: Final = 128
MAX_CHAT_CHARS: Final = 500
MAX_DELAY_SECONDS: Final = 3600.0
MAX_PAGE: Final = 100
"""The most rooms one ``rooms`` page holds (``list_rooms.limit``)."""
MAX_CURSOR_CHARS: Final = 128
LISTED_STATES: Final = ("open", "playing")
"""What ``list_rooms.state`` may ask for."""
MAX_REPLAY_INTERVAL = 60.0
DEFAULT_REPLAY_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class Hello:
    id: RequestId
    version: int
    client: str
    hash_rule: int = 1
    """The view hash rule asked for (SPEC section 4); a rule this server does not know is
    answered with rule 1 (``welcome.hash_rule`` says which)."""


@dataclass(frozen=True, slots=True)
class ListRooms:
    """One page of the public rooms, oldest first (SPEC section 7): at most ``limit`` rooms
    after the cursor ``after`` (a page's ``next``), of ``game``, in ``state`` (``open`` or
    ``playing``), with a free seat when ``free``."""

    id: RequestId
    game: str | None
    state: str | None = None
    free: bool = False
    after: str | None = None
    limit: int = 0
    """0: the server's default page size."""


@dataclass(frozen=True, slots=True)
class Create:
    id: RequestId
    game: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    public: bool = True
    spectator_delay: float = 0.0
    spectator_chat: bool = True
    seed: int | None = None
    bots: int = 0
    """Seats (the last ones) a server-side bot takes at once."""
    bot: str = "random"
    """The kind of those bots and of the ones ``start {bots: true}`` seats."""
    clock: dict[str, Any] | None = None
    """``{initial, increment?, on_timeout?}``; its values are checked by the server."""


@dataclass(frozen=True, slots=True)
class Join:
    """Take a seat (``seat`` or the first free one), or resume one with ``token`` (+ ``rev``)."""

    id: RequestId
    room: str
    seat: int | None
    name: str
    token: str | None
    rev: int | None


@dataclass(frozen=True, slots=True)
class Quick:
    id: RequestId
    game: str
    players: int
    name: str


@dataclass(frozen=True, slots=True)
class Spectate:
    id: RequestId
    room: str
    rev: int | None


@dataclass(frozen=True, slots=True)
class Leave:
    id: RequestId
    room: str


@dataclass(frozen=True, slots=True)
class Rematch:
    """The next match with the same players (SPEC section 9): a new room with the finished
    room's settings, every member moved into it."""

    id: RequestId
    room: str


@dataclass(frozen=True, slots=True)
class Start:
    id: RequestId
    room: str
    bots: bool


@dataclass(slots=True, init=False)
class Act:
    """A choice (SPEC section 7): the one request of every action. Not frozen like the others,
    whose frozen ``__init__`` runs as interpreted Python, one ``object.__setattr__`` per field
    (about 7,000 instructions a request, compiled or not): its own ``__init__``, compiled. It
    is never changed once parsed all the same."""

    id: RequestId
    room: str
    rev: int
    choice: builtins.object
    """Untrusted: an index or a choice map, checked by the room's match (anything else there is
    ``malformed_choice``, after the room's own checks, SPEC section 7). (Spelled
    ``builtins.object``: compiled, a dataclass looks a bare builtin up among the module's
    globals.)"""
    seat: int | None

    def __init__(
        self, id: RequestId, room: str, rev: int, choice: builtins.object, seat: int | None
    ) -> None:
        self.id, self.room, self.rev, self.choice, self.seat = id, room, rev, choice, seat


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back the seat's last step of its turn (SPEC section 24); ``rev`` as in ``act``."""

    id: RequestId
    room: str
    rev: int


@dataclass(frozen=True, slots=True)
class Sync:
    id: RequestId
    room: str


@dataclass(frozen=True, slots=True)
class Chat:
    id: RequestId
    room: str
    text: str


@dataclass(frozen=True, slots=True)
class Ping:
    id: RequestId


@dataclass(frozen=True, slots=True)
class Replay:
    """Watch a finished match again: a new replay room, ``interval`` seconds per revision."""

    id: RequestId
    room: str
    interval: float


Request: TypeAlias = (
    Hello
    | ListRooms
    | Create
    | Join
    | Quick
    | Spectate
    | Leave
    | Start
    | Act
    | Undo
    | Sync
    | Chat
    | Ping
    | Replay
    | Rematch
)
RoomRequest: TypeAlias = Join | Spectate | Leave | Start | Act | Undo | Sync | Chat | Rematch
"""Requests about one room (they all carry ``room``): the lobby hands them to the room's inbox,
but ``rematch``, which makes a new room and so is the lobby's own."""


class _Fields:
    """Typed getters over one untrusted frame; every failure names the field."""

    __slots__ = ("frame", "kind")

    def __init__(self, frame: Mapping[str, Any]) -> None:
        self.frame = frame
        self.kind = frame["type"]

    def _bad(self, name: str, what: str) -> RequestError:
        return RequestError(ErrorCode.BAD_REQUEST, f"{self.kind}: '{name}' must be {what}")

    def int_(
        self, name: str, *, lo: int = 0, hi: int = 2**53, default: int | None = None
    ) -> int | None:
        value = self.frame.get(name)
        if value is None:
            return default
        if type(value) is not int or not lo <= value <= hi:
            raise self._bad(name, f"an integer from {lo} to {hi}")
        return value

    def need_int(self, name: str, *, lo: int = 0, hi: int = 2**53) -> int:
        value = self.int_(name, lo=lo, hi=hi)
        if value is None:
            raise self._bad(name, f"an integer from {lo} to {hi}")
        return value

    def str_(self, name: str, *, limit: int, default: str | None = None) -> str | None:
        value = self.frame.get(name)
        if value is None:
            return default
        if type(value) is not str or not 0 < len(value) <= limit:
            raise self._bad(name, f"a non-empty string of at most {limit} characters")
        return value

    def need_str(self, name: str, *, limit: int) -> str:
        value = self.str_(name, limit=limit)
        if value is None:
            raise self._bad(name, f"a non-empty string of at most {limit} characters")
        return value

    def bool_(self, name: str, default: bool) -> bool:
        value = self.frame.get(name)
        if value is None:
            return default
        if type(value) is not bool:
            raise self._bad(name, "true or false")
        return value

    def number(self, name: str, *, hi: float, default: float) -> float:
        value = self.frame.get(name)
        if value is None:
            return default
        if type(value) not in (int, float) or not 0 <= value <= hi:
            raise self._bad(name, f"a number from 0 to {hi}")
        return float(value)

    def map_(self, name: str) -> dict[str, Any]:
        value = self.frame.get(name)
        if value is None:
            return {}
        if type(value) is not dict:
            raise self._bad(name, "a map")
        return value

    def room(self) -> str:
        return self.need_str("room", limit=MAX_ROOM_CHARS)

    def name(self) -> str:
        name = self.str_("name", limit=MAX_NAME_CHARS, default="player") or "player"
        return clean_text(name).strip() or "player"


_SEQUENCE: Final = re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI ... final byte
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                     # OSC DCS SOS PM APC ...
    [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?                      # ... up to BEL or ST
  | \x1b [\x20-\x2f]* [\x30-\x7e]?                              # other ESC sequences
    """,
    re.VERBOSE,
)
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BREAK: Final = re.compile(r"[\t\n]")


def clean_text(text: str) -> str:
    """``text`` as text that prints as itself on one line: no control character, no escape.

    Every escape sequence goes whole (CSI, OSC, DCS, SOS, PM, APC, in their 7-bit ``ESC x`` and
    8-bit C1 forms, up to their terminator), then every remaining control character (C0, DEL,
    C1) and the bidirectional overrides that can make text read backwards; tabs and line breaks
    become spaces. The server relays names and chat through it (SPEC section 13) and the
    terminal client prints every server string through it (:mod:`clients.printable`)."""
    if text.isprintable():
        return text
    text = _SEQUENCE.sub("", text)
    text = _BREAK.sub(" ", text)
    return _CONTROL.sub("", text)


def request_id(frame: Mapping[str, Any]) -> RequestId:
    """The frame's ``id`` if it is a valid one, else None (used even when parsing fails)."""
    value = frame.get("id")
    if type(value) is int and -(2**53) <= value <= 2**53:
        return value
    if type(value) is str and len(value) <= MAX_ID_CHARS:
        return value
    return None


def _hello(f: _Fields, rid: RequestId) -> Hello:
    version = f.need_int("version", hi=2**31)
    client = f.str_("client", limit=MAX_NAME_CHARS * 2, default="") or ""
    return Hello(rid, version, client, f.int_("hash_rule", hi=2**31, default=1) or 1)


def _list_rooms(f: _Fields, rid: RequestId) -> ListRooms:
    state = f.str_("state", limit=MAX_NAME_CHARS)
    if state is not None and state not in LISTED_STATES:
        raise f._bad("state", " or ".join(repr(s) for s in LISTED_STATES))
    return ListRooms(
        rid,
        f.str_("game", limit=MAX_NAME_CHARS),
        state,
        f.bool_("free", False),
        f.str_("after", limit=MAX_CURSOR_CHARS),
        f.int_("limit", lo=1, hi=MAX_PAGE, default=0) or 0,
    )


def _create(f: _Fields, rid: RequestId) -> Create:
    return Create(
        rid,
        f.need_str("game", limit=MAX_NAME_CHARS),
        f.need_int("players", lo=1, hi=16),
        f.map_("options"),
        f.bool_("public", True),
        f.number("spectator_delay", hi=MAX_DELAY_SECONDS, default=0.0),
        f.bool_("spectator_chat", True),
        f.int_("seed", hi=2**63 - 1),
        f.int_("bots", hi=16, default=0) or 0,
        f.str_("bot", limit=MAX_NAME_CHARS, default="random") or "random",
        f.map_("clock") if f.frame.get("clock") is not None else None,
    )


def _join(f: _Fields, rid: RequestId) -> Join:
    return Join(
        rid,
        f.room(),
        f.int_("seat", hi=15),
        f.name(),
        f.str_("token", limit=MAX_TOKEN_CHARS),
        f.int_("rev"),
    )


def _quick(f: _Fields, rid: RequestId) -> Quick:
    return Quick(
        rid,
        f.need_str("game", limit=MAX_NAME_CHARS),
        f.need_int("players", lo=1, hi=16),
        f.name(),
    )


def _spectate(f: _Fields, rid: RequestId) -> Spectate:
    return Spectate(rid, f.room(), f.int_("rev"))


def _act(f: _Fields, rid: RequestId) -> Act:
    choice = f.frame.get("choice")
    if choice is None:
        raise f._bad("choice", "an index into the legal choices or a choice map")
    return Act(rid, f.room(), f.need_int("rev"), choice, f.int_("seat", hi=15))


def _chat(f: _Fields, rid: RequestId) -> Chat:
    text = f.frame.get("text")
    if type(text) is str and len(text) <= MAX_CHAT_CHARS:
        text = clean_text(text)
    if type(text) is not str or not len(text.strip()) > 0 or len(text) > MAX_CHAT_CHARS:
        raise f._bad("text", f"a non-blank string of at most {MAX_CHAT_CHARS} characters")
    return Chat(rid, f.room(), text)


_PARSERS: Final[dict[str, Callable[[_Fields, RequestId], Request]]] = {
    "hello": _hello,
    "list_rooms": _list_rooms,
    "create": _create,
    "join": _join,
    "quick": _quick,
    "spectate": _spectate,
    "leave": lambda f, rid: Leave(rid, f.room()),
    "rematch": lambda f, rid: Rematch(rid, f.room()),
    "start": lambda f, rid: Start(rid, f.room(), f.bool_("bots", False)),
    "act": _act,
    "undo": lambda f, rid: Undo(rid, f.room(), f.need_int("rev")),
    "sync": lambda f, rid: Sync(rid, f.room()),
    "chat": _chat,
    "ping": lambda f, rid: Ping(rid),
    "replay": lambda f, rid: Replay(
        rid,
        f.room(),
        f.number("interval", hi=MAX_REPLAY_INTERVAL, default=DEFAULT_REPLAY_INTERVAL),
    ),
}

CLIENT_TYPES = frozenset(_PARSERS)


def parse(frame: Mapping[str, Any]) -> Request:
    """Validate one decoded client frame (with a string ``type``) into a request."""
    parser = _PARSERS.get(frame["type"])
    if parser is None:
        raise RequestError(ErrorCode.UNKNOWN_TYPE, f"unknown frame type {frame['type']!r}")
    if "id" in frame and frame["id"] is not None and request_id(frame) is None:
        raise RequestError(
            ErrorCode.BAD_REQUEST, f"'id' must be an integer or a string of <= {MAX_ID_CHARS}"
        )
    return parser(_Fields(frame), request_id(frame))
