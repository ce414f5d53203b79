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

CATEGORIES: tuple[str, ...] = ("trees", "flowers", "fountains", "A", "B", "C", "D", "E")
_ROW: Final = (*CATEGORIES, "total")


def score_position(
    edition: Edition,
    terrain: Terrain,
    veg: Vegetation,
    fountain_points: Mapping[Hex, int],
    players: Sequence[Player],
) -> list[dict[str, int]]:
    """The breakdown for every seat of a finished position (pure; tests build positions)."""
    out = [dict.fromkeys(_ROW, 0) for _ in players]
    cells_of: list[list[Hex]] = [[] for _ in players]
    spaces: dict[Hex, list[int]] = {f: [0] * len(players) for f in fountain_points}
    space = veg.space
    for bed, seat in veg.bed_owner.items():
        cells = veg.beds[bed]
        cells_of[seat].extend(cells)
        flowers = 0
        for c in cells:
            flowers += space[c].flowers
        out[seat]["flowers"] += flowers
        fountain = veg.fountain_of[cells[0]]
        spaces.setdefault(fountain, [0] * len(players))[seat] += len(cells)
    for fountain, counts in spaces.items():
        best = max(counts)
        if best > 0:
            for seat, n in enumerate(counts):
                if n == best:
                    out[seat]["fountains"] += fountain_points.get(fountain, 0)
    skills = edition.skills
    adjacent = terrain.adjacent
    for p in players:
        row = out[p.seat]
        row["trees"] = sum(edition.trees[c].points for c in p.planted)
        near: set[Hex] = set()
        if "A" in p.skills or "D" in p.skills:  # (only they score what lies next to the beds)
            near = {n for c in cells_of[p.seat] for n in adjacent[c]}
        if "A" in p.skills:
            per = int(skills["A"].params["points_per_tablet"])
            row["A"] = per * len(near & terrain.tablets)
        if "B" in p.skills:
            row["B"] = int(skills["B"].params["points"])
        if "C" in p.skills:
            values = skills["C"].params["points_per_gem"]
            row["C"] = sum(int(values[c]) * p.gems[c] for c in COLOURS)
        if "D" in p.skills:
            per = int(skills["D"].params["points_per_tree"])
            row["D"] = per * sum(1 for n in near if n in veg.trees)
        if "E" in p.skills:
            row["E"] = int(skills["E"].params["points_per_assistant"]) * p.assistants
        row["total"] = sum(row[k] for k in CATEGORIES)
    return out


def fountain_points(state: State) -> dict[Hex, int]:
    by_id = {f.id: f.points for f in state.edition.fountains}
    return {
        cell: by_id[fid]
        for cell, fid in zip(state.terrain.fountain_cells, state.fountains, strict=True)
    }


def final_scores(state: State) -> list[dict[str, int]]:
    return score_position(
        state.edition, state.terrain, state.veg, fountain_points(state), state.players
    )


def winners(rows: Sequence[Mapping[str, int]]) -> tuple[int, ...]:
    """Every seat with the best total: ties share the victory (ISH-SCORE-18)."""
    best = max(r["total"] for r in rows)
    return tuple(seat for seat, r in enumerate(rows) if r["total"] == best)
