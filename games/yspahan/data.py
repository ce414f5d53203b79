"""Yspahan's component data, loaded once at import from the packaged ``yspahan.json``.

The JSON is a copy of ``shared/data/yspahan.json`` (sources and confidence per block live there and
in ``yspahan.md``). This module turns it into flat, index-based tables so the rules code works on
small integers: shops, souks and path squares are numbered in the file's order, and the engine
state stores those numbers. Ids (``"sk3.1"``, ``"W3"``) appear only at the edges: choices, views,
events.

Numbers the rules need but the JSON states in prose (the 2-player dice count, caravan capacities)
are read from their fields too, so that a data test can check every published count in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

_RAW: Final[dict[str, Any]] = json.loads(
    # (Through the package, not ``__file__``: a compiled module's ``__file__`` is elsewhere.)
    resources.files("games.yspahan").joinpath("yspahan.json").read_text(encoding="utf-8")
)


@dataclass(frozen=True, slots=True)
class Souk:
    """A group of shops of one quarter; complete when every shop holds a good."""

    index: int
    id: str
    quarter: int
    vp: int
    shops: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Square:
    """A square of the steward's path: its arm, its distance from C and the shops it faces."""

    index: int
    id: str
    arm: str
    distance: int
    faces: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Building:
    """A building of a player board: its price and nothing else (powers live in the rules)."""

    index: int
    id: str
    fr: str
    camels: int
    gold: int


QUARTERS: Final[tuple[str, ...]] = tuple(q["id"] for q in _RAW["city"]["quarters"])
"""Quarter ids in tower order: sacks, barrels, chests, vases."""

FLOORS: Final[tuple[str, ...]] = tuple(_RAW["tower"]["floors_bottom_to_top"])
"""Tower floors bottom to top: camels, sacks, barrels, chests, vases, gold."""

CAMELS_FLOOR: Final = FLOORS.index("camels")
GOLD_FLOOR: Final = FLOORS.index("gold")
QUARTER_OF_FLOOR: Final[dict[int, int]] = {
    FLOORS.index(q["tower_floor"]): i for i, q in enumerate(_RAW["city"]["quarters"])
}
"""Goods floor index -> quarter index."""
GOODS_FLOORS: Final[tuple[int, ...]] = tuple(sorted(QUARTER_OF_FLOOR))
"""The goods floors in rising order (sacks, barrels, chests, vases)."""


def _city() -> tuple[tuple[Souk, ...], tuple[str, ...], tuple[int, ...]]:
    souks: list[Souk] = []
    shop_ids: list[str] = []
    shop_souk: list[int] = []
    for qi, quarter in enumerate(_RAW["city"]["quarters"]):
        for souk in quarter["souks"]:
            first = len(shop_ids)
            for shop in souk["shop_list"]:
                shop_ids.append(shop["id"])
                shop_souk.append(len(souks))
            souks.append(
                Souk(
                    len(souks),
                    souk["id"],
                    qi,
                    int(souk["victory_points"]),
                    tuple(range(first, len(shop_ids))),
                )
            )
    return tuple(souks), tuple(shop_ids), tuple(shop_souk)


SOUKS: tuple[Souk, ...]
SHOP_IDS: tuple[str, ...]
SHOP_SOUK: tuple[int, ...]
SOUKS, SHOP_IDS, SHOP_SOUK = _city()
SHOP_INDEX: Final[dict[str, int]] = {s: i for i, s in enumerate(SHOP_IDS)}
SOUKS_OF_QUARTER: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(s.index for s in SOUKS if s.quarter == q) for q in range(len(QUARTERS))
)


def _path() -> tuple[Square, ...]:
    out = []
    for i, sq in enumerate(_RAW["supervisor_path"]["squares"]):
        faces = tuple(SHOP_INDEX[s] for s in sq["faces_shops"])
        out.append(Square(i, sq["id"], sq["arm"], int(sq["distance_from_centre"]), faces))
    return tuple(out)


SQUARES: Final[tuple[Square, ...]] = _path()
SQUARE_INDEX: Final[dict[str, int]] = {s.id: s.index for s in SQUARES}
CENTRE: Final[int] = SQUARE_INDEX["C"]
ADJACENCY: Final[dict[str, list[str]]] = _RAW["supervisor_path"]["adjacency"]


