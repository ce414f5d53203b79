"""Per-audience views of one room, and the patch frames of each revision.

DESIGN "Where the time goes": the shared part of the view is diffed, canonically encoded and its
ops encoded once per revision; only the small own parts are diffed per seat; each audience's
frame is encoded once (then written to every socket of that audience), spliced around what
the frames of a revision share (:class:`protocol.frames.RevisionFrames`). The view hash of an
audience is that of its entries' kept bytes (``{"own": own_bytes, "shared": shared_bytes}``),
so the shared part is never encoded twice. The spectators' hash is taken once per revision
(what sorts before the shared part, the room's parts and ``own`` nil, hashed once while
the parts stay the same); a seat's follows the rule its connection asked for (SPEC section 4):
under rule 2 it is the spectators' hash chained with the seat's own bytes
(:class:`protocol.hashing.ChainedHasher`: the spectators' hash once per revision, then a few
dozen bytes per seat), under rule 1 the whole document's
(:class:`protocol.hashing.DocumentHasher`: what sorts before ``own`` is hashed once per
revision, the shared part after it once per such seat). The spectators' frames are the same
under both rules, and the spectators' hash and the rule-2 hasher are kept while the shared
part and the room's parts stay the same (a new match's ``joined`` frames, one per audience,
ask for them again). Every seat's ``private`` part and the deciding seat's ``choices`` are
encoded in one compiled call per revision, one array read back seat by seat against each
seat's last bytes (:meth:`Views._advance_own`; ``seat`` never changes and ``undo`` is a
bool): a seat whose entries all have their last bytes, as most seats at most revisions, has
no ops and keeps its bytes; another gets its changed entries' bytes spliced into its last
pieces, and only those entries are diffed. ``choices`` are replaced whole, never diffed (SPEC
section 3, :data:`_WHOLE`): that op carries the new list's canonical bytes, held already, not
a second encoding of it.

A room may add *room-level parts*: further top-level entries of every audience's document (the
same for all, like ``clock``, :mod:`server.clock`). They are diffed with the shared part (their
ops go with the shared ops, prefixed ``/<name>``) and hashed as one more key of the map.

The "previous" documents are kept as canonical bytes, not as the objects a game returned (an
engine may hand out lists that it later mutates), per field of the game's view
(:class:`protocol.tree.Tree`): a field whose encoding did not change keeps its bytes and node,
and the diff skips it by identity, so a revision re-sorts, re-encodes and diffs only the fields
that changed, decoding the previous value of just those. The one exception is the fields a game
declares kept (:attr:`games.base.Game.kept_fields`: handed out as the same object until they
change, never mutated): their last values are held, and one that comes again as the same object
is not even encoded (Ishtar's terrain, laid pieces, beds, fountains...: over half of its view);
these are the engine's own objects, alive anyway. One that changed is encoded item by item, its
items that are the very objects of its last value spliced from their kept bytes
(``track``'s ``itemized``: Ishtar's ``laid`` grows by one entry, the engines' memos hand the
unchanged entries of ``beds`` or ``players`` out again). No copy of a view outlives its revision:
bytes are invisible to the garbage collector, whereas copies kept from one revision to the next
were most of the objects it had to scan. Ops are diffed with their final path
(``/shared/...``, ``/own/...``) so the size rule of :func:`protocol.patch.diff` counts the bytes
actually sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from games.base import Decision, Event, Match, own_part, shared_part
from protocol.codec import (
    array_header,
    canonical,
    canonical_copy,
    canonical_key,
    map_header,
    pack,
    unpack,
)
from protocol.frames import RevisionFrames, encode_events
from protocol.hashing import ChainedHasher, DocumentHasher, hash_bytes
from protocol.patch import Op, _canonical, diff
from protocol.tree import Tree, Work, _diff_leaf, diff_trees, track

_NONE: Final = canonical(None)
_TRUE: Final = canonical(True)
_FALSE: Final = canonical(False)
_EMPTY_ARRAY: Final = canonical([])
_OWN_HEAD: Final = map_header(4)
_CHOICES: Final = canonical_key("choices")
_PRIVATE: Final = canonical_key("private")
_SEAT: Final = canonical_key("seat")
_UNDO: Final = canonical_key("undo")
"""A seat's own part (:func:`own_view`) as a map of four entries, keys in canonical order."""
_OWN_KEY: Final = canonical_key("own")
_CHOICES_PATH: Final = "/own/choices"
_PRIVATE_PATH: Final = "/own/private"
_UNDO_PATH: Final = "/own/undo"
_REPLACE_CHOICES: Final = (
    map_header(3)
    + pack("op")
    + pack("replace")
    + pack("path")
    + pack(_CHOICES_PATH)
    + pack("value")
)
_REPLACE_UNDO: Final = (
    map_header(3) + pack("op") + pack("replace") + pack("path") + pack(_UNDO_PATH) + pack("value")
)
"""A ``replace`` op of a seat's ``choices`` or ``undo`` up to its value's bytes (``pack`` of the
op: its keys in the order :func:`protocol.patch.diff` writes them)."""
_REPLACE_NO_CHOICES: Final = _REPLACE_CHOICES + _EMPTY_ARRAY
_REPLACE_UNDO_TRUE: Final = _REPLACE_UNDO + _TRUE
_REPLACE_UNDO_FALSE: Final = _REPLACE_UNDO + _FALSE
"""The whole op of a seat's ``choices`` gone (a seat that no longer decides: made once) or of
its ``undo``."""
_NO_OPS: Final[list[Op]] = []
"""The ops of a seat whose own part did not change (never appended to: only tested)."""
_NO_KEPT: Final[dict[str, Any]] = {}
_NO_FIELD: Final[Any] = object()
"""(Final: compiled, held in C statics, not looked up among the module's globals at every use.)"""


