"""The dice tower (YSP-TOWER)."""

from __future__ import annotations

import pytest

from games.base import Match
from games.yspahan import GAME, data
from games.yspahan.tower import assign
from tests.games.yspahan.helpers import act, choices, facts, new_state, turn_state


def _floors(tower: list[list[int]]) -> dict[str, list[int]]:
    return {data.FLOORS[i]: f for i, f in enumerate(tower) if f[0]}


def test_ysp_tower_01_roller_rolls_before_anyone_acts() -> None:
    """YSP-TOWER-01: the day starts with the roller's yellow-dice choice, then the tower fills."""
    state = new_state(4, 3)
    match = Match(GAME, state)
    decision = match.decision
    assert decision is not None and decision.kind == "yellow" and decision.seat == state.pawn
    assert all(f == [0, 0, 0] for f in state.tower)
    events = act(match, kind="yellow", dice=0)
    assert events[0].kind == "roll"
    assert any(f[0] for f in state.tower)
    assert match.decision is not None and match.decision.kind == "turn"


@pytest.mark.parametrize(("players", "white"), [(3, 9), (4, 9), (2, 8)])
def test_ysp_tower_03_04_white_dice(players: int, white: int) -> None:
    """YSP-TOWER-03, YSP-TOWER-04: 9 white dice with 3-4 players, 8 with 2."""
    for seed in range(5):
        match = Match(GAME, new_state(players, seed))
        act(match, kind="yellow", dice=0)
        assert sum(f[1] for f in match.state.tower) == white
        assert sum(f[2] for f in match.state.tower) == 0


def test_ysp_tower_05_yellow_dice_cost_gold_and_only_the_roller_chooses() -> None:
    """YSP-TOWER-05: 0-3 yellow dice, 1 gold each, no more than the roller's gold pays."""
    state = new_state(4, 1)
    roller = state.pawn
    state.gold[roller] = 5
    match = Match(GAME, state)
    assert choices(match) == [{"kind": "yellow", "dice": n} for n in range(4)]
    act(match, kind="yellow", dice=3)
    assert state.gold[roller] == 2
    assert sum(f[2] for f in state.tower) == 3

    poor = new_state(4, 2)
    poor.gold[poor.pawn] = 2
    assert choices(Match(GAME, poor)) == [{"kind": "yellow", "dice": n} for n in range(3)]


def test_ysp_tower_05_roller_without_gold_rolls_white_dice_only() -> None:
    """YSP-TOWER-05: with no gold there is nothing to choose; the dice are rolled at once."""
    from games.yspahan.turn import start_day

    state = new_state(3, 4)
    state.gold[state.pawn] = 0
    start_day(state, [])
    assert state.stage == "turn"
    assert sum(f[2] for f in state.tower) == 0


def test_ysp_tower_06_yellow_dice_group_with_white_ones() -> None:
    """YSP-TOWER-06: all dice are grouped by value, yellow included: one group per value."""
    tower = assign([1, 1, 3, 5], [3, 6])
    assert _floors(tower) == {
        "camels": [1, 2, 0],
        "sacks": [3, 1, 1],
        "barrels": [5, 1, 0],
        "gold": [6, 0, 1],
    }


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([4, 4, 4], {"camels": 4}),
        ([2, 5], {"camels": 2, "gold": 5}),
        ([1, 3, 6], {"camels": 1, "sacks": 3, "gold": 6}),
        ([1, 2, 4, 6], {"camels": 1, "sacks": 2, "barrels": 4, "gold": 6}),
        ([1, 2, 3, 4, 5], {"camels": 1, "sacks": 2, "barrels": 3, "chests": 4, "gold": 5}),
        (
            [1, 2, 3, 4, 5, 6],
            {"camels": 1, "sacks": 2, "barrels": 3, "chests": 4, "vases": 5, "gold": 6},
        ),
    ],
)
def test_ysp_tower_07_08_09_10_assignment_with_1_to_6_values(
    values: list[int], expected: dict[str, int]
) -> None:
    """YSP-TOWER-07, YSP-TOWER-08, YSP-TOWER-09, YSP-TOWER-10: assignment by value.

    Lowest on camels, highest on gold (k >= 2), the rest rising from sacks.

    With k distinct values, camels, gold and the first k - 2 goods floors are filled; vases only
    with all six values; the other floors stay empty.
    """
    dice = [v for v in values for _ in range(2)]
    tower = assign(dice[:-1], [])
    got = {name: f[0] for name, f in _floors(tower).items()}
    assert got == expected
    assert sum(f[1] for f in tower) == len(dice) - 1


