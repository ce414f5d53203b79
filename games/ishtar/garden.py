"""What grows on the terrain: tiles, gardens, flowerbeds, blooming tokens, trees and assistants.

The structures are incremental so that legality checks stay cheap (DESIGN.md, "Rules engines"):

- ``touch[cell]``: for every uncovered sand or rock space next to a fountain or a tile, the set of
  fountains a tile covering it would be connected to. Its keys are the placement frontier
  (ISH-PLACE-03), and the union over a tile's spaces must hold exactly one fountain
  (ISH-PLACE-04/-05). This works because a garden's fountain never changes: a tile may only join
  gardens of the same fountain, so ``fountain_of`` is fixed once a space is covered.
- ``bed_of`` / ``beds`` / ``bed_owner``: flowerbeds as labelled groups of flower spaces, merged
  small-into-large when a tile or a token joins them, with the seat of the bed's assistant. Beds
  never split (nothing is ever removed), so labels only merge.
- the covered spaces and, per fountain, the frontier spaces that touch it, as bit sets of the
  terrain's grid (:class:`_Grid`), updated with ``space`` and ``touch``: what
  :meth:`Vegetation.positions` shifts for all anchors at once. What it shifts a fountain's
  frontier to, per tile shape and rotation, is kept while that frontier is the same number (a
  laid tile changes the frontier of the one fountain it joins).

Nothing here is saved: a snapshot stores what was laid, in order, and :meth:`Vegetation.replay`
rebuilds the same structures. ``version`` grows with every change, so what is derived from the
structures for the views (flowerbeds, fountain standings, provisional scores) is recomputed only
when something was laid (``views``'s ``memo``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from games.ishtar.board import Terrain
from games.ishtar.edition import Space, Tile
from games.ishtar.hexes import DIRECTIONS, Hex, rotate

_NONE: Final[frozenset[Hex]] = frozenset()

_Shifts: TypeAlias = tuple[tuple[int, ...], ...]
"""Per rotation of a tile, the bit offset of each of its spaces from its anchor."""

_Bits: TypeAlias = Any
"""A bit set of the grid (:class:`_Grid`), an int of some 800 bits, in the hot operations of
:meth:`Vegetation._legal`: compiled, an ``int`` goes through mypyc's own bitwise operations,
which also check whether each result would fit a machine integer; a typed ``Any`` goes
straight to CPython's (a tenth fewer instructions in ``_legal``, measured)."""

_Cell: TypeAlias = Any
"""A space (a ``Hex``) in the hot loops of :meth:`Vegetation.place`: compiled, a local typed
``Hex`` is kept as two machine integers and packed into a new tuple at every dict or set
lookup, where one typed ``Any`` stays the tuple it was read as."""

OFF_BOARD: Final = "a space of the tile lies off the boards"
NOT_COVERABLE: Final = "a tile may only cover sand or rock, not a fountain or a sacred tablet"
COVERED: Final = "a tile may not cover another tile"
NOT_TOUCHING: Final = "the tile must touch a fountain or a tile already placed"
TWO_FOUNTAINS: Final = "the tile would connect gardens of two different fountains"
TWO_ASSISTANTS: Final = "two assistants would end up in one flowerbed"
NOT_EMPTY_GRASS: Final = "blooming tokens and trees go on empty grass spaces only"


def rotations(offsets: Sequence[Hex]) -> tuple[tuple[Hex, ...], ...]:
    """The offsets of a shape in each of its 6 rotations (index = rotation steps)."""
    return tuple(tuple(rotate(o, k) for o in offsets) for k in range(6))


