"""The English wording of Yspahan: choice labels and effects, decision prompts, event texts.

Written in the game's terms: groups of dice by their floor, goods by the quarter they go to
(a sack, a barrel, a chest, a vase), buildings and cards by their names (:mod:`.nouns`), places on
the board by the names the reference defines (shops ``sk3.0``, squares ``W7``, souks ``sk3``).
Seats are ``P1``..``P4`` (:func:`games.base.seat_name`); the seat that decides reads "your".

Consequences, public information only (``effects`` of a choice):

- a steward move lists the goods it sends to the caravan (``sends``: ``[{shop, seat}]``, in the
  order of the faced shops; each owner may still pay a camel to keep theirs);
- a good's placement names the souk it fills and how full it will be (``souk``, ``filled``,
  ``shops``: complete when they are equal).

Every kind has its entry in :data:`CHOICES`, :data:`PROMPTS` or :data:`EVENTS`; the tests fail
for a kind without one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from games.base import JSON, Choice, Decision, Event, seat_name
from games.yspahan import buildings, data, decisions, steward
from games.yspahan.nouns import BUILDING_NAMES, BUILDING_POWERS, CARD_NAMES, CARD_TEXTS, GOOD
from games.yspahan.state import YState

Text = Callable[[YState, Mapping[str, Any]], str]


# --------------------------------------------------------------------------- nouns


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if abs(n) == 1 else many or word + 's'}"


def listed(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def good_in(shop: str) -> str:
    """The good a shop holds: ``sk3.0`` -> ``sack``."""
    return _GOOD_IN[shop]


_GOOD_IN: Final[dict[str, str]] = {
    shop: GOOD[data.QUARTERS[data.SOUKS[data.SHOP_SOUK[i]].quarter]]
    for i, shop in enumerate(data.SHOP_IDS)
}
"""Shop id -> the good it holds (static: written once)."""
_GOOD_AT: Final[tuple[str, ...]] = tuple(_GOOD_IN[shop] for shop in data.SHOP_IDS)
"""Shop index -> the good it holds."""


_SEAT_NAMES: Final[tuple[str, ...]] = tuple(seat_name(seat) for seat in range(4))
"""Seat (of four at most) -> :func:`games.base.seat_name` (static: written once)."""


def whose(seat: int, me: int | None) -> str:
    return "your" if seat == me else f"{_SEAT_NAMES[seat]}'s"


def card_name(card: str) -> str:
    """``the 3 gold card``."""
    return f"the {CARD_NAMES[card]} card"


def building_text(building: str) -> str:
    return f"the {BUILDING_NAMES[building]}"


def souk_text(souk_id: str) -> str:
    """``souk sk3 (3 shops, 4 points)``."""
    return _SOUK_TEXT[souk_id]


_SOUK_TEXT: Final[dict[str, str]] = {
    s.id: f"souk {s.id} ({plural(len(s.shops), 'shop')}, {plural(s.vp, 'point')})"
    for s in data.SOUKS
}
"""Souk id -> :func:`souk_text` (static: written once)."""


_DICE: Final[tuple[str, ...]] = tuple(plural(n, "die", "dice") for n in range(64))
"""``n`` -> :func:`_dice` (static: written once; a group holds fewer dice)."""


def _dice(n: int) -> str:
    return _DICE[n] if 0 <= n < len(_DICE) else plural(n, "die", "dice")


# --------------------------------------------------------------------------- choices


def _yellow(s: YState, c: Mapping[str, Any]) -> str:
    n = int(c["dice"])
    if n == 0:
        return "roll without yellow dice"
    cost = n * data.YELLOW_COST
    return f"buy {plural(n, 'yellow die', 'yellow dice')} for {cost} gold and roll"


def _floor_gain(s: YState, floor: str, size: int) -> str:
    return _gain_text(floor, size, buildings.has(s, s.actor, _BONUS_BUILDING[floor]))


_BONUS_BUILDING: Final[dict[str, int]] = {
    floor: data.PEN if floor == "camels" else data.STALL if floor == "gold" else data.CRANE
    for floor in data.FLOORS
}
"""Floor -> the building that adds to its action (Camel pen, Stall, Crane)."""


def _gain_text(floor: str, size: int, bonus: bool) -> str:
    """What the floor action of ``size`` dice gives (``bonus``: with its building's)."""
    if floor == "camels":
        n = size + (data.PEN_BONUS if bonus else 0)
        return f"gain {plural(n, 'camel')}" + (" (with the Camel pen)" if bonus else "")
    if floor == "gold":
        n = size + (data.STALL_BONUS if bonus else 0)
        return f"gain {n} gold" + (" (with the Stall)" if bonus else "")
    goods = plural(size + (data.CRANE_BONUS if bonus else 0), GOOD[floor])
    return f"place {goods} in the {floor} quarter" + (" (with the Crane)" if bonus else "")


_FLOOR_INDEX: Final[dict[str, int]] = {floor: i for i, floor in enumerate(data.FLOORS)}

_TAKE_TEXTS: Final[dict[int, tuple[str, str, str, str]]] = {}
"""The take labels of a group already written, by what they say (the arguments of
:func:`_take_text` but the action, packed in one number by :func:`_take_texts`): one per action,
in :func:`_action_code`'s order. The same few dozen groups recur all match long, and looking
one up costs a fraction of writing it. The same for every match (a pure function of the key,
never of a state), filled as they are first asked for, and bounded (a few thousand keys at
most: floors, dice, values)."""


def _action_code(action: str) -> int:
    """An action's place in a group's take texts (:data:`_TAKE_TEXTS`): floor, steward, card,
    build (literal tests: cheaper than a map, compiled)."""
    if action == "floor":
        return 0
    if action == "steward":
        return 1
    if action == "card":
        return 2
    return 3


def _take(s: YState, c: Mapping[str, Any]) -> str:
    return _take_label(s, str(c["floor"]), str(c["action"]))


def _take_label(s: YState, floor: str, action: str) -> str:
    return _take_texts(s, floor)[_action_code(action)]


def _take_texts(s: YState, floor: str) -> tuple[str, str, str, str]:
    """The labels of taking the group of ``floor`` for each action (:data:`_TAKE_TEXTS`): its
    size and value, and for the floor action its building's bonus and whether cards may add
    dice (the others' texts read neither)."""
    index = _FLOOR_INDEX[floor]
    size = decisions.group_size(s, index)
    value = s.tower[index][0]
    bonus = buildings.has(s, s.actor, _BONUS_AT[index])
    more = bool(s.hands[s.actor])
    # (size < 64: 12 dice at most, plus one die per card; value 1 to 6.)
    key = (((index * 64 + size) * 8 + value) * 2 + bonus) * 2 + more
    texts = _TAKE_TEXTS.get(key)
    if texts is None:
        texts = _TAKE_TEXTS[key] = (
            _take_text(floor, "floor", size, value, bonus, more),
            _take_text(floor, "steward", size, value, bonus, more),
            _take_text(floor, "card", size, value, bonus, more),
            _take_text(floor, "build", size, value, bonus, more),
        )
    return texts


_BONUS_AT: Final[tuple[int, ...]] = tuple(_BONUS_BUILDING[floor] for floor in data.FLOORS)
"""Floor index -> :data:`_BONUS_BUILDING`."""


def _take_text(floor: str, action: str, size: int, value: int, bonus: bool, more: bool) -> str:
    """A take's label: the group (``size`` dice showing ``value``) and its action; for the
    floor action, with its building's ``bonus`` and whether cards may add dice (``more``)."""
    group = f"the {floor} group, {_dice(size)} showing {value}"
    if action == "steward":
        return f"move the steward {plural(value, 'square')} ({group})"
    if action == "card":
        return f"draw a card ({group})"
    if action == "build":
        return f"build a building ({group})"
    cards = "; cards may add dice" if more else ""
    return f"{_gain_text(floor, size, bonus)} ({group}{cards})"


def _extra(s: YState, c: Mapping[str, Any]) -> str:
    """One more die from a card, or no more: the floor action with the dice so far."""
    index = s.floor
    floor = data.FLOORS[index]
    size = decisions.group_size(s, index) + s.extra
    card = c["card"]
    if card is None:
        return f"add no more cards: {_floor_gain(s, floor, size)}"
    return (
        f"discard {card_name(str(card))} as one more die ({_dice(size + 1)}: "
        f"{_floor_gain(s, floor, size + 1)})"
    )


def _play(s: YState, c: Mapping[str, Any]) -> str:
    return _PLAY_TEXTS[str(c["card"])]


_PLAY_TEXTS: Final[dict[str, str]] = {
    card: f"play {card_name(card)}: {CARD_TEXTS[card]}" for card in CARD_TEXTS
}
"""Card -> the label of playing it (static: written once)."""


def placement_effects(s: YState, shop: str) -> dict[str, JSON]:
    _, souk, souk_id, shops = _SHOP_SOUKS[shop]
    return _filling(souk_id, s.souk_fill[souk] + 1, shops)


def _filling(souk_id: str, filled: int, shops: int) -> dict[str, JSON]:
    """A placement's effects: the souk it fills, how full it will be and its number of shops."""
    return {"souk": souk_id, "filled": filled, "shops": shops}


_PLACE_TEXTS: Final[dict[int, str]] = {}
"""Placement labels already written, by shop and how full its souk will be (``shop * 8 +
filled``; as :data:`_TAKE_TEXTS`)."""


def _place(s: YState, c: Mapping[str, Any]) -> str:
    return _place_label(s, str(c["shop"]))[0]


_SHOP_SOUKS: Final[dict[str, tuple[int, int, str, int]]] = {
    shop: (
        i,
        data.SHOP_SOUK[i],
        data.SOUKS[data.SHOP_SOUK[i]].id,
        len(data.SOUKS[data.SHOP_SOUK[i]].shops),
    )
    for i, shop in enumerate(data.SHOP_IDS)
}
"""Shop id -> its index, its souk's index and id, and the souk's number of shops (static)."""


def _place_label(s: YState, shop: str) -> tuple[str, str, int, int]:
    """A placement's label, with the souk it fills, how full it will be and its size."""
    index, souk, souk_id, shops = _SHOP_SOUKS[shop]
    filled = s.souk_fill[souk] + 1
    key = index * 8 + filled
    text = _PLACE_TEXTS.get(key)
    if text is None:
        after = "completes it" if filled == shops else f"{filled} of {shops} filled"
        text = f"put a {_GOOD_AT[index]} in shop {shop}: {souk_text(souk_id)}, {after}"
        _PLACE_TEXTS[key] = text
    return text, souk_id, filled, shops


def _place_choice(s: YState, c: Choice, shown: Choice) -> None:
    """A placement's label and effects (:func:`_place`, :func:`placement_effects`), the shop
    looked up once."""
    shop = c["shop"]
    assert isinstance(shop, str)
    text, souk_id, filled, shops = _place_label(s, shop)
    shown["label"] = text
    shown["effects"] = _filling(souk_id, filled, shops)


def move_effects(s: YState, square: str) -> dict[str, JSON]:
    return _sends(s, steward.faced_goods(s.shops, data.SQUARE_INDEX[square]))


def _sends(s: YState, faced: list[int]) -> dict[str, JSON]:
    """A move's effects: the ``faced`` shops' goods it sends to the caravan, with their owners."""
    sends: list[JSON] = [{"shop": data.SHOP_IDS[shop], "seat": s.shops[shop]} for shop in faced]
    return {"sends": sends}


def _move(s: YState, c: Mapping[str, Any]) -> str:
    square = str(c["to"])
    stop = data.SQUARE_INDEX[square]
    return _move_label(s, square, stop, int(c["gold"]), steward.faced_goods(s.shops, stop))


_MOVE_TEXTS: Final[dict[int, str]] = {}
"""Labels of moves that send nothing, by where the steward stands, where it stops and the gold
paid (``(gold * 32 + start) * 32 + stop``; as :data:`_TAKE_TEXTS`)."""


def _move_label(s: YState, square: str, stop: int, gold: int, faced: list[int]) -> str:
    """A move's label; ``faced``: the goods it sends (:func:`move_effects`'s shops)."""
    key = -1
    if not faced:
        key = (gold * 32 + s.steward) * 32 + stop
        known = _MOVE_TEXTS.get(key)
        if known is not None:
            return known
    squares = data.DISTANCE[s.steward][stop]
    text = f"move the steward {plural(squares, 'square')} to {square}"
    if gold:
        text += f", paying {gold} gold"
    if not faced:
        text += ": sends nothing to the caravan"
        _MOVE_TEXTS[key] = text
        return text
    # The goods of move_effects (faced shops holding one, in order), named without its maps.
    goods = [f"{whose(s.shops[shop], s.actor)} {_GOOD_AT[shop]}" for shop in faced]
    return text + f": sends {listed(goods)} to the caravan"


def _move_choice(s: YState, c: Choice, shown: Choice) -> None:
    """A move's label and effects (:func:`_move`, :func:`move_effects`), its faced goods found
    once."""
    square, gold = c["to"], c["gold"]
    assert isinstance(square, str) and isinstance(gold, int)
    stop = data.SQUARE_INDEX[square]
    faced = steward.faced_goods(s.shops, stop)
    shown["label"] = _move_label(s, square, stop, gold, faced)
    shown["effects"] = _sends(s, faced)


def _send(s: YState, c: Mapping[str, Any]) -> str:
    shop = str(c["shop"])
    owner = s.shops[data.SHOP_INDEX[shop]]
    return f"send {whose(owner, s.actor)} {good_in(shop)} in {shop} to the caravan first"


def _keep(s: YState, c: Mapping[str, Any]) -> str:
    shop = str(c["shop"])
    good = good_in(shop)
    if c["pay"]:
        return f"pay a camel to keep your {good} in {shop} (one from your reserve goes instead)"
    return f"let your {good} in {shop} go to the caravan"


def _build(s: YState, c: Mapping[str, Any]) -> str:
    building = str(c["building"])
    index = data.BUILDING_INDEX[building]
    camels, gold = buildings.price(s, s.actor, index)
    price = listed(
        [
            p
            for p in (plural(camels, "camel") if camels else "", f"{gold} gold" if gold else "")
            if p
        ]
    )
    text = f"build {building_text(building)}: {price or 'free'} ({BUILDING_POWERS[building]})"
    rank = len(s.built[s.actor]) + 1
    points = data.BUILDING_VP[rank - 1]
    if points:
        text += f", {plural(points, 'point')} as your building number {rank}"
    return text


def _pay(s: YState, c: Mapping[str, Any]) -> str:
    if "gold" in c:
        n = int(c["gold"])
        return f"pay {n} gold for {plural(n, 'point')}" if n else "pay no gold (no points)"
    n = int(c["camels"])
    return f"pay {plural(n, 'camel')} for {plural(2 * n, 'point')}" if n else "pay no camel"


def _swap(s: YState, c: Mapping[str, Any]) -> str:
    n = int(c["camels"])
    if n > 0:
        return f"buy {plural(n, 'camel')} for {n} gold"
    if n < 0:
        return f"sell {plural(-n, 'camel')} for {-n} gold"
    return "exchange nothing"


CHOICES: Final[dict[str, Text]] = {
    "yellow": _yellow,
    "take": _take,
    "extra": _extra,
    "cards": lambda s, c: "play a card first (then this decision again)",
    "back": lambda s, c: "play no card: back to the decision",
    "play": _play,
    "draw": lambda s, c: "draw a card (no group is left for you)",
    "pass": lambda s, c: "pass (no group is left for you, and no card to draw)",
    "place": _place,
    "move": _move,
    "send": _send,
    "keep": _keep,
    "build": _build,
    "pay": _pay,
    "swap": _swap,
    "end": lambda s, c: "end your turn",
}


_NO_TEXTS: Final[tuple[str, str, str, str]] = ("", "", "", "")


def describe(state: YState, decision: Decision) -> list[Choice]:
    """Each choice with its ``label`` added last (and ``effects`` for a move or a placement).

    The frequent kinds are written here without going through :data:`CHOICES` (the same
    texts, called directly; the takes of one group find its texts once, a placement or a move
    looks its shop or square up once for both its label and its effects)."""
    out: list[Choice] = []
    group, texts = "", _NO_TEXTS
    for c in decision.choices:
        kind = c["kind"]
        assert isinstance(kind, str)
        shown = c.copy()
        if kind == "take":
            floor, action = c["floor"], c["action"]
            assert isinstance(floor, str) and isinstance(action, str)
            if floor != group:  # (a group's takes come one after the other: its texts once)
                group, texts = floor, _take_texts(state, floor)
            shown["label"] = texts[_action_code(action)]
        elif kind == "place":
            _place_choice(state, c, shown)
        elif kind == "move":
            _move_choice(state, c, shown)
        else:
            words = CHOICES.get(kind)
            shown["label"] = words(state, c) if words else kind
        out.append(shown)
    return out


# --------------------------------------------------------------------------- prompts


def _prompt_place(s: YState) -> str:
    if s.quarter < 0:
        return f"put one good in any quarter ({card_name('place_board')})"
    quarter = data.QUARTERS[s.quarter]
    return f"put {plural(s.pending, GOOD[quarter])} in the {quarter} quarter, one at a time"


def _prompt_keep(s: YState) -> str:
    shop = data.SHOP_IDS[s.queue[0]]
    owner = s.shops[s.queue[0]]
    if s.camels[owner] > 0:
        return f"pay a camel to keep your {good_in(shop)} in {shop}?"
    return f"let your {good_in(shop)} in {shop} go, or play a card first"


def _prompt_extra(s: YState) -> str:
    floor = data.FLOORS[s.floor]
    added = f" ({s.extra} added)" if s.extra else ""
    return f"add a card as one more die to the {floor} group?{added}"


def _prompt_cards(s: YState) -> str:
    return "play a card, or go back"


AMOUNTS: Final = {
    "score_gold": "how much gold do you pay, 1 point each?",
    "score_camels": "how many camels do you pay, 2 points each?",
    "swap_camels_gold": "camels to buy or sell, 1 gold each",
}


def _prompt_amount(s: YState) -> str:
    return f"{CARD_NAMES[s.card]}: {AMOUNTS[s.card]}"


def _prompt_after(s: YState) -> str:
    if s.players > 2 and not s.built_this_turn:
        return "play cards, build one building, or end your turn"
    return "play cards, or end your turn"


PROMPTS: Final[dict[str, Callable[[YState], str]]] = {
    "yellow": lambda s: (
        f"buy yellow dice ({data.YELLOW_COST} gold each, up to {data.YELLOW_MAX}) and roll"
    ),
    "turn": lambda s: "take a group of dice from the tower, or play a card",
    "place": _prompt_place,
    "steward": lambda s: (
        f"move the steward {plural(s.pending, 'square')} (one more or less per gold)"
    ),
    "send": lambda s: "choose which of the two goods goes to the caravan first",
    "keep": _prompt_keep,
    "build": lambda s: "choose the building your group pays for",
    "amount": _prompt_amount,
    "after": _prompt_after,
    "extra": _prompt_extra,
    "cards": _prompt_cards,
}


def prompt(state: YState, decision: Decision) -> str:
    words = PROMPTS.get(decision.kind)
    return words(state) if words else decision.kind


# --------------------------------------------------------------------------- events


def _who(e: Mapping[str, Any]) -> str:
    return _SEAT_NAMES[int(e["seat"])]


_FACES: Final[tuple[str, ...]] = tuple(str(v) for v in range(7))
"""A die's value (1 to 6) -> its digit (static: written once)."""


def _faces(dice: list[int]) -> str:
    """``1, 4, 4``: the values of rolled dice (their digits looked up, not written)."""
    return ", ".join([_FACES[v] for v in dice])


def _roll(s: YState, e: Mapping[str, Any]) -> str:
    whites: list[int] = e["white"]
    yellows: list[int] = e["yellow"]
    text = f"{_who(e)} rolls {plural(len(whites), 'white die', 'white dice')} ({_faces(whites)})"
    if yellows:
        text += f" and {plural(len(yellows), 'yellow die', 'yellow dice')} ({_faces(yellows)})"
        text += f", paying {e['gold_paid']} gold"
    return text


ACTIONS: Final = {
    "floor": "for its action",
    "steward": "to move the steward",
    "card": "to draw a card",
    "build": "to build",
}


def _took(s: YState, e: Mapping[str, Any]) -> str:
    text = (
        f"{_who(e)} takes the {e['floor']} group ({_dice(e['dice'])} showing {e['value']}) "
        f"{ACTIONS[e['action']]}"
    )
    cards = e.get("extra_dice")
    if cards:
        text += f", {plural(cards, 'card')} among its dice"
    dropped = e.get("yellow_discarded")
    if dropped:
        text += f"; {plural(dropped, 'yellow die', 'yellow dice')} of it do not count"
    return text


def _gain(s: YState, e: Mapping[str, Any]) -> str:
    if "camels" in e:
        return f"{_who(e)} gains {plural(e['camels'], 'camel')}"
    return f"{_who(e)} gains {e['gold']} gold"


def _moved(s: YState, e: Mapping[str, Any]) -> str:
    text = (
        f"{_who(e)} moves the steward from {e['from']} to {e['to']} "
        f"({plural(e['squares'], 'square')})"
    )
    return text + (f", paying {e['gold']} gold" if e["gold"] else "")


def _caravan(s: YState, e: Mapping[str, Any]) -> str:
    source = e["from"]
    if source == "reserve":
        what = f"a good from {_who(e)}'s reserve"
    elif source == "card":
        what = f"a good from {_who(e)}'s reserve ({card_name('place_caravan')})"
    else:
        what = f"{_who(e)}'s {good_in(source)} from {source}"
    return f"{what} goes to caravan place {e['place']} (row {e['row']})"


REASONS: Final = {
    "gold for VP": "Gold for points",
    "camels for VP": "Camels for points",
    "caravan week": "the caravan, at the week's end",
    "caravan full": "the caravan, which is full",
}


def _score(s: YState, e: Mapping[str, Any]) -> str:
    reason = str(e["reason"])
    category = e["category"]
    if category == "souks":
        why = f"the complete souk {reason}"
    elif category == "bazaar":
        why = f"the Bazaar, for the complete souk {reason}"
    elif category == "buildings":
        why = f"building {building_text(reason)}"
    elif category == "caravan_camels":
        why = reason  # "caravan place N"
    else:
        why = REASONS.get(reason, reason)
    return f"{_who(e)} scores {plural(e['points'], 'point')} for {why}"


DRAWN: Final = {
    "action": "a group's action",
    "no group": "no group left",
    "caravanserai": "Caravanserai",
}


def _draw(s: YState, e: Mapping[str, Any]) -> str:
    card = e.get("card")
    what = "a card" if card is None else card_name(str(card))
    return f"{_who(e)} draws {what} ({DRAWN.get(str(e['reason']), str(e['reason']))})"


def _swapped(s: YState, e: Mapping[str, Any]) -> str:
    n = int(e["camels"])
    if n > 0:
        return f"{_who(e)} buys {plural(n, 'camel')} for {n} gold"
    if n < 0:
        return f"{_who(e)} sells {plural(-n, 'camel')} for {-n} gold"
    return f"{_who(e)} exchanges nothing"


def _built(s: YState, e: Mapping[str, Any]) -> str:
    price = listed(
        [
            p
            for p in (
                plural(e["camels"], "camel") if e["camels"] else "",
                f"{e['gold']} gold" if e["gold"] else "",
            )
            if p
        ]
    )
    return f"{_who(e)} builds {building_text(e['building'])} for {price or 'nothing'}"


def _game_end(s: YState, e: Mapping[str, Any]) -> str:
    scores = list(e["scores"])
    best = max(scores)
    winners = [seat_name(i) for i, v in enumerate(scores) if v == best]
    if len(winners) == 1:
        return f"the game is over: {winners[0]} wins with {plural(best, 'point')}"
    return f"the game is over: {listed(winners)} share the victory with {best} points"


EVENTS: Final[dict[str, Text]] = {
    "day": lambda s, e: (
        f"week {e['week']}, day {e['day']}: "
        + ", ".join([_SEAT_NAMES[x] for x in e["order"]])
        + " play in this order"
    ),
    "roll": _roll,
    "take": _took,
    "gain": _gain,
    "extra_die": lambda s, e: f"{_who(e)} discards {card_name(e['card'])} as one more die",
    "place": lambda s, e: f"{_who(e)} puts a {good_in(e['shop'])} in shop {e['shop']}",
    "overflow": lambda s, e: (
        f"{_who(e)} finds no shop for {plural(e['goods'], 'more good')}: they stay in the reserve"
    ),
    "move": _moved,
    "caravan": _caravan,
    "score": _score,
    "keep": lambda s, e: (
        f"{_who(e)} pays a camel to keep their {good_in(e['shop'])} in {e['shop']}"
    ),
    "draw": _draw,
    "no_card": lambda s, e: f"no card is left for {_who(e)} to draw",
    "reshuffle": lambda s, e: (
        f"the discard pile is shuffled into a new deck of {plural(e['deck'], 'card')}"
    ),
    "play": lambda s, e: f"{_who(e)} plays {card_name(e['card'])}: {CARD_TEXTS[e['card']]}",
    "swap": _swapped,
    "build": _built,
    "pass": lambda s, e: f"{_who(e)} passes",
    "no_build": lambda s, e: (
        f"{_who(e)}'s group pays for nothing: no building is affordable any more"
    ),
    "end_turn": lambda s, e: f"{_who(e)} ends their turn",
    "yellow_removed": lambda s, e: "the yellow dice leave the tower",
    "day_end": lambda s, e: f"end of day {e['day']} of week {e['week']}",
    "city_emptied": lambda s, e: "every good in the city goes back to its owner's reserve",
    "caravan_emptied": lambda s, e: "the full caravan is emptied",
    "week_end": lambda s, e: f"end of week {e['week']}: the steward goes back to {e['steward']}",
    "game_end": _game_end,
}


def _text(state: YState, kind: str, fields: Mapping[str, Any]) -> str:
    words = EVENTS.get(kind)
    return words(state, fields) if words else kind


def narrate(state: YState, events: list[Event]) -> list[Event]:
    """The very ``events``, each with its ``text`` added last to its ``data`` and to each of
    its private parts (written from the data and that part).

    In place: the events come fresh from :func:`~games.yspahan.actions.apply`, made of maps of
    their own that nobody has seen yet, and a new :class:`~games.base.Event` per event would
    cost more than its text."""
    for e in events:
        data_ = e.data
        assert isinstance(data_, dict)
        if e.private:  # (a draw's; most events have no private part to iterate)
            for extra in e.private.values():
                assert isinstance(extra, dict)
                extra["text"] = _text(state, e.kind, {**data_, **extra})
        data_["text"] = _text(state, e.kind, data_)
    return events
