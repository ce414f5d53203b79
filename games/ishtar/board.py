"""The terrain: terrain boards laid out on the macro grid as one continuous hex grid.

A layout puts players + 2 boards, each once, on distinct macro hexes (ISH-SETUP-02/-03/-05);
board space ``p`` of a board on macro hex ``m`` with rotation ``k`` lands on grid space
``centre(m) + rotate(p, k)``. Because the boards tile the plane on the macro lattice, boards on
neighbouring macro hexes share edges and spaces never overlap when macro hexes differ; the check
still verifies it so that a replaced edition with another lattice cannot break the invariant.

:class:`Terrain` is static for a match: it is built once per layout and cached, and holds the
precomputed neighbour lists every legality check walks.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from games.errors import EditionError, GameError
from games.ishtar.hexes import DIRECTIONS, Hex, add, connected, neighbours, rotate
from games.ishtar.names import space_names

if TYPE_CHECKING:
    from games.ishtar.edition import BoardPlacement, Edition

SAND, ROCK, TABLET, FOUNTAIN = "sand", "rock", "tablet", "fountain"
CODES = {SAND: ".", TABLET: "T", FOUNTAIN: "F", "purple": "p", "red": "r", "white": "w"}
"""One character per space in the views' terrain rows; a blank is no space (off the boards)."""


def check_layout(
    edition: Edition,
    players: int,
    entries: Sequence[Any],
    where: str,
    error: type[GameError] = EditionError,
) -> tuple[BoardPlacement, ...]:
    """Validate untrusted layout entries ``{board, side, rotation, macro}``; raise ``error``."""
    from games.ishtar.edition import BoardPlacement

    def fail(what: str) -> GameError:
        return error(f"{where}: {what}")

    if not isinstance(entries, list | tuple):
        raise fail("a layout is a list of boards")
    want = edition.boards_by_players[players]
    if len(entries) != want:
        raise fail(f"{len(entries)} boards, want {want} (players + 2)")
    out: list[BoardPlacement] = []
    for i, e in enumerate(entries):
        if not isinstance(e, Mapping) or set(e) != {"board", "side", "rotation", "macro"}:
            raise fail(f"board {i} must be {{board, side, rotation, macro}}")
        board, side, rot, macro = e["board"], e["side"], e["rotation"], e["macro"]
        if (board, side) not in edition.faces:
            raise fail(f"board {i}: no board {board!r} with side {side!r}")
        if type(rot) is not int or not 0 <= rot < 6:
            raise fail(f"board {i}: rotation must be 0..5, not {rot!r}")
        if not (
            isinstance(macro, list | tuple)
            and len(macro) == 2
            and all(type(v) is int and abs(v) <= 20 for v in macro)
        ):
            raise fail(f"board {i}: macro must be a [Q, R] pair of small integers")
        out.append(BoardPlacement(board, side, rot, (macro[0], macro[1])))
    layout = tuple(out)
    problem = _geometry_problem(edition, layout)
    if problem is not None:
        raise fail(problem)
    return layout


@functools.lru_cache(maxsize=256)
def _geometry_problem(edition: Edition, layout: tuple[BoardPlacement, ...]) -> str | None:
    """What is wrong with where the boards lie, or None (cached: every snapshot load asks)."""
    if len({p.board for p in layout}) != len(layout):
        return "a board is used twice"
    macros = [p.macro for p in layout]
    if len(set(macros)) != len(macros):
        return "two boards on one macro hex"
    if not connected(macros):
        return "the boards are not all connected"
    seen: set[Hex] = set()
    for p in layout:
        centre = edition.macro_centre(p.macro)
        cells = {add(centre, rotate(h, p.rotation)) for h in edition.board_spaces}
        if cells & seen:
            return "boards overlap"
        seen |= cells
    return None


def preset_touching(layout: Sequence[BoardPlacement]) -> list[int]:
    """How many other boards each board of a layout touches (macro neighbours)."""
    macros = {p.macro for p in layout}
    return [sum(add(p.macro, d) in macros for d in DIRECTIONS) for p in layout]


