"""The server frames of protocol v1 (SPEC section 8), typed like the requests of
:mod:`protocol.messages`.

Each frame type is a frozen dataclass. The server builds them (trusted) and sends
:func:`encode_frame` of them; a client turns an untrusted decoded map into one with
:func:`parse_frame`, which checks every field the SPEC lists and raises
:class:`~protocol.errors.ServerFrameError` naming the first wrong one (unknown extra fields are
ignored, so a newer server can add some). ``to_wire()`` gives the map a frame travels as;
``parse_frame(f.to_wire()) == f`` for every frame.

``patch`` frames are many and mostly the same for every audience of a revision:
:func:`encode_patch` splices them from ops encoded once (DESIGN "Where the time goes"), and
:class:`RevisionFrames` every audience's frame of one revision around what they share; the bytes
decode to exactly :class:`Patch`'s map. A choice's ``ack`` is spliced the same way from its
room's part encoded once (:func:`ack_head`, :func:`encode_ack`). They and their helpers live in
``protocol._spliced``, a module of their own that the compiled build includes (this one it
cannot: mypyc's dataclasses), and are this module's names. The room core splices the ``joined``
frames with a full view and a rematch's ``ack`` (:mod:`server.membership`) and every ``room``
frame (:mod:`server.core`) the same way, to the bytes these dataclasses encode to (tested in
tests/server/core/test_spliced_frames.py).

This module imports nothing of the project outside ``protocol``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from protocol._spliced import (
    RevisionFrames,
    ack_head,
    encode_ack,
    encode_events,
    encode_ops,
    encode_patch,
)
from protocol.codec import encode, map_header, pack
from protocol.errors import ErrorCode, ServerFrameError
from protocol.messages import RequestId

__all__ = [
    "SERVER_TYPES",
    "Ack",
    "Bye",
    "ChatLine",
    "ErrorFrame",
    "Joined",
    "Patch",
    "Pause",
    "Pong",
    "Redirect",
    "RevisionFrames",
    "RoomInfo",
    "Rooms",
    "ServerFrame",
    "State",
    "Welcome",
    "ack_head",
    "encode_ack",
    "encode_events",
    "encode_frame",
    "encode_frame_with",
    "encode_ops",
    "encode_patch",
    "parse_frame",
]


def _with_id(frame: dict[str, Any], rid: RequestId) -> dict[str, Any]:
    if rid is not None:
        frame["id"] = rid
    return frame


@dataclass(frozen=True, slots=True)
class Welcome:
    """The answer to ``hello``: the session id, the version spoken, the server's limits."""

    TYPE: ClassVar[str] = "welcome"
    id: RequestId
    session: str
    version: int
    server: str
    limits: dict[str, Any]
    games: list[str]
    minor: int = 0
    """The server's minor version (SPEC section 23); 0 from a server that does not say."""
    hash_rule: int = 1
    """The view hash rule of this connection's frames (SPEC section 4); 1 from a server that
    does not say (before 1.4)."""

    def to_wire(self) -> dict[str, Any]:
        frame = {
            "type": "welcome",
            "session": self.session,
            "version": self.version,
            "minor": self.minor,
            "hash_rule": self.hash_rule,
            "server": self.server,
            "limits": dict(self.limits),
            "games": list(self.games),
        }
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class Rooms:
    """The answer to ``list_rooms``: one page of rooms' ``info``; ``next`` (when more may
    follow) is the cursor to send as ``after`` for the next page."""

    TYPE: ClassVar[str] = "rooms"
    id: RequestId
    rooms: list[dict[str, Any]]
    next: str | None = None

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": "rooms", "rooms": self.rooms}
        if self.next is not None:
            frame["next"] = self.next
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class Joined:
    """A seat taken or resumed, or spectating begun.

    ``view`` None means: the patches after ``rev`` follow (resume), keep your own view.
    ``token``: only when a seat was just taken. ``chat``: the room's recent chat lines this
    audience may see, oldest first. ``elapsed_ms`` (rooms with clocks): how long the running
    clock has run in the current decision. ``moved_from`` (protocol 1.5): the finished room a
    rematch moved this member out of (the frame is then unasked).
    """

    TYPE: ClassVar[str] = "joined"
    id: RequestId
    room: str
    seat: int | None
    rev: int
    view: dict[str, Any] | None
    hash: str | None
    info: dict[str, Any]
    chat: list[dict[str, Any]] = field(default_factory=list)
    token: str | None = None
    elapsed_ms: int | None = None
    moved_from: str | None = None

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "type": "joined",
            "room": self.room,
            "seat": self.seat,
            "rev": self.rev,
            "view": self.view,
            "hash": self.hash,
            "info": dict(self.info),
            "chat": self.chat,
        }
        if self.token is not None:
            frame["token"] = self.token
        if self.elapsed_ms is not None:
            frame["elapsed_ms"] = self.elapsed_ms
        if self.moved_from is not None:
            frame["moved_from"] = self.moved_from
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class State:
    """The full view of one audience at ``rev`` (the answer to ``sync``)."""

    TYPE: ClassVar[str] = "state"
    id: RequestId
    room: str
    rev: int
    view: dict[str, Any]
    hash: str
    elapsed_ms: int | None = None

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "type": "state",
            "room": self.room,
            "rev": self.rev,
            "view": self.view,
            "hash": self.hash,
        }
        if self.elapsed_ms is not None:
            frame["elapsed_ms"] = self.elapsed_ms
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class Patch:
    """The ops that turn an audience's view at ``rev - 1`` into its view at ``rev``, the new
    view's hash and the revision's events as this audience sees them."""

    TYPE: ClassVar[str] = "patch"
    room: str
    rev: int
    ops: list[dict[str, Any]]
    hash: str
    events: list[dict[str, Any]]

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "patch",
            "room": self.room,
            "rev": self.rev,
            "ops": self.ops,
            "hash": self.hash,
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class Ack:
    """A request done; ``rev`` after an accepted choice, ``info`` after ``create``."""

    TYPE: ClassVar[str] = "ack"
    id: RequestId
    room: str | None = None
    rev: int | None = None
    info: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": "ack"}
        if self.room is not None:
            frame["room"] = self.room
        if self.rev is not None:
            frame["rev"] = self.rev
        if self.info is not None:
            frame["info"] = dict(self.info)
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    """A refusal (the connection survives) or the reason of a close (SPEC section 5)."""

    TYPE: ClassVar[str] = "error"
    id: RequestId
    code: str
    message: str
    room: str | None = None
    limit: str | None = None
    """The name of the limit that refused the request (``quota_exceeded``, and ``unavailable``
    from ``max_rooms``; SPEC section 14)."""

    def to_wire(self) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        if self.room is not None:
            frame["room"] = self.room
        if self.limit is not None:
            frame["limit"] = self.limit
        return _with_id(frame, self.id)

    @classmethod
    def of(
        cls,
        rid: RequestId,
        code: ErrorCode,
        message: str,
        room: str | None = None,
        limit: str | None = None,
    ) -> ErrorFrame:
        """The frame of ``code`` (the server's side, where codes are :class:`ErrorCode`)."""
        return cls(rid, code.value, message, room, limit)


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One chat line (``from``: the speaker's seat, None for a spectator, and name)."""

    TYPE: ClassVar[str] = "chat"
    room: str
    seat: int | None
    name: str
    text: str
    rev: int
    ts: float

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "chat",
            "room": self.room,
            "from": {"seat": self.seat, "name": self.name},
            "text": self.text,
            "rev": self.rev,
            "ts": self.ts,
        }


