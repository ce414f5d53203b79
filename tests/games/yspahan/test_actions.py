"""A player's action with a dice group (YSP-ACTION)."""

from __future__ import annotations

from games.base import Match
from games.yspahan import GAME
from tests.games.yspahan.helpers import act, choices, facts, give_card, kinds, turn_state


def test_ysp_action_01_a_turn_starts_by_taking_a_group() -> None:
    """YSP-ACTION-01: the turn cannot end before a group is taken; one action per turn."""
    state = turn_state(4, floors={"camels": (1, 3, 0), "gold": (6, 2, 0)})
    match = Match(GAME, state)
    assert kinds(match) == {"take"}
    act(match, kind="take", floor="camels", action="floor")
    assert "take" not in kinds(match) and "end" in kinds(match)
    assert state.tower[5] == [6, 2, 0]


def test_ysp_action_02_three_actions_per_group() -> None:
    """YSP-ACTION-02: each group offers its floor action, the steward, or one card."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    match = Match(GAME, state)
    assert choices(match) == [
        {"kind": "take", "floor": "sacks", "action": "floor"},
        {"kind": "take", "floor": "sacks", "action": "steward"},
        {"kind": "take", "floor": "sacks", "action": "card"},
    ]


def test_ysp_action_03_camels_by_the_number_of_dice() -> None:
    """YSP-ACTION-03: the camels action gives one camel per die of the group."""
    state = turn_state(4, floors={"camels": (2, 3, 0)})
    act(Match(GAME, state), kind="take", floor="camels", action="floor")
    assert state.camels[0] == 3


def test_ysp_action_04_gold_by_the_number_of_dice() -> None:
    """YSP-ACTION-04: the gold action gives one gold per die of the group."""
    state = turn_state(4, floors={"gold": (6, 4, 0)})
    act(Match(GAME, state), kind="take", floor="gold", action="floor")
    assert state.gold[0] == 2 + 4


def test_ysp_action_05_the_card_action_draws_one_card_whatever_the_size() -> None:
    """YSP-ACTION-05: drawing gives the top card of the deck, one card only."""
    state = turn_state(4, floors={"camels": (1, 5, 0)})
    top = state.deck[-1]
    act(Match(GAME, state), kind="take", floor="camels", action="card")
    assert state.hands[0] == [top]
    assert len(state.deck) == 17


def test_ysp_action_06_no_group_left_draws_a_card() -> None:
    """YSP-ACTION-06: a player who finds no group draws a card as their action."""
    state = turn_state(4, floors={})
    match = Match(GAME, state)
    assert choices(match) == [{"kind": "draw"}]
    act(match, kind="draw")
    assert len(state.hands[0]) == 1
    assert "end" in kinds(match) and "draw" not in kinds(match)


def test_ysp_action_07_empty_deck_reshuffles_the_discard_pile() -> None:
    """YSP-ACTION-07: when a card is due and the deck is empty, the discards become the deck."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    state.discard = state.deck
    state.deck = []
    events = act(Match(GAME, state), kind="take", floor="camels", action="card")
    assert [e.kind for e in events][1:3] == ["reshuffle", "draw"]
    assert len(state.hands[0]) == 1 and len(state.deck) == 17 and state.discard == []


def test_ysp_action_08_nothing_to_draw_and_no_group_passes() -> None:
    """YSP-ACTION-08: with deck and discard pile both empty, a player with no group passes."""
    state = turn_state(4, floors={})
    state.hands[1] = state.deck
    state.deck = []
    match = Match(GAME, state)
    assert choices(match) == [{"kind": "pass"}]
    act(match, kind="pass")
    assert kinds(match) == {"end"}


def test_ysp_open_8_two_players_only_yellow_groups_left_means_a_draw() -> None:
    """YSP-OPEN-8: with 2 players, yellow-only groups leave the other player with no group."""
    state = turn_state(2, floors={"sacks": (2, 0, 2)})
    state.turn = 1
    state.actor = 1
    match = Match(GAME, state)
    assert choices(match) == [{"kind": "draw"}]


def test_ysp_goods_01_card_02_the_take_event_counts_every_die_of_the_action() -> None:
    """YSP-GOODS-01, YSP-CARD-02: «Le joueur place autant de marchandises qu'il y a de dés dans
    le groupe», the cards added as dice included: the ``take`` event's ``dice`` is the number the
    action counts (issue 22, item 5), ``extra_dice`` the cards among them."""
    state = turn_state(4, floors={"sacks": (2, 2, 0)})
    give_card(state, 0, "3_gold")
    give_card(state, 0, "no_gold")
    match = Match(GAME, state)
    assert not act(match, kind="take", floor="sacks", action="floor")  # the group waits
    act(match, kind="extra", card="3_gold")
    events = act(match, kind="extra", card="no_gold")
    take = next(e for e in events if e.kind == "take")
    assert facts(take) == {
        "seat": 0,
        "floor": "sacks",
        "value": 2,
        "dice": 4,
        "action": "floor",
        "extra_dice": 2,
    }
    assert state.pending == 4
