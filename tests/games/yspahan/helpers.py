"""Helpers for scripted Yspahan tests: positions built by hand, choices by content, invariants."""

from __future__ import annotations

from typing import Any

from games.base import JSON, Choice, Event, Match
from games.yspahan import GAME, data
from games.yspahan.caravan import capacity
from games.yspahan.state import CATEGORIES, YState, occupancy


def new_state(players: int = 4, seed: int = 0) -> YState:
    """A fresh match state (day 1, the roller asked for yellow dice)."""
    return GAME.setup(players, {}, seed)


def turn_state(
    players: int = 4,
    *,
    seat: int = 0,
    floors: dict[str, tuple[int, int, int]] | None = None,
    seed: int = 0,
) -> YState:
    """A state where ``seat`` starts its turn as the day's roller, with the given tower.

    ``floors`` maps a floor name to ``(value, white, yellow)``; floors not named are empty. The
    hands are emptied (the deck keeps all 18 cards) so that tests add exactly the cards they need.
    """
    state = new_state(players, seed)
    state.pawn = seat
    n = players
    state.order = [seat, 1 - seat, seat] if n == 2 else [(seat + i) % n for i in range(n)]
    state.turn = 0
    state.actor = seat
    state.stage = "turn"
    state.tower = [[0, 0, 0] for _ in data.FLOORS]
    for name, floor in (floors or {}).items():
        state.tower[data.FLOORS.index(name)] = list(floor)
    for hand in state.hands:
        state.deck.extend(hand)
        hand.clear()
    return state


def give_card(state: YState, seat: int, card: str) -> None:
    """Move one ``card`` from the deck (or the discard pile) to ``seat``'s hand."""
    pile = state.deck if card in state.deck else state.discard
    pile.remove(card)
    state.hands[seat].append(card)


def put_goods(state: YState, seat: int, *shops: str) -> None:
    """Put goods of ``seat`` in the named shops, keeping the incremental occupancy right."""
    from games.yspahan.city import put

    for shop in shops:
        put(state, data.SHOP_INDEX[shop], seat)


def act(match: Match[YState], **choice: JSON) -> list[Event]:
    """Play the legal choice equal to ``choice`` for whoever must decide."""
    decision = match.decision
    assert decision is not None, "the match is over"
    return match.act(decision.seat, dict(choice))


def shared(state: YState) -> Any:
    """The shared view, typed loosely so that tests can index into it."""
    return GAME.shared_view(state)


def choices(match: Match[YState]) -> list[Choice]:
    decision = match.decision
    assert decision is not None
    return list(decision.choices)


def kinds(match: Match[YState]) -> set[Any]:
    return {c["kind"] for c in choices(match)}


def facts(event: Event) -> dict[str, JSON]:
    """An event's public fields without its ``text`` (the wording is tested on its own)."""
    return {k: v for k, v in event.data.items() if k != "text"}


def score_events(events: list[Event], seat: int | None = None) -> list[dict[str, JSON]]:
    """The data of the score events (of one seat if given)."""
    return [
        dict(e.data)
        for e in events
        if e.kind == "score" and (seat is None or e.data["seat"] == seat)
    ]


def points(events: list[Event], seat: int) -> int:
    total = 0
    for e in score_events(events, seat):
        value = e["points"]
        assert isinstance(value, int)
        total += value
    return total


def check_state(state: YState) -> None:
    """Invariants that hold after every step of every match."""
    n = state.players
    for seat in range(n):
        assert state.gold[seat] >= 0, "negative gold"
        assert state.camels[seat] >= 0, "negative camels"
        assert state.no_camels[seat] >= 0 and state.no_gold[seat] >= 0
        assert state.score[seat] == sum(state.breakdown[seat][c] for c in CATEGORIES)
        assert len(set(state.built[seat])) == len(state.built[seat]) <= len(data.BUILDINGS)
    owners, fills = occupancy(state.shops)
    assert owners == state.souk_owner and fills == state.souk_fill, "souk occupancy drifted"
    assert len(state.caravan) < capacity(n), "a full caravan must be scored and emptied"
    cards = sorted(state.deck + state.discard + [c for h in state.hands for c in h])
    assert cards == sorted(data.DECK), "cards are conserved"
    if state.stage != "over":
        assert 1 <= state.week <= data.WEEKS and 1 <= state.day <= data.DAYS_PER_WEEK


class Ledger:
    """Goods and points followed from the events alone, compared with the state after each step.

    Every good leaves a reserve for a shop (``place``), for the caravan (``caravan`` from the
    reserve or the card) or for a building (``build``), and comes back when the city or the
    caravan is emptied; the counts seen this way must equal the goods in the city, the caravan
    and the buildings. Every point must come from a ``score`` event.
    """

    def __init__(self, players: int) -> None:
        self.city = [0] * players
        self.caravan = [0] * players
        self.buildings = [0] * players
        self.points = [0] * players

    def feed(self, events: list[Event]) -> None:
        for event in events:
            d = event.data
            kind = event.kind
            if kind == "score":
                self.points[_i(d["seat"])] += _i(d["points"])
            elif kind == "place":
                self.city[_i(d["seat"])] += 1
            elif kind == "caravan":
                seat = _i(d["seat"])
                self.caravan[seat] += 1
                if d["from"] not in ("reserve", "card"):
                    self.city[seat] -= 1
            elif kind == "caravan_emptied":
                self.caravan = [0] * len(self.caravan)
            elif kind == "city_emptied":
                self.city = [0] * len(self.city)
            elif kind == "build":
                self.buildings[_i(d["seat"])] += 1

    def check(self, state: YState) -> None:
        for seat in range(state.players):
            assert self.points[seat] == state.score[seat], "score != sum of score events"
            assert self.city[seat] == sum(1 for s in state.shops if s == seat), "city goods"
            assert self.caravan[seat] == state.caravan.count(seat), "caravan goods"
            assert self.buildings[seat] == len(state.built[seat]), "building markers"


def _i(value: JSON) -> int:
    assert isinstance(value, int)
    return value
