"""Ishtar's hex map as a person reads it: columns by letter, rows by number, like a chessboard.

The server speaks axial coordinates ``[q, r]`` (pointy-topped hexes). Drawn with row ``r`` as a
text line and each space at half-hex step ``x = 2q + r``, every space falls in a column
``x // 2`` that a ruler above the map can letter: the board becomes a grid of columns ``a``,
``b``... from the left and rows ``1``, ``2``... from the top, so a space is named ``f7`` (column
f, row 7) and a person types what they read. :class:`Grid` converts both ways; a player may
also type ``q,r`` (the axial coordinates the server uses).

Geometry (for drawing): row ``r`` holds its spaces at every other half step, shifted by one
half step from the row above, so each space touches two spaces of the row above and two of the
row below, which is how the six neighbours of a hex look on paper.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Hex = tuple[int, int]
_NAME = re.compile(r"^([a-z]{1,2})(\d{1,3})$")
_AXIAL = re.compile(r"^\(?\s*(-?\d+)\s*[, ]\s*(-?\d+)\s*\)?$")


def as_hex(value: Any) -> Hex | None:
    """``[q, r]`` from a view as a tuple, or None for anything else."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(type(v) is int for v in value):
        return (value[0], value[1])
    return None


def column_name(index: int) -> str:
    """Column letters from index 0: ``0`` -> ``a``, ``25`` -> ``z``, ``26`` -> ``aa``."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


@dataclass(frozen=True)
class Grid:
    """The spaces of one terrain, with the rows and columns that name them."""

    spaces: frozenset[Hex]
    top: int
    """The ``r`` of row 1."""
    left: int
    """The half step ``x`` of the left edge of column 1 (always even)."""
    rows: int
    columns: int

    @classmethod
    def of(cls, spaces: Iterable[Hex]) -> Grid:
        found = frozenset(spaces)
        if not found:
            return cls(found, 0, 0, 0, 0)
        rs = [r for _, r in found]
        xs = [2 * q + r for q, r in found]
        left = min(xs) - min(xs) % 2
        return cls(
            found,
            top=min(rs),
            left=left,
            rows=max(rs) - min(rs) + 1,
            columns=(max(xs) - left) // 2 + 1,
        )

    @classmethod
    def of_terrain(cls, terrain: Any) -> Grid:
        """From a view's ``terrain`` rows (``{"r", "q", "cells"}``; a blank is no space)."""
        spaces: list[Hex] = []
        for row in terrain if isinstance(terrain, list) else []:
            if not isinstance(row, Mapping):
                continue
            r, q0, codes = row.get("r"), row.get("q"), row.get("cells")
            if type(r) is int and type(q0) is int and isinstance(codes, str):
                spaces += [(q0 + i, r) for i, code in enumerate(codes) if code != " "]
        return cls.of(spaces)

    def x(self, at: Hex) -> int:
        """The half step of ``at`` from the left edge (0 is column 1's first half)."""
        return 2 * at[0] + at[1] - self.left

    def row(self, at: Hex) -> int:
        """From 0 (the top row)."""
        return at[1] - self.top

    def column(self, at: Hex) -> int:
        """From 1 (the left column)."""
        return self.x(at) // 2 + 1

    def name(self, at: Hex) -> str:
        """``f7``: column letter, row number (both as the rulers of the map show them)."""
        return f"{column_name(self.column(at) - 1)}{self.row(at) + 1}"

    def at_name(self, column: int, row: int) -> Hex | None:
        """The space in column ``column`` and row ``row`` (both from 1), if there is one."""
        r = self.top + row - 1
        x = self.left + 2 * (column - 1) + r % 2
        at = ((x - r) // 2, r)
        return at if at in self.spaces else None

    def parse(self, text: str) -> Hex | None:
        """A space from what a person typed: ``f7`` (or ``F7``), or ``q,r`` / ``(q, r)``."""
        typed = text.strip().lower()
        found = _NAME.match(typed)
        if found:
            letters, number = found.groups()
            column = 0
            for letter in letters:
                column = column * 26 + ord(letter) - ord("a") + 1
            return self.at_name(column, int(number))
        axial = _AXIAL.match(typed)
        if axial:
            at = (int(axial[1]), int(axial[2]))
            return at if at in self.spaces else None
        return None

    def looks_like_a_space(self, text: str) -> bool:
        """Whether ``text`` has the form of a space's name (even one that is off the map)."""
        typed = text.strip().lower()
        return bool(_NAME.match(typed) or _AXIAL.match(typed))
