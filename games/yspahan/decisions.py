"""Who must decide now and the legal choices, one small decision at a time.

Every choice is a small map whose ``kind`` names what it does; lists are built in a stable order
(floors bottom to top, then the actions, cards in card order, shops and squares in data order,
the ``cards`` choice last), so a client may answer with an index. The choice kinds per decision:

==========  ============================================================================
yellow      ``{"kind": "yellow", "dice": n}`` (0 to 3, as far as gold pays)
turn        ``{"kind": "take", "floor", "action": "floor" | "steward" | "card" | "build"}``,
            ``{"kind": "play", "card"}``, ``{"kind": "draw"}`` / ``{"kind": "pass"}``
extra       ``{"kind": "extra", "card": card}`` (one more die), ``{"kind": "extra", "card":
            None}`` (no more: do the floor action), ``{"kind": "cards"}``
place       ``{"kind": "place", "shop"}``, ``{"kind": "cards"}``
steward     ``{"kind": "move", "to": square, "gold": cost}``, ``{"kind": "cards"}``
send        ``{"kind": "send", "shop"}`` (which of two faced goods goes first),
            ``{"kind": "cards"}``
keep        ``{"kind": "keep", "shop", "pay": bool}`` (the good's owner decides; ``pay``
            true only with a camel), ``{"kind": "cards"}`` (the actor's own good only)
build       ``{"kind": "build", "building"}`` (2 players: what a dice group pays for),
            ``{"kind": "cards"}``
amount      ``{"kind": "pay", "gold" | "camels": n}`` or ``{"kind": "swap", "camels": n}``
cards       ``{"kind": "play", "card"}``, ``{"kind": "back"}`` (back to the decision)
after       ``{"kind": "play", "card"}``, ``{"kind": "build", "building"}``, ``{"kind": "end"}``
==========  ============================================================================

Cards (YSP-CARD-01, -02, -05, YSP-OPEN-5, YSP-OPEN-6):

- Extra dice: the floor action of a group (the only action the extra die changes, YSP-CARD-04)
  is taken with ``take``; a player holding cards is then asked, card by card, for extra dice
  (``extra``), as many as they like, until they stop or run out of cards. The group stays on the
  tower meanwhile; the ``take`` event comes once the group leaves it, with every die counted.
- Effects, at any decision of one's own turn: ``turn`` and ``after`` list the card plays
  themselves (``play``); every other decision of the turn (``extra``, ``place``, ``steward``,
  ``send``, ``build``, and ``keep`` for the actor's own good) carries one ``cards`` choice when
  some card is playable, which opens the ``cards`` decision: a card to play, or ``back``. After
  the card (and its own follow-up, ``amount`` or the one good's ``place``) the interrupted
  decision comes back, asked afresh. A card's own follow-up is not interrupted by another card.
  Not during the yellow dice (the tower is filled before the turns), nor in another player's
  turn: an owner asked to keep a good in someone else's turn plays no card.

Questions with only one possible answer are not asked: the yellow dice of a roller without gold
(the dice are rolled at once), extra dice with no card in hand (the action goes on), and the
camel payment of an owner without camels (the good goes), unless that owner is the actor and
holds a card (a card may give the camel). Whether a question is asked depends on public facts
only (gold, camels, hand sizes), never on which cards a hand holds: the actor's own good is
asked about whenever their hand is not empty, even with only "let it go" to answer (a
one-good card with no legal shop is their only card).
"""

from __future__ import annotations

from typing import Final

from games.base import Choice, Decision
from games.yspahan import buildings, cards, city, data, steward, tower
from games.yspahan.state import YState

CARDS: Final[Choice] = {"kind": "cards"}
"""The choice that opens the card list in the middle of a decision."""


