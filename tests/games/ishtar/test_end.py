"""The end of the game: two empty piles trigger it, the round is completed (ISH-END)."""

from __future__ import annotations

import pytest

from games.errors import GameOverError
from games.ishtar import state as st
from tests.games.ishtar.helpers import choices, empty_pile, new_match, pick, play_turn, refresh


def _one_tile_left(players: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """First pile empty, second pile with its last tile; the current player may take it."""
    match = new_match(players, seed)
    state = match.state
    empty_pile(state, 0)
    state.cut.extend(state.piles[1][:-1])
    state.piles[1] = state.piles[1][-1:]
    return refresh(match)


def test_ish_end_01_second_empty_pile_triggers_starting_tile_included() -> None:
    match = _one_tile_left(3)
    state = match.state
    assert not state.triggered
    assert len(state.piles[1]) == 1 and state.top_up[1]  # only the starting tile is left
    events = pick(match, "pile", pile=1)
    assert state.triggered and "end_triggered" in [e.kind for e in events]


def test_ish_end_01_one_empty_pile_is_not_enough() -> None:
    match = new_match(2)
    empty_pile(match.state, 0)
    match = refresh(match)
    play_turn(match)
    assert not match.state.triggered


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_end_02_the_round_is_completed(players: int) -> None:
    match = _one_tile_left(players, 1)
    state = match.state
    first = state.first
    play_turn(match)  # the first player triggers the end
    assert state.triggered
    seats = []
    while match.decision is not None:
        if state.turn.step == st.CHOOSE:
            seats.append(state.current)
            assert all(c.get("pile") not in (0, 1) for c in choices(match))  # skips empty piles
        play_turn(match)
    assert seats == [(first + i) % players for i in range(1, players)]
    assert state.turns_played == players


def test_ish_end_03_trigger_by_the_last_seat_ends_at_once() -> None:
    match = new_match(3, 2)
    for _ in range(2):
        play_turn(match)
    state = match.state
    assert state.current == (state.first + 2) % 3
    empty_pile(state, 4)
    state.cut.extend(state.piles[5][:-1])
    state.piles[5] = state.piles[5][-1:]
    state.player.gems = {"purple": 5, "red": 0, "white": 0}
    match = refresh(match)
    pick(match, "pile", pile=5)
    while state.turn.step not in (st.OVER,) and state.turns_played == 2:
        play_turn(match)
    assert match.decision is None and state.turns_played == 3


def test_ish_end_04_a_skill_j_reservation_empties_a_pile_too() -> None:
    from games.ishtar.actions import apply_reserve_tile

    match = _one_tile_left(2)
    state = match.state
    events = apply_reserve_tile(
        state, {"kind": "reserve_tile", "pile": 1, "tile": state.piles[1][-1]}
    )
    assert state.triggered and "end_triggered" in [e.kind for e in events]


def test_ish_end_05_no_choice_after_the_end() -> None:
    """ISH-OPEN-15: the English rule (finish the round) is followed, not the French summary."""
    match = _one_tile_left(2)
    while match.decision is not None:
        play_turn(match)
    assert match.result() is not None
    with pytest.raises(GameOverError):
        match.act(0, 0)
    assert match.state.over
