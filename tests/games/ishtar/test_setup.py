"""Setting up a match, step by step as the rulebook's "Setting Up the Game"."""

from __future__ import annotations

from collections import Counter

import pytest

from games.errors import OptionsError
from games.ishtar import GAME
from games.ishtar.board import ROCK
from tests.games.ishtar.helpers import EDITION, gem_totals, new_match


@pytest.mark.parametrize("players", [0, 1, 5, 6])
def test_ish_setup_01_only_2_to_4_players(players: int) -> None:
    with pytest.raises(OptionsError):
        GAME.check_options(players, {})
    with pytest.raises(OptionsError):
        GAME.setup(players, {}, 1)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_09_one_random_fountain_per_space(players: int) -> None:
    seen = set()
    for seed in range(12):
        state = new_match(players, seed).state
        assert len(state.fountains) == players + 2 == len(set(state.fountains))
        assert set(state.fountains) <= {f.id for f in EDITION.fountains}
        seen.add(tuple(state.fountains))
    assert len(seen) > 1


def test_ish_setup_10_a_gem_on_every_rock() -> None:
    state = new_match(3).state
    rocks = {h for h, k in state.terrain.kind.items() if k == ROCK}
    assert set(state.rock_gems) == rocks
    assert all(state.rock_gems[h] == state.terrain.rock_colour[h] for h in rocks)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_11_limited_stock_holds_every_other_gem(players: int) -> None:
    state = new_match(players).state
    on_rocks = Counter(state.rock_gems.values())
    for colour, total in EDITION.gem_stock.items():
        given = players if colour == "purple" else 0
        assert state.stock[colour] == total - on_rocks[colour] - given
    assert gem_totals(state) == Counter({"purple": 50, "red": 38, "white": 26})


def test_ish_setup_12_cups_two_per_shape_in_random_order() -> None:
    orders = set()
    for seed in range(10):
        state = new_match(2, seed).state
        assert Counter(state.cups) == Counter({"straight": 2, "triangle": 2, "chevron": 2})
        for shape, pile in zip(state.cups, state.piles, strict=True):
            assert all(EDITION.tiles[t].shape == shape for t in pile)
        orders.add(tuple(state.cups))
    assert len(orders) > 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_13_14_piles_of_basic_tiles_under_a_starting_tile(players: int) -> None:
    """Also ISH-SETUP-14."""
    state = new_match(players).state
    keep = {2: 4, 3: 5, 4: 6}[players]
    for pile, up in zip(state.piles, state.top_up, strict=True):
        assert len(pile) == keep + 1
        assert EDITION.tiles[pile[-1]].starting and up
        assert not any(EDITION.tiles[t].starting for t in pile[:-1])
    assert len(state.cut) == 6 * (6 - keep)
    assert sum(map(len, state.piles)) == {2: 30, 3: 36, 4: 42}[players]
    assert not any(EDITION.tiles[t].starting for t in state.cut)


def test_ish_setup_14_cut_tiles_are_the_bottom_of_the_shuffled_piles() -> None:
    """Same seed, 2 and 4 players: the 2-player piles are the 4-player piles minus the bottom
    two (the draw order up to the cut is the same)."""
    two, four = new_match(2, 5).state, new_match(4, 5).state
    for p2, p4 in zip(two.piles, four.piles, strict=True):
        assert p2 == p4[2:]
    assert sorted(two.cut) == sorted(t for p in four.piles for t in p[:2])


def test_ish_setup_18_tokens_start_on_the_carpet() -> None:
    assert new_match().state.tokens == list(EDITION.tokens)


def test_ish_setup_19_tree_deck_display_and_markers() -> None:
    state = new_match().state
    assert len(state.display) == 5 and len(state.deck) == 21
    assert state.display_marker == [True] * 5
    assert state.markers == 15
    assert sorted(state.display + state.deck) == sorted(EDITION.trees)
    assert new_match(seed=1).state.deck != state.deck


def test_ish_setup_21_random_first_player_and_can_on_no_pile() -> None:
    firsts = {new_match(4, seed).state.first for seed in range(20)}
    assert firsts == {0, 1, 2, 3}
    state = new_match(4, 3).state
    assert state.can is None
    assert state.current == state.first


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_22_23_player_start(players: int) -> None:
    """Also ISH-SETUP-23."""
    for p in new_match(players).state.players:
        assert (p.assistants, p.blocked, p.placed) == (2, 2, 0)
        assert p.gems == {"purple": 1, "red": 0, "white": 0}
        assert not p.skills and not p.planted
        assert p.reserved_tree is None and p.reserved_tile is None


def test_ish_setup_24_players_have_colours() -> None:
    state = new_match(4).state
    assert [p.colour for p in state.players] == ["yellow", "blue", "pink", "orange"]