def decision(state: YState) -> Decision | None:
    """The pending decision, or None once the match is over."""
    stage = state.stage
    seat = state.actor
    if stage == "turn":
        return Decision(seat, "turn", turn_choices(state))
    if stage == "after":
        return Decision(seat, "after", after_choices(state))
    if stage == "keep":
        shop = state.queue[0]
        owner = state.shops[shop]
        sid = data.SHOP_IDS[shop]
        out: list[Choice] = [{"kind": "keep", "shop": sid, "pay": False}]
        if state.camels[owner] > 0:
            out.append({"kind": "keep", "shop": sid, "pay": True})
        if owner == seat:
            _with_cards(state, out)
        return Decision(owner, "keep", out)
    if stage == "yellow":
        top = min(data.YELLOW_MAX, state.gold[seat] // data.YELLOW_COST)
        return Decision(seat, "yellow", [{"kind": "yellow", "dice": n} for n in range(top + 1)])
    if stage == "amount":
        return Decision(seat, "amount", cards.amount_choices(state, seat, state.card))
    if stage == "cards":
        out = [{"kind": "play", "card": k} for k in cards.playable(state, seat)]
        out.append({"kind": "back"})
        return Decision(seat, "cards", out)
    if stage == "over":
        return None
    out = _STAGE_CHOICES[stage](state)
    if not (stage == "place" and state.card):
        _with_cards(state, out)
    return Decision(seat, stage, out)


def _with_cards(state: YState, out: list[Choice]) -> None:
    if cards.playable(state, state.actor):
        out.append(dict(CARDS))


def keep_asked(state: YState, owner: int) -> bool:
    """Whether ``owner`` is asked to keep their faced good: with a camel, or as the actor holding
    a card (they may play one first, YSP-OPEN-6, and a card may give them the camel).

    Only public facts decide (camels, whether a hand is empty), so that being asked tells the
    others nothing about which cards the actor holds."""
    return state.camels[owner] > 0 or (owner == state.actor and bool(state.hands[owner]))


def place_shops(state: YState) -> list[int]:
    """Legal shops for the good being placed (one quarter, or any with the one-good card)."""
    if state.card == "place_board":
        return city.legal_shops_anywhere(state, state.actor)
    return city.legal_shops(state, state.actor, state.quarter)


def group_size(state: YState, floor: int) -> int:
    """Dice of ``floor`` that count for the actor; 0 when the group is not theirs to take."""
    return tower.size_for(state.tower[floor], state.actor == state.order[0], state.players)


_TAKES: Final[tuple[tuple[Choice, Choice, Choice, Choice], ...]] = tuple(
    (
        {"kind": "take", "floor": name, "action": "floor"},
        {"kind": "take", "floor": name, "action": "steward"},
        {"kind": "take", "floor": name, "action": "card"},
        {"kind": "take", "floor": name, "action": "build"},
    )
    for name in data.FLOORS
)
"""Per floor, the models of its take choices, never handed out: each choice is a copy of one
(compiled, copying a small map costs less than building it: a third of the instructions), so
that no two decisions share a map (a legal choice goes to the log and the undo steps as it
is). Not for the choices with a field to set: setting it costs what the copy saves."""


def turn_choices(state: YState) -> list[Choice]:
    """Take a group (one of its actions), or draw/pass with no group; plus card plays."""
    seat = state.actor
    can_build = state.players == 2 and bool(buildings.affordable(state, seat))
    out: list[Choice] = []
    for floor in range(len(data.FLOORS)):
        if not group_size(state, floor):
            continue
        takes = _TAKES[floor]
        out.append(takes[0].copy())
        out.append(takes[1].copy())
        out.append(takes[2].copy())
        if can_build:
            out.append(takes[3].copy())
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


def _extra_choices(state: YState) -> list[Choice]:
    hand = state.hands[state.actor]
    out: list[Choice] = [{"kind": "extra", "card": k} for k in data.CARD_KINDS if k in hand]
    out.append({"kind": "extra", "card": None})
    return out


def _place_choices(state: YState) -> list[Choice]:
    return [{"kind": "place", "shop": data.SHOP_IDS[s]} for s in place_shops(state)]


def _steward_choices(state: YState) -> list[Choice]:
    seat = state.actor
    hammam = buildings.has(state, seat, data.HAMMAM)
    moves = steward.destinations(state.steward, state.pending, state.gold[seat], hammam)
    return [{"kind": "move", "to": data.SQUARES[sq].id, "gold": cost} for sq, cost in moves]


def _send_choices(state: YState) -> list[Choice]:
    return [{"kind": "send", "shop": data.SHOP_IDS[s]} for s in state.queue]


def _build_choices(state: YState) -> list[Choice]:
    return [
        {"kind": "build", "building": data.BUILDINGS[b].id}
        for b in buildings.affordable(state, state.actor)
    ]


_STAGE_CHOICES: Final = {
    "extra": _extra_choices,
    "place": _place_choices,
    "steward": _steward_choices,
    "send": _send_choices,
    "build": _build_choices,
}
