"""Final scoring: trees, flowers, fountains and the upper skills, per player and category.

Categories, in the order of the rulebook's scoring pad: ``trees`` (planted cards; an unplanted
reserved card scores nothing, ISH-SCORE-01), ``flowers`` (1 per flower in controlled beds, tokens
included), ``fountains`` (most flower *spaces* in the controlled beds of a fountain's gardens;
ties all control; nobody with 0), then skills ``A``..``E``. ``total`` is their sum.

Every flowerbed lies in one garden (its spaces are contiguous tiles), and every garden has one
fountain, so a bed's fountain is the fountain of any of its spaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from games.ishtar.board import Terrain
from games.ishtar.edition import COLOURS, Edition
from games.ishtar.garden import Vegetation
from games.ishtar.hexes import Hex
from games.ishtar.state import Player, State

CATEGORIES: Final[tuple[str, ...]] = ("trees", "flowers", "fountains", "A", "B", "C", "D", "E")
_ROW: Final = (*CATEGORIES, "total")
_ZERO: Final[dict[str, int]] = dict.fromkeys(_ROW, 0)
"""A seat's empty row: each row is a copy of it (a block copy, where ``fromkeys`` is a call)."""


def score_position(
    edition: Edition,
    terrain: Terrain,
    veg: Vegetation,
    fountain_points: Mapping[Hex, int],
    players: Sequence[Player],
) -> list[dict[str, int]]:
    """The breakdown for every seat of a finished position (pure; tests build positions)."""
    seats = len(players)
    out = [_ZERO.copy() for _ in players]
    cells_of: list[list[Hex]] = [[] for _ in players]
    spaces: dict[Hex, list[int]] = {f: [0] * seats for f in fountain_points}
    space, beds, fountain_of = veg.space, veg.beds, veg.fountain_of
    for bed, seat in veg.bed_owner.items():
        cells = beds[bed]
        cells_of[seat].extend(cells)
        flowers = 0
        for c in cells:
            flowers += space[c].flowers
        out[seat]["flowers"] += flowers
        fountain = fountain_of[cells[0]]
        counts = spaces.get(fountain)
        if counts is None:
            counts = spaces[fountain] = [0] * seats
        counts[seat] += len(cells)
    for fountain, counts in spaces.items():
        best = 0
        for k in counts:
            if k > best:
                best = k
        if best > 0:
            points = fountain_points.get(fountain, 0)
            for seat, k in enumerate(counts):
                if k == best:
                    out[seat]["fountains"] += points
    skills = edition.skills
    adjacent = terrain.adjacent
    trees = edition.trees
    for p in players:
        row = out[p.seat]
        planted = 0
        for card in p.planted:
            planted += trees[card].points
        row["trees"] = planted
        unlocked = p.skills
        if unlocked:
            near: set[Hex] = set()
            if "A" in unlocked or "D" in unlocked:  # (only they score what lies next to beds)
                near = {n for c in cells_of[p.seat] for n in adjacent[c]}
            if "A" in unlocked:
                per = int(skills["A"].params["points_per_tablet"])
                row["A"] = per * len(near & terrain.tablets)
            if "B" in unlocked:
                row["B"] = int(skills["B"].params["points"])
            if "C" in unlocked:
                values = skills["C"].params["points_per_gem"]
                row["C"] = sum(int(values[c]) * p.gems[c] for c in COLOURS)
            if "D" in unlocked:
                per = int(skills["D"].params["points_per_tree"])
                row["D"] = per * sum(1 for n in near if n in veg.trees)
            if "E" in unlocked:
                row["E"] = int(skills["E"].params["points_per_assistant"]) * p.assistants
        total = 0
        for category in CATEGORIES:
            total += row[category]
        row["total"] = total
    return out


def fountain_points(state: State) -> dict[Hex, int]:
    """The points of the fountain on each fountain space.

    Made once per match and kept on the vegetation (``memo``) with the fountains it was made
    for (they are drawn at setup and never move): the views' provisional scores ask for it
    whenever something was laid. The same dict every time: nobody may change it."""
    key = tuple(state.fountains)
    memo = state.veg.memo
    found = memo.get("fountain_points")
    if found is not None and found[0] == key:
        kept = found[1]
        assert isinstance(kept, dict)
        return kept
    by_id = {f.id: f.points for f in state.edition.fountains}
    points = {
        cell: by_id[fid]
        for cell, fid in zip(state.terrain.fountain_cells, state.fountains, strict=True)
    }
    memo["fountain_points"] = (key, points)
    return points


def final_scores(state: State) -> list[dict[str, int]]:
    return score_position(
        state.edition, state.terrain, state.veg, fountain_points(state), state.players
    )


def winners(rows: Sequence[Mapping[str, int]]) -> tuple[int, ...]:
    """Every seat with the best total: ties share the victory (ISH-SCORE-18)."""
    best = max(r["total"] for r in rows)
    return tuple(seat for seat, r in enumerate(rows) if r["total"] == best)
