"""Days, weeks, turn order and the end of the match (YSP-DAY, -WEEK, -ORDER, -END)."""

from __future__ import annotations

from games.base import Event, Match
from games.yspahan import GAME, data
from games.yspahan.state import YState
from games.yspahan.turn import day_order, week_scoring
from tests.games.yspahan.helpers import act, choices, new_state, put_goods, turn_state
from tests.harness import play_random


def _last_turn(state: YState) -> Match[YState]:
    """Put ``state`` at the end of the day's last turn (the actor may only end it)."""
    state.turn = len(state.order) - 1
    state.actor = state.order[-1]
    state.stage = "after"
    state.built_this_turn = True
    return Match(GAME, state)


def _end_day(state: YState) -> list[Event]:
    return act(_last_turn(state), kind="end")


def _play_turn(match: Match[YState]) -> None:
    """Play one turn taking the first choice each time, then end it."""
    decision = match.decision
    assert decision is not None
    seat = decision.seat
    while (decision := match.decision) is not None and decision.kind != "after":
        match.act(decision.seat, 0)
    assert decision is not None and decision.seat == seat
    act(match, kind="end")


def test_ysp_day_01_order_01_everyone_acts_clockwise_from_the_first_player() -> None:
    """YSP-DAY-01, YSP-ORDER-01: tower filled, then each player in turn from the first."""
    state = new_state(4, 8)
    state.pawn = 2
    state.order = day_order(state)
    state.actor = 2
    match = Match(GAME, state)
    act(match, kind="yellow", dice=0)
    seen = []
    for _ in range(4):
        decision = match.decision
        assert decision is not None
        seen.append(decision.seat)
        _play_turn(match)
    assert seen == [2, 3, 0, 1]
    assert state.day == 2


def test_ysp_day_02_untaken_groups_are_lost() -> None:
    """YSP-DAY-02: at the end of the day the tower is cleared."""
    state = turn_state(4, floors={"camels": (1, 2, 0), "gold": (6, 3, 0)})
    events = _end_day(state)
    assert any(e.kind == "day_end" for e in events)
    assert state.stage == "yellow" and all(f == [0, 0, 0] for f in state.tower)


def test_ysp_day_03_week_07_end_of_day_and_week_steps_in_order() -> None:
    """YSP-DAY-03, YSP-WEEK-07: clear; week scoring (souks, city, caravan, steward); day; pawn."""
    state = turn_state(4, floors={"camels": (1, 2, 0)})
    state.day = 7
    state.pawn = 0
    put_goods(state, 1, "va1.0")
    state.caravan = [2]
    events = _end_day(state)
    kinds = [e.kind for e in events]
    souk_score = next(i for i, e in enumerate(events) if e.data.get("category") == "souks")
    caravan_score = next(i for i, e in enumerate(events) if e.data.get("category") == "caravan")
    assert (
        kinds.index("day_end")
        < souk_score
        < kinds.index("city_emptied")
        < caravan_score
        < kinds.index("week_end")
        < kinds.index("day")
    )
    assert (state.week, state.day, state.pawn) == (2, 1, 1)


def test_ysp_week_01_scoring_only_after_day_seven() -> None:
    """YSP-WEEK-01: a day other than the 7th ends with no week scoring."""
    state = turn_state(4)
    state.day = 6
    put_goods(state, 1, "va1.0")
    events = _end_day(state)
    assert not any(e.kind in ("week_end", "city_emptied", "score") for e in events)
    assert state.shops[data.SHOP_INDEX["va1.0"]] == 1


def test_ysp_week_02_03_complete_souks_score_incomplete_do_not() -> None:
    """YSP-WEEK-02, YSP-WEEK-03: complete souks pay their occupant; incomplete ones nothing."""
    state = turn_state(4)
    put_goods(state, 0, "va3.0", "va3.1", "va3.2", "ch2.0")
    put_goods(state, 1, "sk6.0", "sk6.1", "sk6.2", "sk6.3", "sk6.4")
    put_goods(state, 2, "br2.0", "br2.1")
    events: list[Event] = []
    week_scoring(state, events)
    assert state.breakdown[0]["souks"] == 12
    assert state.breakdown[1]["souks"] == 0
    assert state.breakdown[2]["souks"] == 3


def test_ysp_week_04_05_06_city_emptied_caravan_kept_steward_home() -> None:
    """YSP-WEEK-04, YSP-WEEK-05, YSP-WEEK-06: city emptied, caravan kept, steward on C."""
    state = turn_state(4)
    put_goods(state, 0, "sk3.0", "va1.0")
    state.caravan = [0, 1, 1, 2, 3]
    state.steward = data.SQUARE_INDEX["W7"]
    events: list[Event] = []
    week_scoring(state, events)
    assert all(s == -1 for s in state.shops) and state.souk_owner == [-1] * 14
    assert state.caravan == [0, 1, 1, 2, 3]
    assert [state.breakdown[s]["caravan"] for s in range(4)] == [1, 2, 1, 2]
    assert state.steward == data.CENTRE


