"""Applying a legal choice: the trusted path, mutating the state and returning events.

:class:`~games.base.Match` has already checked that the choice is among the legal ones, so the
functions here only read the arguments they need. Each step writes events a client can log
("take", "gain", "place", "move", "caravan", "keep", "draw", "play", "build", "score", ...).

The steward's goods go through a queue (``state.queue``): the mover picks which of two goods goes
first, then each good's owner, if they have a camel, decides whether to pay one to keep the good
in its shop and send one from their reserve instead (YSP-STEWARD-12); the substitute takes the
kept good's place in the order (YSP-OPEN-10). Each good reaching the caravan draws a card for its
owner if they have the Caravanserai, whether it came from the shop or from the reserve.
"""

from __future__ import annotations

from games.base import JSON, Choice, Event
from games.yspahan import buildings, caravan, cards, city, data, steward, tower
from games.yspahan.decisions import group_size, place_shops
from games.yspahan.scoring import award
from games.yspahan.state import YState
from games.yspahan.turn import end_turn, roll


def _str(choice: Choice, key: str) -> str:
    value = choice[key]
    assert isinstance(value, str)
    return value


def _int(choice: Choice, key: str) -> int:
    value = choice[key]
    assert isinstance(value, int)
    return value


def apply(state: YState, choice: Choice) -> list[Event]:
    """Apply one legal choice of the pending decision."""
    events: list[Event] = []
    kind = choice["kind"]
    if kind == "take":
        _take(state, choice, events)
    elif kind == "place":
        _place(state, data.SHOP_INDEX[_str(choice, "shop")], events)
    elif kind == "play":
        _play(state, _str(choice, "card"), events)
    elif kind == "end":
        end_turn(state, events)
    elif kind == "move":
        _move(state, data.SQUARE_INDEX[_str(choice, "to")], _int(choice, "gold"), events)
    elif kind == "keep":
        _keep(state, bool(choice["pay"]), events)
    elif kind == "send":
        first = data.SHOP_INDEX[_str(choice, "shop")]
        state.queue.sort(key=lambda shop: shop != first)
        _send_queue(state, events)
    elif kind == "build":
        _build(state, data.BUILDING_INDEX[_str(choice, "building")], events)
    elif kind in ("pay", "swap"):
        _amount(state, choice, events)
    elif kind == "yellow":
        roll(state, _int(choice, "dice"), events)
    elif kind == "draw":
        events.extend(cards.draw(state, state.actor, "no group"))
        _action_done(state, events)
    elif kind == "pass":
        events.append(Event("pass", {"seat": state.actor}))
        _action_done(state, events)
    else:  # pragma: no cover - Match only passes legal choices
        raise AssertionError(f"unknown choice kind {kind!r}")
    return events


def _take(state: YState, choice: Choice, events: list[Event]) -> None:
    seat = state.actor
    name = _str(choice, "floor")
    floor = data.FLOORS.index(name)
    value = state.tower[floor][0]
    size = group_size(state, floor)
    dropped = state.tower[floor][1] + state.tower[floor][2] - size
    tower.clear(state.tower, floor)
    action = _str(choice, "action")
    data_: dict[str, JSON] = {
        "seat": seat,
        "floor": name,
        "value": value,
        "dice": size,
        "action": action,
    }
    if dropped:
        data_["yellow_discarded"] = dropped
    events.append(Event("take", data_))
    if action == "steward":
        state.pending = value
        state.stage = "steward"
    elif action == "card":
        events.extend(cards.draw(state, seat, "action"))
        _action_done(state, events)
    elif action == "build":
        state.stage = "build"
    else:
        extra = choice.get("extra")
        if isinstance(extra, str):
            cards.discard(state, seat, extra)
            events.append(Event("extra_die", {"seat": seat, "card": extra}))
            size += 1
        _floor_action(state, floor, size, events)


def _floor_action(state: YState, floor: int, size: int, events: list[Event]) -> None:
    """Camels, gold or goods, counted by the group's size (Pen, Stall, Crane add to it)."""
    seat = state.actor
    if floor == data.CAMELS_FLOOR:
        gain = size + (data.PEN_BONUS if buildings.has(state, seat, data.PEN) else 0)
        state.camels[seat] += gain
        events.append(Event("gain", {"seat": seat, "camels": gain}))
        _action_done(state, events)
    elif floor == data.GOLD_FLOOR:
        gain = size + (data.STALL_BONUS if buildings.has(state, seat, data.STALL) else 0)
        state.gold[seat] += gain
        events.append(Event("gain", {"seat": seat, "gold": gain}))
        _action_done(state, events)
    else:
        state.quarter = data.QUARTER_OF_FLOOR[floor]
        state.pending = size + (data.CRANE_BONUS if buildings.has(state, seat, data.CRANE) else 0)
        state.stage = "place"
        _placement_check(state, events)