@dataclass(frozen=True, slots=True)
class RoomInfo:
    """A room's ``info`` changed (seats, spectators, state): sent to every member."""

    TYPE: ClassVar[str] = "room"
    room: str
    info: dict[str, Any]

    def to_wire(self) -> dict[str, Any]:
        return {"type": "room", "room": self.room, "info": dict(self.info)}


@dataclass(frozen=True, slots=True)
class Pong:
    """The answer to ``ping``: the server's time (Unix seconds)."""

    TYPE: ClassVar[str] = "pong"
    id: RequestId
    ts: float

    def to_wire(self) -> dict[str, Any]:
        return _with_id({"type": "pong", "ts": self.ts}, self.id)


@dataclass(frozen=True, slots=True)
class Bye:
    """The server closes the connection next; ``url``: where to reconnect ("" : anywhere)."""

    TYPE: ClassVar[str] = "bye"
    reason: str
    url: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {"type": "bye", "reason": self.reason, **({"url": self.url} if self.url else {})}


@dataclass(frozen=True, slots=True)
class Redirect:
    """Another node serves ``room`` (``url`` empty: unknown yet, reconnect and ask again)."""

    TYPE: ClassVar[str] = "redirect"
    id: RequestId
    room: str
    url: str
    reason: str

    def to_wire(self) -> dict[str, Any]:
        frame = {"type": "redirect", "room": self.room, "url": self.url, "reason": self.reason}
        return _with_id(frame, self.id)