_SHARED_DEPTH: Final = 2
"""Tracked: shared -> game -> each field of the game's view (a leaf). Measured best (deeper
trees cost more Python calls than they save on these views of 1 to 5 KB)."""
_SHARED_WHOLE_BELOW: Final = 256
"""A shared part whose last encoding is shorter than this many bytes is tracked whole, as one
leaf: one compiled encoding, and when it changed one diff of the decoded old value, cost less
than a node per field (the tests' tiny card game: about 90 bytes). The same ops either way (a
leaf's diff is :func:`protocol.patch.diff`'s), those for different keys of one map perhaps in
another order (a tracked map's in canonical key order, a leaf's as its values' keys come; the
SPEC fixes none); the one revision at which a
growing part crosses the size is sent as one ``replace`` of ``/shared``, of about this many
bytes. Checked on 6,148 frames of seeded tiny matches: the same ops and hashes."""
_OWN_DEPTH: Final = 1
"""A seat's own part is diffed per entry (``seat``, ``private``, ``choices``, ``undo``), as
:func:`protocol.tree.diff_trees` diffs a tree of this depth: its choices change on their own,
from none to a list, from one decision's list to the next's, or back to none."""
_WHOLE: Final = frozenset({"choices"})
"""Own entries replaced whole when they change, never diffed (SPEC section 3): a seat's
``choices`` are a new decision's list. The size rule replaced them whole nearly always anyway
(in seeded matches, 93 % of Ishtar's changes from one list to another and 94 % of Yspahan's,
mostly one-item lists among the others), after decoding the old list, diffing it item by item
and encoding every op to weigh it; replaced whole, the seats' patches of those matches are
0.03 % (Ishtar) and 0.2 % (Yspahan) bigger."""


def own_view(match: Match[Any], seat: int, decision: Decision | None) -> dict[str, Any]:
    """``seat``'s own part as the room sends it: the contract's (``seat``, ``private``,
    ``choices``) and ``undo``, whether the seat may take back a step now (SPEC section 24).
    (The reference: :class:`Views` makes the same bytes for every seat from one encoding,
    :meth:`Views._own_trees` and :meth:`Views._advance_own`.)"""
    own = own_part(match.game, match.state, seat, decision)
    own["undo"] = match.can_undo(seat)
    return own


def _own_batch(match: Match[Any], decision: Decision | None, players: int) -> list[Any]:
    """What :func:`own_view` gives that changes from seat to seat, in one list to encode at
    once: every seat's ``private`` part, then the deciding seat's ``choices`` if a seat decides
    (as :func:`games.base.own_part` makes them)."""
    game, state = match.game, match.state
    batch: list[Any] = [game.own_view(state, seat) for seat in range(players)]
    if decision is not None and 0 <= decision.seat < players:
        batch.append(list(game.describe(state, decision)))
    return batch


