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
under both rules. A seat's own part is encoded whole first (one compiled call): when its
bytes are those last sent, as for most seats at most revisions, it has no ops and keeps its
tree without being tracked field by field; the seat that decides, and the one that did at the
last revision, are tracked at once (their choices changed), and their
``choices`` are replaced whole, never diffed (SPEC section 3, :data:`_WHOLE`): that op carries
the new list's canonical bytes, which its tree holds already, not a second encoding of it.

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
from protocol.codec import array_header, canonical, canonical_copy, canonical_map, unpack
from protocol.frames import RevisionFrames, encode_events
from protocol.hashing import ChainedHasher, DocumentHasher, chained_hash, hash_bytes
from protocol.patch import Op, diff
from protocol.tree import Tree, Work, diff_trees, track

_NONE: Final = canonical(None)
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
"""A seat's own part is tracked per entry (``seat``, ``private``, ``choices``, ``undo``): its
choices change on their own, from none to a list, from one decision's list to the next's, or
back to none."""
_WHOLE: Final = frozenset({"choices"})
"""Own entries replaced whole when they change, never diffed (SPEC section 3): a seat's
``choices`` are a new decision's list. The size rule replaced them whole nearly always anyway
(in seeded matches, 93 % of Ishtar's changes from one list to another and 94 % of Yspahan's,
mostly one-item lists among the others), after decoding the old list, diffing it item by item
and encoding every op to weigh it; replaced whole, the seats' patches of those matches are
0.03 % (Ishtar) and 0.2 % (Yspahan) bigger."""


