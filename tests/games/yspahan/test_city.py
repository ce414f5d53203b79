"""Placing goods in the quarters (YSP-GOODS)."""

from __future__ import annotations

from games.base import Match
from games.yspahan import GAME, data
from games.yspahan.city import complete_souks, legal_shops
from games.yspahan.state import YState
from tests.games.yspahan.helpers import act, choices, give_card, put_goods, turn_state

SACKS = data.QUARTERS.index("sacks")
VASES = data.QUARTERS.index("vases")


def _shops(match: Match[YState]) -> list[object]:
    return [c["shop"] for c in choices(match)]


def test_ysp_goods_01_as_many_goods_as_dice_plus_card_plus_crane() -> None:
    """YSP-GOODS-01: N = the group's size, +1 for an extra-die card, +1 with the Crane."""
    state = turn_state(4, floors={"sacks": (2, 3, 0)})
    act(Match(GAME, state), kind="take", floor="sacks", action="floor")
    assert state.stage == "place" and state.pending == 3

    state = turn_state(4, floors={"sacks": (2, 3, 0)})
    give_card(state, 0, "3_gold")
    state.built[0].append(data.CRANE)
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="floor")
    act(match, kind="extra", card="3_gold")
    assert state.pending == 5


def test_ysp_goods_02_one_good_per_shop() -> None:
    """YSP-GOODS-02: a shop that holds a good is never offered again."""
    state = turn_state(4, floors={"sacks": (2, 2, 0)})
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="floor")
    act(match, kind="place", shop="sk6.0")
    assert "sk6.0" not in _shops(match)
    assert state.shops[data.SHOP_INDEX["sk6.0"]] == 0


def test_ysp_goods_03_finish_a_partly_filled_souk_first() -> None:
    """YSP-GOODS-03: with a partly filled souk in the quarter, only its shops are legal."""
    state = turn_state(4, floors={"sacks": (2, 3, 0)})
    put_goods(state, 0, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="floor")
    assert _shops(match) == ["sk3.1", "sk3.2"]
    act(match, kind="place", shop="sk3.2")
    act(match, kind="place", shop="sk3.1")
    # Complete now: the third good may start any empty souk of the quarter.
    assert _shops(match) == [data.SHOP_IDS[s] for s in range(3, 18)]


def test_ysp_goods_04_never_in_a_souk_another_player_occupies() -> None:
    """YSP-GOODS-04: a souk holding another player's good is closed, even half empty."""
    state = turn_state(4, floors={"sacks": (2, 1, 0)})
    put_goods(state, 1, "sk4.0")
    put_goods(state, 2, "sk6.3")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="floor")
    offered = _shops(match)
    assert not any(str(s).startswith(("sk4", "sk6")) for s in offered)
    assert offered == ["sk3.0", "sk3.1", "sk3.2", "sk5.0", "sk5.1", "sk5.2", "sk5.3", "sk5.4"]


def test_ysp_goods_05_any_empty_souk_without_a_partial_one() -> None:
    """YSP-GOODS-05: with no partly filled souk there, any empty souk of the quarter may start."""
    state = turn_state(4)
    put_goods(state, 0, "br2.0", "br2.1")  # a complete souk elsewhere does not bind sacks
    assert legal_shops(state, 0, SACKS) == list(range(18))


def test_ysp_goods_06_a_souk_may_stay_unfinished() -> None:
    """YSP-GOODS-06: the action ends with the souk still incomplete; nothing forces a finish."""
    state = turn_state(4, floors={"sacks": (2, 1, 0)})
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="floor")
    act(match, kind="place", shop="sk6.0")
    assert state.stage == "after"
    assert state.souk_fill[data.SHOP_SOUK[data.SHOP_INDEX["sk6.0"]]] == 1


def test_ysp_goods_07_goods_with_no_legal_shop_stay_in_reserve() -> None:
    """YSP-GOODS-07: one at a time while a shop is legal; the rest stays in the reserve.

    The vases quarter with others in va2 and va3 has one legal shop: 3 goods place 1.
    """
    state = turn_state(4, floors={"vases": (5, 3, 0)})
    put_goods(state, 1, "va2.0")
    put_goods(state, 2, "va3.1")
    match = Match(GAME, state)
    act(match, kind="take", floor="vases", action="floor")
    assert _shops(match) == ["va1.0"]
    events = act(match, kind="place", shop="va1.0")
    overflow = [e for e in events if e.kind == "overflow"]
    assert overflow and overflow[0].data["goods"] == 2
    assert state.stage == "after"


def test_ysp_goods_07_full_quarter_places_nothing() -> None:
    """YSP-GOODS-07: a goods action in a quarter with no legal shop places nothing."""
    state = turn_state(4, floors={"vases": (5, 2, 0)})
    put_goods(state, 1, "va1.0", "va2.0", "va3.0")
    events = act(Match(GAME, state), kind="take", floor="vases", action="floor")
    assert [e.data["goods"] for e in events if e.kind == "overflow"] == [2]
    assert state.stage == "after"


def test_ysp_goods_08_complete_when_every_shop_holds_a_good() -> None:
    """YSP-GOODS-08: a souk is complete when all its shops are filled."""
    state = turn_state(4)
    put_goods(state, 0, "va3.0", "va3.1")
    put_goods(state, 1, "va1.0")
    assert complete_souks(state) == [(data.SHOP_SOUK[data.SHOP_INDEX["va1.0"]], 1)]
    put_goods(state, 0, "va3.2")
    assert (data.SHOP_SOUK[data.SHOP_INDEX["va3.0"]], 0) in complete_souks(state)


def test_ysp_open_1_two_partial_souks_in_one_quarter() -> None:
    """YSP-OPEN-1: the rule binds within the quarter; two partial souks there both stay open."""
    state = turn_state(4)
    put_goods(state, 0, "sk3.0", "sk3.1", "sk4.0")
    from games.yspahan.city import take

    take(state, data.SHOP_INDEX["sk3.1"])  # the steward emptied part of a complete souk
    legal = [data.SHOP_IDS[s] for s in legal_shops(state, 0, SACKS)]
    assert legal == ["sk3.1", "sk3.2", "sk4.1", "sk4.2", "sk4.3"]
    # The partial souks of sacks do not bind another quarter.
    assert len(legal_shops(state, 0, VASES)) == 6


def test_ysp_open_2_goods_are_placed_freely_one_at_a_time() -> None:
    """YSP-OPEN-2: no forced best fit: a good may start a small souk leaving goods unplaced."""
    state = turn_state(4, floors={"vases": (5, 3, 0)})
    match = Match(GAME, state)
    act(match, kind="take", floor="vases", action="floor")
    act(match, kind="place", shop="va1.0")  # va1 complete after 1 good: others stay free
    assert _shops(match) == ["va2.0", "va2.1", "va3.0", "va3.1", "va3.2"]
    act(match, kind="place", shop="va2.0")
    assert _shops(match) == ["va2.1"]


def test_golden_counts_of_legal_shops_in_an_empty_city() -> None:
    """Golden counts: every shop of a quarter is legal in an empty city (18, 14, 9, 6)."""
    state = turn_state(3)
    assert [len(legal_shops(state, 1, q)) for q in range(4)] == [18, 14, 9, 6]
