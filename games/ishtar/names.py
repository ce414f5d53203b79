"""The names of Ishtar's spaces, as a person reads and types them: ``f7``, like a chessboard.

One notation for every text and every client (``protocol/games/ishtar.md``, "Names of spaces"):
drawn with row ``r`` as a line of text and each space at half step ``x = 2q + r`` (pointy-topped
hexes, as the reference draws them), every space of a terrain falls in a column ``x // 2``
counted from the terrain's left edge. Columns are lettered ``a``, ``b``, ... ``z``, ``aa``...
from the left, rows numbered from 1 at the top, and a space is its column's letters then its
row's number. The names depend on the terrain only (the spaces in play), so they are computed
once per layout; the view's terrain rows and the static data's preset layouts carry them, and
the labels and texts write spaces by them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

Hex = tuple[int, int]


def column_letters(index: int) -> str:
    """From index 0: ``0`` -> ``a``, ``25`` -> ``z``, ``26`` -> ``aa``."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def space_names(spaces: Iterable[Hex]) -> dict[Hex, str]:
    """Every space's name (see the module docstring)."""
    return dict(_names(frozenset(spaces)))


@functools.lru_cache(maxsize=64)
def _names(spaces: frozenset[Hex]) -> tuple[tuple[Hex, str], ...]:
    if not spaces:
        return ()
    top = min(r for _, r in spaces)
    xs = [2 * q + r for q, r in spaces]
    left = min(xs) - min(xs) % 2
    return tuple(
        ((q, r), f"{column_letters((2 * q + r - left) // 2)}{r - top + 1}")
        for q, r in sorted(spaces, key=lambda h: (h[1], h[0]))
    )
