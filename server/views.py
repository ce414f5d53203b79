"""Per-audience views of one room, and the patch frames of each revision.

DESIGN "Where the time goes": the shared part of the view is diffed, canonically encoded and its
ops encoded once per revision; only the small own parts are diffed per seat; each audience's
frame is encoded once (then written to every socket of that audience). The view hash of an
audience is BLAKE2b of ``canonical_map({"own": own_bytes, "shared": shared_bytes})``, so the
shared part is never encoded twice.

A room may add *room-level parts*: further top-level entries of every audience's document (the
same for all, like ``clock``, :mod:`server.clock`). They are diffed with the shared part (their
ops go with the shared ops, prefixed ``/<name>``) and hashed as one more key of the map.

The "previous" documents are kept as canonical bytes, never as the objects a game returned (an
engine may hand out lists that it later mutates), per field of the game's view
(:class:`_Tree`): a field whose plain encoding did not change keeps its bytes and node, and the
diff skips it by identity, so a revision re-sorts, re-encodes and diffs only the fields that
changed, decoding the previous value of just those. Ops are diffed with their final path
(``/shared/...``, ``/own/...``) so the size rule of :func:`protocol.patch.diff` counts the bytes
actually sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgpack

from games.base import Event, Match, own_part, shared_part
from protocol.codec import (
    array_header,
    array_length,
    canonical,
    canonical_copy,
    canonical_map,
    map_header,
    pack,
)
from protocol.messages import encode_events, encode_ops, encode_patch
from protocol.patch import Op, collapse, diff, diff_into, escape, hash_bytes, replaces_list

_NONE = canonical(None)


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


_pack = pack


class _Tree:
    """One value of a view as last sent, kept as bytes only: its canonical encoding (``enc``)
    and, down to a fixed depth, one tree per child (``kids``), so that the next revision
    re-sorts and re-encodes only what changed.

    Below that depth (a *leaf*) a value is encoded canonically at every revision (compiled
    code, :func:`protocol.codec.canonical`): equal bytes mean an unchanged value, and the
    previous node is reused, the very same object, which the diff skips without a look.

    No copy of a view outlives its revision: the diff reads the new value of a changed leaf
    where the game built it (nothing runs the engine until the revision's frames are encoded)
    and decodes the previous value from its bytes (msgpack, C speed). Bytes are invisible to
    the garbage collector, whereas copies kept from one revision to the next were most of the
    objects it had to scan (measured: 49 of the 84 objects an Ishtar action left alive).
    """

    __slots__ = ("enc", "kids")

    def __init__(self, enc: bytes, kids: Any) -> None:
        self.enc = enc
        self.kids = kids


class _Work:
    """What one revision learns on the way, for its diff only: the value of every new leaf as
    the game returned it (by ``id`` of its node) and the encoded size of every new container
    value (by its ``id``, for the size rule of :func:`protocol.patch.diff`)."""

    __slots__ = ("fresh", "sizes")

    def __init__(self) -> None:
        self.fresh: dict[int, Any] = {}
        self.sizes: dict[int, int] = {}

    def value(self, node: _Tree) -> Any:
        """The value of ``node``: as the game returned it if new in this revision, else decoded."""
        value = self.fresh.get(id(node), _MISSING)
        return _unpack(node.enc) if value is _MISSING else value


_MISSING = object()


def _track(prev: _Tree | None, value: Any, depth: int, work: _Work) -> _Tree:
    """The tree of ``value``, sharing every unchanged part with ``prev``."""
    kind = type(value)
    if depth and kind is dict:
        old: dict[Any, _Tree] = prev.kids if prev is not None and type(prev.kids) is dict else {}
        kids = {key: _track(old.get(key), child, depth - 1, work) for key, child in value.items()}
        if (
            prev is not None
            and len(kids) == len(old)
            and all(kid is old.get(key) for key, kid in kids.items())
        ):
            return prev
        keys = sorted(kids)
        enc = b"".join([map_header(len(keys)), *(_pack(k) + kids[k].enc for k in keys)])
        return _Tree(enc, kids)
    if depth and kind is list:
        before: list[_Tree] = prev.kids if prev is not None and type(prev.kids) is list else []
        n = len(before)
        items = [
            _track(before[i] if i < n else None, child, depth - 1, work)
            for i, child in enumerate(value)
        ]
        if (
            prev is not None
            and len(items) == n
            and all(a is b for a, b in zip(items, before, strict=True))
        ):
            return prev
        enc = b"".join([array_header(len(items)), *(kid.enc for kid in items)])
        return _Tree(enc, items)
    enc = canonical(value)
    if prev is not None and prev.kids is None and prev.enc == enc:
        return prev
    node = _Tree(enc, None)
    work.fresh[id(node)] = value
    if kind is dict or kind is list or kind is tuple:
        work.sizes[id(value)] = len(enc)
    return node


def _diff_trees(old: _Tree, new: _Tree, path: str, ops: list[Op], work: _Work, below: bool) -> None:
    """Append the operations that turn ``old`` into ``new`` (as :func:`protocol.patch.diff`
    would for their documents, the size rule included ``below`` the top)."""
    if old is new:
        return
    ok, nk = old.kids, new.kids
    if ok is None and nk is None:
        if old.enc == new.enc:
            return
        after = work.value(new)
        if type(after) is list:
            header = array_length(old.enc)
            if header is not None and _list_shortcut(
                old.enc, header, new.enc, after, path, ops, below
            ):
                return
        before = _unpack(old.enc)
        if below:
            diff_into(before, after, path, ops, work.sizes)
        else:
            ops += diff(before, after, path, work.sizes)
        return
    if type(ok) is not type(nk):
        ops.append({"op": "replace", "path": path, "value": work.value(new)})
        return
    start = len(ops)
    if type(nk) is dict:
        for key, kid in ok.items():
            other = nk.get(key)
            if other is None:
                ops.append({"op": "remove", "path": path + "/" + escape(key)})
            elif other is not kid:
                _diff_trees(kid, other, path + "/" + escape(key), ops, work, True)
        for key, kid in nk.items():
            if key not in ok:
                ops.append(
                    {"op": "add", "path": path + "/" + escape(key), "value": work.value(kid)}
                )
    else:
        common = min(len(ok), len(nk))
        for i in range(common):
            if ok[i] is not nk[i]:
                _diff_trees(ok[i], nk[i], f"{path}/{i}", ops, work, True)
        for i in range(len(ok) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": f"{path}/{i}"})
        for i in range(common, len(nk)):
            ops.append({"op": "add", "path": f"{path}/{i}", "value": work.value(nk[i])})
    if below:
        collapse(ops, start, path, len(new.enc), lambda: _unpack(new.enc))


def _list_shortcut(
    old: bytes,
    header: tuple[int, int],
    new: bytes,
    after: list[Any],
    path: str,
    ops: list[Op],
    below: bool,
) -> bool:
    """The ops of a list leaf whose change its bytes tell without decoding the old list (True),
    or False: diff them.

    Either the size rule replaces it whole, known from the lengths
    (:func:`protocol.patch.replaces_list`), or the old list is the start of the new one (a
    list that grew at its end, like Ishtar's ``laid``): its canonical items are then the first
    bytes of the new list's items, since a msgpack value is self-delimiting, and the ops are the
    ``add`` of the new items (or one ``replace`` if smaller, below the top).
    """
    count, size = header
    if below and replaces_list(count, after, path, len(new)):
        ops.append({"op": "replace", "path": path, "value": after})
        return True
    grown = array_length(new)
    if grown is None or grown[0] <= count:
        return False
    body = old[size:]
    if new[grown[1] : grown[1] + len(body)] != body:
        return False
    start = len(ops)
    for i in range(count, grown[0]):
        ops.append({"op": "add", "path": f"{path}/{i}", "value": after[i]})
    if below:
        collapse(ops, start, path, len(new), lambda: after)
    return True


_SHARED_DEPTH = 2
"""Tracked: shared -> game -> each field of the game's view (a leaf). Measured best (deeper
trees cost more Python calls than they save on these views of 1 to 5 KB)."""
_OWN_DEPTH = 1
"""A seat's own part is tracked per entry (``seat``, ``private``, ``choices``): its choices
change on their own, mostly from none to a list or back, which the size rule settles from the
list lengths without decoding the previous list (:func:`protocol.patch.replaces_list`)."""


@dataclass(frozen=True, slots=True)
class Revision:
    """Everything sent for one revision: a frame per seat and one for the spectators."""

    rev: int
    seat_frames: tuple[bytes, ...]
    spectator_frame: bytes
    spectator_ops: bytes
    """The spectators' ops, encoded one after the other (:func:`protocol.messages.encode_ops`):
    a revision kept for resumes holds no decoded objects (see :class:`_Tree`)."""
    spectator_count: int
    spectator_hash: str
    at: float

    def ops(self) -> list[Op]:
        """The spectators' ops, decoded."""
        ops: list[Op] = _unpack(array_header(self.spectator_count) + self.spectator_ops)
        return ops


class Views:
    """The last view every audience was sent, kept as canonical bytes (per field, see
    :class:`_Tree`).

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
        work = _Work()
        self._own = [
            _track(None, own_part(match.game, match.state, seat, decision), _OWN_DEPTH, work)
            for seat in range(self.players)
        ]
        self._shared = _track(
            None, shared_part(match.game, match.state, decision), _SHARED_DEPTH, work
        )
        return self._shared

    @property
    def shared(self) -> Any:
        """The shared part as last sent (a fresh copy)."""
        return _unpack(self.ensure().enc)

    @property
    def shared_enc(self) -> bytes:
        return self.ensure().enc

    @property
    def own(self) -> list[Any]:
        """Each seat's own part as last sent (fresh copies)."""
        self.ensure()
        return [_unpack(tree.enc) for tree in self._own]

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
        work = _Work()
        tree = _track(old, shared_part(match.game, match.state, decision), _SHARED_DEPTH, work)
        shared_ops: list[Op] = []
        _diff_trees(old, tree, "/shared", shared_ops, work, False)
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
            mine = _track(prev, own, _OWN_DEPTH, work)
            own_ops: list[Op] = []
            _diff_trees(prev, mine, "/own", own_ops, work, False)
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
        return Revision(
            rev, tuple(frames), spectator, shared_bytes, count, spectator_hash, time.monotonic()
        )
