"""The names of Yspahan's components in English, for the labels and the static data.

Numbers come from :mod:`games.yspahan.data`, so a data change keeps the texts true.
"""

from __future__ import annotations

from games.yspahan import data

GOOD = {"sacks": "sack", "barrels": "barrel", "chests": "chest", "vases": "vase"}
"""Quarter -> the good its shops hold."""
GOOD_OF_SOUK = {s.id: GOOD[data.QUARTERS[s.quarter]] for s in data.SOUKS}
"""Souk id (``sk3``) -> the good it holds (``sack``)."""

BUILDING_NAMES = {
    "pen": "Camel pen",
    "stall": "Stall",
    "hammam": "Hammam",
    "caravanserai": "Caravanserai",
    "bazaar": "Bazaar",
    "crane": "Crane",
}
BUILDING_POWERS = {
    "pen": f"+{data.PEN_BONUS} camel each time you take the camels action",
    "stall": f"+{data.STALL_BONUS} gold each time you take the gold action",
    "hammam": f"moves the steward 1 to {data.HAMMAM_FREE} squares more or less, free",
    "caravanserai": "draw a card each time one of your goods goes to the caravan",
    "bazaar": f"+{data.BAZAAR_BONUS} points for each of your complete souks at the week's end",
    "crane": f"+{data.CRANE_BONUS} good each time you place goods in a quarter",
}
CARD_NAMES = {
    "3_camels": "3 camels",
    "3_gold": "3 gold",
    "no_camels": "Build without camels",
    "no_gold": "Build without gold",
    "place_caravan": "Caravan good",
    "place_board": "One good",
    "score_gold": "Gold for points",
    "score_camels": "Camels for points",
    "swap_camels_gold": "Camels and gold",
}
CARD_TEXTS = {
    "3_camels": f"receive {data.CARD_GAIN} camels",
    "3_gold": f"receive {data.CARD_GAIN} gold",
    "no_camels": "your next building costs no camels",
    "no_gold": "your next building costs no gold",
    "place_caravan": "put one good from your reserve on the next caravan place",
    "place_board": "place one good in any quarter, under the souk rules",
    "score_gold": f"pay up to {data.SCORE_GOLD_MAX} gold, 1 point each",
    "score_camels": f"pay up to {data.SCORE_CAMELS_MAX} camels, 2 points each",
    "swap_camels_gold": "exchange camels for gold or gold for camels, 1 for 1",
}
