"""The deck, drawing, and what each card does when played for its effect.

Seed, "Les cartes": «Au cours de son tour de jeu, le joueur peut jouer autant de cartes en sa
possession qu'il le souhaite», each either discarded as one extra die on the group being taken
(any number of them on one group, YSP-OPEN-5) or discarded for its effect «à tout moment» of that
turn (YSP-OPEN-6; when, exactly, is in :mod:`games.yspahan.decisions`). Every played card goes to
the face-up discard pile. When a card is due and the deck is empty, the discard pile is
shuffled into a new deck (Boardspace); with both empty nothing is drawn.

The nine effects (Boardspace's card list, the only source for them): 3 camels; 3 gold; the next
building without its camels; the next building without its gold; one good from the reserve on
the next caravan place; one good in any quarter under the souk rules; up to 10 gold for 1 VP
each; up to 4 camels for 2 VP each; exchange camels and gold 1 for 1.

Build-without credits stack (two such cards give two credits of that kind) and stay until a
building is bought, even in a later turn; a purchase uses one credit of a kind only when the
building's price has a non-zero amount of that kind (the Pen costs no gold, so it leaves a
no-gold credit alone).
"""

from __future__ import annotations

from games.base import JSON, Choice, Event
from games.yspahan import data
from games.yspahan.city import legal_shops_anywhere
from games.yspahan.state import YState

IMMEDIATE = ("3_camels", "3_gold", "no_camels", "no_gold", "place_caravan")
"""Cards whose effect needs no further choice."""
AMOUNT = ("score_gold", "score_camels", "swap_camels_gold")
"""Cards whose effect asks for an amount (a follow-up ``amount`` decision)."""


def draw(state: YState, seat: int, reason: str) -> list[Event]:
    """``seat`` takes the top card; only the drawer sees which (YSP-VIEW-03)."""
    events: list[Event] = []
    if not state.deck and state.discard:
        state.deck = state.discard
        state.discard = []
        state.rng.shuffle(state.deck)
        events.append(Event("reshuffle", {"deck": len(state.deck)}))
    if not state.deck:
        events.append(Event("no_card", {"seat": seat, "reason": reason}))
        return events
    card = state.deck.pop()
    state.hands[seat].append(card)
    events.append(Event("draw", {"seat": seat, "reason": reason}, {seat: {"card": card}}))
    return events


def can_draw(state: YState) -> bool:
    """Whether a card could be drawn now (from the deck, or the discard pile reshuffled)."""
    return bool(state.deck or state.discard)


def discard(state: YState, seat: int, card: str) -> None:
    """Move ``card`` from the hand of ``seat`` to the discard pile."""
    state.hands[seat].remove(card)
    state.discard.append(card)


def playable(state: YState, seat: int) -> list[str]:
    """Distinct card kinds ``seat`` may play for their effect now, in card order.

    The one-good card is offered only when some shop is legal for that player.
    """
    hand = state.hands[seat]
    out: list[str] = []
    if not hand:  # (most hands, most decisions: no kind to look for)
        return out
    for kind in data.CARD_KINDS:
        if kind in hand:
            if kind == "place_board" and not legal_shops_anywhere(state, seat):
                continue
            out.append(kind)
    return out


def amount_choices(state: YState, seat: int, card: str) -> list[Choice]:
    """The follow-up choices of an amount card: how much to pay or exchange, 0 included."""
    if card == "score_gold":
        top = min(data.SCORE_GOLD_MAX, state.gold[seat])
        return [{"kind": "pay", "gold": n} for n in range(top + 1)]
    if card == "score_camels":
        top = min(data.SCORE_CAMELS_MAX, state.camels[seat])
        return [{"kind": "pay", "camels": n} for n in range(top + 1)]
    # Exchange: ``camels`` is the change in camels, paid for by the opposite change in gold.
    return [{"kind": "swap", "camels": n} for n in range(-state.camels[seat], state.gold[seat] + 1)]


def amount_of(choice: Choice) -> int:
    """The number carried by an amount choice."""
    value: JSON = choice.get("gold", choice.get("camels", 0))
    assert isinstance(value, int)
    return value