def test_ysp_order_02_the_pawn_passes_clockwise() -> None:
    """YSP-ORDER-02: every day the first-player pawn moves to the next player."""
    state = turn_state(3, seat=2)
    _end_day(state)
    assert state.pawn == 0 and state.order == [0, 1, 2]


def test_ysp_order_03_04_05_four_players_last_day_by_increasing_score() -> None:
    """YSP-ORDER-03, YSP-ORDER-04, YSP-ORDER-05, YSP-OPEN-3, YSP-OPEN-4: last day by rising VP.

    Ties keep clockwise order from the day's pawn holder (seed), not Boardspace's order; the
    lowest scorer buys the yellow dice and rolls.
    """
    state = turn_state(4, seat=1)
    state.week, state.day = 3, 6
    state.score = [5, 9, 5, 2]
    events = _end_day(state)
    assert state.pawn == 2
    assert state.order == [3, 2, 0, 1]
    decision = Match(GAME, state).decision
    assert decision is not None and decision.kind == "yellow" and decision.seat == 3
    day = next(e for e in events if e.kind == "day")
    assert day.data["order"] == [3, 2, 0, 1]


def test_ysp_order_04_ties_from_the_pawn_holder_all_tied() -> None:
    """YSP-ORDER-04: all tied: plain clockwise order from the pawn holder."""
    state = turn_state(4, seat=2)
    state.week, state.day = 3, 6
    state.score = [7, 7, 7, 7]
    _end_day(state)
    assert state.order == [3, 0, 1, 2]


def test_ysp_order_06_three_players_last_day_keeps_the_usual_order() -> None:
    """YSP-ORDER-06: with 3 players the last day is clockwise from the pawn as usual."""
    state = turn_state(3, seat=0)
    state.week, state.day = 3, 6
    state.score = [9, 5, 1]
    _end_day(state)
    assert state.order == [1, 2, 0]


def test_ysp_order_07_08_two_players_alternate_and_act_three_times() -> None:
    """YSP-ORDER-07, YSP-ORDER-08: first player alternates; first, other, first each day."""
    state = turn_state(2, seat=0)
    assert state.order == [0, 1, 0]
    _end_day(state)
    assert state.order == [1, 0, 1]
    _end_day(state)
    assert state.order == [0, 1, 0]


def test_ysp_order_09_two_players_last_day_lower_score_first() -> None:
    """YSP-ORDER-09: on the last day the player with fewer VP is first; a tie alternates."""
    state = turn_state(2, seat=0)
    state.week, state.day = 3, 6
    state.score = [3, 8]
    _end_day(state)
    assert state.pawn == 1 and state.order == [0, 1, 0]
    state = turn_state(2, seat=0)
    state.week, state.day = 3, 6
    state.score = [4, 4]
    _end_day(state)
    assert state.order == [1, 0, 1]


def test_ysp_end_01_game_ends_with_week_three_scoring() -> None:
    """YSP-END-01: after the week-3 scoring nothing follows."""
    state = turn_state(4)
    state.week, state.day = 3, 7
    put_goods(state, 2, "va1.0")
    events = _end_day(state)
    assert [e.kind for e in events][-2:] == ["week_end", "game_end"]
    match = Match(GAME, state)
    assert match.decision is None and match.over
    result = match.result()
    assert result is not None and result.winners == (2,) and result.scores[2] == 4


def test_ysp_setup_13_three_weeks_of_seven_days() -> None:
    """YSP-SETUP-13: a whole match has 21 days (one roll each)."""
    out = play_random(GAME, 3, 5)
    assert out.match is not None
    state = out.match.state
    assert (state.week, state.day) == (3, 7)
    match = Match.new(GAME, 3, {}, 5)
    rolls = 0
    for index in out.choices:
        decision = match.decision
        assert decision is not None
        rolls += sum(1 for e in match.act(decision.seat, index) if e.kind == "roll")
    assert new_state(3, 5).stage == "yellow"  # the first roll too happens after setup
    assert rolls == 21


def test_first_choice_index_is_stable() -> None:
    """Choices come in a stable order: the same position lists the same choices twice."""
    a = turn_state(4, floors={"camels": (1, 2, 0), "sacks": (2, 1, 0), "gold": (6, 1, 0)})
    b = turn_state(4, floors={"camels": (1, 2, 0), "sacks": (2, 1, 0), "gold": (6, 1, 0)})
    assert choices(Match(GAME, a)) == choices(Match(GAME, b))