@dataclass(frozen=True, slots=True)
class Pause:
    """The room stopped (``paused``) or resumed taking choices: its storage went or came back."""

    TYPE: ClassVar[str] = "pause"
    room: str
    paused: bool
    reason: str
    rev: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "pause",
            "room": self.room,
            "paused": self.paused,
            "reason": self.reason,
            "rev": self.rev,
        }


ServerFrame: TypeAlias = (
    Welcome
    | Rooms
    | Joined
    | State
    | Patch
    | Ack
    | ErrorFrame
    | ChatLine
    | RoomInfo
    | Pong
    | Bye
    | Redirect
    | Pause
)


def encode_frame(frame: ServerFrame) -> bytes:
    """The bytes of one server frame."""
    return encode(frame.to_wire())


def encode_frame_with(frame: ServerFrame, name: str, value: bytes) -> bytes:
    """The bytes of ``frame`` whose ``name`` field is ``value``, already msgpack-encoded: a
    ``joined`` or ``state`` frame's view from the canonical bytes the server keeps of it
    (:meth:`server.views.Views.document`), not decoded to be encoded again. Decodes to
    :func:`encode_frame`'s map with that field's value set (the field comes last)."""
    wire = frame.to_wire()
    wire.pop(name, None)
    body = encode(wire)
    head = len(map_header(len(wire)))  # (msgpack's smallest header, as every encoder writes)
    return b"".join((map_header(len(wire) + 1), body[head:], pack(name), value))


# Parsing (the client's side) ------------------------------------------------------------------


class _Reader:
    """Typed getters over one untrusted server frame; every failure names the field."""

    __slots__ = ("frame", "kind")

    def __init__(self, frame: Mapping[str, Any]) -> None:
        self.frame = frame
        self.kind = frame.get("type")

    def _bad(self, name: str, what: str) -> ServerFrameError:
        return ServerFrameError(f"{self.kind}: '{name}' must be {what}")

    def get(self, name: str, kinds: tuple[type, ...], what: str, *, optional: bool = False) -> Any:
        value = self.frame.get(name)
        if value is None and optional:
            return None
        if type(value) not in kinds:
            raise self._bad(name, what)
        return value

    def str_(self, name: str, *, optional: bool = False) -> Any:
        return self.get(name, (str,), "a string", optional=optional)

    def int_(self, name: str, *, optional: bool = False) -> Any:
        return self.get(name, (int,), "an integer", optional=optional)

    def number(self, name: str) -> float:
        return float(self.get(name, (int, float), "a number"))

    def map_(self, name: str, *, optional: bool = False) -> Any:
        return self.get(name, (dict,), "a map", optional=optional)

    def maps(self, name: str, *, default: bool = False) -> list[dict[str, Any]]:
        value = self.frame.get(name)
        if value is None and default:
            return []
        if type(value) is not list or not _all_maps(value):
            raise self._bad(name, "a list of maps")
        return value

    def rid(self) -> RequestId:
        value = self.frame.get("id")
        if value is not None and type(value) not in (int, str):
            raise self._bad("id", "an integer or a string")
        return value


def _chat_line(r: _Reader) -> ChatLine:
    who = r.map_("from")
    seat, name = who.get("seat"), who.get("name")
    if (seat is not None and type(seat) is not int) or type(name) is not str:
        raise r._bad("from", "a map of 'seat' (an integer or nil) and 'name' (a string)")
    return ChatLine(r.str_("room"), seat, name, r.str_("text"), r.int_("rev"), r.number("ts"))


