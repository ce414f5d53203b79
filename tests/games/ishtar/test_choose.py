"""Choosing a tile: turn order, the watering can, paying for extra moves, the reserved tile."""

from __future__ import annotations

from games.ishtar import state as st
from tests.games.ishtar.helpers import (
    choices,
    empty_pile,
    new_match,
    pick,
    play_turn,
    refresh,
    step,
)


def test_ish_choose_01_first_player_then_clockwise() -> None:
    match = new_match(4, 2)
    first = match.state.first
    order = []
    for _ in range(6):
        order.append(match.state.current)
        play_turn(match)
    assert order == [(first + i) % 4 for i in range(6)]


def test_ish_choose_02_steps_run_once_each_in_order() -> None:
    match = new_match(3, 4)
    seen: list[str] = []
    turns = match.state.turns_played
    while match.state.turns_played == turns:
        kind = step(match)
        if not seen or seen[-1] != kind:
            seen.append(kind)
        play_turn(match) if kind == st.PLANT else match.act(match.state.current, 0)
    order = [st.CHOOSE, st.PAY, st.POSITION, st.ROTATION, st.SPECIAL, st.PLANT]
    assert [order.index(k) for k in seen if k in order] == sorted(
        order.index(k) for k in seen if k in order
    )
    assert seen[0] == st.CHOOSE and seen[-1] == st.PLANT


def test_ish_choose_03_first_turn_any_pile_free() -> None:
    match = new_match(2, 1)
    assert choices(match) == [{"kind": "pile", "pile": i, "cost": 0} for i in range(6)]
    pick(match, "pile", pile=4)
    assert match.state.can == 4


def test_ish_choose_04_05_next_non_empty_pile_is_free_empty_ones_skipped() -> None:
    """Also ISH-CHOOSE-05."""
    match = new_match(2, 1)
    pick(match, "pile", pile=1)
    play_turn(match)
    assert choices(match)[0] == {"kind": "pile", "pile": 2, "cost": 0}
    empty_pile(match.state, 2)
    empty_pile(match.state, 3)
    match = refresh(match)
    found = choices(match, "pile")
    assert found[0] == {"kind": "pile", "pile": 4, "cost": 0}
    assert all(c["pile"] not in (2, 3) for c in found)


def test_ish_choose_06_07_further_piles_cost_a_gem_each_clockwise_within_means() -> None:
    """Also ISH-CHOOSE-07."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    match.state.player.gems = {"purple": 1, "red": 1, "white": 1}
    match = refresh(match)
    assert choices(match, "pile") == [
        {"kind": "pile", "pile": 1, "cost": 0},
        {"kind": "pile", "pile": 2, "cost": 1},
        {"kind": "pile", "pile": 3, "cost": 2},
        {"kind": "pile", "pile": 4, "cost": 3},
    ]
    match.state.player.gems = {"purple": 0, "red": 0, "white": 0}
    match = refresh(match)
    assert choices(match, "pile") == [{"kind": "pile", "pile": 1, "cost": 0}]


def test_ish_choose_07_gems_of_any_colour_pay_for_the_can() -> None:
    """ISH-GEMS-03: the gems go back to the stock."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    state = match.state
    state.player.gems = {"purple": 0, "red": 1, "white": 1}
    match = refresh(match)
    stock = dict(state.stock)
    pick(match, "pile", pile=3)
    assert step(match) == st.PAY
    assert choices(match) == [{"kind": "gem", "colour": "red"}, {"kind": "gem", "colour": "white"}]
    pick(match, "gem", colour="white")
    assert state.can == 0
    pick(match, "gem", colour="red")
    assert state.can == 3 and step(match) == st.POSITION
    assert state.player.gems == {"purple": 0, "red": 0, "white": 0}
    assert state.stock["red"] == stock["red"] + 1 and state.stock["white"] == stock["white"] + 1


