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

Nothing here is saved: a snapshot stores what was laid, in order, and :meth:`Vegetation.replay`
rebuilds the same structures.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from games.ishtar.board import Terrain
from games.ishtar.edition import Space, Tile
from games.ishtar.hexes import DIRECTIONS, Hex, rotate

_NONE: frozenset[Hex] = frozenset()

OFF_BOARD = "a space of the tile lies off the boards"
NOT_COVERABLE = "a tile may only cover sand or rock, not a fountain or a sacred tablet"
COVERED = "a tile may not cover another tile"
NOT_TOUCHING = "the tile must touch a fountain or a tile already placed"
TWO_FOUNTAINS = "the tile would connect gardens of two different fountains"
TWO_ASSISTANTS = "two assistants would end up in one flowerbed"
NOT_EMPTY_GRASS = "blooming tokens and trees go on empty grass spaces only"


def rotations(offsets: Sequence[Hex]) -> tuple[tuple[Hex, ...], ...]:
    """The offsets of a shape in each of its 6 rotations (index = rotation steps)."""
    return tuple(tuple(rotate(o, k) for o in offsets) for k in range(6))


class Vegetation:
    """Tiles, tokens, trees and assistants on one terrain, with the incremental structures."""

    __slots__ = (
        "_next_bed",
        "assistants",
        "bed_of",
        "bed_owner",
        "beds",
        "empty_grass",
        "fountain_of",
        "space",
        "terrain",
        "tile_at",
        "token_at",
        "touch",
        "trees",
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
        coverable = terrain.coverable
        for f in terrain.fountain_cells:
            for n in terrain.adjacent[f]:
                if n in coverable:
                    self.touch[n] = self.touch.get(n, _NONE) | {f}

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
        """Every legal (anchor, rotation) of ``tile``, by anchor (row, then column), then rotation.

        Only placements with a space on the frontier can be legal, so the candidates are the
        precomputed placements through each frontier space (see :func:`_through`).
        """
        through = _through(self.terrain, tuple(map(tuple, shape_rotations)))
        space, touch = self.space, self.touch
        check_beds = bool(self.bed_owner and tile.flower_groups)
        # Only a tile with a space next to a bed that has an assistant can join two of them:
        # the spaces next to those beds, listed once, spare the full check everywhere else.
        near: set[Hex] = set()
        if check_beds:
            adjacent = self.terrain.adjacent
            for bed in self.bed_owner:
                for cell in self.beds[bed]:
                    near.update(adjacent[cell])
        seen: set[int] = set()
        legal: list[tuple[int, int, int, int]] = []
        for f in touch:
            for p in through.get(f, ()):
                key = p[0]
                if key in seen:
                    continue
                seen.add(key)
                _, anchor, k, c0, c1, c2 = p
                if c0 in space or c1 in space or c2 in space:
                    continue
                joined = touch.get(c0, _NONE) | touch.get(c1, _NONE) | touch.get(c2, _NONE)
                if len(joined) != 1:
                    continue
                if (
                    check_beds
                    and (c0 in near or c1 in near or c2 in near)
                    and self._joins_assistants(tile, (c0, c1, c2))
                ):
                    continue
                legal.append((anchor[1], anchor[0], k, key))
        legal.sort()
        return [((q, r), k) for r, q, k, _ in legal]

    def place(self, tile: Tile, cells: Sequence[Hex]) -> None:
        """Lay a tile known to be legal on ``cells`` (trusted)."""
        touch = self.touch
        (fountain,) = (
            touch.get(cells[0], _NONE) | touch.get(cells[1], _NONE) | touch.get(cells[2], _NONE)
        )
        for c, sp in zip(cells, tile.spaces, strict=True):
            touch.pop(c, None)
            self.space[c] = sp
            self.tile_at[c] = tile.id
            self.fountain_of[c] = fountain
        for c, sp in zip(cells, tile.spaces, strict=True):
            if sp.flowers:
                self._add_flower(c)
            else:
                self.empty_grass.add(c)
        coverable, space, adjacent = self.terrain.coverable, self.space, self.terrain.adjacent
        for c in cells:
            for n in adjacent[c]:
                if n in coverable and n not in space:
                    old = touch.get(n, _NONE)
                    if fountain not in old:
                        touch[n] = old | {fountain}

    def _add_flower(self, cell: Hex) -> None:
        found = {self.bed_of[n] for n in self.terrain.adjacent[cell] if n in self.bed_of}
        if not found:
            bed = self._next_bed
            self._next_bed += 1
            self.beds[bed] = []
        else:
            bed = max(found, key=lambda b: (len(self.beds[b]), -b))
            for other in sorted(found - {bed}):
                members = self.beds.pop(other)
                for m in members:
                    self.bed_of[m] = bed
                self.beds[bed].extend(members)
                seat = self.bed_owner.pop(other, None)
                if seat is not None:
                    self.bed_owner[bed] = seat
        self.bed_of[cell] = bed
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

    def bloom(self, token_id: str, cells: Sequence[Hex], flowers: Sequence[int]) -> None:
        for c, n in zip(cells, flowers, strict=True):
            self.empty_grass.discard(c)
            self.space[c] = Space(n)
            self.token_at[c] = token_id
            self._add_flower(c)

    def plant(self, cell: Hex, seat: int) -> None:
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
        self.assistants[cell] = seat
        self.bed_owner[self.bed_of[cell]] = seat


Placement = tuple[int, Hex, int, Hex, Hex, Hex]
"""(index, anchor, rotation, space 0, space 1, space 2) of one tile position on coverable spaces."""


@functools.lru_cache(maxsize=256)
def _through(
    terrain: Terrain, shape_rotations: tuple[tuple[Hex, ...], ...]
) -> dict[Hex, list[Placement]]:
    """For each coverable space, the placements of a shape lying wholly on coverable spaces
    that cover it. Computed once per terrain and shape; the frontier then indexes it."""
    coverable = terrain.coverable
    out: dict[Hex, list[Placement]] = {}
    index = 0
    for anchor in sorted(coverable):
        for k, offsets in enumerate(shape_rotations):
            cells = tile_cells(anchor, offsets)
            if all(c in coverable for c in cells):
                c0, c1, c2 = cells
                placement = (index, anchor, k, c0, c1, c2)
                index += 1
                for c in cells:
                    out.setdefault(c, []).append(placement)
    return out


def tile_cells(anchor: Hex, shape_rotation: Sequence[Hex]) -> tuple[Hex, ...]:
    """The spaces a tile covers with space 0 on ``anchor`` (the edition's placement rule)."""
    return tuple((anchor[0] + q, anchor[1] + r) for q, r in shape_rotation)
