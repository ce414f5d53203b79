"""The caravan (YSP-CARAVAN)."""

from __future__ import annotations

import pytest

from games.base import Event, Match
from games.yspahan import GAME, caravan, data
from tests.games.yspahan.helpers import act, new_state, points, put_goods, turn_state


def test_ysp_caravan_01_filled_in_order_bottom_row_first() -> None:
    """YSP-CARAVAN-01: one good per place, in order; rows fill from the bottom."""
    state = new_state(3)
    events: list[Event] = []
    for seat in (0, 1, 2, 0):
        caravan.add(state, seat, "card", events)
    places = [(e.data["place"], e.data["row"]) for e in events if e.kind == "caravan"]
    assert places == [(0, 0), (1, 0), (2, 0), (3, 1)]
    assert state.caravan == [0, 1, 2, 0]


@pytest.mark.parametrize(("players", "places"), [(4, 12), (3, 9), (2, 6)])
def test_ysp_caravan_02_03_04_capacity(players: int, places: int) -> None:
    """YSP-CARAVAN-02, YSP-CARAVAN-03, YSP-CARAVAN-04: 12, 9 or 6 places (rows of 4, 3, 2)."""
    assert caravan.capacity(players) == places
    state = new_state(players)
    events: list[Event] = []
    for _ in range(places - 1):
        caravan.add(state, 0, "card", events)
    assert len(state.caravan) == places - 1
    caravan.add(state, 0, "card", events)
    assert state.caravan == []  # full: scored and emptied


def test_ysp_caravan_05_06_immediate_points_go_to_the_owner() -> None:
    """YSP-CARAVAN-05, YSP-CARAVAN-06: 2, 1, 0 VP per place by row, to the good's owner.

    Seat 0 moves the steward; seat 2's good goes to the caravan: seat 2 scores.
    """
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    events = act(match, kind="move", to="W3", gold=0)
    assert points(events, 2) == 2 and points(events, 0) == 0
    row_points = []
    fresh = new_state(4)
    for _ in range(11):
        evs: list[Event] = []
        caravan.add(fresh, 1, "card", evs)
        row_points.append(points(evs, 1))
    assert row_points == [2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]


def test_ysp_caravan_07_count_times_highest_row() -> None:
    """YSP-CARAVAN-07: goods x value of the highest row holding one; none scores 0."""
    # 3 players, rows of 3: [0 0 1 | 1 0 0 | 2]
    assert caravan.points([0, 0, 1, 1, 0, 0, 2], 3) == [4 * 2, 2 * 2, 1 * 3]
    assert caravan.points([0, 1], 4) == [1, 1, 0, 0]


def test_ysp_caravan_08_full_caravan_scored_and_emptied() -> None:
    """YSP-CARAVAN-08: when full it is scored at once, like a week's end, then emptied."""
    state = new_state(2)
    state.caravan = [0, 1, 0, 1, 1]
    events: list[Event] = []
    caravan.add(state, 0, "card", events)
    # 2 players, rows of 2: [0 1 | 0 1 | 1 0]: seat 0 has 3 goods, top row 3 -> 9; seat 1: 3 x 3
    full = [e.data for e in events if e.kind == "score" and e.data["category"] == "caravan"]
    assert [(d["seat"], d["points"]) for d in full] == [(0, 9), (1, 9)]
    assert state.caravan == []
    assert any(e.kind == "caravan_emptied" for e in events)


def test_ysp_caravan_09_caravan_filling_mid_move() -> None:
    """YSP-CARAVAN-09: the good that fills the last place scores and empties the caravan.

    The second good of the same steward move then starts the new caravan on its first place.
    """
    state = turn_state(4, floors={"sacks": (1, 2, 0)})
    state.caravan = [3] * 11
    put_goods(state, 1, "br2.0")
    put_goods(state, 2, "va1.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="E1", gold=0)
    events = act(match, kind="send", shop="br2.0")
    kinds = [e.kind for e in events]
    assert kinds.index("caravan_emptied") < len(kinds) - 1
    assert state.caravan == [2]
    second = [e.data for e in events if e.kind == "caravan"][1]
    assert second["seat"] == 2 and second["place"] == 0
    # Seat 1's good was the 12th: 0 VP on the top row, then the caravan score of 1 x 3.
    assert points(events, 1) == 3
    assert points(events, 3) == 11 * 3
    assert points(events, 2) == 2


def test_caravan_places_skip_zero_point_events() -> None:
    """Top-row places give 0 VP: no empty score event is written (scores stay event sums)."""
    state = new_state(4)
    state.caravan = [0] * 8
    events: list[Event] = []
    caravan.add(state, 1, "card", events)
    assert [e.kind for e in events] == ["caravan"]
    assert data.CARAVAN_PLACE_VP[2] == 0
