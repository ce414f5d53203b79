"""Cards: extra dice and effects (YSP-CARD)."""

from __future__ import annotations

from games.base import Match
from games.yspahan import GAME, data
from games.yspahan.state import YState
from tests.games.yspahan.helpers import (
    act,
    choices,
    give_card,
    kinds,
    points,
    put_goods,
    shared,
    turn_state,
)


def _with(card: str, players: int = 4, **floors: tuple[int, int, int]) -> Match[YState]:
    state = turn_state(players, floors=floors or {"camels": (1, 1, 0)})
    give_card(state, 0, card)
    return Match(GAME, state)


def test_ysp_card_01_cards_only_in_ones_own_turn() -> None:
    """YSP-CARD-01, YSP-OPEN-6: any number of cards in one's own turn, none in another's.

    An owner asked to pay a camel during another player's steward move may not play a card.
    """
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    give_card(state, 0, "3_gold")
    give_card(state, 0, "3_camels")
    give_card(state, 2, "3_camels")
    state.camels[2] = 1
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="play", card="3_gold")
    act(match, kind="play", card="3_camels")  # any number
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    assert match.decision is not None and match.decision.seat == 2
    assert kinds(match) == {"keep"}


def test_ysp_card_02_extra_die() -> None:
    """YSP-CARD-02: «Au moment de la sélection d'un groupe de dés, le joueur peut défausser une
    carte, sans appliquer l'action correspondante, pour augmenter d'une unité la taille du groupe
    de dés choisi.» The card is chosen right after the group, and counts as one more die."""
    match = _with("3_gold", camels=(1, 2, 0))
    act(match, kind="take", floor="camels", action="floor")
    state = match.state
    assert state.stage == "extra" and state.tower[data.CAMELS_FLOOR] == [1, 2, 0]
    assert choices(match)[:2] == [
        {"kind": "extra", "card": "3_gold"},
        {"kind": "extra", "card": None},
    ]
    events = act(match, kind="extra", card="3_gold")
    assert state.camels[0] == 3 and state.gold[0] == 2  # no effect, one more die
    assert state.discard == ["3_gold"] and state.hands[0] == []
    assert [e.kind for e in events][:2] == ["extra_die", "take"]  # no card left: the action


def test_ysp_card_03_open_5_any_number_of_cards_on_one_group() -> None:
    """YSP-CARD-03, YSP-OPEN-5: «Au cours de son tour de jeu, le joueur peut jouer autant de
    cartes en sa possession qu'il le souhaite» and each card discarded «au moment de la sélection
    d'un groupe de dés» adds one die: several cards may go on one group, one die each. Boardspace's
    limit of one card per group (YSP-CARD-03) is not followed; the seed wins."""
    state = turn_state(4, floors={"gold": (6, 2, 0)})
    for card in ("3_gold", "3_camels", "3_camels", "no_gold"):
        give_card(state, 0, card)
    match = Match(GAME, state)
    takes = [c for c in choices(match) if c["kind"] == "take"]
    assert takes == [
        {"kind": "take", "floor": "gold", "action": a} for a in ("floor", "steward", "card")
    ]
    act(match, kind="take", floor="gold", action="floor")
    assert [c.get("card") for c in choices(match) if c["kind"] == "extra"] == [
        "3_camels",
        "3_gold",
        "no_gold",
        None,
    ]
    act(match, kind="extra", card="3_camels")
    act(match, kind="extra", card="3_gold")
    act(match, kind="extra", card="3_camels")
    assert state.stage == "extra" and state.extra == 3 and shared(state)["pending"]["extra"] == 3
    events = act(match, kind="extra", card=None)
    assert state.gold[0] == 2 + 2 + 3
    assert state.hands[0] == ["no_gold"] and sorted(state.discard) == [
        "3_camels",
        "3_camels",
        "3_gold",
    ]
    take = next(e for e in events if e.kind == "take")
    assert take.data["dice"] == 5 and take.data["extra_dice"] == 3
    assert state.tower[data.GOLD_FLOOR] == [0, 0, 0] and state.extra == 0 and state.floor == -1


