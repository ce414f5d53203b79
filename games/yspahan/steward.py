"""The steward's path: where a move of a given value may end, and what it costs in gold.

Seed, "Déplacer l'intendant": «Le joueur doit déplacer l'intendant d'autant de cases que la
valeur du groupe de dés»; each gold paid lengthens or shortens the move by one; it never passes
the same square twice. The Hammam adds a free adjustment of 1 to 3 squares (Boardspace combines
the two: with g gold and the Hammam any distance from V - g - 3 to V + g + 3 is legal).

The path is a cross, a tree: between two squares there is exactly one simple path, so a legal move
is named by its destination alone and its length is :data:`data.DISTANCE`. The steward must move
(«doit déplacer», YSP-OPEN-5): a move ends at least one square away, so gold and the Hammam
adjust the distance between 1 and the path's reach, and the start square is never a stop.
Boardspace allows a move of 0 that serves the same shops again (YSP-STEWARD-08); the seed wins.
From any square every distance from 1 to 6 is reachable, so a move always has a stop.
"""

from __future__ import annotations

from games.yspahan import data


def move_cost(start: int, stop: int, value: int, hammam: bool) -> int:
    """Gold the mover pays to end a move of ``value`` on ``stop``."""
    gap = abs(data.DISTANCE[start][stop] - value)
    if hammam:
        gap = max(0, gap - data.HAMMAM_FREE)
    return gap


def destinations(start: int, value: int, gold: int, hammam: bool) -> list[tuple[int, int]]:
    """``(square, gold cost)`` of every legal stop, in square order."""
    row = data.DISTANCE[start]
    free = data.HAMMAM_FREE if hammam else 0
    out = []
    for square, distance in enumerate(row):
        if distance == 0:
            continue  # the steward must move (YSP-OPEN-5)
        gap = abs(distance - value) - free
        cost = gap if gap > 0 else 0
        if cost <= gold:
            out.append((square, cost))
    return out


def faced_goods(shops: list[int], square: int) -> list[int]:
    """The faced shops of ``square`` that hold a good, in the data's order."""
    return [s for s in data.SQUARES[square].faces if shops[s] >= 0]