def _skip(data: bytes, pos: int) -> int:
    """Where the msgpack value that starts at ``pos`` of ``data`` ends (any msgpack value, read
    header by header: a container adds its items to those still to be passed)."""
    left = 1
    while left:
        left -= 1
        b = data[pos]
        if b <= 0x7F or b >= 0xE0 or b == 0xC0 or b == 0xC2 or b == 0xC3:  # (fixint, nil, bools)
            pos += 1
        elif b <= 0x8F:  # fixmap
            left += 2 * (b & 0x0F)
            pos += 1
        elif b <= 0x9F:  # fixarray
            left += b & 0x0F
            pos += 1
        elif b <= 0xBF:  # fixstr
            pos += 1 + (b & 0x1F)
        elif b == 0xD9 or b == 0xC4:  # str 8, bin 8
            pos += 2 + data[pos + 1]
        elif b == 0xDA or b == 0xC5:  # str 16, bin 16
            pos += 3 + int.from_bytes(data[pos + 1 : pos + 3], "big")
        elif b == 0xDB or b == 0xC6:  # str 32, bin 32
            pos += 5 + int.from_bytes(data[pos + 1 : pos + 5], "big")
        elif b == 0xDC:  # array 16
            left += int.from_bytes(data[pos + 1 : pos + 3], "big")
            pos += 3
        elif b == 0xDD:  # array 32
            left += int.from_bytes(data[pos + 1 : pos + 5], "big")
            pos += 5
        elif b == 0xDE:  # map 16
            left += 2 * int.from_bytes(data[pos + 1 : pos + 3], "big")
            pos += 3
        elif b == 0xDF:  # map 32
            left += 2 * int.from_bytes(data[pos + 1 : pos + 5], "big")
            pos += 5
        elif b == 0xCC or b == 0xD0:  # uint 8, int 8
            pos += 2
        elif b == 0xCD or b == 0xD1:  # uint 16, int 16
            pos += 3
        elif b == 0xCA or b == 0xCE or b == 0xD2:  # float 32, uint 32, int 32
            pos += 5
        elif b == 0xCB or b == 0xCF or b == 0xD3:  # float 64, uint 64, int 64
            pos += 9
        elif 0xD4 <= b <= 0xD8:  # fixext 1, 2, 4, 8, 16
            pos += 2 + (1 << (b - 0xD4))
        elif b == 0xC7:  # ext 8
            pos += 3 + data[pos + 1]
        elif b == 0xC8:  # ext 16
            pos += 4 + int.from_bytes(data[pos + 1 : pos + 3], "big")
        elif b == 0xC9:  # ext 32
            pos += 6 + int.from_bytes(data[pos + 1 : pos + 5], "big")
        else:  # (0xC1: never used by msgpack)
            raise ValueError(f"not msgpack: byte {b:#x} at {pos}")
    return pos


@dataclass(slots=True, init=False)
class Revision:
    """Everything sent for one revision: a frame per seat and one for the spectators (never
    changed once made; not a frozen dataclass, whose fields cost ``object.__setattr__`` each;
    its own ``__init__``, compiled, as :mod:`server.effects`' per-revision effects)."""

    rev: int
    seat_frames: tuple[bytes, ...]
    seat_rules: bytes
    """The view hash rule of each seat's frame (SPEC section 4), a byte per seat."""
    spectator_frame: bytes
    spectator_ops: bytes
    """The spectators' ops, encoded one after the other (:func:`protocol.frames.encode_ops`):
    a revision kept for resumes holds no decoded objects (see :class:`Views`)."""
    spectator_count: int
    spectator_hash: str

    def __init__(
        self,
        rev: int,
        seat_frames: tuple[bytes, ...],
        seat_rules: bytes,
        spectator_frame: bytes,
        spectator_ops: bytes,
        spectator_count: int,
        spectator_hash: str,
    ) -> None:
        self.rev, self.seat_frames, self.seat_rules = rev, seat_frames, seat_rules
        self.spectator_frame, self.spectator_ops = spectator_frame, spectator_ops
        self.spectator_count, self.spectator_hash = spectator_count, spectator_hash

    def ops(self) -> list[Op]:
        """The spectators' ops, decoded."""
        ops: list[Op] = unpack(array_header(self.spectator_count) + self.spectator_ops)
        return ops