def test_ysp_card_04_extra_die_only_for_floor_actions() -> None:
    """YSP-CARD-04: no extra die for the steward (face value) or the card action: those actions
    go on at once, and the take choices name no card."""
    match = _with("3_gold", sacks=(3, 2, 0))
    for c in choices(match):
        assert "extra" not in c
    act(match, kind="take", floor="sacks", action="steward")
    assert match.state.stage == "steward"
    match = _with("3_gold", sacks=(3, 2, 0))
    act(match, kind="take", floor="sacks", action="card")
    assert match.state.stage == "after" and len(match.state.hands[0]) == 2


def test_ysp_card_02_no_card_no_extra_question() -> None:
    """YSP-CARD-02: a player without cards is not asked for extra dice (one possible answer)."""
    state = turn_state(4, floors={"camels": (1, 2, 0)})
    events = act(Match(GAME, state), kind="take", floor="camels", action="floor")
    assert state.camels[0] == 2 and state.stage == "after"
    assert events[0].kind == "take" and events[0].data["dice"] == 2
    assert "extra_dice" not in events[0].data


def test_ysp_card_05_06_effects_before_and_after_the_action_then_discarded() -> None:
    """YSP-CARD-05, YSP-CARD-06: effects any time in one's turn; every played card is discarded."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    give_card(state, 0, "3_gold")
    give_card(state, 0, "3_camels")
    match = Match(GAME, state)
    assert {"kind": "play", "card": "3_gold"} in choices(match)
    act(match, kind="play", card="3_gold")
    act(match, kind="take", floor="camels", action="floor")
    act(match, kind="extra", card=None)
    assert {"kind": "play", "card": "3_camels"} in choices(match)
    act(match, kind="play", card="3_camels")
    assert state.discard == ["3_gold", "3_camels"]


def test_ysp_card_07_three_camels() -> None:
    """YSP-CARD-07."""
    match = _with("3_camels")
    act(match, kind="play", card="3_camels")
    assert match.state.camels[0] == 3


def test_ysp_card_08_three_gold() -> None:
    """YSP-CARD-08."""
    match = _with("3_gold")
    act(match, kind="play", card="3_gold")
    assert match.state.gold[0] == 5


def test_ysp_card_09_build_without_camels() -> None:
    """YSP-CARD-09: the next building costs no camels."""
    match = _with("no_camels")
    state = match.state
    state.gold[0] = 4
    act(match, kind="play", card="no_camels")
    act(match, kind="take", floor="camels", action="card")
    assert "bazaar" in [c.get("building") for c in choices(match)]
    act(match, kind="build", building="bazaar")
    assert (state.camels[0], state.gold[0], state.no_camels[0]) == (0, 0, 0)


def test_ysp_card_10_build_without_gold() -> None:
    """YSP-CARD-10: the next building costs no gold."""
    match = _with("no_gold")
    state = match.state
    state.camels[0] = 3
    state.gold[0] = 0
    act(match, kind="play", card="no_gold")
    act(match, kind="take", floor="camels", action="card")
    act(match, kind="build", building="caravanserai")
    assert (state.camels[0], state.gold[0], state.no_gold[0]) == (0, 0, 0)


def test_ysp_card_11_good_on_the_next_caravan_place() -> None:
    """YSP-CARD-11: a good from the reserve on the next place; its VP; may fill the caravan."""
    match = _with("place_caravan", players=3)
    state = match.state
    state.caravan = [1] * 8
    events = act(match, kind="play", card="place_caravan")
    assert state.caravan == []  # the 9th place filled it: scored and emptied
    assert points(events, 0) == 0 + 1 * 3
    assert points(events, 1) == 8 * 3
    match = _with("place_caravan")
    events = act(match, kind="play", card="place_caravan")
    assert match.state.caravan == [0] and points(events, 0) == 2


def test_ysp_card_12_one_good_in_any_quarter_under_the_souk_rules() -> None:
    """YSP-CARD-12: one good in any quarter, obeying YSP-GOODS-02..04."""
    match = _with("place_board")
    state = match.state
    put_goods(state, 0, "sk3.0")
    put_goods(state, 1, "va3.0")
    act(match, kind="play", card="place_board")
    shops = [c["shop"] for c in choices(match)]
    assert shops[:2] == ["sk3.1", "sk3.2"]  # partly filled sacks souk first
    assert "sk4.0" not in shops and "va3.1" not in shops  # other souk, occupied souk
    assert "br2.0" in shops and "ch2.0" in shops and "va1.0" in shops
    act(match, kind="place", shop="va1.0")
    assert state.shops[data.SHOP_INDEX["va1.0"]] == 0
    assert state.stage == "turn"  # back to choosing a group


def test_ysp_card_12_not_offered_without_a_legal_shop() -> None:
    """YSP-CARD-12: with no legal shop anywhere the one-good card has no effect to offer."""
    match = _with("place_board")
    state = match.state
    put_goods(state, 1, *data.SHOP_IDS)
    match = Match(GAME, state)
    assert {"kind": "play", "card": "place_board"} not in choices(match)


def test_ysp_card_13_gold_for_points() -> None:
    """YSP-CARD-13: up to 10 gold, 1 VP each."""
    match = _with("score_gold")
    state = match.state
    state.gold[0] = 12
    act(match, kind="play", card="score_gold")
    assert choices(match) == [{"kind": "pay", "gold": n} for n in range(11)]
    events = act(match, kind="pay", gold=10)
    assert state.gold[0] == 2 and points(events, 0) == 10
    assert state.breakdown[0]["cards"] == 10 and state.stage == "turn"


def test_ysp_card_14_camels_for_points() -> None:
    """YSP-CARD-14: up to 4 camels, 2 VP each."""
    match = _with("score_camels")
    state = match.state
    state.camels[0] = 6
    act(match, kind="play", card="score_camels")
    assert choices(match) == [{"kind": "pay", "camels": n} for n in range(5)]
    events = act(match, kind="pay", camels=4)
    assert state.camels[0] == 2 and points(events, 0) == 8


def test_ysp_card_15_exchange_camels_and_gold() -> None:
    """YSP-CARD-15: camels for gold or gold for camels, 1 for 1, any number."""
    match = _with("swap_camels_gold")
    state = match.state
    state.camels[0] = 2
    state.gold[0] = 3
    act(match, kind="play", card="swap_camels_gold")
    assert [c["camels"] for c in choices(match)] == [-2, -1, 0, 1, 2, 3]
    act(match, kind="swap", camels=-2)
    assert (state.camels[0], state.gold[0]) == (0, 5)


def test_ysp_card_16_build_without_credit_lasts_across_turns() -> None:
    """YSP-CARD-16, YSP-OPEN-5: an unused credit stays until a building is bought."""
    match = _with("no_camels")
    state = match.state
    act(match, kind="play", card="no_camels")
    act(match, kind="take", floor="camels", action="card")
    act(match, kind="end")
    assert state.no_camels[0] == 1
    assert shared(state)["players"][0]["no_camels"] == 1
    # The Pen costs camels only: it uses the credit (a no-gold credit would be kept).
    state.no_gold[0] = 1
    state.actor = 0
    state.stage = "after"
    state.built_this_turn = False
    match = Match(GAME, state)
    act(match, kind="build", building="pen")
    assert (state.no_camels[0], state.no_gold[0]) == (0, 1)


def test_ysp_card_17_two_players_credit_does_not_spare_the_group() -> None:
    """YSP-CARD-17: with 2 players, a build-without credit still needs a dice group."""
    state = turn_state(2, floors={})
    state.no_camels[0] = 1
    state.no_gold[0] = 1
    match = Match(GAME, state)
    assert choices(match) == [{"kind": "draw"}]
    act(match, kind="draw")
    assert "build" not in kinds(match)


def test_ysp_open_7_extra_die_discard_is_public() -> None:
    """YSP-OPEN-7: the extra-die card is shown to all (event and discard pile)."""
    match = _with("3_gold", camels=(1, 2, 0))
    act(match, kind="take", floor="camels", action="floor")
    events = act(match, kind="extra", card="3_gold")
    extra = next(e for e in events if e.kind == "extra_die")
    assert extra.project(None)["card"] == "3_gold"
    assert shared(match.state)["discard"] == ["3_gold"]


def test_amount_cards_accept_zero() -> None:
    """Package decision: an amount card may convert 0; it is simply discarded."""
    match = _with("score_gold")
    state = match.state
    state.gold[0] = 0
    act(match, kind="play", card="score_gold")
    assert choices(match) == [{"kind": "pay", "gold": 0}]
    act(match, kind="pay", gold=0)
    assert state.score[0] == 0 and state.discard == ["score_gold"]
