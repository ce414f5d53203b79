"""Moving the steward and sending goods to the caravan (YSP-STEWARD)."""

from __future__ import annotations

import pytest

from games.base import Match
from games.errors import IllegalChoice
from games.yspahan import GAME, data
from games.yspahan.state import YState
from games.yspahan.steward import destinations, move_cost
from tests.games.yspahan.helpers import act, choices, put_goods, turn_state

C = data.SQUARE_INDEX["C"]


def _stops(start: str, value: int, gold: int = 0, hammam: bool = False) -> dict[str, int]:
    return {
        data.SQUARES[sq].id: cost
        for sq, cost in destinations(data.SQUARE_INDEX[start], value, gold, hammam)
    }


def _steward_match(value: int, start: str = "C", seat: int = 0) -> tuple[YState, Match[YState]]:
    state = turn_state(4, seat=seat, floors={"sacks": (value, 2, 0)})
    state.steward = data.SQUARE_INDEX[start]
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    return state, match


def test_ysp_steward_01_exactly_the_groups_value() -> None:
    """YSP-STEWARD-01: without gold the steward moves exactly V squares."""
    assert _stops("C", 3) == {"W3": 0, "E3": 0, "N3": 0, "S3": 0}
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.gold[0] = 0
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    assert [c["to"] for c in choices(match)] == ["W3", "E3", "N3", "S3"]
    assert all(c["gold"] == 0 for c in choices(match))


def test_ysp_steward_02_each_gold_changes_the_move_by_one() -> None:
    """YSP-STEWARD-02: paying g gold makes V - g .. V + g legal, one gold per square."""
    stops = _stops("C", 3, gold=1)
    assert stops["W2"] == 1 and stops["W3"] == 0 and stops["W4"] == 1
    assert "W5" not in stops and "W1" not in stops
    state, match = _steward_match(3)
    act(match, kind="move", to="E4", gold=1)
    assert state.gold[0] == 1
    assert data.SQUARES[state.steward].id == "E4"


def test_ysp_steward_03_build_12_hammam_gives_a_free_adjustment() -> None:
    """YSP-STEWARD-03, YSP-BUILD-12: the Hammam's owner adjusts by 1-3 squares for free."""
    stops = _stops("C", 4, gold=0, hammam=True)
    assert stops["W1"] == 0 and stops["W7"] == 0 and stops["N4"] == 0
    assert "W8" not in stops
    state = turn_state(4, floors={"sacks": (4, 2, 0)})
    state.built[0].append(data.HAMMAM)
    state.gold[0] = 0
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    assert {c["to"] for c in choices(match)} >= {"W1", "W7", "E7", "S7"}
    # Another player without the Hammam gets no free adjustment.
    other = turn_state(4, seat=1, floors={"sacks": (4, 2, 0)})
    other.built[0].append(data.HAMMAM)
    other.gold[1] = 0
    match = Match(GAME, other)
    act(match, kind="take", floor="sacks", action="steward")
    assert {c["to"] for c in choices(match)} == {"W4", "E4", "N4", "S4"}


def test_ysp_steward_04_gold_and_hammam_combine() -> None:
    """YSP-STEWARD-04, YSP-OPEN-5: with g gold and the Hammam, V - g - 3 .. V + g + 3, never
    below 1: «Le joueur doit déplacer l'intendant» (the seed wins over Boardspace's 0)."""
    stops = _stops("C", 5, gold=1, hammam=True)
    assert stops["W9"] == 1 and stops["W8"] == 0 and stops["W2"] == 0 and stops["W1"] == 1
    assert "W10" not in stops
    assert "C" not in stops
    assert move_cost(C, C, 5, True) == 2
    assert "C" not in _stops("C", 5, gold=2, hammam=True)  # 0 squares: never, at any price
    assert _stops("C", 4, gold=0, hammam=True)["W1"] == 0  # 4 - 3 = 1 is the shortest move


