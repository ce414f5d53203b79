"""Ishtar's hex map as drawn on a terminal, with the spaces named as the server names them.

The server speaks axial coordinates ``[q, r]`` (pointy-topped hexes) and names every space in
the view's terrain rows (``names``: ``f7``, the notation of ``protocol/games/ishtar.md``, "Names
of spaces"); its labels and texts write spaces by those names. This module keeps the drawing
and takes the names as given: drawn with row ``r`` as a text line and each space at half step
``x = 2q + r``, the spaces fall in columns ``x // 2`` and rows ``r`` that the server's names
letter and number, so the rulers above and beside the map show the letters and numbers read off
the names, and a person types what they read. A player may also type ``q,r`` (the axial
coordinates); a terrain without names (an older server) is named that way, ``q,r``.

Geometry (for drawing): row ``r`` holds its spaces at every other half step, shifted by one
half step from the row above, so each space touches two spaces of the row above and two of the
row below, which is how the six neighbours of a hex look on paper.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Hex = tuple[int, int]
_AXIAL = re.compile(r"^\(?\s*(-?\d+)\s*[, ]\s*(-?\d+)\s*\)?$")
_NAME = re.compile(r"^([a-z]{1,3})(\d{1,3})$")


def as_hex(value: Any) -> Hex | None:
    """``[q, r]`` from a view as a tuple, or None for anything else."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return (value[0], value[1])
    return None


@dataclass(frozen=True)
class Grid:
    """The spaces of one terrain, their places in the drawing and their names."""

    spaces: frozenset[Hex]
    top: int
    """The ``r`` of the top row."""
    left: int
    """The half step ``x`` of the left edge of the first column (always even)."""
    rows: int
    columns: int
    names: Mapping[Hex, str] = field(default_factory=dict)
    """The server's name of each space (empty from a server that sends none)."""

    @classmethod
    def of(cls, spaces: Iterable[Hex], names: Mapping[Hex, str] | None = None) -> Grid:
        found = frozenset(spaces)
        named = {h: n.lower() for h, n in (names or {}).items() if h in found}
        if not found:
            return cls(found, 0, 0, 0, 0, named)
        rs = [r for _, r in found]
        xs = [2 * q + r for q, r in found]
        left = min(xs) - min(xs) % 2
        return cls(
            found,
            top=min(rs),
            left=left,
            rows=max(rs) - min(rs) + 1,
            columns=(max(xs) - left) // 2 + 1,
            names=named,
        )

    @classmethod
    def of_terrain(cls, terrain: Any) -> Grid:
        """From a view's ``terrain`` rows (``{"r", "q", "cells", "names"}``; a blank is no
        space)."""
        spaces: list[Hex] = []
        names: dict[Hex, str] = {}
        for row in terrain if isinstance(terrain, list) else []:
            if not isinstance(row, Mapping):
                continue
            r, q0, codes, named = row.get("r"), row.get("q"), row.get("cells"), row.get("names")
            if type(r) is int and type(q0) is int and isinstance(codes, str):
                for i, code in enumerate(codes):
                    if code == " ":
                        continue
                    spaces.append((q0 + i, r))
                    if isinstance(named, list) and i < len(named) and isinstance(named[i], str):
                        names[(q0 + i, r)] = named[i]
        return cls.of(spaces, names)

    def x(self, at: Hex) -> int:
        """The half step of ``at`` from the left edge (0 is the first column's first half)."""
        return 2 * at[0] + at[1] - self.left

    def row(self, at: Hex) -> int:
        """From 0 (the top row)."""
        return at[1] - self.top

    def column(self, at: Hex) -> int:
        """From 1 (the left column)."""
        return self.x(at) // 2 + 1

    def name(self, at: Hex) -> str:
        """The server's name of ``at`` (``f7``), or ``q,r`` when it sent none."""
        return self.names.get(at) or f"{at[0]},{at[1]}"

    def column_label(self, column: int) -> str:
        """The letters the names give column ``column`` (from 1), or "" if none says."""
        return self._labels()[0].get(column, "")

    def row_label(self, row: int) -> str:
        """The number the names give row ``row`` (from 0), or "" if none says."""
        return self._labels()[1].get(row, "")

    def _labels(self) -> tuple[dict[int, str], dict[int, str]]:
        columns: dict[int, str] = {}
        rows: dict[int, str] = {}
        for at, name in self.names.items():
            found = _NAME.match(name)
            if found:
                columns.setdefault(self.column(at), found[1])
                rows.setdefault(self.row(at), found[2])
        return columns, rows

    def parse(self, text: str) -> Hex | None:
        """A space from what a person typed: its name (``f7`` or ``F7``), or ``q,r``."""
        typed = text.strip().lower()
        for at, name in self.names.items():
            if name == typed:
                return at
        axial = _AXIAL.match(typed)
        if axial:
            at = (int(axial[1]), int(axial[2]))
            return at if at in self.spaces else None
        return None

    def looks_like_a_space(self, text: str) -> bool:
        """Whether ``text`` has the form of a space's name (even one that is off the map)."""
        typed = text.strip().lower()
        return bool(_NAME.match(typed) or _AXIAL.match(typed))