class Views:
    """The last view every audience was sent, kept as canonical bytes (per field, see
    :class:`protocol.tree.Tree`).

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
        self._around: DocumentHasher | None = None
        """The hasher of the spectators' document around its shared part (the room's parts and
        ``own`` nil, hashed once): made again when the parts change."""
        self._hashed: Tree | None = None
        self._spectators = ""
        """The spectators' hash of the shared part ``_hashed`` under ``_around`` (None: none
        yet): a new match's ``joined`` frames ask for it once per audience."""
        self._chain: ChainedHasher | None = None
        """The rule-2 hasher chained on the spectators' hash ``_spectators`` (None: none yet)."""
        self._spliced: Tree | None = None
        self._before = self._after = b""
        """Every audience's document around its ``own`` value, for the shared part ``_spliced``
        and the room's parts as they are (None: not made yet): a new match's ``joined`` frames
        splice one per audience."""
        self.set_parts(parts or {})
        self._shared: Tree | None = None
        self._own: list[Tree] = []
        self._kept_fields: tuple[str, ...] = tuple(getattr(match.game, "kept_fields", ()))
        """(A scripted stand-in for a game, in tests, may not declare any. A tuple: compiled,
        walked by index.)"""
        self._kept: dict[str, Any] = _NO_KEPT
        """The game's kept fields as last sent (``Game.kept_fields``), as ``track``'s ``before``
        of the shared part: ``{"game": {field: value}}``."""
        if not lazy:
            self.ensure()

    def set_parts(self, parts: dict[str, Any]) -> None:
        """Replace the room-level parts without a patch (before anyone was sent the view)."""
        self.parts, self.parts_enc = {}, {}
        self._around = self._hashed = self._chain = self._spliced = None
        for name, value in parts.items():
            self.parts[name], self.parts_enc[name] = canonical_copy(value)

    def ensure(self) -> Tree:
        """The views of the match as it is now, computed if they were not yet (see the class)."""
        if self._shared is not None:
            return self._shared
        match = self.match
        decision = match.decision
        work = Work()
        self._own = self._own_trees(match, decision)
        shared = shared_part(match.game, match.state, decision)
        tree = track(None, shared, 0, work)  # (one encoding tells a small part: kept as a leaf)
        if len(tree.enc) >= _SHARED_WHOLE_BELOW:
            tree = track(None, shared, _SHARED_DEPTH, work)
        self._shared = tree
        self._keep(shared)
        return self._shared

    def _keep(self, shared: dict[str, Any]) -> None:
        """Keep the game's kept fields of the shared part just sent (never mutated, see
        :attr:`games.base.Game.kept_fields`): the next revision skips encoding those it gets
        again as the same objects.

        Most revisions change few of them (Yspahan keeps 15): the last ones are kept as they
        are when every field is the same object, else copied with the changed ones replaced
        (a dict copied whole, then a few entries set, costs less than a new one built entry by
        entry: in Yspahan about 6,200 instructions per revision instead of 7,400). The last
        dict is never edited: :func:`protocol.tree.track` was given it as ``before``."""
        fields = self._kept_fields
        if fields:
            game: dict[str, Any] = shared["game"]  # (typed: compiled, the dict's own operations)
            last: dict[str, Any] = self._kept.get("game", _NO_KEPT)
            kept: dict[str, Any] | None = None
            for key in fields:
                value = game.get(key, _NO_FIELD)
                if last.get(key, _NO_FIELD) is value:
                    continue
                if kept is None:
                    kept = last.copy()
                if value is _NO_FIELD:
                    del kept[key]
                else:
                    kept[key] = value
            if kept is not None:
                self._kept = {"game": kept}

    @property
    def shared(self) -> Any:
        """The shared part as last sent (a fresh copy)."""
        return self.ensure().value()

    @property
    def shared_enc(self) -> bytes:
        return self.ensure().enc

    @property
    def own(self) -> list[Any]:
        """Each seat's own part as last sent (fresh copies)."""
        self.ensure()
        return [tree.value() for tree in self._own]

    @property
    def own_enc(self) -> list[bytes]:
        self.ensure()
        return [tree.enc for tree in self._own]

    def hash_for(self, seat: int | None, rule: int = 1) -> str:
        """The view hash of ``seat``'s document (None: the spectators') under ``rule``."""
        if seat is None:
            return self._spectator_hash()
        if rule == 2:
            return self._chained().hash(self._own[seat].enc)
        return self._hasher().hash(self._own[seat].enc)

    def _spectator_hash(self) -> str:
        """The spectators' view hash now (the same under both rules), taken once per shared
        part (a new match's ``joined`` frames, one per audience, ask for it again)."""
        shared = self.ensure()
        if self._hashed is shared:
            return self._spectators
        around = self._around
        if around is None:
            around = self._around = DocumentHasher({**self.parts_enc, "own": _NONE}, "shared")
        self._spectators = around.hash(shared.enc)
        self._hashed = shared
        self._chain = None
        return self._spectators

    def _chained(self) -> ChainedHasher:
        """The rule-2 hasher of the current revision's seats (:func:`protocol.hashing.chained_hash`
        of the spectators' hash), made once per revision."""
        spectators = self._spectator_hash()
        chain = self._chain
        if chain is None:
            chain = self._chain = ChainedHasher(spectators)
        return chain

    def _hasher(self) -> DocumentHasher:
        """The hasher of every audience's document as it is now: they differ in ``own`` only."""
        shared = self.ensure()
        return DocumentHasher({**self.parts_enc, "shared": shared.enc}, "own")

    def document(self, seat: int | None, rule: int = 1) -> tuple[bytes, str]:
        """``seat``'s current view document as canonical bytes (None: the spectators'), and its
        hash under ``rule``: spliced from the kept bytes, decoded by no one (a ``joined`` or
        ``state`` frame carries it as it is, :func:`protocol.frames.encode_frame_with`). The
        spectators' hash is that of this very document (:meth:`_spectator_hash`'s, kept)."""
        shared = self.ensure()
        own = _NONE if seat is None else self._own[seat].enc
        if self._spliced is not shared:  # (what surrounds ``own``: the same for every audience)
            entries = {**self.parts_enc, "shared": shared.enc}
            keys = sorted({*entries, "own"})  # (as :func:`protocol.codec.canonical_map`)
            before = [map_header(len(keys))]
            after: list[bytes] = []
            pieces = before
            for name in keys:
                if name == "own":
                    before.append(_OWN_KEY)
                    pieces = after
                else:
                    pieces.append(canonical_key(name))
                    pieces.append(entries[name])
            self._before, self._after = b"".join(before), b"".join(after)
            self._spliced = shared
        doc = self._before + own + self._after
        if seat is None:
            return doc, self._spectator_hash()
        if rule != 2:
            return doc, hash_bytes(doc)
        return doc, self._chained().hash(own)

    def full(self, seat: int | None, rule: int = 1) -> tuple[dict[str, Any], str]:
        """A fresh copy of ``seat``'s current view document and its hash under ``rule``."""
        shared = self.ensure()
        own = None if seat is None else self._own[seat].value()
        doc = {name: unpack(enc) for name, enc in self.parts_enc.items()}
        doc.update(shared=shared.value(), own=own)
        return doc, self.hash_for(seat, rule)

    def _own_trees(self, match: Match[Any], decision: Decision | None) -> list[Tree]:
        """Every seat's own part as its bytes and their pieces (:attr:`protocol.tree.Tree.parts`:
        no kids, see :meth:`_advance_own`), from one canonical call: the same bytes and pieces
        as ``track(None, own_view(match, seat, decision), _OWN_DEPTH, work)``, with
        ``own_view``'s four keys in their canonical order."""
        players = self.players
        decider = -1 if decision is None else decision.seat
        batch = _own_batch(match, decision, players)
        data = _canonical(batch)
        pos = len(array_header(len(batch)))
        privates: list[bytes] = []
        for _ in range(players):
            end = _skip(data, pos)
            privates.append(data[pos:end])
            pos = end
        choices = data[pos:] if len(batch) > players else _EMPTY_ARRAY
        trees: list[Tree] = []
        for seat in range(players):
            mine = choices if seat == decider else _EMPTY_ARRAY
            private = privates[seat]
            undo = _TRUE if match.can_undo(seat) else _FALSE
            parts = [
                _OWN_HEAD,
                _CHOICES,
                mine,
                _PRIVATE,
                private,
                _SEAT,
                canonical(seat),
                _UNDO,
                undo,
            ]
            tree = Tree(b"".join(parts), None)
            tree.parts = parts
            trees.append(tree)
        return trees

    def _advance_own(
        self, match: Match[Any], decision: Decision | None, work: Work
    ) -> tuple[list[bytes], list[int]]:
        """Bring every seat's own part up to date (``self._own``) and give each seat's ops,
        encoded (:func:`protocol.frames.encode_ops`' bytes), and their number (0: none).

        Every seat's ``private`` and the deciding seat's ``choices`` are encoded in one
        canonical call, as one array (``[private_0, ..., private_n, choices]``: an array's
        canonical bytes are its header and its items' canonical bytes): one call to the encoder
        costs about 2,000 instructions before its first byte, so one per revision instead of one
        per seat (the whole own part of a quiet seat, the parts of a deciding one). The array is
        then read seat by seat against each seat's last bytes: a private part whose last bytes
        start the rest of the array is that very value (msgpack is prefix-free: a whole value's
        bytes are never the start of another's), else it changed and its end is found by
        :func:`_skip`; the choices are whatever follows the last private part. ``seat`` never
        changes, ``undo`` is a bool and a seat that does not decide has no choices: a seat whose
        three changing entries have their last bytes keeps its tree, no ops (most seats at most
        revisions); another gets the bytes :func:`protocol.tree.track` would make (the last
        pieces with the changed entries' bytes, :attr:`protocol.tree.Tree.parts`) and the ops
        :func:`protocol.tree.diff_trees` would give for the trees of ``_OWN_DEPTH``, made here
        entry by entry without the trees (no node per entry, no copy of the kids, no walk of
        the unchanged ones: about 6,000 instructions less per changed seat, in the tiny game and
        in Yspahan): the ``choices`` replaced whole (:data:`_WHOLE`), the ``private`` part
        diffed as a leaf below the top (:func:`protocol.tree._diff_leaf`, its size noted for the
        size rule), ``undo`` replaced (a bool), in the entries' canonical order. The ``replace``
        of ``choices`` or ``undo`` is written as its bytes only (its head, then the value's
        canonical bytes, held already), never made as an op to be encoded: a seat's ops are
        only ever sent. The ops are the same (tests/server/test_views.py compares those of the
        frames with ``diff_trees``'s).
        """
        players = self.players
        decider = -1 if decision is None else decision.seat
        batch = _own_batch(match, decision, players)
        data = _canonical(batch)
        pos = len(array_header(len(batch)))
        deciding = len(batch) > players
        owns = self._own
        privates: list[bytes] = []
        for seat in range(players):
            old = owns[seat].parts
            assert old is not None and len(old) == 9
            kept = old[4]
            end = pos + len(kept)
            if data[pos:end] != kept:  # (else this very value: msgpack is prefix-free)
                end = _skip(data, pos)
                kept = data[pos:end]
            privates.append(kept)
            pos = end
        choices = data[pos:] if deciding else _EMPTY_ARRAY
        encoded: list[bytes] = []
        counts: list[int] = []
        for seat in range(players):
            prev = owns[seat]
            parts = prev.parts
            assert parts is not None
            private = privates[seat]
            mine_choices = choices if seat == decider else _EMPTY_ARRAY
            undo_enc = _TRUE if match.can_undo(seat) else _FALSE
            if private is parts[4] and mine_choices == parts[2] and undo_enc == parts[8]:
                encoded.append(b"")  # (most seats, most revisions: nothing changed)
                counts.append(0)
                continue
            pieces = parts.copy()
            own = b""
            count = 0
            if mine_choices != parts[2]:  # (replaced whole: its bytes, not encoded again)
                pieces[2] = mine_choices
                own = (
                    _REPLACE_NO_CHOICES
                    if mine_choices is _EMPTY_ARRAY
                    else _REPLACE_CHOICES + mine_choices
                )
                count = 1
            if private is not parts[4]:
                pieces[4] = private
                after = batch[seat]
                kind = type(after)
                if kind is dict or kind is list or kind is tuple:  # (for the size rule)
                    work.sizes[id(after)] = len(private)
                ops: list[Op] = []
                _diff_leaf(parts[4], private, after, _PRIVATE_PATH, ops, work, True)
                own += work.encode_ops(ops)
                count += len(ops)
            if undo_enc != parts[8]:  # (a bool: its one op, bytes known)
                pieces[8] = undo_enc
                own += _REPLACE_UNDO_TRUE if undo_enc is _TRUE else _REPLACE_UNDO_FALSE
                count += 1
            mine = Tree(b"".join(pieces), None)
            mine.parts = pieces
            encoded.append(own)
            counts.append(count)
            owns[seat] = mine
        return encoded, counts

    def advance(
        self,
        rev: int,
        events: list[Event],
        parts: dict[str, Any] | None = None,
        rules: Sequence[int] = (),
    ) -> Revision:
        """Diff every audience after the match changed; build one frame per audience.

        ``parts``: the room-level parts as they are now (omitted: unchanged). ``rules``: the
        view hash rule of each seat's frame (a seat beyond it: rule 1). The views must have
        been computed (:meth:`ensure`) before the match changed."""
        old = self._shared
        if old is None:
            raise RuntimeError("Views.advance before ensure(): the previous views are unknown")
        match = self.match
        decision = match.decision
        work = Work()
        shared = shared_part(match.game, match.state, decision)
        if len(old.enc) < _SHARED_WHOLE_BELOW:  # (a small part: one leaf, never its kept fields)
            tree = track(old, shared, 0, work)
        else:
            tree = track(old, shared, _SHARED_DEPTH, work, self._kept, itemized=True)
        shared_ops = diff_trees(old, tree, "/shared", work)
        self._keep(shared)
        for name, value in (parts or {}).items():
            part, enc = canonical_copy(value)
            if enc != self.parts_enc.get(name):
                if name in self.parts:
                    shared_ops += diff(self.parts[name], part, "/" + name)
                else:
                    shared_ops.append({"op": "add", "path": "/" + name, "value": part})
                self.parts[name], self.parts_enc[name] = part, enc
                self._around = self._hashed = self._chain = self._spliced = None
        shared_bytes = work.encode_ops(shared_ops)
        count = len(shared_ops)
        self._shared = tree
        # The events as everyone sees them, encoded once; a seat with private fields gets its own.
        public = encode_events([e.project(None) for e in events])
        # Every audience's document differs in its own part only. The spectators' is hashed
        # once; a seat's under rule 2 is chained on it, under rule 1 hashed whole (what
        # precedes ``own`` once, by the hasher made for the first such seat).
        spectator_hash = self._spectator_hash()
        spliced = RevisionFrames(self.room, rev, shared_bytes, count, public)
        hasher: DocumentHasher | None = None
        chain: ChainedHasher | None = None
        used: list[int] = []
        frames: list[bytes] = []
        secret = False  # (whether any event has a seat's private fields: seldom)
        for event in events:
            if event.private:
                secret = True
        own_bytes, own_counts = self._advance_own(match, decision, work)
        owns = self._own
        for seat in range(self.players):
            mine = owns[seat]
            own = own_counts[seat]
            seen = (
                encode_events([e.project(seat) for e in events])
                if secret and any(seat in e.private for e in events)
                else public
            )
            if seat < len(rules) and rules[seat] == 2:
                if chain is None:
                    chain = self._chained()
                digest = chain.hash(mine.enc)
                used.append(2)
            else:
                if hasher is None:
                    hasher = self._hasher()
                digest = hasher.hash(mine.enc)
                used.append(1)
            if own:  # (their bytes from the diff: the choices' are the canonical ones)
                frame = spliced.with_own(own_bytes[seat], own, digest, seen)
            elif seen is public:
                frame = spliced.plain(digest)
            else:
                frame = spliced.with_own(b"", 0, digest, seen)
            frames.append(frame)
        spectator = spliced.plain(spectator_hash)
        return Revision(
            rev, tuple(frames), bytes(used), spectator, shared_bytes, count, spectator_hash
        )