def test_ysp_tower_11_a_taken_group_leaves_the_tower() -> None:
    """YSP-TOWER-11: each group serves one player a day."""
    state = turn_state(4, floors={"camels": (1, 3, 0), "gold": (6, 2, 0)})
    match = Match(GAME, state)
    act(match, kind="take", floor="camels", action="floor")
    assert state.tower[data.CAMELS_FLOOR] == [0, 0, 0]
    act(match, kind="end")
    floors_offered = {c.get("floor") for c in choices(match) if c["kind"] == "take"}
    assert floors_offered == {"gold"}


def test_ysp_tower_12_13_yellow_dice_leave_after_the_first_players_action() -> None:
    """YSP-TOWER-12, YSP-TOWER-13: with 3-4 players, yellow dice go once the roller has acted.

    Groups holding yellow dice shrink, a yellow-only group disappears, no group changes floor.
    """
    state = turn_state(
        4, floors={"camels": (1, 2, 1), "sacks": (2, 0, 1), "barrels": (4, 1, 0), "gold": (6, 3, 0)}
    )
    state.yellow = 2
    match = Match(GAME, state)
    sizes = {c["floor"] for c in choices(match) if c["kind"] == "take"}
    assert sizes == {"camels", "sacks", "barrels", "gold"}  # the roller may use yellow dice
    events = act(match, kind="take", floor="gold", action="floor")
    assert [facts(e) for e in events if e.kind == "yellow_removed"] == [{"dice": 2}]
    assert _floors(state.tower) == {"camels": [1, 2, 0], "barrels": [4, 1, 0]}
    act(match, kind="end")
    act(match, kind="take", floor="camels", action="floor")
    assert state.camels[1] == 2


def test_ysp_tower_12_yellow_removed_counts_the_dice_taken_off_the_tower() -> None:
    """YSP-TOWER-12: «Lorsque le premier joueur a terminé son action, il retire les dés jaunes de
    la tour.» The event counts the yellow dice removed then, not those bought: the yellow dice of
    the group the roller took went with it (issue 22, item 5)."""
    state = turn_state(4, floors={"camels": (1, 2, 2), "sacks": (2, 1, 1), "gold": (6, 3, 0)})
    state.yellow = 3
    match = Match(GAME, state)
    events = act(match, kind="take", floor="camels", action="floor")
    assert [facts(e) for e in events if e.kind == "yellow_removed"] == [{"dice": 1}]
    assert _floors(state.tower) == {"sacks": [2, 1, 0], "gold": [6, 3, 0]}

    state = turn_state(4, floors={"camels": (1, 2, 2), "gold": (6, 3, 0)})
    state.yellow = 2
    match = Match(GAME, state)
    events = act(match, kind="take", floor="camels", action="floor")
    assert not any(e.kind == "yellow_removed" for e in events)  # none was left to remove
    assert state.yellow == 0


def test_ysp_tower_12_yellow_dice_stay_while_the_roller_takes_them_along() -> None:
    """YSP-TOWER-12: the roller's own group counts its yellow dice."""
    state = turn_state(3, floors={"camels": (1, 2, 2), "gold": (6, 3, 0)})
    state.yellow = 2
    match = Match(GAME, state)
    act(match, kind="take", floor="camels", action="floor")
    assert state.camels[0] == 4


def test_ysp_tower_14_15_16_two_players_yellow_dice() -> None:
    """YSP-TOWER-14, YSP-TOWER-15, YSP-TOWER-16: 2 players, yellow dice for the first player only.

    They stay all day.

    The other player counts only the white dice of a group and may not take a yellow-only group;
    the first player's second turn may still use yellow dice.
    """
    state = turn_state(
        2, floors={"camels": (1, 2, 1), "sacks": (3, 0, 2), "gold": (6, 2, 0), "barrels": (5, 0, 1)}
    )
    state.yellow = 4
    match = Match(GAME, state)
    act(match, kind="take", floor="gold", action="floor")
    act(match, kind="end")
    # The yellow dice are still there for the other player's turn (TOWER-14).
    assert _floors(state.tower)["sacks"] == [3, 0, 2]
    offered = {c["floor"] for c in choices(match) if c["kind"] == "take"}
    assert offered == {"camels"}  # yellow-only sacks and barrels are closed (TOWER-16)
    events = act(match, kind="take", floor="camels", action="floor")
    assert state.camels[1] == 2  # the yellow die is discarded (TOWER-15)
    assert events[0].data["yellow_discarded"] == 1
    act(match, kind="end")
    # The first player acts again and may take a yellow-only group.
    assert match.decision is not None and match.decision.seat == 0
    act(match, kind="take", floor="sacks", action="floor")
    assert state.pending == 2
