"""What the owner and the relays exchange on Redis (:mod:`server.relay`), every format with its
writer and its reader, and the timings both sides agree on.

- A room's channel ``P:{room}:spectate`` carries *messages*: a kind (:data:`PATCH`,
  :data:`INFO`, :data:`CHAT`, :data:`STATE`), the room's rev, then the spectator frame's bytes
  as the room encoded them (:func:`message`, :func:`parse_message`).
- The one interest channel ``P:relay:interest`` carries *announcements*
  ``<op>|<node>|<room>`` (:data:`OPEN`, :data:`KEEP`, :data:`BYE`; :func:`announcement`).
- The one chat channel ``P:relay:chat`` carries relay spectators' lines as msgpack
  ``[room, session, text]`` (:func:`chat_line`).
- A room's spectator state key ``P:{room}:spectate:state`` is a hash (rev, hash, view, info):
  :func:`state_fields` writes it from the room's live views, :func:`parse_state` reads it.
- A room's spectator counts ``P:{room}:spectators`` map a node to ``<count>|<until>``
  (:func:`count_value`, :func:`live_count`).

The owner's side (:mod:`.publisher`) and the relay's (:mod:`.subscriber`, :mod:`.relayed`,
:mod:`.counts`) use these and nothing else of each other, so neither can drift from the other.
No I/O here: the callers do the Redis round trips.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from protocol.codec import pack, unpack

if TYPE_CHECKING:
    from server.room import Room

PATCH = b"p"
INFO = b"i"
CHAT = b"c"
STATE = b"s"
HEAD = struct.Struct(">cq")
"""A message: its kind (patch, info, chat; state: the state key was just written at that rev,
no frame), the room's rev, then the frame's bytes."""
OPEN = b"open"
KEEP = b"keep"
BYE = b"bye"
"""A relay node's announcements on the interest channel: ``<op>|<node>|<room>``."""

STATE_TTL_MS = 3600 * 1000
"""How long a room's spectator state key outlives its last write (the owner also deletes it
when the room's interest lapses)."""
CHECK_EVERY = 2.0
"""Seconds between the relay's checks of each relayed room's state key (a lost last patch),
and between its ``keep`` announcements."""
INTEREST_TTL = 3 * CHECK_EVERY
"""Seconds an owner goes on publishing a room after a relay node's last announcement."""
COUNT_TTL = 3 * CHECK_EVERY
"""Seconds a node's count of a room's relayed spectators stays valid unless written again."""

State = tuple[int, dict[str, Any], str, dict[str, Any]]
"""A room's spectator state as read: rev, view, hash, info (``{}`` if not written with it)."""


def message(kind: bytes, rev: int, frame: bytes = b"") -> bytes:
    """A message of a room's channel: ``kind`` at ``rev``, then ``frame``'s bytes."""
    return HEAD.pack(kind, rev) + frame


def parse_message(data: bytes) -> tuple[bytes, int, bytes]:
    """A message's kind, rev and frame bytes (:func:`message` undone)."""
    kind, rev = HEAD.unpack_from(data)
    return kind, rev, data[HEAD.size :]


def room_of(channel: str) -> str:
    """The room of a room's channel name (its Redis hash tag: ``P:{room}:spectate``)."""
    return channel.split("{", 1)[-1].split("}", 1)[0]


def announcement(op: bytes, node: str, room: str) -> bytes:
    """``node``'s announcement ``op`` about ``room`` on the interest channel."""
    return op + b"|" + node.encode() + b"|" + room.encode()


def parse_announcement(data: bytes) -> tuple[bytes, str, str]:
    """An announcement's op, node and room (undecodable bytes replaced, never an error)."""
    op, _, rest = data.partition(b"|")
    node, _, room = rest.partition(b"|")
    return op, node.decode(errors="replace"), room.decode(errors="replace")


def chat_line(room: str, session: str, text: str) -> bytes:
    """A relay spectator's chat line, forwarded to the room's owner on the chat channel."""
    return pack([room, session, text])


def parse_chat_line(data: bytes) -> tuple[str, str, str] | None:
    """A forwarded line's room, session and text; None if it is not one."""
    try:
        room, session, text = unpack(data)
    except (ValueError, TypeError):
        return None
    return str(room), str(session), str(text)


def spectator_state(room: Room) -> tuple[int, str, bytes]:
    """The live spectator view of ``room``: its rev, hash and encoded document (the views'
    kept bytes, :meth:`server.views.Views.document`)."""
    doc, digest = room.views.document(None)
    return room.rev, digest, doc


def state_fields(room: Room, with_info: bool) -> dict[str, bytes]:
    """The spectator state key's fields for ``room`` now, built from the bytes its views
    already keep (no encode of the view); ``with_info``: its ``room`` info too."""
    rev, digest, doc = spectator_state(room)
    state = {"rev": str(rev).encode(), "hash": digest.encode(), "view": doc}
    if with_info:
        state["info"] = pack(room.info())
    return state


def parse_state(raw: dict[bytes, bytes] | None) -> State | None:
    """The spectator state read from its key (None: not written, or written without a view)."""
    if not raw or b"view" not in raw or b"rev" not in raw:
        return None
    info = unpack(raw[b"info"]) if b"info" in raw else {}
    return int(raw[b"rev"]), unpack(raw[b"view"]), raw[b"hash"].decode(), dict(info)


def count_value(count: int, until: float) -> str:
    """A node's count of a room's spectators, valid until ``until`` (wall-clock seconds)."""
    return f"{count}|{until:.3f}"


def live_count(value: bytes | str, now: float) -> int:
    """The count of a :func:`count_value` still valid at ``now``; 0 if expired or malformed."""
    text = value.decode() if isinstance(value, bytes) else str(value)
    count, _, until = text.partition("|")
    try:
        return int(count) if float(until) >= now else 0
    except ValueError:
        return 0
