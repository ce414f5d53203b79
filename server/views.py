"""Per-audience views of one room, and the patch frames of each revision.

DESIGN "Where the time goes": the shared part of the view is diffed, canonically encoded and its
ops encoded once per revision; only the small own parts are diffed per seat; each audience's
frame is encoded once (then written to every socket of that audience). The view hash of an
audience is BLAKE2b of ``canonical_map({"own": own_bytes, "shared": shared_bytes})``, so the
shared part is never encoded twice.

A room may add *room-level parts*: further top-level entries of every audience's document (the
same for all, like ``clock``, :mod:`server.clock`). They are diffed with the shared part (their
ops go with the shared ops, prefixed ``/<name>``) and hashed as one more key of the map.

The cached "previous" documents are the copies the canonical encoder builds anyway
(:func:`protocol.codec.canonical_copy`), not the objects a game returned: an engine may hand out
lists that it later mutates. They are kept per field of the game's view (:class:`_Tree`): a
field whose plain encoding did not change keeps its copy and canonical bytes, and the diff skips
it by identity, so a revision re-sorts, re-encodes and diffs only the fields that changed. Ops
are diffed with their final path (``/shared/...``, ``/own/...``) so the size rule of
:func:`protocol.patch.diff` counts the bytes actually sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgpack

from games.base import Event, Match, own_part, shared_part
from protocol.codec import (
    array_header,
    canonical,
    canonical_copy,
    canonical_map,
    map_header,
    pack,
)
from protocol.messages import encode_events, encode_ops, encode_patch
from protocol.patch import Op, diff, hash_bytes

_NONE = canonical(None)


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


_pack = pack


class _Tree:
    """One value of a view as last sent: its canonical copy and encoding, kept per child down
    to a fixed depth so that the next revision re-sorts and re-encodes only what changed.

    Below that depth (a *leaf*) a value is recognised as unchanged by its plain msgpack encoding
    (``raw``, C speed, no sorting): equal bytes mean equal keys in the same order, equal types
    and equal values, hence the same canonical form, and the previous copy is reused, the very
    same object. :func:`protocol.patch.diff` skips shared objects, so an unchanged subtree costs
    one plain encoding per revision instead of a sorted copy, an encoding and a comparison.
    """

    __slots__ = ("copy", "enc", "kids", "raw")

    def __init__(self, raw: bytes, copy: Any, enc: bytes, kids: Any) -> None:
        self.raw = raw
        self.copy = copy
        self.enc = enc
        self.kids = kids


def _track(prev: _Tree | None, value: Any, depth: int, sizes: dict[int, int]) -> _Tree:
    """The tree of ``value``, sharing every unchanged part with ``prev``.

    ``sizes`` receives the encoded size of each new container, by ``id`` of its copy (for the
    size rule of :func:`protocol.patch.diff`)."""
    kind = type(value)
    if depth and kind is dict:
        old: dict[Any, _Tree] = prev.kids if prev is not None and type(prev.kids) is dict else {}
        kids = {key: _track(old.get(key), child, depth - 1, sizes) for key, child in value.items()}
        if (
            prev is not None
            and len(kids) == len(old)
            and all(kid is old.get(key) for key, kid in kids.items())
        ):
            return prev
        keys = sorted(kids)
        copy = {key: kids[key].copy for key in keys}
        enc = b"".join([map_header(len(keys)), *(_pack(k) + kids[k].enc for k in keys)])
        sizes[id(copy)] = len(enc)
        return _Tree(b"", copy, enc, kids)
    if depth and kind is list:
        before: list[_Tree] = prev.kids if prev is not None and type(prev.kids) is list else []
        n = len(before)
        items = [
            _track(before[i] if i < n else None, child, depth - 1, sizes)
            for i, child in enumerate(value)
        ]
        if (
            prev is not None
            and len(items) == n
            and all(a is b for a, b in zip(items, before, strict=True))
        ):
            return prev
        listed = [kid.copy for kid in items]
        enc = b"".join([array_header(len(items)), *(kid.enc for kid in items)])
        sizes[id(listed)] = len(enc)
        return _Tree(b"", listed, enc, items)
    raw = _pack(value)
    if prev is not None and prev.kids is None and prev.raw == raw:
        return prev
    if kind is dict or kind is list or kind is tuple:
        copy, enc = canonical_copy(value)
        sizes[id(copy)] = len(enc)
        return _Tree(raw, copy, enc, None)
    return _Tree(raw, value, raw, None)


_SHARED_DEPTH = 2
"""Tracked: shared -> game -> each field of the game's view (a leaf). Measured best (deeper
trees cost more Python calls than they save on these views of 1 to 5 KB)."""
_OWN_DEPTH = 0
"""A seat's own part is one leaf: small, and its choices change together or not at all."""


@dataclass(frozen=True, slots=True)
class Revision:
    """Everything sent for one revision: a frame per seat and one for the spectators."""

    rev: int
    seat_frames: tuple[bytes, ...]
    spectator_frame: bytes
    spectator_ops: list[Op]
    spectator_hash: str
    at: float


