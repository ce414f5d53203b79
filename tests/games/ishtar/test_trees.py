"""The Plant step: buying tree cards, planting trees, refilling the display (ISH-TREE)."""

from __future__ import annotations

from games.base import Match
from games.ishtar import state as st
from games.ishtar.state import State
from tests.games.ishtar.helpers import EDITION, choices, new_match, pick, refresh, step

RICH = {"purple": 9, "red": 9, "white": 9}


def to_plant(seed: int = 0, gems: dict[str, int] | None = None) -> Match[State]:
    match = new_match(2, seed)
    while step(match) != st.PLANT:
        kinds = [c["kind"] for c in choices(match)]
        match.act(match.state.current, kinds.index("pass") if "pass" in kinds else 0)
    if gems is not None:
        match.state.player.gems = dict(gems)
    return refresh(match)


def test_ish_tree_01_any_number_or_none() -> None:
    match = to_plant(gems=RICH)
    assert choices(match)[-1] == {"kind": "end_turn"}
    seat = match.state.current
    pick(match, "end_turn")
    assert match.state.current != seat and not match.state.players[seat].planted


def test_ish_tree_02_03_display_cards_paid_exactly() -> None:
    """Also ISH-TREE-03."""
    match = to_plant(gems={"purple": 1, "red": 1, "white": 0})
    state = match.state
    offered = [c["card"] for c in choices(match, "buy")]
    for card in state.display:
        cost = EDITION.trees[card].cost
        payable = cost["white"] == 0 and cost["purple"] <= 1 and cost["red"] <= 1
        assert (card in offered) == payable
    state.display[0] = "tree-05"  # costs 1 purple + 1 red
    match = refresh(match)
    stock = dict(state.stock)
    pick(match, "buy", card="tree-05")
    assert state.player.gems == {"purple": 0, "red": 0, "white": 0}
    assert state.stock["purple"] == stock["purple"] + 1  # ISH-GEMS-03: back to the stock
    assert state.stock["red"] == stock["red"] + 1


def test_ish_tree_04_05_06_card_face_down_tree_on_empty_grass() -> None:
    """Also ISH-TREE-05 ISH-TREE-06."""
    match = to_plant(gems=RICH)
    state = match.state
    card = choices(match, "buy")[0]["card"]
    events = pick(match, "buy", card=card)
    assert state.player.planted == [card]
    assert "card" not in events[0].project(1 - state.current)
    spots = [tuple(c["at"]) for c in choices(match)]
    assert sorted(spots) == sorted(state.veg.empty_grass)
    assert all(state.veg.space[s].flowers == 0 for s in spots)
    pick(match, "tree", at=list(spots[0]))
    assert state.veg.trees[spots[0]] == state.current
    assert spots[0] not in state.veg.empty_grass  # ISH-TREE-06: one tree a space


def test_ish_tree_07_no_empty_grass_no_purchase() -> None:
    match = to_plant(gems=RICH)
    match.state.veg.empty_grass.clear()
    match = refresh(match)
    assert choices(match) == [{"kind": "end_turn"}]


def test_ish_tree_08_09_buy_again_refill_only_at_the_end() -> None:
    """Also ISH-TREE-09."""
    match = to_plant(gems=RICH)
    state = match.state
    while state.veg.empty_grass and choices(match, "buy"):
        pick(match, "buy", card=choices(match, "buy")[0]["card"])
        match.act(state.current, 0)
    bought = len(state.player.planted)
    assert bought >= 1
    assert len(state.display) == 5 - bought
    deck_top = state.deck[-1]
    assert deck_top not in [c.get("card") for c in choices(match)]
    events = pick(match, "end_turn")
    assert deck_top in state.display
    assert any(e.kind == "display_refilled" for e in events)


def test_ish_tree_10_refill_to_five_with_markers() -> None:
    match = to_plant(gems=RICH)
    state = match.state
    pick(match, "buy", card=choices(match, "buy")[0]["card"])
    match.act(state.current, 0)
    markers = state.markers
    pick(match, "end_turn")
    assert len(state.display) == 5 and all(state.display_marker)
    assert state.markers == markers - 1


def test_ish_tree_11_all_markers_planted_no_more_trees() -> None:
    match = to_plant(gems=RICH)
    state = match.state
    state.markers = 0
    state.display_marker = [False] * len(state.display)
    match = refresh(match)
    assert choices(match) == [{"kind": "end_turn"}]


def test_ish_open_9_a_card_revealed_without_a_marker_cannot_be_bought() -> None:
    match = to_plant(gems=RICH)
    state = match.state
    state.markers = 0
    pick(match, "buy", card=choices(match, "buy")[0]["card"])
    match.act(state.current, 0)
    pick(match, "end_turn")
    assert state.display_marker[-1] is False and len(state.display) == 5
    assert state.markers == 0


def test_ish_tree_02_own_reserved_card_only() -> None:
    match = to_plant(gems=RICH)
    state = match.state
    other = 1 - state.current
    state.players[other].reserved_tree = state.deck.pop()
    state.reserved_marker[other] = True
    match = refresh(match)
    offered = {c["card"] for c in choices(match, "buy")}
    assert state.players[other].reserved_tree not in offered