class Vegetation:
    """Tiles, tokens, trees and assistants on one terrain, with the incremental structures."""

    __slots__ = (
        "_bitgrid",
        "_counted",
        "_covered",
        "_near",
        "_next_bed",
        "_reach",
        "assistants",
        "bed_of",
        "bed_owner",
        "beds",
        "empty_grass",
        "fountain_of",
        "memo",
        "space",
        "terrain",
        "tile_at",
        "token_at",
        "touch",
        "trees",
        "version",
    )

    def __init__(self, terrain: Terrain) -> None:
        self.terrain = terrain
        self.space: dict[Hex, Space] = {}
        self.tile_at: dict[Hex, str] = {}
        self.token_at: dict[Hex, str] = {}
        self.fountain_of: dict[Hex, Hex] = {}
        self.touch: dict[Hex, frozenset[Hex]] = {}
        self.bed_of: dict[Hex, int] = {}
        self.beds: dict[int, list[Hex]] = {}
        self.bed_owner: dict[int, int] = {}
        self.assistants: dict[Hex, int] = {}
        self.trees: dict[Hex, int] = {}
        self.empty_grass: set[Hex] = set()
        self._next_bed = 0
        self.version = 0
        self.memo: dict[str, tuple[object, object]] = {}
        """Values derived from the structures, each with the key it was computed for."""
        # ``space`` and ``touch`` as bit sets of the terrain's grid (see :class:`_Grid`), kept
        # with them for :meth:`positions`: the covered spaces, and per fountain the spaces
        # whose ``touch`` holds it.
        self._covered = 0
        self._counted = 0  # how many spaces ``_covered`` holds
        self._near: dict[Hex, int] = {}
        # Per tile shape (its shifts, :meth:`_Grid.shifts`) and fountain, the frontier it was
        # made from and per rotation the anchors whose spaces touch it (:meth:`_legal`).
        self._reach: dict[_Shifts, dict[Hex, tuple[_Bits, list[_Bits]]]] = {}
        self._bitgrid = _grid(terrain)
        bit = self._bitgrid.bit
        coverable = terrain.coverable
        for f in terrain.fountain_cells:
            for n in terrain.adjacent[f]:
                if n in coverable:
                    self.touch[n] = self.touch.get(n, _NONE) | {f}
                    self._near[f] = self._near.get(f, 0) | bit[n]

    # ------------------------------------------------------------------ tiles

    def placement_problem(self, tile: Tile, cells: Sequence[Hex]) -> str | None:
        """Why ``tile`` may not cover ``cells`` (in space order), or None if it may."""
        kind = self.terrain.kind
        coverable = self.terrain.coverable
        for c in cells:
            if c not in kind:
                return OFF_BOARD
            if c not in coverable:
                return NOT_COVERABLE
            if c in self.space:
                return COVERED
        touch = self.touch
        joined = (
            touch.get(cells[0], _NONE) | touch.get(cells[1], _NONE) | touch.get(cells[2], _NONE)
        )
        if not joined:
            return NOT_TOUCHING
        if len(joined) > 1:
            return TWO_FOUNTAINS
        if self.bed_owner and tile.flower_groups and self._joins_assistants(tile, cells):
            return TWO_ASSISTANTS
        return None

    def _joins_assistants(self, tile: Tile, cells: Sequence[Hex]) -> bool:
        adjacent, bed_of, owner = self.terrain.adjacent, self.bed_of, self.bed_owner
        groups = [
            {bed_of[n] for i in group for n in adjacent[cells[i]] if n in bed_of}
            for group in tile.flower_groups
        ]
        if len(groups) == 2 and groups[0] & groups[1]:
            groups = [groups[0] | groups[1]]
        return any(sum(b in owner for b in beds) > 1 for beds in groups)

    def placements(
        self, tile: Tile, shape_rotations: Sequence[Sequence[Hex]]
    ) -> list[tuple[Hex, int]]:
        """Every legal (anchor, rotation) of ``tile``, by anchor (row, then column), then
        rotation."""
        anchors, legal = self.positions(tile, shape_rotations)
        return [((at[0], at[1]), k) for at, ks in zip(anchors, legal, strict=True) for k in ks]

    def positions(
        self, tile: Tile, shape_rotations: Sequence[Sequence[Hex]]
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Every anchor where ``tile`` has a legal rotation, by row, then column, and beside it
        (same index) its legal rotations in increasing order (:meth:`placements`, grouped by
        anchor).

        The anchor comes as the ``[q, r]`` the choices write, not as a space: one list per space
        of the grid, made once and handed out by every call (:attr:`_Grid.at`), so that a
        decision of a hundred positions or more makes none and frees none. The rotations of an
        anchor are read from the six masks' bytes at once, as a 6-bit set (bit ``k``: rotation
        ``k``), and anchors with the same set share one list of them, made once for every match
        (:data:`_ROTATION_LISTS`). Both go into the choices as they are: nobody changes a list
        handed out. Two lists side by side, not a list of pairs: no pair to make and free per
        anchor.
        """
        grid = self._bitgrid
        masks = self._legal(grid, tile, shape_rotations)
        union: _Bits = 0
        for mask in masks:
            union |= mask
        length: int = union.bit_length()
        size = (length + 7) // 8
        m0, m1, m2, m3, m4, m5 = [mask.to_bytes(size, "little") for mask in masks]
        count: int = union.bit_count()
        at = grid.at
        spread = _SPREAD
        sets_of = _ROTATION_LISTS
        # (filled by index: as many anchors as bits in the union)
        anchors: list[list[int]] = [_UNSET] * count
        legal: list[list[int]] = [_UNSET] * count
        n = 0
        for i, byte in enumerate(int(union).to_bytes(size, "little")):
            if byte:
                # The six bytes at once: byte ``j`` of ``sets`` is the rotation set of bit ``j``
                # (below 2 ** 62: a machine integer compiled).
                sets = (
                    spread[m0[i]]
                    | spread[m1[i]] << 1
                    | spread[m2[i]] << 2
                    | spread[m3[i]] << 3
                    | spread[m4[i]] << 4
                    | spread[m5[i]] << 5
                )
                for j in _BYTE_BITS[byte]:
                    anchors[n] = at[i * 8 + j]
                    legal[n] = sets_of[sets >> 8 * j & 63]
                    n += 1
        return anchors, legal

    def _legal(
        self, grid: _Grid, tile: Tile, shape_rotations: Sequence[Sequence[Hex]]
    ) -> list[int]:
        """Per rotation, the anchors where ``tile`` may be laid, as a bit set of ``grid``.

        Computed for all anchors at once on bit sets (see :class:`_Grid`): per rotation, the
        anchors whose three spaces are all uncovered sand or rock, and the anchors whose spaces
        touch each fountain's gardens; a placement is legal where the first holds and exactly
        one fountain is touched (ISH-PLACE-02..-05). Only the few whose flower spaces touch two
        beds with assistants (or more) may join two of them (ISH-PLACE-08): those are checked
        one by one.
        """
        bit = grid.bit
        if self._counted != len(self.space):  # ``space`` filled by hand (a test's position)
            self._covered = 0
            for c in self.space:
                self._covered |= bit[c]
            self._counted = len(self.space)
        # (The sets are :data:`_Bits`: CPython's own operations on them, see there.)
        free: _Bits = grid.coverable & ~self._covered
        every = grid.shifts(tuple(map(tuple, shape_rotations)))
        # Per fountain whose frontier is not empty, the anchors whose spaces touch it, per
        # rotation: kept for the shape while that frontier is the very same number (a laid
        # tile changes the frontier of the one fountain it joins; nothing else changes any).
        reach = self._reach.get(every)
        if reach is None:
            reach = self._reach[every] = {}
        touching: list[list[_Bits]] = []
        for fountain, frontier in self._near.items():
            if frontier:
                known = reach.get(fountain)
                if known is None or known[0] is not frontier:
                    known = reach[fountain] = (frontier, _touching(frontier, every))
                touching.append(known[1])
        # Per bed with an assistant, the spaces next to it (two of them or more: else no tile
        # can join two), and the tile's flower spaces (only they join beds).
        owned: list[_Bits] = []
        flowers: list[int] = []
        if len(self.bed_owner) > 1 and tile.flower_groups:
            for bed in self.bed_owner:
                around: _Bits = 0
                for cell in self.beds[bed]:
                    around |= grid.around(cell)
                owned.append(around)
            flowers = sorted({i for group in tile.flower_groups for i in group})
        masks: list[_Bits] = []
        checks: list[tuple[int, int]] = []
        for k, shifts in enumerate(every):
            # (Each space's shift in turn, starting from the first instead of from 0 or -1: a
            # tile's first space is its anchor, shift 0, which leaves a set as it is.)
            first, rest = shifts[0], shifts[1:]
            legal: _Bits = _moved(free, first)
            for s in rest:
                legal &= _moved(free, s)
            if legal:
                once: _Bits = 0
                twice: _Bits = 0
                for nears in touching:
                    near: _Bits = nears[k]
                    twice |= once & near
                    once |= near
                legal &= once & ~twice
            if legal and owned:
                once = 0
                twice = 0
                for mask in owned:
                    near = 0
                    for i in flowers:
                        near |= _moved(mask, shifts[i])
                    twice |= once & near
                    once |= near
                risky: _Bits = legal & twice
                if risky:
                    legal ^= risky
                    checks += [(a, k) for a in _bits(risky)]
            masks.append(legal)
        cell_of = grid.cell
        for a, k in checks:
            if not self._joins_assistants(tile, tile_cells(cell_of[a], shape_rotations[k])):
                masks[k] |= 1 << a
        return masks

    def place(self, tile: Tile, cells: Sequence[Hex]) -> None:
        """Lay a tile known to be legal on ``cells`` (trusted).

        Spaces are :data:`_Cell` here: a tile lays 3 of them and looks at about 18 neighbours,
        each a handful of dict and set lookups."""
        spaces = tile.spaces
        laid: Sequence[_Cell] = cells
        if len(laid) != len(spaces):
            raise ValueError("a tile covers one space per space of the tile")
        self.version += 1
        touch: dict[_Cell, frozenset[_Cell]] = self.touch
        joined: frozenset[_Cell] = (
            touch.get(laid[0], _NONE) | touch.get(laid[1], _NONE) | touch.get(laid[2], _NONE)
        )
        (fountain,) = joined
        bit: dict[_Cell, int] = self._bitgrid.bit
        near: dict[_Cell, int] = self._near
        space: dict[_Cell, Space] = self.space
        tile_at: dict[_Cell, str] = self.tile_at
        fountain_of: dict[_Cell, _Cell] = self.fountain_of
        counted = self._counted == len(space)  # else _legal recounts (see there)
        covered = self._covered
        tid = tile.id
        for i, c in enumerate(laid):
            for f in touch.pop(c, _NONE):
                near[f] &= ~bit[c]
            covered |= bit[c]
            space[c] = spaces[i]
            tile_at[c] = tid
            fountain_of[c] = fountain
        self._covered = covered
        self._counted = len(space) if counted else -1
        for i, c in enumerate(laid):
            if spaces[i].flowers:
                self._add_flower(c)
            else:
                self.empty_grass.add(c)
        terrain = self.terrain
        coverable: frozenset[_Cell] = terrain.coverable
        adjacent: Mapping[_Cell, tuple[_Cell, ...]] = terrain.adjacent
        for c in laid:
            for n in adjacent[c]:
                if n in coverable and n not in space:
                    old = touch.get(n, _NONE)
                    if fountain not in old:
                        touch[n] = old | {fountain}
                        near[fountain] = near.get(fountain, 0) | bit[n]

    def _add_flower(self, cell: _Cell) -> None:
        bed_of: dict[_Cell, int] = self.bed_of
        adjacent: Mapping[_Cell, tuple[_Cell, ...]] = self.terrain.adjacent
        found = {bed_of[n] for n in adjacent[cell] if n in bed_of}
        if not found:
            bed = self._next_bed
            self._next_bed += 1
            self.beds[bed] = []
        else:
            bed = max(found, key=lambda b: (len(self.beds[b]), -b))
            for other in sorted(found - {bed}):
                members: list[_Cell] = self.beds.pop(other)
                for m in members:
                    bed_of[m] = bed
                self.beds[bed].extend(members)
                seat = self.bed_owner.pop(other, None)
                if seat is not None:
                    self.bed_owner[bed] = seat
        bed_of[cell] = bed
        self.beds[bed].append(cell)

    # ------------------------------------------------------------------ tokens, trees, assistants

    def bloom_problem(self, cells: Sequence[Hex]) -> str | None:
        """Why a blooming token may not cover ``cells``, or None (ISH-SKILL-14/-16)."""
        if not all(c in self.empty_grass for c in cells):
            return NOT_EMPTY_GRASS
        inside = set(cells)
        beds = {
            self.bed_of[n]
            for c in cells
            for n in self.terrain.adjacent[c]
            if n in self.bed_of and n not in inside
        }
        if sum(b in self.bed_owner for b in beds) > 1:
            return TWO_ASSISTANTS
        return None

    def bloom_spots(self, size: int) -> list[list[Hex]]:
        """Legal cell lists for a token of ``size`` spaces (1, or 2 in every orientation)."""
        out: list[list[Hex]] = []
        for a in sorted(self.empty_grass, key=lambda h: (h[1], h[0])):
            if size == 1:
                if self.bloom_problem((a,)) is None:
                    out.append([a])
                continue
            for dq, dr in DIRECTIONS:
                b = (a[0] + dq, a[1] + dr)
                if b in self.empty_grass and self.bloom_problem((a, b)) is None:
                    out.append([a, b])
        return out

    def can_bloom(self, size: int) -> bool:
        """Whether a token of ``size`` spaces fits anywhere: ``bool(bloom_spots(size))``,
        stopping at the first spot instead of listing them all in order."""
        grass = self.empty_grass
        for a in grass:
            if size == 1:
                if self.bloom_problem((a,)) is None:
                    return True
                continue
            for dq, dr in DIRECTIONS:
                b = (a[0] + dq, a[1] + dr)
                if b in grass and self.bloom_problem((a, b)) is None:
                    return True
        return False

    def bloom(self, token_id: str, cells: Sequence[Hex], flowers: Sequence[int]) -> None:
        self.version += 1
        for c, n in zip(cells, flowers, strict=True):
            self.empty_grass.discard(c)
            self.space[c] = Space(n)
            self.token_at[c] = token_id
            self._add_flower(c)

    def plant(self, cell: Hex, seat: int) -> None:
        self.version += 1
        self.empty_grass.discard(cell)
        self.trees[cell] = seat

    def assistant_problem(self, cell: Hex) -> str | None:
        bed = self.bed_of.get(cell)
        if bed is None:
            return "an assistant goes on a flower space"
        if bed in self.bed_owner:
            return "that flowerbed already has an assistant"
        return None

    def add_assistant(self, cell: Hex, seat: int) -> None:
        self.version += 1
        self.assistants[cell] = seat
        self.bed_owner[self.bed_of[cell]] = seat


class _Grid:
    """The spaces of one terrain as bits of Python ints, for :meth:`Vegetation.positions`.

    Space (q, r) is bit ``(r - r0) * width + (q - q0)``, on a grid padded by ``PAD`` rows and
    columns around the terrain so that shifting a set by a tile's offset never wraps a row onto
    a space in play. A tile with space ``i`` at offset (dq, dr) from its anchor covers, from
    anchor bit ``a``, bit ``a + dr * width + dq``; so "the anchors whose space ``i`` is in set
    S" is S shifted right by that amount, for every anchor at once.
    """

    PAD = 3
    """More than any offset of a space of a tile from its anchor (shapes span 3 spaces)."""

    def __init__(self, terrain: Terrain) -> None:
        qs = [q for q, _ in terrain.kind]
        rs = [r for _, r in terrain.kind]
        self.q0, self.r0 = min(qs) - self.PAD, min(rs) - self.PAD
        self.width = max(qs) - self.q0 + 1 + self.PAD
        rows = max(rs) - self.r0 + 1 + self.PAD
        self.bit: dict[Hex, int] = {}
        self.cell: list[Hex] = []
        self.at: list[list[int]] = []
        """Per bit, its space as the ``[q, r]`` list the choices write (never changed)."""
        for r in range(self.r0, self.r0 + rows):
            for q in range(self.q0, self.q0 + self.width):
                self.bit[(q, r)] = 1 << len(self.cell)
                self.cell.append((q, r))
                self.at.append([q, r])
        self.coverable = 0
        for c in terrain.coverable:
            self.coverable |= self.bit[c]
        self._adjacent = terrain.adjacent
        self._around: dict[Hex, int] = {}
        self._shifts: dict[tuple[tuple[Hex, ...], ...], tuple[tuple[int, ...], ...]] = {}

    def around(self, cell: Hex) -> int:
        """The neighbours of ``cell`` on the terrain (kept once asked for)."""
        found = self._around.get(cell)
        if found is None:
            found = 0
            for n in self._adjacent[cell]:
                found |= self.bit[n]
            self._around[cell] = found
        return found

    def shifts(self, shape_rotations: tuple[tuple[Hex, ...], ...]) -> tuple[tuple[int, ...], ...]:
        """Per rotation, the bit offset of each space of the tile from its anchor."""
        known = self._shifts.get(shape_rotations)
        if known is None:
            for offsets in shape_rotations:
                if any(abs(dq) >= self.PAD or abs(dr) >= self.PAD for dq, dr in offsets):
                    raise ValueError(f"a tile space lies {offsets} from its anchor")
            known = tuple(
                tuple(dr * self.width + dq for dq, dr in offsets) for offsets in shape_rotations
            )
            self._shifts[shape_rotations] = known
        return known


_BYTE_BITS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(j for j in range(8) if b >> j & 1) for b in range(256)
)
"""The set bits of each byte value, in increasing order."""

_SPREAD: Final[tuple[int, ...]] = tuple(
    sum(1 << 8 * j for j in range(8) if b >> j & 1) for b in range(256)
)
"""Each byte value with its bit ``j`` moved to bit ``8 * j``: six of them, shifted by 0 to 5
and or-ed, give each of 8 anchors its 6-bit set of rotations in a byte of its own."""

_ROTATION_SETS: Final[tuple[tuple[int, ...], ...]] = _BYTE_BITS[:64]
"""The rotations in each 6-bit set of rotations (bit ``k``: rotation ``k``), in increasing
order: the set bits of the number, as for a byte."""

_ROTATION_LISTS: Final[tuple[list[int], ...]] = tuple(list(ks) for ks in _ROTATION_SETS)
""":data:`_ROTATION_SETS` as the lists the position choices hand out, made once for every
match: nobody changes a list handed out (views and choices are never mutated)."""

_UNSET: Final[list[int]] = []
"""What :meth:`Vegetation.positions` fills its lists with before it sets each item."""


def _moved(mask: _Bits, s: int) -> _Bits:
    """``mask`` shifted ``s`` bits towards bit 0 (away from it where ``s`` is negative): the
    anchors whose space at bit offset ``s`` from them lies in ``mask`` (see :class:`_Grid`).
    A shift by 0 gives ``mask`` itself, not a copy of it."""
    if s > 0:
        return mask >> s
    if s < 0:
        return mask << -s
    return mask


def _touching(frontier: _Bits, every: _Shifts) -> list[_Bits]:
    """Per rotation (``every``: each one's shifts), the anchors where a tile covers a space of
    ``frontier``."""
    out: list[_Bits] = []
    for shifts in every:
        first, rest = shifts[0], shifts[1:]
        near: _Bits = _moved(frontier, first)
        for s in rest:
            near |= _moved(frontier, s)
        out.append(near)
    return out


def _bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask`` (not negative), in increasing order: byte by
    byte, so that the zero bytes of a sparse mask cost one test each."""
    out: list[int] = []
    base = 0
    for byte in mask.to_bytes((mask.bit_length() + 7) // 8, "little"):
        if byte:
            for j in _BYTE_BITS[byte]:
                out.append(base + j)
        base += 8
    return out


@functools.lru_cache(maxsize=64)
def _grid(terrain: Terrain) -> _Grid:
    return _Grid(terrain)


def tile_cells(anchor: Hex, shape_rotation: Sequence[Hex]) -> tuple[Hex, ...]:
    """The spaces a tile covers with space 0 on ``anchor`` (the edition's placement rule)."""
    return tuple((anchor[0] + q, anchor[1] + r) for q, r in shape_rotation)