def _distances() -> tuple[tuple[int, ...], ...]:
    """Path length between any two squares.

    The path is a tree (a cross), so each pair is joined by exactly one simple path: a move that
    never enters a square twice is fully named by its destination, and its length is this number.
    """
    rows = []
    for a in SQUARES:
        row = []
        for b in SQUARES:
            if a.arm == b.arm:
                row.append(abs(a.distance - b.distance))
            else:
                row.append(a.distance + b.distance)
        rows.append(tuple(row))
    return tuple(rows)


DISTANCE: Final[tuple[tuple[int, ...], ...]] = _distances()

BUILDINGS: Final[tuple[Building, ...]] = tuple(
    Building(
        i,
        {1: "pen", 2: "stall", 3: "hammam", 4: "caravanserai", 5: "bazaar", 6: "crane"}[b["n"]],
        b["fr"],
        int(b["cost"]["camels"]),
        int(b["cost"]["gold"]),
    )
    for i, b in enumerate(_RAW["buildings"]["list"])
)
BUILDING_INDEX: Final[dict[str, int]] = {b.id: b.index for b in BUILDINGS}
PEN, STALL, HAMMAM, CARAVANSERAI, BAZAAR, CRANE = range(6)
BUILDING_VP: Final[tuple[int, ...]] = tuple(
    int(_RAW["buildings"]["vp_by_building_count"][str(n)]) for n in range(1, 7)
)
"""VP scored by a player's n-th building (index n - 1): 0, 0, 5, 5, 5, 10."""

CARD_KINDS: Final[tuple[str, ...]] = tuple(c["id"] for c in _RAW["cards"]["types"])
CARD_COUNTS: Final[dict[str, int]] = {c["id"]: int(c["count"]) for c in _RAW["cards"]["types"]}
DECK: Final[tuple[str, ...]] = tuple(k for k in CARD_KINDS for _ in range(CARD_COUNTS[k]))
"""The 18 cards in a fixed order, before the setup shuffle."""

WHITE_DICE: Final[dict[int, int]] = {
    2: int(_RAW["tower"]["dice"]["two_player_white"]),
    3: int(_RAW["tower"]["dice"]["white"]),
    4: int(_RAW["tower"]["dice"]["white"]),
}
YELLOW_MAX: Final[int] = int(_RAW["tower"]["dice"]["yellow_max"])
YELLOW_COST: Final[int] = int(_RAW["tower"]["dice"]["yellow_cost_gold_each"])

CARAVAN_ROWS: Final[int] = int(_RAW["caravan"]["rows"])
CARAVAN_PER_ROW: Final[dict[int, int]] = {
    n: int(_RAW["caravan"]["camels_per_row"][f"{n}p"]) for n in (2, 3, 4)
}
CARAVAN_PLACE_VP: Final[tuple[int, ...]] = tuple(
    int(r["immediate_vp_per_good"]) for r in _RAW["caravan"]["rows_bottom_to_top"]
)
CARAVAN_ROW_VALUE: Final[tuple[int, ...]] = tuple(
    int(r["multiplier"]) for r in _RAW["caravan"]["rows_bottom_to_top"]
)

START_GOLD: Final[int] = int(_RAW["setup"]["per_player"]["gold"])
START_CAMELS: Final[int] = int(_RAW["setup"]["per_player"]["camels"])
WEEKS: Final[int] = int(_RAW["turn_structure"]["weeks"])
DAYS_PER_WEEK: Final[int] = int(_RAW["turn_structure"]["days_per_week"])

BAZAAR_BONUS: Final = 2
"""Extra VP per complete souk with the Bazaar (seed, Inventaire des bâtiments)."""
HAMMAM_FREE: Final = 3
"""The Hammam's free adjustment of the steward's move, 1 to 3 squares (seed)."""
PEN_BONUS: Final = 1
STALL_BONUS: Final = 2
CRANE_BONUS: Final = 1
SCORE_GOLD_MAX: Final = 10
SCORE_CAMELS_MAX: Final = 4
CARD_GAIN: Final = 3
"""Camels or gold given by the 3-camels and 3-gold cards."""