def _welcome(r: _Reader) -> Welcome:
    games = r.get("games", (list,), "a list of strings")
    if any(type(g) is not str for g in games):
        raise r._bad("games", "a list of strings")
    return Welcome(
        r.rid(),
        r.str_("session"),
        r.int_("version"),
        r.str_("server"),
        r.map_("limits"),
        games,
        r.int_("minor", optional=True) or 0,
        r.int_("hash_rule", optional=True) or 1,
    )


def _joined(r: _Reader) -> Joined:
    view = r.map_("view", optional=True)
    digest = r.str_("hash", optional=True)
    if (view is None) != (digest is None):
        raise r._bad("hash", "given with a view and only then")
    return Joined(
        r.rid(),
        r.str_("room"),
        r.int_("seat", optional=True),
        r.int_("rev"),
        view,
        digest,
        r.map_("info"),
        r.maps("chat", default=True),
        r.str_("token", optional=True),
        r.int_("elapsed_ms", optional=True),
        r.str_("moved_from", optional=True),
    )


def _state(r: _Reader) -> State:
    return State(
        r.rid(),
        r.str_("room"),
        r.int_("rev"),
        r.map_("view"),
        r.str_("hash"),
        r.int_("elapsed_ms", optional=True),
    )


def _all_maps(items: list[Any]) -> bool:
    for item in items:  # noqa: SIM110 (a plain loop: twice as fast as all() of a generator)
        if type(item) is not dict:
            return False
    return True


def _patch(r: _Reader) -> Patch:
    # The frame a client gets most: checked inline first, field by field only to say what is
    # wrong (the mirror takes one per revision and audience).
    frame = r.frame
    room, rev, ops, digest = (
        frame.get("room"),
        frame.get("rev"),
        frame.get("ops"),
        frame.get("hash"),
    )
    events = frame.get("events")
    if (
        type(room) is str
        and type(rev) is int
        and type(ops) is list
        and type(digest) is str
        and type(events) is list
        and _all_maps(ops)
        and _all_maps(events)
    ):
        return Patch(room, rev, ops, digest, events)
    return Patch(
        r.str_("room"), r.int_("rev"), r.maps("ops"), r.str_("hash"), r.maps("events", default=True)
    )


def _ack(r: _Reader) -> Ack:
    return Ack(
        r.rid(),
        r.str_("room", optional=True),
        r.int_("rev", optional=True),
        r.map_("info", optional=True),
    )


def _error(r: _Reader) -> ErrorFrame:
    return ErrorFrame(
        r.rid(),
        r.str_("code"),
        r.str_("message"),
        r.str_("room", optional=True),
        r.str_("limit", optional=True),
    )


_PARSERS: dict[str, Callable[[_Reader], ServerFrame]] = {
    "welcome": _welcome,
    "rooms": lambda r: Rooms(r.rid(), r.maps("rooms"), r.str_("next", optional=True)),
    "joined": _joined,
    "state": _state,
    "patch": _patch,
    "ack": _ack,
    "error": _error,
    "chat": _chat_line,
    "room": lambda r: RoomInfo(r.str_("room"), r.map_("info")),
    "pong": lambda r: Pong(r.rid(), r.number("ts")),
    "bye": lambda r: Bye(r.str_("reason"), r.str_("url", optional=True) or ""),
    "redirect": lambda r: Redirect(r.rid(), r.str_("room"), r.str_("url"), r.str_("reason")),
    "pause": lambda r: Pause(
        r.str_("room"), r.get("paused", (bool,), "true or false"), r.str_("reason"), r.int_("rev")
    ),
}

SERVER_TYPES = frozenset(_PARSERS)


def parse_frame(frame: Mapping[str, Any]) -> ServerFrame:
    """Check one decoded server frame (a client's side: it is untrusted) into its type."""
    kind = frame.get("type")
    parser = _PARSERS.get(kind) if type(kind) is str else None
    if parser is None:
        raise ServerFrameError(f"unknown server frame type {frame.get('type')!r}")
    return parser(_Reader(frame))