class Views:
    """The last view every audience was sent, kept as canonical bytes plus a decoded copy.

    With ``lazy`` (rooms) the views are computed when first needed: a room restored after a
    restart computes them when an audience first needs one, not while a thousand rooms are being
    restored. Whoever changes the match must then call :meth:`ensure` first (the diff of the
    next revision starts from the views as they were).
    """

    def __init__(
        self,
        room: str,
        match: Match[Any],
        players: int,
        parts: dict[str, Any] | None = None,
        *,
        lazy: bool = False,
    ) -> None:
        self.room = room
        self.match = match
        self.players = players
        self.parts: dict[str, Any] = {}
        self.parts_enc: dict[str, bytes] = {}
        self.set_parts(parts or {})
        self._shared: _Tree | None = None
        self._own: list[_Tree] = []
        if not lazy:
            self.ensure()

    def set_parts(self, parts: dict[str, Any]) -> None:
        """Replace the room-level parts without a patch (before anyone was sent the view)."""
        self.parts, self.parts_enc = {}, {}
        for name, value in parts.items():
            self.parts[name], self.parts_enc[name] = canonical_copy(value)

    def ensure(self) -> _Tree:
        """The views of the match as it is now, computed if they were not yet (see the class)."""
        if self._shared is not None:
            return self._shared
        match = self.match
        decision = match.decision
        sizes: dict[int, int] = {}
        self._own = [
            _track(None, own_part(match.game, match.state, seat, decision), _OWN_DEPTH, sizes)
            for seat in range(self.players)
        ]
        self._shared = _track(
            None, shared_part(match.game, match.state, decision), _SHARED_DEPTH, sizes
        )
        return self._shared

    @property
    def shared(self) -> Any:
        """The shared part as last sent (canonical copy; read only: later views share it)."""
        return self.ensure().copy

    @property
    def shared_enc(self) -> bytes:
        return self.ensure().enc

    @property
    def own(self) -> list[Any]:
        """Each seat's own part as last sent (read only)."""
        self.ensure()
        return [tree.copy for tree in self._own]

    @property
    def own_enc(self) -> list[bytes]:
        self.ensure()
        return [tree.enc for tree in self._own]

    def hash_for(self, seat: int | None) -> str:
        shared = self.ensure()
        own = _NONE if seat is None else self._own[seat].enc
        return hash_bytes(canonical_map({**self.parts_enc, "shared": shared.enc, "own": own}))

    def full(self, seat: int | None) -> tuple[dict[str, Any], str]:
        """A fresh copy of ``seat``'s current view document and its hash."""
        shared = self.ensure()
        own = None if seat is None else _unpack(self._own[seat].enc)
        doc = {name: _unpack(enc) for name, enc in self.parts_enc.items()}
        doc.update(shared=_unpack(shared.enc), own=own)
        return doc, self.hash_for(seat)

    def advance(
        self, rev: int, events: list[Event], parts: dict[str, Any] | None = None
    ) -> Revision:
        """Diff every audience after the match changed; build one frame per audience.

        ``parts``: the room-level parts as they are now (omitted: unchanged). The views must
        have been computed (:meth:`ensure`) before the match changed."""
        old = self._shared
        if old is None:
            raise RuntimeError("Views.advance before ensure(): the previous views are unknown")
        match = self.match
        decision = match.decision
        sizes: dict[int, int] = {}
        tree = _track(old, shared_part(match.game, match.state, decision), _SHARED_DEPTH, sizes)
        shared_ops = [] if tree is old else diff(old.copy, tree.copy, "/shared", sizes)
        for name, value in (parts or {}).items():
            part, enc = canonical_copy(value)
            if enc != self.parts_enc.get(name):
                if name in self.parts:
                    shared_ops += diff(self.parts[name], part, "/" + name)
                else:
                    shared_ops.append({"op": "add", "path": "/" + name, "value": part})
                self.parts[name], self.parts_enc[name] = part, enc
        shared_bytes = encode_ops(shared_ops)
        count = len(shared_ops)
        self._shared = tree
        # The events as everyone sees them, encoded once; a seat with private fields gets its own.
        public = encode_events([e.project(None) for e in events])
        frames: list[bytes] = []
        for seat in range(self.players):
            prev = self._own[seat]
            own = own_part(match.game, match.state, seat, decision)
            mine = _track(prev, own, _OWN_DEPTH, sizes)
            if mine is prev or mine.enc == prev.enc:
                own_ops: list[Op] = []
            else:
                own_ops = diff(prev.copy, mine.copy, "/own", sizes)
            self._own[seat] = mine
            seen = (
                encode_events([e.project(seat) for e in events])
                if any(seat in e.private for e in events)
                else public
            )
            frames.append(
                encode_patch(
                    self.room, rev, shared_bytes, count, own_ops, self.hash_for(seat), seen
                )
            )
        spectator_hash = self.hash_for(None)
        spectator = encode_patch(self.room, rev, shared_bytes, count, [], spectator_hash, public)
        return Revision(rev, tuple(frames), spectator, shared_ops, spectator_hash, time.monotonic())
