"""The calendar: days, turn order, the end of a day, the week scoring and the end of the match.

Seed, "Le tour de jeu" and "Fin de la journée": each day the first player fills the tower, then
everyone acts clockwise from them; at the end of the day the tower is cleared, the week is scored
after day 7, the day marker advances and the first-player pawn passes clockwise.

Special orders:

- 4 players, day 7 of week 3: players act in increasing order of VP; ties keep the natural
  clockwise order counted from that day's pawn holder (YSP-OPEN-3), and the player who acts first
  also buys the yellow dice and rolls (YSP-OPEN-4, as Boardspace). The pawn itself does not move
  for this.
- 2 players (Ystari's 2-player rules): the first player changes every day; each day has three
  turns (first, other, first); on the last day the player with fewer VP is first, a tie keeping
  the usual alternation.
"""

from __future__ import annotations

from games.base import Event
from games.yspahan import caravan, city, data, tower
from games.yspahan.scoring import score_souks
from games.yspahan.state import YState, jlist


def last_day(state: YState) -> bool:
    """Day 7 of week 3."""
    return state.week == data.WEEKS and state.day == data.DAYS_PER_WEEK


def day_order(state: YState) -> list[int]:
    """The seats in the order they act today (2 players: first, other, first)."""
    n = state.players
    natural = [(state.pawn + i) % n for i in range(n)]
    if n == 2:
        first = state.pawn
        if last_day(state) and state.score[0] != state.score[1]:
            first = 0 if state.score[0] < state.score[1] else 1
        return [first, 1 - first, first]
    if n == 4 and last_day(state):
        return sorted(natural, key=lambda seat: state.score[seat])
    return natural


def start_day(state: YState, events: list[Event]) -> None:
    """Set the day's order and ask the roller for yellow dice (or roll at once with no gold)."""
    state.order = day_order(state)
    state.turn = 0
    state.actor = state.order[0]
    state.yellow = 0
    events.append(
        Event(
            "day",
            {"week": state.week, "day": state.day, "order": jlist(state.order)},
        )
    )
    if state.gold[state.actor] >= data.YELLOW_COST:
        state.stage = "yellow"
    else:
        roll(state, 0, events)


def roll(state: YState, yellow: int, events: list[Event]) -> None:
    """The roller pays for ``yellow`` dice, rolls, fills the tower, and the first turn begins."""
    roller = state.order[0]
    state.gold[roller] -= yellow * data.YELLOW_COST
    state.yellow = yellow
    whites, yellows = tower.roll(state.rng, data.WHITE_DICE[state.players], yellow)
    state.tower = tower.assign(whites, yellows)
    events.append(
        Event(
            "roll",
            {
                "seat": roller,
                "white": jlist(sorted(whites)),
                "yellow": jlist(sorted(yellows)),
                "gold_paid": yellow * data.YELLOW_COST,
            },
        )
    )
    begin_turn(state)


def begin_turn(state: YState) -> None:
    """The player at ``turn`` in the order starts their turn."""
    state.actor = state.order[state.turn]
    state.stage = "turn"
    state.built_this_turn = False


def end_turn(state: YState, events: list[Event]) -> None:
    """The actor is done; the next player acts, or the day ends."""
    events.append(Event("end_turn", {"seat": state.actor}))
    state.turns += 1
    state.turn += 1
    state.built_this_turn = False
    if state.turn < len(state.order):
        begin_turn(state)
    else:
        end_day(state, events)


def end_day(state: YState, events: list[Event]) -> None:
    """Clear the tower; score the week after day 7; advance the day; pass the pawn."""
    state.tower = tower.empty_tower()
    state.yellow = 0
    events.append(Event("day_end", {"week": state.week, "day": state.day}))
    if state.day == data.DAYS_PER_WEEK:
        week_scoring(state, events)
        if state.week == data.WEEKS:
            state.stage = "over"
            state.actor = state.pawn
            events.append(Event("game_end", {"scores": jlist(state.score)}))
            return
        state.week += 1
        state.day = 1
    else:
        state.day += 1
    state.pawn = (state.pawn + 1) % state.players
    start_day(state, events)


def week_scoring(state: YState, events: list[Event]) -> None:
    """Souks, then emptying the city, then the caravan (not emptied), then the steward to C."""
    score_souks(state, events)
    returned = [0] * state.players
    for seat in state.shops:
        if seat >= 0:
            returned[seat] += 1
    city.empty_city(state)
    events.append(Event("city_emptied", {"returned": jlist(returned)}))
    caravan.score(state, events, "week")
    state.steward = data.CENTRE
    events.append(Event("week_end", {"week": state.week, "steward": data.SQUARES[data.CENTRE].id}))
