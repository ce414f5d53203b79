"""Everything static a client needs to draw and explain Yspahan, served as ``GET /games/yspahan``.

Built from the tables of :mod:`games.yspahan.data` (the packaged ``yspahan.json``): the city's
quarters, souks and shops with the path squares that face each shop, the steward's path (its arms,
the distance of each square from the centre, the shops it faces, the adjacency), the tower's
floors, the caravan's rows, the buildings with their prices and powers, the cards with their
effects. The views name all of these by id (``sk3.0``, ``W7``, ``crane``, ``3_gold``) and this
document says what each is. Fields are described in ``protocol/games/yspahan.md``.
"""

from __future__ import annotations

from games.base import JSON
from games.yspahan import data
from games.yspahan.nouns import BUILDING_NAMES, BUILDING_POWERS, CARD_NAMES, CARD_TEXTS, GOOD
from games.yspahan.state import CATEGORIES

FLOOR_ACTIONS = {
    "camels": "take as many camels as the group has dice",
    "gold": "take as much gold as the group has dice",
    "sacks": "place as many sacks as the group has dice in the sacks quarter",
    "barrels": "place as many barrels as the group has dice in the barrels quarter",
    "chests": "place as many chests as the group has dice in the chests quarter",
    "vases": "place as many vases as the group has dice in the vases quarter",
}


def static_data(title: str, players: tuple[int, int]) -> dict[str, JSON]:
    faced_by: dict[int, list[JSON]] = {shop: [] for shop in range(len(data.SHOP_IDS))}
    for square in data.SQUARES:
        for shop in square.faces:
            faced_by[shop].append(square.id)
    arms: dict[str, JSON] = {}
    for square in data.SQUARES:
        if square.arm != "centre":
            entry = arms.setdefault(square.arm, [])
            assert isinstance(entry, list)
            entry.append(square.id)
    return {
        "name": "yspahan",
        "title": title,
        "players": {"min": players[0], "max": players[1]},
        "quarters": [
            {
                "quarter": quarter,
                "good": GOOD[quarter],
                "souks": [data.SOUKS[s].id for s in data.SOUKS_OF_QUARTER[q]],
            }
            for q, quarter in enumerate(data.QUARTERS)
        ],
        "souks": [
            {
                "souk": s.id,
                "quarter": data.QUARTERS[s.quarter],
                "points": s.vp,
                "shops": [data.SHOP_IDS[shop] for shop in s.shops],
            }
            for s in data.SOUKS
        ],
        "shops": [
            {"shop": sid, "souk": data.SOUKS[data.SHOP_SOUK[i]].id, "faced_by": faced_by[i]}
            for i, sid in enumerate(data.SHOP_IDS)
        ],
        "steward": {
            "start": data.SQUARES[data.CENTRE].id,
            "arms": arms,
            "squares": [
                {
                    "square": sq.id,
                    "arm": sq.arm,
                    "distance": sq.distance,
                    "faces": [data.SHOP_IDS[shop] for shop in sq.faces],
                }
                for sq in data.SQUARES
            ],
            "adjacency": {k: list(v) for k, v in data.ADJACENCY.items()},
        },
        "tower": {
            "floors": [{"floor": f, "action": FLOOR_ACTIONS[f]} for f in data.FLOORS],
            "white_dice": {str(n): data.WHITE_DICE[n] for n in sorted(data.WHITE_DICE)},
            "yellow_max": data.YELLOW_MAX,
            "yellow_cost": data.YELLOW_COST,
        },
        "caravan": {
            "rows": [
                {
                    "row": row,
                    "points_per_good": data.CARAVAN_PLACE_VP[row],
                    "multiplier": data.CARAVAN_ROW_VALUE[row],
                }
                for row in range(data.CARAVAN_ROWS)
            ],
            "places_per_row": {
                str(n): data.CARAVAN_PER_ROW[n] for n in sorted(data.CARAVAN_PER_ROW)
            },
        },
        "buildings": [
            {
                "building": b.id,
                "name": BUILDING_NAMES[b.id],
                "camels": b.camels,
                "gold": b.gold,
                "power": BUILDING_POWERS[b.id],
            }
            for b in data.BUILDINGS
        ],
        "building_points": list(data.BUILDING_VP),
        "cards": [
            {
                "card": kind,
                "count": data.CARD_COUNTS[kind],
                "name": CARD_NAMES[kind],
                "text": CARD_TEXTS[kind],
            }
            for kind in data.CARD_KINDS
        ],
        "weeks": data.WEEKS,
        "days_per_week": data.DAYS_PER_WEEK,
        "start": {"gold": data.START_GOLD, "camels": data.START_CAMELS},
        "score_categories": list(CATEGORIES),
    }
