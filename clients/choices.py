"""Short texts for legal choices, so a player can pick one by its number.

The server lists every legal choice as a map ``{"kind": ..., arguments}`` (SPEC section 3); the
client never needs the rules to show them. A server that labels its choices (a ``label`` in
game terms) is shown as it speaks, made printable; otherwise :func:`label` has texts for the
kinds of the known games, and a generic form (``kind`` and its arguments in words) for any
other. Numbers shown to people start at 1; the index sent in ``act`` is the number minus one.

A choice that names an Ishtar space (``at``) is prefixed with the space's name on the map
(``f7:``) when a :class:`~clients.hexgrid.Grid` is given, so the list and the map agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from clients.hexgrid import Grid, as_hex
from clients.printable import printable

Choice = Mapping[str, Any]


def numbered(
    game: str,
    choices: list[dict[str, Any]],
    grid: Grid | None = None,
    board: Mapping[str, Any] | None = None,
) -> list[tuple[int, str]]:
    """``(number, text)`` for each choice, numbered from 1."""
    return [(i + 1, label(game, c, grid, board)) for i, c in enumerate(choices)]


def space_of(choice: Choice) -> tuple[int, int] | None:
    """The one space a choice names: its ``at``, or a bloom token's first cell."""
    at = as_hex(choice.get("at"))
    if at is None and choice.get("kind") == "bloom":
        cells = choice.get("cells")
        at = as_hex(cells[0]) if isinstance(cells, list) and cells else None
    return at


def label(
    game: str,
    choice: Choice,
    grid: Grid | None = None,
    board: Mapping[str, Any] | None = None,
) -> str:
    """A short text for one choice: the server's label, ours, or the generic form.

    ``board`` (the view's ``shared.game``) lets our texts say more where the server sends no
    label: the tile on top of a pile, a tree card's name, cost and points, a skill's effect, a
    building's cost and power.
    """
    text = _label(game, choice)
    if board is not None and not isinstance(choice.get("label"), str):
        text = _with_board(game, choice, board, text)
    at = space_of(choice) if grid is not None and choice.get("kind") != "rotation" else None
    if grid is not None and at is not None and at in grid.spaces:
        name = grid.name(at)
        text = text.replace(f" at ({at[0]},{at[1]})", " here").replace(f"({at[0]},{at[1]})", name)
        return f"{name}: {text}"
    return text


def _label(game: str, choice: Choice) -> str:
    given = choice.get("label")
    if isinstance(given, str) and given.strip():
        return printable(given)
    table = _LABELS.get(game, {})
    kind = choice.get("kind")
    pretty = table.get(kind) if isinstance(kind, str) else None
    if pretty is not None:
        try:
            return printable(pretty(choice))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            pass
    return printable(generic(choice))


def generic(choice: Choice) -> str:
    """``kind`` and its arguments: ``pile: pile=2 cost=1``."""
    kind = choice.get("kind", "?")
    args = " ".join(f"{k}={_value(v)}" for k, v in choice.items() if k not in ("kind", "label"))
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


def _with_board(game: str, choice: Choice, board: Mapping[str, Any], text: str) -> str:
    """Our label told with what the board shows (see :func:`label`)."""
    kind = choice.get("kind")
    try:
        if game == "ishtar" and kind in ("buy", "tree", "reserve_tree"):
            card = _card(board, choice.get("card"))
            if card:
                verb = {"buy": "buy", "tree": "plant", "reserve_tree": "reserve"}[str(kind)]
                return f"{verb} {card}"
        if game == "ishtar":
            more = _ishtar_more(choice, board)
            return f"{text}: {printable(more)}" if more else text
        if game == "yspahan" and kind == "build":
            return f"build the {printable(BUILDINGS.get(str(choice.get('building')), text))}"
        if game == "yspahan" and kind == "take":
            more = _take_more(choice, board)
            if more:
                extra = choice.get("extra")
                tail = f" (+1 die, discarding {printable(extra)})" if extra else ""
                return f"{printable(choice['floor'])} dice: {more}{tail}"
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        pass
    return text


