"""Who must decide now and the legal choices, one small decision at a time.

Every choice is a small map whose ``kind`` names what it does; lists are built in a stable order
(floors bottom to top, then the three actions, cards in card order, shops and squares in data
order), so a client may answer with an index. The choice kinds per decision:

==========  ============================================================================
yellow      ``{"kind": "yellow", "dice": n}`` (0 to 3, as far as gold pays)
turn        ``{"kind": "take", "floor", "action": "floor", "extra": None | card}``,
            ``{"kind": "take", "floor", "action": "steward" | "card" | "build"}``,
            ``{"kind": "play", "card"}``, ``{"kind": "draw"}`` / ``{"kind": "pass"}``
place       ``{"kind": "place", "shop"}``
steward     ``{"kind": "move", "to": square, "gold": cost}``
send        ``{"kind": "send", "shop"}`` (which of two faced goods goes first)
keep        ``{"kind": "keep", "shop", "pay": bool}`` (the good's owner decides)
build       ``{"kind": "build", "building"}`` (2 players: what a dice group pays for)
amount      ``{"kind": "pay", "gold" | "camels": n}`` or ``{"kind": "swap", "camels": n}``
after       ``{"kind": "play", "card"}``, ``{"kind": "build", "building"}``, ``{"kind": "end"}``
==========  ============================================================================

``extra`` names the card discarded as one more die (YSP-CARD-02); it is offered only with the
floor action, the only one the extra die changes (YSP-CARD-04). Two questions with only one
possible answer are never asked: the yellow dice of a roller without gold (the dice are rolled at
once), and the camel payment of an owner without camels (the good goes).
"""

from __future__ import annotations

from games.base import Choice, Decision
from games.yspahan import buildings, cards, city, data, steward, tower
from games.yspahan.state import YState


def decision(state: YState) -> Decision | None:
    """The pending decision, or None once the match is over."""
    stage = state.stage
    seat = state.actor
    if stage == "turn":
        return Decision(seat, "turn", turn_choices(state))
    if stage == "after":
        return Decision(seat, "after", after_choices(state))
    if stage == "place":
        return Decision(
            seat, "place", [{"kind": "place", "shop": data.SHOP_IDS[s]} for s in place_shops(state)]
        )
    if stage == "steward":
        hammam = buildings.has(state, seat, data.HAMMAM)
        moves = steward.destinations(state.steward, state.pending, state.gold[seat], hammam)
        return Decision(
            seat,
            "steward",
            [{"kind": "move", "to": data.SQUARES[sq].id, "gold": cost} for sq, cost in moves],
        )
    if stage == "keep":
        shop = state.queue[0]
        owner = state.shops[shop]
        sid = data.SHOP_IDS[shop]
        return Decision(
            owner,
            "keep",
            [
                {"kind": "keep", "shop": sid, "pay": False},
                {"kind": "keep", "shop": sid, "pay": True},
            ],
        )
    if stage == "send":
        return Decision(
            seat, "send", [{"kind": "send", "shop": data.SHOP_IDS[s]} for s in state.queue]
        )
    if stage == "yellow":
        top = min(data.YELLOW_MAX, state.gold[seat] // data.YELLOW_COST)
        return Decision(seat, "yellow", [{"kind": "yellow", "dice": n} for n in range(top + 1)])
    if stage == "build":
        return Decision(seat, "build", _build_choices(state))
    if stage == "amount":
        return Decision(seat, "amount", cards.amount_choices(state, seat, state.card))
    return None


def place_shops(state: YState) -> list[int]:
    """Legal shops for the good being placed (one quarter, or any with the one-good card)."""
    if state.quarter < 0:
        return city.legal_shops_anywhere(state, state.actor)
    return city.legal_shops(state, state.actor, state.quarter)


def group_size(state: YState, floor: int) -> int:
    """Dice of ``floor`` that count for the actor; 0 when the group is not theirs to take."""
    return tower.size_for(state.tower[floor], state.actor == state.order[0], state.players)


def turn_choices(state: YState) -> list[Choice]:
    """Take a group (one of its actions), or draw/pass with no group; plus card plays."""
    seat = state.actor
    hand = state.hands[seat]
    extras: list[str | None] = [None]
    extras += [k for k in data.CARD_KINDS if k in hand]
    can_build = state.players == 2 and bool(buildings.affordable(state, seat))
    out: list[Choice] = []
    for floor, name in enumerate(data.FLOORS):
        if not group_size(state, floor):
            continue
        for extra in extras:
            out.append({"kind": "take", "floor": name, "action": "floor", "extra": extra})
        out.append({"kind": "take", "floor": name, "action": "steward"})
        out.append({"kind": "take", "floor": name, "action": "card"})
        if can_build:
            out.append({"kind": "take", "floor": name, "action": "build"})
    if not out:
        out.append({"kind": "draw"} if cards.can_draw(state) else {"kind": "pass"})
    out.extend({"kind": "play", "card": k} for k in cards.playable(state, seat))
    return out


def after_choices(state: YState) -> list[Choice]:
    """After the action: play cards, build once (3-4 players), or end the turn."""
    seat = state.actor
    out: list[Choice] = [{"kind": "play", "card": k} for k in cards.playable(state, seat)]
    if state.players > 2 and not state.built_this_turn:
        out.extend(_build_choices(state))
    out.append({"kind": "end"})
    return out


def _build_choices(state: YState) -> list[Choice]:
    return [
        {"kind": "build", "building": data.BUILDINGS[b].id}
        for b in buildings.affordable(state, state.actor)
    ]
