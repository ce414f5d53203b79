"""Applying a legal choice: the trusted path, mutating the state and returning events.

:class:`~games.base.Match` has already checked that the choice is among the legal ones, so the
functions here only read the arguments they need. Each step writes events a client can log
("take", "gain", "place", "move", "caravan", "keep", "draw", "play", "build", "score", ...).

The steward's goods go through a queue (``state.queue``): the mover picks which of two goods goes
first, then each good's owner, if they have a camel, decides whether to pay one to keep the good
in its shop and send one from their reserve instead (YSP-STEWARD-12); the substitute takes the
kept good's place in the order (YSP-OPEN-10). Each good reaching the caravan draws a card for its
owner if they have the Caravanserai, however it got there (:func:`games.yspahan.caravan.add`).

A card played for its effect interrupts the decision it is played at (``state.resume``); once it
is done, :func:`_resume` asks that decision again, for the card may have changed it: goods
still to place may have lost their last legal shop, an owner may have gained (or spent) the
camel a keep needs, a 2-player build may no longer be affordable (the group then pays for
nothing: event ``no_build``), the player may have no card left to add as an extra die.

Events say what happened. ``take`` comes when the group leaves the tower, after its extra
dice: ``dice`` counts every die the action uses (the group's own, cards added), ``extra_dice``
the cards among them. ``yellow_removed`` counts the yellow dice taken off the tower after the
roller's action (those the roller took in their group went with it); it is sent only when
some were left.

Choices of the previous release in a stored log (replayed through this trusted path after an
upgrade) still apply with their meaning: a ``take`` of the floor action naming its one
``extra`` card (or ``"extra": None``) adds that card and does the action at once.
"""

from __future__ import annotations

from games.base import JSON, Choice, Event
from games.yspahan import buildings, caravan, cards, city, data, steward, tower
from games.yspahan.decisions import group_size, keep_asked, place_shops
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
    elif kind == "extra":
        _extra(state, choice.get("card"), events)
    elif kind == "place":
        _place(state, data.SHOP_INDEX[_str(choice, "shop")], events)
    elif kind == "play":
        _play(state, _str(choice, "card"), events)
    elif kind == "cards":
        state.resume = state.stage
        state.stage = "cards"
    elif kind == "back":
        state.stage = state.resume
        state.resume = ""
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
    floor = data.FLOORS.index(_str(choice, "floor"))
    action = _str(choice, "action")
    if action == "floor" and "extra" in choice:  # a choice of the previous release
        old = choice["extra"]
        if isinstance(old, str):
            _add_die(state, old, events)
        _take_group(state, floor, action, events)
    elif action == "floor" and state.hands[state.actor]:
        state.floor = floor
        state.stage = "extra"
    else:
        _take_group(state, floor, action, events)


def _add_die(state: YState, card: str, events: list[Event]) -> None:
    seat = state.actor
    cards.discard(state, seat, card)
    state.extra += 1
    events.append(Event("extra_die", {"seat": seat, "card": card}))


def _extra(state: YState, card: JSON, events: list[Event]) -> None:
    """One more card as an extra die, or none: then the group is taken and its action done."""
    if isinstance(card, str):
        _add_die(state, card, events)
        if state.hands[state.actor]:
            return
    _take_group(state, state.floor, "floor", events)


def _take_group(state: YState, floor: int, action: str, events: list[Event]) -> None:
    """The group leaves the tower (event ``take``) and its action begins."""
    seat = state.actor
    name = data.FLOORS[floor]
    value = state.tower[floor][0]
    size = group_size(state, floor)
    dropped = state.tower[floor][1] + state.tower[floor][2] - size
    extra = state.extra
    state.floor = -1
    state.extra = 0
    tower.clear(state.tower, floor)
    data_: dict[str, JSON] = {
        "seat": seat,
        "floor": name,
        "value": value,
        "dice": size + extra,
        "action": action,
    }
    if extra:
        data_["extra_dice"] = extra
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
        _floor_action(state, floor, size + extra, events)


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
    events.append(Event("place", {"seat": seat, "shop": data.SHOP_IDS[shop]}))
    if state.card == "place_board":
        _card_done(state, events)
        return
    state.pending -= 1
    _placement_check(state, events)


def _placement_check(state: YState, events: list[Event]) -> None:
    """Go on placing while goods are due and a shop is legal; the rest stay in the reserve."""
    if state.pending and place_shops(state):
        return
    if state.pending:
        events.append(Event("overflow", {"seat": state.actor, "goods": state.pending}))
    state.pending = 0
    state.quarter = -1
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
        if keep_asked(state, owner):
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


def _build(state: YState, building: int, events: list[Event]) -> None:
    events.extend(buildings.build(state, state.actor, building))
    if state.players == 2:
        _action_done(state, events)
    else:
        state.built_this_turn = True


def _play(state: YState, card: str, events: list[Event]) -> None:
    """Discard ``card`` for its effect, in the middle of the decision it interrupts."""
    seat = state.actor
    interrupted = state.resume if state.stage == "cards" else state.stage
    cards.discard(state, seat, card)
    events.append(Event("play", {"seat": seat, "card": card}))
    state.stage = interrupted
    state.resume = ""
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
        state.resume = interrupted
        state.card = card
        state.stage = "place" if card == "place_board" else "amount"
        return
    _resume(state, events)


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
    _card_done(state, events)


def _card_done(state: YState, events: list[Event]) -> None:
    state.stage = state.resume
    state.resume = ""
    state.card = ""
    _resume(state, events)


def _resume(state: YState, events: list[Event]) -> None:
    """Back at the decision a card interrupted: go on from it as it stands now."""
    stage = state.stage
    if stage == "place":
        _placement_check(state, events)
    elif stage == "keep":
        _send_queue(state, events)
    elif stage == "build" and not buildings.affordable(state, state.actor):
        events.append(Event("no_build", {"seat": state.actor}))
        _action_done(state, events)
    elif stage == "extra" and not state.hands[state.actor]:
        _take_group(state, state.floor, "floor", events)


def _action_done(state: YState, events: list[Event]) -> None:
    """The dice action is over: yellow dice leave (3-4 players, roller), then the after stage."""
    state.stage = "after"
    state.pending = 0
    state.quarter = -1
    state.queue = []
    if state.players > 2 and state.turn == 0 and state.yellow:
        left = sum(floor[2] for floor in state.tower)
        tower.remove_yellow(state.tower)
        if left:
            events.append(Event("yellow_removed", {"dice": left}))
        state.yellow = 0
