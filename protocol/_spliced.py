"""``patch`` and ``ack`` frames spliced from parts encoded once: the names :mod:`protocol.frames`
exports for them (:func:`encode_patch`, :class:`RevisionFrames`, :func:`encode_ops`,
:func:`encode_events`, :func:`ack_head`, :func:`encode_ack`).

A revision's frames differ from one audience to the next in their own ops, their hash and
sometimes their events only, so the server encodes the shared ops and the public events once
and splices each audience's frame around them (DESIGN "Where the time goes"). The bytes decode
to exactly :class:`protocol.frames.Patch`'s map, keys in its order. A choice's ``ack`` differs
from the room's last one in its revision and request id only: the rest is encoded once per room
(:func:`ack_head`).

A module of its own so that the compiled build includes it (``scripts/build_compiled.py``:
five calls per revision, each an interpreted call with a dozen encodings in it before; an
``ack`` through the frozen :class:`~protocol.frames.Ack` and its ``to_wire``, interpreted, cost
about 15,000 instructions per choice, spliced here about 2,000);
:mod:`protocol.frames` cannot be compiled (mypyc's dataclasses take its ``ClassVar`` constants
for fields).
"""

from __future__ import annotations

from typing import Any, Final

from protocol.codec import array_header, map_header, pack
from protocol.messages import RequestId

__all__ = [
    "RevisionFrames",
    "ack_head",
    "encode_ack",
    "encode_events",
    "encode_ops",
    "encode_patch",
]


def encode_ops(ops: list[dict[str, Any]]) -> bytes:
    """The concatenated encodings of ``ops`` (no array header), to splice into many frames."""
    return b"".join([pack(op) for op in ops])


def encode_events(events: list[Any]) -> bytes:
    """The encoding of a patch frame's ``events`` array, to reuse for every audience that sees
    the same events."""
    return pack(events)


_PATCH_HEAD: Final = map_header(6) + pack("type") + pack("patch") + pack("room")
_REV: Final = pack("rev")
_OPS: Final = pack("ops")
_HASH: Final = pack("hash")
_EVENTS: Final = pack("events")
"""(Final: compiled, constants in C statics, not looked up among the module's globals.)"""


def encode_patch(
    room: str,
    rev: int,
    ops: list[bytes],
    count: int,
    view_hash: str,
    events: list[Any] | bytes,
) -> bytes:
    """A ``patch`` frame whose ``count`` ops are the pre-encoded ``ops`` (:func:`encode_ops`'s
    bytes, one chunk or several: the shared ops, then an audience's own), spliced in order.

    Decodes to :class:`~protocol.frames.Patch`'s map exactly as
    :func:`~protocol.frames.encode_frame` of it would; only the ops' bytes are reused rather
    than encoded again. ``events`` may be given already encoded (:func:`encode_events`).
    """
    head = _head(room, rev)
    digest = pack(view_hash)
    seen = events if type(events) is bytes else pack(events)
    if len(ops) == 1:  # (the usual frame: the shared ops only; one list made whole)
        return b"".join([head, array_header(count), ops[0], _HASH, digest, _EVENTS, seen])
    return b"".join([head, array_header(count), *ops, _HASH, digest, _EVENTS, seen])


_last_head: tuple[str, int, bytes] = ("", -1, b"")
"""The frame head of the last :func:`encode_patch` (room, revision and their bytes): every
audience's frame of one revision starts with the same, made once (one tuple, replaced whole)."""


def _head(room: str, rev: int) -> bytes:
    """A patch frame's bytes up to its ops' array header: type, room, revision, ``ops`` key."""
    global _last_head
    last = _last_head
    if last[1] == rev and last[0] == room:
        return last[2]
    head = b"".join([_PATCH_HEAD, pack(room), _REV, pack(rev), _OPS])
    _last_head = (room, rev, head)
    return head


class RevisionFrames:
    """The ``patch`` frames of one revision for every audience, spliced around what they share:
    each is :func:`encode_patch`'s bytes exactly (``room``, ``rev``, then the ops: the
    revision's shared ops ``shared``, ``count`` of them, perhaps followed by an audience's own).

    The frame's head (type, room, revision, the ``ops`` key) is made once per revision, not
    looked up per frame (:func:`encode_patch` looks it up among the module's globals); a
    *plain* frame (the shared ops only and the public events ``public``: most seats at most
    revisions, and the spectators) is its start, made once up to the header of a 16-byte
    string, its hash's digits and its end, made once: the events after the hash."""

    __slots__ = ("_end", "_head", "_shared", "_start", "count")

    def __init__(self, room: str, rev: int, shared: bytes, count: int, public: bytes) -> None:
        head = b"".join([_PATCH_HEAD, pack(room), _REV, pack(rev), _OPS])
        self._head = head
        self._shared = shared
        self.count = count
        self._start = b"".join([head, array_header(count), shared, _HASH_16])
        self._end = _EVENTS + public

    def plain(self, view_hash: str) -> bytes:
        """The frame of the shared ops and the public events, hashed ``view_hash``."""
        data = view_hash.encode()
        if len(data) == 16:  # (a view hash: 16 hex digits, whose header ends ``_start``)
            return self._start + data + self._end
        return b"".join([self._start[:-1], pack(view_hash), self._end])

    def with_own(self, own: bytes, n: int, view_hash: str, events: bytes) -> bytes:
        """The frame of the shared ops followed by ``n`` own ops ``own`` (:func:`encode_ops`'s
        bytes, none if empty), hashed ``view_hash``, with the encoded ``events``
        (:func:`encode_events`)."""
        return b"".join(
            [
                self._head,
                array_header(self.count + n),
                self._shared,
                own,
                _HASH,
                pack(view_hash),
                _EVENTS,
                events,
            ]
        )


_HASH_16: Final = _HASH + pack("0" * 16)[:1]
"""The ``hash`` key and the header of a string of 16 bytes (a view hash's 16 hex digits)."""
_ACK_TYPE: Final = pack("type") + pack("ack") + pack("room")
_ACK_SHORT: Final = map_header(3)
_ACK_LONG: Final = map_header(4)
_ID: Final = pack("id")


def ack_head(room: str) -> bytes:
    """The bytes every ``ack`` of a choice in ``room`` shares after its map header (type, room,
    the ``rev`` key), for :func:`encode_ack`: made once per room."""
    return b"".join((_ACK_TYPE, pack(room), _REV))


def encode_ack(head: bytes, rev: int, rid: RequestId) -> bytes:
    """``encode_frame(Ack(rid, room, rev))``, spliced from the room's :func:`ack_head`: the same
    bytes, keys in ``to_wire``'s order (the id last, absent when None)."""
    if rid is None:
        return b"".join((_ACK_SHORT, head, pack(rev)))
    return b"".join((_ACK_LONG, head, pack(rev), _ID, pack(rid)))