def test_ish_choose_08_rulebook_example_two_gems() -> None:
    """The can stands on spot 1, spot 3 is empty: spot 5 costs 2 gems (2 free, 3 skipped)."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    empty_pile(match.state, 2)
    match.state.player.gems = {"purple": 3, "red": 0, "white": 0}
    match = refresh(match)
    assert {"kind": "pile", "pile": 4, "cost": 2} in choices(match)
    pick(match, "pile", pile=4)
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    assert match.state.player.gems["purple"] == 1


def test_ish_choose_09_10_take_the_top_and_reveal_the_pile_left() -> None:
    """Also ISH-CHOOSE-10."""
    match = new_match(2, 1)
    state = match.state
    top = state.piles[0][-1]
    events = pick(match, "pile", pile=0)
    assert state.turn.tile == top
    assert not state.top_up[0], "the new top stays face down while the can is on it"
    assert [e.kind for e in events][:2] == ["can_moved", "tile_taken"]
    assert "tile_revealed" not in [e.kind for e in events], "first turn: nothing to reveal"
    play_turn(match)
    hidden_top = state.piles[0][-1]
    events = pick(match, "pile", pile=1)
    assert bool(state.top_up[0])
    revealed = [e for e in events if e.kind == "tile_revealed"]
    assert revealed and (revealed[0].data["pile"], revealed[0].data["tile"]) == (0, hidden_top)


def test_ish_choose_11_reserved_tile_instead_of_the_can() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    state = match.state
    reserved = state.piles[3].pop()
    state.player.reserved_tile = reserved
    gems, can, up = dict(state.player.gems), state.can, list(state.top_up)
    match = refresh(match)
    assert choices(match)[-1] == {"kind": "reserved", "tile": reserved}
    pick(match, "reserved", tile=reserved)
    assert state.can == can and state.player.gems == gems and state.top_up == up
    assert state.turn.tile == reserved
    assert state.players[state.current].reserved_tile is None
    assert step(match) == st.POSITION
    match.act(state.current, 0)
    match.act(state.current, 0)
    assert state.laid[-1]["tile"] == reserved


def test_ish_choose_12_the_chosen_tile_must_be_placed_now() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=2)
    kinds = {c["kind"] for c in choices(match)}
    assert kinds == {"position"}


def test_ish_open_1_no_full_lap_back_to_the_same_pile() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    match.state.player.gems = {"purple": 9, "red": 0, "white": 0}
    match = refresh(match)
    assert [c["pile"] for c in choices(match, "pile")] == [1, 2, 3, 4, 5]


def test_ish_open_3_only_the_pile_under_the_can_or_nothing() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    for i in range(1, 6):
        empty_pile(match.state, i)
    match = refresh(match)
    assert choices(match) == [{"kind": "pile", "pile": 0, "cost": 0}]
    empty_pile(match.state, 0)
    match = refresh(match)
    assert choices(match) == [{"kind": "skip"}]
    pick(match, "skip")
    assert step(match) == st.PLANT


def test_ish_place_01_rotation_choices_name_the_spaces_the_tile_covers() -> None:
    """ISH-PLACE-01: a rotation choice's ``cells`` are exactly the spaces the laid tile covers."""
    from games.base import Match
    from games.ishtar import GAME
    from games.rng import Rng

    for seed in range(3):
        match = Match.new(GAME, 2 + seed, {}, seed)
        chooser = Rng(seed)
        checked = 0
        while (decision := match.decision) is not None and checked < 5:
            index = chooser.below(len(decision.choices))
            choice = decision.choices[index]
            match.act(decision.seat, index)
            if choice["kind"] == "rotation":
                laid = match.view(None).shared["game"]["laid"]
                assert isinstance(laid, list)
                last = laid[-1]
                assert isinstance(last, dict)
                spaces = last["spaces"]
                assert isinstance(spaces, list)
                assert [s[:2] for s in spaces] == choice["cells"]  # type: ignore[index]
                checked += 1
        assert checked == 5
