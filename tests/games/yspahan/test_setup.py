"""Setting up a match (YSP-SETUP)."""

from __future__ import annotations

from collections import Counter

import pytest

from games.base import Match
from games.errors import OptionsError
from games.yspahan import GAME, data
from games.yspahan.caravan import capacity
from tests.games.yspahan.helpers import new_state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ysp_setup_01_two_to_four_players(players: int) -> None:
    """YSP-SETUP-01: 2, 3 or 4 players; 2 players use the 2-player rules (8 dice, caravan 6)."""
    state = new_state(players)
    assert len(state.gold) == players
    assert capacity(players) == {2: 6, 3: 9, 4: 12}[players]
    assert len(state.order) == (3 if players == 2 else players)


@pytest.mark.parametrize("players", [1, 5])
def test_ysp_setup_01_other_counts_are_refused(players: int) -> None:
    """YSP-SETUP-01: other player counts raise a typed options error."""
    with pytest.raises(OptionsError):
        Match.new(GAME, players, {}, 1)
    with pytest.raises(OptionsError, match="unknown options"):
        Match.new(GAME, 3, {"variant": "x"}, 1)


def test_ysp_setup_02_starting_supplies() -> None:
    """YSP-SETUP-02: 2 gold, 0 camels, no card, 0 VP, no building."""
    state = new_state(4)
    assert state.gold == [2] * 4
    assert state.camels == [0] * 4
    assert state.hands == [[]] * 4
    assert state.score == [0] * 4
    assert state.built == [[]] * 4


def test_ysp_setup_03_04_day_one_week_one_steward_on_c() -> None:
    """YSP-SETUP-03, YSP-SETUP-04: day 1 of week 1; steward on C."""
    state = new_state(3)
    assert (state.week, state.day) == (1, 1)
    assert data.SQUARES[state.steward].id == "C"


def test_ysp_setup_05_deck_shuffled_discard_empty() -> None:
    """YSP-SETUP-05: the 18 cards shuffled face down, an empty discard pile."""
    decks = {tuple(new_state(4, seed).deck) for seed in range(10)}
    assert len(decks) > 1
    for deck in decks:
        assert Counter(deck) == Counter(data.DECK)
    assert new_state(4).discard == []


def test_ysp_setup_07_random_first_player() -> None:
    """YSP-SETUP-07: the first player is drawn at random and holds the pawn."""
    firsts = {new_state(4, seed).pawn for seed in range(40)}
    assert firsts == {0, 1, 2, 3}
    state = new_state(4, 5)
    assert state.order[0] == state.pawn


def test_ysp_setup_12_supplies_never_run_out() -> None:
    """YSP-SETUP-12: goods, camels and gold are unlimited (no bank or reserve count exists)."""
    from tests.games.yspahan.helpers import put_goods

    state = new_state(4)
    every_shop = list(data.SHOP_IDS)
    put_goods(state, 0, *every_shop)
    assert all(s == 0 for s in state.shops)  # 47 goods from one reserve, and more to come
    state.camels[0] = 10_000
    state.gold[0] = 10_000
    assert GAME.load(GAME.dump(state)).camels[0] == 10_000
