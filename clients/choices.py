"""Short texts for legal choices, so a player can pick one by its number.

The server lists every legal choice as a map ``{"kind": ..., arguments}`` (SPEC section 3); the
client never needs the rules to show them. :func:`label` is generic over any kind (``kind`` and
its arguments in words) and has prettier texts for the kinds of the known games. Numbers shown
to people start at 1; the index sent in ``act`` is the number minus one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Choice = Mapping[str, Any]


def numbered(game: str, choices: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """``(number, text)`` for each choice, numbered from 1."""
    return [(i + 1, label(game, c)) for i, c in enumerate(choices)]


def label(game: str, choice: Choice) -> str:
    """A short text for one choice; falls back to the generic form for anything unknown."""
    table = _LABELS.get(game, {})
    kind = choice.get("kind")
    pretty = table.get(kind) if isinstance(kind, str) else None
    if pretty is not None:
        try:
            return pretty(choice)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            pass
    return generic(choice)


def generic(choice: Choice) -> str:
    """``kind`` and its arguments: ``pile: pile=2 cost=1``."""
    kind = choice.get("kind", "?")
    args = " ".join(f"{k}={_value(v)}" for k, v in choice.items() if k != "kind")
    return f"{kind}: {args}" if args else str(kind)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ",".join(_value(v) for v in value) + ")"
    if value is None:
        return "-"
    return str(value)


def hex_text(at: Any) -> str:
    """An Ishtar space ``[q, r]`` as people read it: ``(q,r)``."""
    if isinstance(at, list) and len(at) == 2:
        return f"({at[0]},{at[1]})"
    return _value(at)


# Ishtar ------------------------------------------------------------------------------------

_ISHTAR: dict[str, Callable[[Choice], str]] = {
    "pile": lambda c: (
        f"take the top tile of pile {c['pile'] + 1}"
        + (f" (moving the can costs {c['cost']} gem{'s' * (c['cost'] != 1)})" if c["cost"] else "")
    ),
    "reserved": lambda c: f"take your reserved tile {c['tile']}",
    "reserve_tile": lambda c: f"reserve tile {c['tile']} from pile {c['pile'] + 1}",
    "position": lambda c: f"place {c['tile']} with its first space at {hex_text(c['at'])}",
    "rotation": lambda c: (
        f"turn {c['tile']} at {hex_text(c['at'])} by {60 * c['rotation']} degrees "
        f"(rotation {c['rotation']})"
    ),
    "assistant": lambda c: f"put an assistant on the flowerbed at {hex_text(c['at'])}",
    "skill": lambda c: f"unlock skill {c['skill']}",
    "pass": lambda c: "do no special action",
    "gem": lambda c: f"pay a {c['colour']} gem",
    "take_gem": lambda c: f"take a {c['colour']} gem",
    "bloom": lambda c: (
        f"lay bloom token {c['token']} on " + " ".join(hex_text(x) for x in c["cells"])
    ),
    "buy": lambda c: f"buy tree card {c['card']}",
    "tree": lambda c: f"plant tree {c['card']} at {hex_text(c['at'])}",
    "end_turn": lambda c: "end your turn",
}

# Yspahan ------------------------------------------------------------------------------------

QUARTER_OF_PREFIX = {"sk": "sacks", "br": "barrels", "ch": "chests", "va": "vases"}

CARD_TEXT = {
    "3_camels": "receive 3 camels",
    "3_gold": "receive 3 gold",
    "no_camels": "build without paying camels",
    "no_gold": "build without paying gold",
    "place_caravan": "put a good from your reserve on the caravan",
    "place_board": "place one good in any quarter",
    "score_gold": "pay up to 10 gold, 1 VP each",
    "score_camels": "pay up to 4 camels, 2 VP each",
    "swap_camels_gold": "exchange camels and gold 1 for 1",
}


def shop_text(shop: str) -> str:
    """``br2.0`` -> ``barrels souk br2, shop 1``."""
    souk, _, index = shop.partition(".")
    quarter = QUARTER_OF_PREFIX.get(souk[:2], souk[:2])
    return f"{quarter} souk {souk}, shop {int(index) + 1}" if index.isdigit() else shop


def _take(c: Choice) -> str:
    floor = c["floor"]
    action = c["action"]
    if action == "floor":
        what = f"take the {floor} dice: {floor} action"
        extra = c.get("extra")
        return what + (f" (+1 die by discarding {extra})" if extra else "")
    if action == "steward":
        return f"take the {floor} dice: move the steward"
    if action == "card":
        return f"take the {floor} dice: draw a card"
    return f"take the {floor} dice: {action}"


def _extra(c: Choice) -> str:
    card = c["card"]
    if card is None:
        return "no more extra dice: do the action"
    return f"discard {card} as one more die"


def _move(c: Choice) -> str:
    gold = c.get("gold") or 0
    cost = f" (pay {gold} gold)" if gold else ""
    return f"move the steward to {c['to']}{cost}"


def _swap(c: Choice) -> str:
    n = c["camels"]
    if n > 0:
        return f"buy {n} camel{'s' * (n != 1)} for {n} gold"
    if n < 0:
        return f"sell {-n} camel{'s' * (n != -1)} for {-n} gold"
    return "exchange nothing"


def _keep(c: Choice) -> str:
    if c.get("pay"):
        return f"pay a camel to keep your good in {c['shop']}"
    return f"let your good in {c['shop']} go to the caravan"


_YSPAHAN: dict[str, Callable[[Choice], str]] = {
    "yellow": lambda c: (
        f"buy {c['dice']} yellow di{'e' if c['dice'] == 1 else 'ce'} and roll"
        if c["dice"]
        else "roll without yellow dice"
    ),
    "take": _take,
    "place": lambda c: f"put a good in {shop_text(c['shop'])}",
    "move": _move,
    "play": lambda c: f"play card {c['card']} ({CARD_TEXT.get(c['card'], c['card'])})",
    "end": lambda c: "end your turn",
    "build": lambda c: f"build the {c['building']}",
    "swap": _swap,
    "pay": lambda c: (
        f"pay {c['gold']} gold for VP" if "gold" in c else f"pay {c['camels']} camels for VP"
    ),
    "send": lambda c: f"send the good in {c['shop']} first",
    "extra": _extra,
    "cards": lambda c: "play a card first",
    "back": lambda c: "play no card: back",
    "draw": lambda c: "draw a card",
    "pass": lambda c: "pass",
    "keep": _keep,
}

_LABELS: dict[str, dict[str, Callable[[Choice], str]]] = {
    "ishtar": _ISHTAR,
    "yspahan": _YSPAHAN,
}