@dataclass(frozen=True, eq=False)
class Terrain:
    """The grid spaces in play and what is printed on each; never changes during a match."""

    kind: Mapping[Hex, str]
    rock_colour: Mapping[Hex, str]
    fountain_cells: tuple[Hex, ...]
    """Fountain spaces in layout order (index = fountain slot drawn at setup)."""
    tablets: frozenset[Hex]
    coverable: frozenset[Hex]
    """Sand and rock: what a tile may cover (ISH-PLACE-02)."""
    adjacent: Mapping[Hex, tuple[Hex, ...]]
    """Neighbours of every space that are in play."""
    board_of: Mapping[Hex, int]
    rows: tuple[tuple[int, int, str], ...]
    """The terrain drawn row by row for views: (r, first q, one character per space)."""
    names: dict[Hex, str]
    """Every space's name as texts write it (``f7``, :mod:`games.ishtar.names`); a dict, so
    that the compiled labels look a name up without a method call."""

    def rows_json(self) -> list[Any]:
        """``[{"r", "q", "cells", "names"}]``: ``cells[i]`` is space (q + i, r), coded by
        :data:`CODES`, and ``names[i]`` its name (None for a blank: no space).

        Built once per terrain and the same object in every view: views are never mutated
        (``protocol.patch`` shares parts between documents), and the diff of two views skips a
        part that is the same object, so the terrain costs nothing per revision."""
        return self._rows_json

    @functools.cached_property
    def _rows_json(self) -> list[Any]:
        return [
            {
                "r": r,
                "q": q,
                "cells": cells,
                "names": [self.names.get((q + i, r)) for i in range(len(cells))],
            }
            for r, q, cells in self.rows
        ]


def build_terrain(edition: Edition, layout: Sequence[BoardPlacement]) -> Terrain:
    return _build(edition, tuple(layout))


@functools.lru_cache(maxsize=64)
def _build(edition: Edition, layout: tuple[BoardPlacement, ...]) -> Terrain:
    kind: dict[Hex, str] = {}
    colour: dict[Hex, str] = {}
    board_of: dict[Hex, int] = {}
    for b, p in enumerate(layout):
        face = edition.faces[(p.board, p.side)]
        centre = edition.macro_centre(p.macro)
        for h in edition.board_spaces:
            at = add(centre, rotate(h, p.rotation))
            board_of[at] = b
            if h == face.fountain:
                kind[at] = FOUNTAIN
            elif h in face.tablets:
                kind[at] = TABLET
            elif h in face.rocks:
                kind[at] = ROCK
                colour[at] = face.rocks[h]
            else:
                kind[at] = SAND
    fountains = [
        add(
            edition.macro_centre(p.macro),
            rotate(edition.faces[(p.board, p.side)].fountain, p.rotation),
        )
        for p in layout
    ]
    return terrain_from(kind, colour, fountains, board_of)


def terrain_from(
    kind: Mapping[Hex, str],
    colour: Mapping[Hex, str],
    fountains: Sequence[Hex],
    board_of: Mapping[Hex, int] | None = None,
) -> Terrain:
    """A terrain from what is printed on each space; ``fountains`` fixes the fountain order."""
    assert sorted(fountains) == sorted(h for h, k in kind.items() if k == FOUNTAIN)
    adjacent = {h: tuple(n for n in neighbours(h) if n in kind) for h in kind}
    coverable = frozenset(h for h, k in kind.items() if k in (SAND, ROCK))
    tablets = frozenset(h for h, k in kind.items() if k == TABLET)
    rows = []
    for r in sorted({h[1] for h in kind}):
        qs = [h[0] for h in kind if h[1] == r]
        line = "".join(
            " " if (q, r) not in kind else CODES[colour.get((q, r), kind[(q, r)])]
            for q in range(min(qs), max(qs) + 1)
        )
        rows.append((r, min(qs), line))
    return Terrain(
        dict(kind),
        dict(colour),
        tuple(fountains),
        tablets,
        coverable,
        adjacent,
        dict(board_of or dict.fromkeys(kind, 0)),
        tuple(rows),
        space_names(kind),
    )