def _place(state: YState, shop: int, events: list[Event]) -> None:
    seat = state.actor
    city.put(state, shop, seat)
    state.pending -= 1
    events.append(Event("place", {"seat": seat, "shop": data.SHOP_IDS[shop]}))
    _placement_check(state, events)


def _placement_check(state: YState, events: list[Event]) -> None:
    """Go on placing while goods are due and a shop is legal; the rest stay in the reserve."""
    if state.pending and place_shops(state):
        return
    if state.pending:
        events.append(Event("overflow", {"seat": state.actor, "goods": state.pending}))
    state.pending = 0
    state.quarter = -1
    if state.card:
        _card_done(state)
    else:
        _action_done(state, events)


def _move(state: YState, square: int, cost: int, events: list[Event]) -> None:
    seat = state.actor
    start = state.steward
    state.gold[seat] -= cost
    state.steward = square
    state.pending = 0
    events.append(
        Event(
            "move",
            {
                "seat": seat,
                "from": data.SQUARES[start].id,
                "to": data.SQUARES[square].id,
                "squares": data.DISTANCE[start][square],
                "gold": cost,
            },
        )
    )
    state.queue = steward.faced_goods(state.shops, square)
    if len(state.queue) > 1:
        state.stage = "send"
    else:
        _send_queue(state, events)


def _send_queue(state: YState, events: list[Event]) -> None:
    """Send the queued goods in order, stopping at each owner who could pay a camel."""
    while state.queue:
        owner = state.shops[state.queue[0]]
        if state.camels[owner] > 0:
            state.stage = "keep"
            return
        _to_caravan(state, state.queue.pop(0), False, events)
    _action_done(state, events)


def _keep(state: YState, pay: bool, events: list[Event]) -> None:
    _to_caravan(state, state.queue.pop(0), pay, events)
    _send_queue(state, events)


def _to_caravan(state: YState, shop: int, pay: bool, events: list[Event]) -> None:
    owner = state.shops[shop]
    if pay:
        state.camels[owner] -= 1
        events.append(Event("keep", {"seat": owner, "shop": data.SHOP_IDS[shop], "camels": 1}))
        source = "reserve"
    else:
        city.take(state, shop)
        source = data.SHOP_IDS[shop]
    caravan.add(state, owner, source, events)
    if buildings.has(state, owner, data.CARAVANSERAI):
        events.extend(cards.draw(state, owner, "caravanserai"))


def _build(state: YState, building: int, events: list[Event]) -> None:
    events.extend(buildings.build(state, state.actor, building))
    if state.players == 2:
        _action_done(state, events)
    else:
        state.built_this_turn = True


def _play(state: YState, card: str, events: list[Event]) -> None:
    seat = state.actor
    cards.discard(state, seat, card)
    events.append(Event("play", {"seat": seat, "card": card}))
    if card == "3_camels":
        state.camels[seat] += data.CARD_GAIN
        events.append(Event("gain", {"seat": seat, "camels": data.CARD_GAIN}))
    elif card == "3_gold":
        state.gold[seat] += data.CARD_GAIN
        events.append(Event("gain", {"seat": seat, "gold": data.CARD_GAIN}))
    elif card == "no_camels":
        state.no_camels[seat] += 1
    elif card == "no_gold":
        state.no_gold[seat] += 1
    elif card == "place_caravan":
        caravan.add(state, seat, "card", events)
    else:
        state.resume = state.stage
        state.card = card
        if card == "place_board":
            state.stage = "place"
            state.quarter = -1
            state.pending = 1
        else:
            state.stage = "amount"


def _amount(state: YState, choice: Choice, events: list[Event]) -> None:
    seat = state.actor
    n = _int(choice, "gold") if "gold" in choice else _int(choice, "camels")
    if state.card == "score_gold":
        state.gold[seat] -= n
        if n:
            events.append(award(state, seat, n, "cards", "gold for VP"))
    elif state.card == "score_camels":
        state.camels[seat] -= n
        if n:
            events.append(award(state, seat, 2 * n, "cards", "camels for VP"))
    else:
        state.camels[seat] += n
        state.gold[seat] -= n
        events.append(Event("swap", {"seat": seat, "camels": n, "gold": -n}))
    _card_done(state)


def _card_done(state: YState) -> None:
    state.stage = state.resume
    state.resume = ""
    state.card = ""


def _action_done(state: YState, events: list[Event]) -> None:
    """The dice action is over: yellow dice leave (3-4 players, roller), then the after stage."""
    state.stage = "after"
    state.pending = 0
    state.quarter = -1
    state.queue = []
    if state.players > 2 and state.turn == 0 and state.yellow:
        tower.remove_yellow(state.tower)
        events.append(Event("yellow_removed", {"dice": state.yellow}))
        state.yellow = 0