def test_ysp_steward_05_06_never_the_same_square_twice() -> None:
    """YSP-STEWARD-05, YSP-STEWARD-06: straight along an arm, turning only on C, never back.

    From W3 a move of 2 reaches W5 or W1; a move of 4 reaches W7, or E1, N1 and S1 through C,
    never W1 again; nothing runs past the end of an arm (N4 is the last of its arm).
    """
    assert set(_stops("W3", 2)) == {"W1", "W5"}
    assert set(_stops("W3", 4)) == {"W7", "E1", "N1", "S1"}
    assert set(_stops("N3", 3)) == {"C"}
    assert set(_stops("N4", 6)) == {"W2", "E2", "S2"}


def test_ysp_steward_07_c_is_a_legal_stop() -> None:
    """YSP-STEWARD-07: every square at the chosen distance, C included, is a legal stop."""
    state, match = _steward_match(3, start="W3")
    assert "C" in [c["to"] for c in choices(match)]
    act(match, kind="move", to="C", gold=0)
    assert state.steward == C and state.stage == "after"


def test_ysp_steward_01_08_open_5_the_steward_must_move() -> None:
    """YSP-STEWARD-01, YSP-STEWARD-08, YSP-OPEN-5: «Le joueur doit déplacer l'intendant d'autant
    de cases que la valeur du groupe de dés.» With the Hammam and gold a move of 0 squares (W3 to
    W3, emptying the faced shops again) is in reach, yet refused: a move ends at least one square
    away. Boardspace's 0-square move (YSP-STEWARD-08) is not followed; the seed wins."""
    state = turn_state(4, floors={"sacks": (2, 2, 0)})
    state.steward = data.SQUARE_INDEX["W3"]
    state.built[0].append(data.HAMMAM)
    put_goods(state, 1, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    stops = [c["to"] for c in choices(match) if c["kind"] == "move"]
    assert "W3" not in stops
    assert {"W1", "W2", "W4", "W5", "C"} <= set(stops)  # 1 to 5 squares, free with the Hammam
    with pytest.raises(IllegalChoice, match="steward must move"):
        match.act(0, {"kind": "move", "to": "W3", "gold": 0})
    assert state.caravan == [] and state.shops[data.SHOP_INDEX["sk3.0"]] == 1


def test_ysp_open_5_every_square_has_a_stop_for_every_value() -> None:
    """YSP-OPEN-5: with the 0-square move gone a move still always has a stop: from every square
    every distance 1..6 is reachable, so no gold or Hammam is ever needed for a legal move."""
    for start in range(len(data.SQUARES)):
        for value in range(1, 7):
            assert destinations(start, value, 0, False), (data.SQUARES[start].id, value)
            assert all(data.DISTANCE[start][sq] for sq, _ in destinations(start, value, 9, True))


def test_ysp_steward_10_goods_of_both_faced_shops_in_the_movers_order() -> None:
    """YSP-STEWARD-10: on E1 both faced goods, whoever owns them, go in the mover's order."""
    state, match = _steward_match(1)
    put_goods(state, 1, "br2.0")
    put_goods(state, 2, "va1.0")
    act(match, kind="move", to="E1", gold=0)
    decision = match.decision
    assert decision is not None and decision.kind == "send" and decision.seat == 0
    assert choices(match) == [{"kind": "send", "shop": "br2.0"}, {"kind": "send", "shop": "va1.0"}]
    act(match, kind="send", shop="va1.0")
    assert state.caravan == [2, 1]


def test_ysp_steward_11_a_sent_good_leaves_its_souk() -> None:
    """YSP-STEWARD-11: the souk loses the good and may become incomplete or empty."""
    state, match = _steward_match(2, seat=0)
    put_goods(state, 1, "br2.0", "br2.1")
    put_goods(state, 2, "ch2.1")
    souk = data.SHOP_SOUK[data.SHOP_INDEX["br2.1"]]
    act(match, kind="move", to="E2", gold=0)
    assert state.souk_fill[souk] == 1 and state.souk_owner[souk] == 1
    state2, match2 = _steward_match(2)
    put_goods(state2, 2, "ch2.1")
    act(match2, kind="move", to="W2", gold=0)
    chest = data.SHOP_SOUK[data.SHOP_INDEX["ch2.1"]]
    assert state2.souk_owner[chest] == -1 and state2.souk_fill[chest] == 0


def test_ysp_steward_12_another_player_pays_a_camel_to_keep_the_good() -> None:
    """YSP-STEWARD-12: the good's owner, not the mover, decides to pay a camel.

    Paying keeps the good in its shop and sends one from the owner's reserve instead.
    """
    state, match = _steward_match(3)
    put_goods(state, 2, "sk3.0")
    state.camels[2] = 1
    act(match, kind="move", to="W3", gold=0)
    decision = match.decision
    assert decision is not None and decision.seat == 2 and decision.kind == "keep"
    assert choices(match) == [
        {"kind": "keep", "shop": "sk3.0", "pay": False},
        {"kind": "keep", "shop": "sk3.0", "pay": True},
    ]
    events = act(match, kind="keep", shop="sk3.0", pay=True)
    assert state.camels[2] == 0
    assert state.shops[data.SHOP_INDEX["sk3.0"]] == 2
    assert state.caravan == [2]
    assert [e.data["from"] for e in events if e.kind == "caravan"] == ["reserve"]
    assert match.decision is not None and match.decision.seat == 0  # back to the mover


def test_ysp_steward_12_declining_lets_the_good_go() -> None:
    """YSP-STEWARD-12: declining sends the good itself; no camel is paid."""
    state, match = _steward_match(3)
    put_goods(state, 2, "sk3.0")
    state.camels[2] = 4
    act(match, kind="move", to="W3", gold=0)
    act(match, kind="keep", shop="sk3.0", pay=False)
    assert state.camels[2] == 4
    assert state.shops[data.SHOP_INDEX["sk3.0"]] == -1 and state.caravan == [2]


def test_ysp_steward_12_the_mover_decides_for_their_own_goods() -> None:
    """YSP-STEWARD-12: the mover is the owner of their own goods and may pay too."""
    state, match = _steward_match(3)
    put_goods(state, 0, "sk3.0")
    state.camels[0] = 1
    act(match, kind="move", to="W3", gold=0)
    assert match.decision is not None and match.decision.seat == 0
    assert match.decision.kind == "keep"


def test_ysp_steward_13_no_question_without_a_camel() -> None:
    """YSP-STEWARD-13: an owner with no camel is not asked; the good goes."""
    state, match = _steward_match(3)
    put_goods(state, 2, "sk3.0")
    state.camels[2] = 0
    act(match, kind="move", to="W3", gold=0)
    assert state.stage == "after" and state.caravan == [2]


def test_ysp_open_10_the_substitute_takes_the_kept_goods_place() -> None:
    """YSP-OPEN-10: a good sent from the reserve takes the kept good's place in the order."""
    state, match = _steward_match(1)
    put_goods(state, 1, "br2.0")
    put_goods(state, 2, "va1.0")
    state.camels[1] = 1
    act(match, kind="move", to="E1", gold=0)
    act(match, kind="send", shop="br2.0")
    act(match, kind="keep", shop="br2.0", pay=True)
    assert state.caravan == [1, 2]
    assert state.shops[data.SHOP_INDEX["br2.0"]] == 1


def test_golden_counts_of_steward_stops() -> None:
    """Golden counts: legal stops from C and from an arm end, by value, gold and Hammam."""
    from_c = [len(destinations(C, v, 0, False)) for v in range(1, 7)]
    assert from_c == [4, 4, 4, 4, 3, 3]  # the north arm has 4 squares only
    assert len(destinations(C, 3, 0, True)) == 4 * 4 + 3 * 2  # distances 1..6, C excluded
    w10 = data.SQUARE_INDEX["W10"]
    assert [len(destinations(w10, v, 0, False)) for v in range(1, 7)] == [1, 1, 1, 1, 1, 1]
    assert len(destinations(w10, 6, 20, False)) == 28  # enough gold: every square but its own
