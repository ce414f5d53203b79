"""Hex-grid vocabulary shared by every Ishtar module: axial coordinates, directions, rotation.

Coordinates are axial ``(q, r)`` on pointy-topped hexes, as the edition file's ``hex`` section
states; the six directions are listed counter-clockwise from east, and one rotation step (60
degrees counter-clockwise) maps direction ``i`` to direction ``i + 1``. Kept apart from
``board.py`` because the edition loader needs it before any board exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeAlias

Hex: TypeAlias = tuple[int, int]
"""One space of the grid, axial ``(q, r)``."""

DIRECTIONS: Final[tuple[Hex, ...]] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
"""E, NE, NW, W, SW, SE: counter-clockwise from east."""


def add(a: Hex, b: Hex) -> Hex:
    return (a[0] + b[0], a[1] + b[1])


def sub(a: Hex, b: Hex) -> Hex:
    return (a[0] - b[0], a[1] - b[1])


def rotate(h: Hex, steps: int) -> Hex:
    """``h`` turned ``steps`` x 60 degrees counter-clockwise about (0, 0)."""
    q, r = h
    for _ in range(steps % 6):
        q, r = q + r, -q
    return (q, r)


def neighbours(h: Hex) -> tuple[Hex, ...]:
    q, r = h
    return tuple((q + dq, r + dr) for dq, dr in DIRECTIONS)


def distance(a: Hex, b: Hex = (0, 0)) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return max(abs(dq), abs(dr), abs(dq + dr))


def disc(radius: int) -> list[Hex]:
    """Every space within ``radius`` of (0, 0)."""
    return [
        (q, r)
        for r in range(-radius, radius + 1)
        for q in range(max(-radius, -radius - r), min(radius, radius - r) + 1)
    ]


def connected(cells: Iterable[Hex]) -> bool:
    """True if ``cells`` form one group through neighbour links (an empty group counts)."""
    todo = set(cells)
    if not todo:
        return True
    stack = [todo.pop()]
    while stack:
        for n in neighbours(stack.pop()):
            if n in todo:
                todo.remove(n)
                stack.append(n)
    return not todo
