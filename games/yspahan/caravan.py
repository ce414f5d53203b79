"""The caravan: places filled in order, bottom row first, one good per camel.

Rows hold 4, 3 or 2 places with 4, 3 or 2 players. A good put on a place gives its owner the VP
printed on it at once (2, 1, 0 from the bottom row up; Boardspace values). Scoring (each week's end,
and at once when the caravan becomes full): each player scores their goods there times the value
(1, 2, 3) of the highest row holding one of them. A full caravan is emptied after it is scored, so
the next good of the same steward move starts a new caravan on its first place (YSP-CARAVAN-09).

The Caravanserai: «Le joueur pioche une carte chaque fois qu'une de ses marchandises est envoyée
dans la caravane» (YSP-BUILD-13). Every good of its owner that reaches the caravan draws one
card, by any means (YSP-OPEN-5, the seed over Boardspace's YSP-BUILD-14): a good the steward
sends from a shop, one sent from the reserve by a camel payment, and the caravan card's good.
The card is drawn after the good is placed (and after the caravan it fills is scored and
emptied), whoever's turn it is. When the deck is empty the discard pile is shuffled into a new
one (YSP-ACTION-07, as for every draw); with both empty no card is drawn (event ``no_card``) and
none is owed later.
"""

from __future__ import annotations

from games.base import Event
from games.yspahan import buildings, cards, data
from games.yspahan.scoring import award
from games.yspahan.state import YState, jlist


def capacity(players: int) -> int:
    """Places in the caravan for this player count: 12, 9 or 6."""
    return data.CARAVAN_ROWS * data.CARAVAN_PER_ROW[players]


def add(state: YState, seat: int, source: str, events: list[Event]) -> None:
    """Put a good of ``seat`` on the next place, score it, score and empty a full caravan, and
    draw a card for the Caravanserai."""
    place = len(state.caravan)
    row = place // data.CARAVAN_PER_ROW[state.players]
    state.caravan.append(seat)
    events.append(Event("caravan", {"seat": seat, "place": place, "row": row, "from": source}))
    points = data.CARAVAN_PLACE_VP[row]
    if points:
        events.append(award(state, seat, points, "caravan_camels", f"caravan place {place}"))
    if len(state.caravan) == capacity(state.players):
        score(state, events, "full")
        events.append(Event("caravan_emptied", {"goods": jlist(state.caravan)}))
        state.caravan.clear()
    if buildings.has(state, seat, data.CARAVANSERAI):
        events.extend(cards.draw(state, seat, "caravanserai"))


def points(caravan: list[int], players: int) -> list[int]:
    """What each seat would score for the caravan now."""
    per_row = data.CARAVAN_PER_ROW[players]
    count = [0] * players
    top = [0] * players
    for place, seat in enumerate(caravan):
        count[seat] += 1
        top[seat] = max(top[seat], data.CARAVAN_ROW_VALUE[place // per_row])
    return [c * t for c, t in zip(count, top, strict=True)]


def score(state: YState, events: list[Event], why: str) -> None:
    """Score the caravan (without emptying it): ``why`` is "week" or "full"."""
    for seat, pts in enumerate(points(state.caravan, state.players)):
        if pts:
            events.append(award(state, seat, pts, "caravan", f"caravan {why}"))