def own_view(match: Match[Any], seat: int, decision: Decision | None) -> dict[str, Any]:
    """``seat``'s own part as the room sends it: the contract's (``seat``, ``private``,
    ``choices``) and ``undo``, whether the seat may take back a step now (SPEC section 24)."""
    own = own_part(match.game, match.state, seat, decision)
    own["undo"] = match.can_undo(seat)
    return own


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
        self.set_parts(parts or {})
        self._shared: Tree | None = None
        self._own: list[Tree] = []
        self._kept_fields: tuple[str, ...] = tuple(getattr(match.game, "kept_fields", ()))
        """(A scripted stand-in for a game, in tests, may not declare any. A tuple: compiled,
        walked by index.)"""
        self._decider: int | None = None
        """The seat whose choices the last frames listed (its own part changes at the next
        revision, its choices at least: it is tracked without trying its old bytes first)."""
        self._kept: dict[str, Any] = _NO_KEPT
        """The game's kept fields as last sent (``Game.kept_fields``), as ``track``'s ``before``
        of the shared part: ``{"game": {field: value}}``."""
        if not lazy:
            self.ensure()

    def set_parts(self, parts: dict[str, Any]) -> None:
        """Replace the room-level parts without a patch (before anyone was sent the view)."""
        self.parts, self.parts_enc = {}, {}
        self._around = None
        for name, value in parts.items():
            self.parts[name], self.parts_enc[name] = canonical_copy(value)

    def ensure(self) -> Tree:
        """The views of the match as it is now, computed if they were not yet (see the class)."""
        if self._shared is not None:
            return self._shared
        match = self.match
        decision = match.decision
        work = Work()
        self._own = [
            track(None, own_view(match, seat, decision), _OWN_DEPTH, work)
            for seat in range(self.players)
        ]
        shared = shared_part(match.game, match.state, decision)
        tree = track(None, shared, 0, work)  # (one encoding tells a small part: kept as a leaf)
        if len(tree.enc) >= _SHARED_WHOLE_BELOW:
            tree = track(None, shared, _SHARED_DEPTH, work)
        self._shared = tree
        self._keep(shared)
        self._decider = None if decision is None else decision.seat
        return self._shared

    def _keep(self, shared: dict[str, Any]) -> None:
        """Keep the game's kept fields of the shared part just sent (never mutated, see
        :attr:`games.base.Game.kept_fields`): the next revision skips encoding those it gets
        again as the same objects."""
        fields = self._kept_fields
        if fields:
            game: dict[str, Any] = shared["game"]  # (typed: compiled, the dict's own operations)
            kept: dict[str, Any] = {}
            for key in fields:
                value = game.get(key, _NO_FIELD)
                if value is not _NO_FIELD:
                    kept[key] = value
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
        if seat is None or rule == 2:
            spectators = self._spectator_hash()
            return spectators if seat is None else chained_hash(spectators, self._own[seat].enc)
        return self._hasher().hash(self._own[seat].enc)

    def _spectator_hash(self) -> str:
        """The spectators' view hash now (the same under both rules)."""
        around = self._around
        if around is None:
            around = self._around = DocumentHasher({**self.parts_enc, "own": _NONE}, "shared")
        return around.hash(self.ensure().enc)

    def _hasher(self) -> DocumentHasher:
        """The hasher of every audience's document as it is now: they differ in ``own`` only."""
        shared = self.ensure()
        return DocumentHasher({**self.parts_enc, "shared": shared.enc}, "own")

    def document(self, seat: int | None, rule: int = 1) -> tuple[bytes, str]:
        """``seat``'s current view document as canonical bytes (None: the spectators'), and its
        hash under ``rule``: spliced from the kept bytes, decoded by no one (a ``joined`` or
        ``state`` frame carries it as it is, :func:`protocol.frames.encode_frame_with`)."""
        shared = self.ensure()
        own = _NONE if seat is None else self._own[seat].enc
        doc = canonical_map({**self.parts_enc, "shared": shared.enc, "own": own})
        if seat is None or rule != 2:
            return doc, hash_bytes(doc)
        return doc, chained_hash(self._spectator_hash(), own)

    def full(self, seat: int | None, rule: int = 1) -> tuple[dict[str, Any], str]:
        """A fresh copy of ``seat``'s current view document and its hash under ``rule``."""
        shared = self.ensure()
        own = None if seat is None else self._own[seat].value()
        doc = {name: unpack(enc) for name, enc in self.parts_enc.items()}
        doc.update(shared=shared.value(), own=own)
        return doc, self.hash_for(seat, rule)

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
                self._around = None
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
        used = bytearray(self.players)
        frames: list[bytes] = []
        decider = None if decision is None else decision.seat
        for seat in range(self.players):
            prev = self._own[seat]
            own = own_view(match, seat, decision)
            if seat != decider and seat != self._decider and canonical(own) == prev.enc:
                # (most seats, most revisions: one compiled encode, no choices either side)
                mine, own_ops = prev, []  # (what tracking it would give: the same node)
            else:
                mine = track(prev, own, _OWN_DEPTH, work)
                own_ops = diff_trees(prev, mine, "/own", work, whole=_WHOLE)
                self._own[seat] = mine
            seen = (
                encode_events([e.project(seat) for e in events])
                if any(seat in e.private for e in events)
                else public
            )
            if seat < len(rules) and rules[seat] == 2:
                if chain is None:
                    chain = ChainedHasher(spectator_hash)
                digest = chain.hash(mine.enc)
                used[seat] = 2
            else:
                if hasher is None:
                    hasher = self._hasher()
                digest = hasher.hash(mine.enc)
                used[seat] = 1
            if own_ops:  # (their bytes from the diff: the choices' are the canonical ones)
                frame = spliced.with_own(work.encode_ops(own_ops), len(own_ops), digest, seen)
            elif seen is public:
                frame = spliced.plain(digest)
            else:
                frame = spliced.with_own(b"", 0, digest, seen)
            frames.append(frame)
        self._decider = decider
        spectator = spliced.plain(spectator_hash)
        return Revision(
            rev, tuple(frames), bytes(used), spectator, shared_bytes, count, spectator_hash
        )