def _take_more(choice: Choice, board: Mapping[str, Any]) -> str:
    """What the dice of a floor give: ``3 sacks``, ``steward 3 squares``."""
    floor = next((f for f in board.get("tower") or [] if f.get("floor") == choice["floor"]), None)
    if floor is None:
        return ""
    dice = int(floor.get("white", 0)) + int(floor.get("yellow", 0))
    action = choice["action"]
    if action == "floor":
        n = dice + (1 if choice.get("extra") else 0)
        name = str(choice["floor"])
        if name in ("camels", "gold"):
            return f"take {n} {name if n != 1 or name == 'gold' else 'camel'}"
        return f"place {n} {name if n != 1 else name.rstrip('s')}"
    if action == "steward":
        return f"move the steward {floor.get('value')} squares"
    if action == "card":
        return "draw a card"
    return ""


def tile_short(tile: Mapping[str, Any] | None) -> str:
    """``2 skill | , | 1``: each space's flowers (``,`` grass) and icon."""
    if not tile:
        return "face down"
    spaces = []
    for space in tile.get("spaces") or []:
        flowers = space.get("flowers", 0)
        spaces.append(f"{flowers}" if flowers else ",")
        if space.get("icon"):
            spaces[-1] += f" {space['icon']}"
    return printable(f"{tile.get('shape', '')} {' | '.join(spaces)}".strip())


def _card(board: Mapping[str, Any], card: Any) -> str:
    found = [c for c in board.get("display") or [] if c.get("card") == card]
    for p in board.get("players") or []:
        reserved = p.get("reserved_tree")
        if isinstance(reserved, dict) and reserved.get("card") == card:
            found.append(reserved)
    if not found:
        return ""
    entry = found[0]
    cost = entry.get("cost") or {}
    price = " ".join(f"{n}{c[0]}" for c, n in cost.items() if n) or "free"
    return f"{entry.get('name')} ({price} → {entry.get('points')} pts)"


def _ishtar_more(choice: Choice, board: Mapping[str, Any]) -> str:
    kind = choice.get("kind")
    if kind in ("pile", "reserve_tile"):
        return tile_short((board.get("piles") or [])[choice["pile"]].get("top"))
    if kind == "skill":
        return SKILLS.get(str(choice.get("skill")), "")
    return ""


SKILLS = {
    "A": "end: 2 pts per tablet next to your assistants' flowerbeds",
    "B": "icons you place count as wild; end: 7 pts",
    "C": "end: 3/2/1 pts per purple/red/white gem left",
    "D": "end: 2 pts per tree next to your assistants' flowerbeds",
    "E": "end: 7 pts per assistant still in your supply",
    "F": "now: take 2 gems of your choice",
    "G": "now: a 3-flower bloom token on 2 grass spaces",
    "H": "now: a 2-flower bloom token on a grass space",
    "I": "now: reserve a tree card, free an assistant",
    "J": "now: reserve a top tile, free an assistant",
}
"""The skills' effects (the edition's data), for a server that labels no choices."""

BUILDINGS = {
    "pen": "Camel pen, 2 camels: +1 camel with every camels action",
    "stall": "Stall, 2 camels 2 gold: +2 gold with every gold action",
    "hammam": "Bath, 2 camels 2 gold: move the steward 1-3 squares more or less for free",
    "caravanserai": "Caravanserai, 3 camels 3 gold: a card each time a good of yours goes"
    " to the caravan",
    "bazaar": "Bazaar, 4 camels 4 gold: +2 VP per completed souk at week scoring",
    "crane": "Crane, 4 camels 4 gold: +1 good with every goods action",
}
"""The buildings' costs and powers (the game's data), for a server that labels no choices."""

# Ishtar ------------------------------------------------------------------------------------

_ISHTAR: dict[str, Callable[[Choice], str]] = {
    "pile": lambda c: (
        f"take from pile {c['pile'] + 1}"
        + (f" (pay {c['cost']} gem{'s' * (c['cost'] != 1)} to move the can)" if c["cost"] else "")
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
    """``br2.0`` -> ``br2.0 (barrels)``: the shop as it is typed, and its quarter."""
    souk, _, index = shop.partition(".")
    quarter = QUARTER_OF_PREFIX.get(souk[:2], souk[:2])
    return f"{shop} ({quarter})" if index.isdigit() else shop


def _take(c: Choice) -> str:
    floor = c["floor"]
    action = c["action"]
    if action == "floor":
        what = f"{floor} dice: {floor} action"
        extra = c.get("extra")
        return what + (f" (+1 die, discarding {extra})" if extra else "")
    if action == "steward":
        return f"{floor} dice: move the steward"
    if action == "card":
        return f"{floor} dice: draw a card"
    return f"{floor} dice: {action}"


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
