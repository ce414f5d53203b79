"""Buildings: purchase, points and powers (YSP-BUILD)."""

from __future__ import annotations

from games.base import Event, Match
from games.yspahan import GAME, data
from games.yspahan.state import YState
from games.yspahan.turn import week_scoring
from tests.games.yspahan.helpers import (
    act,
    choices,
    facts,
    give_card,
    kinds,
    points,
    put_goods,
    shared,
    turn_state,
)


def _builds(match: Match[YState]) -> list[object]:
    return [c["building"] for c in choices(match) if c["kind"] == "build"]


def _after_camels(players: int = 4, camels: int = 10, gold: int = 10) -> Match[YState]:
    """Seat 0 has taken a camels group and is in its after-action step."""
    state = turn_state(players, floors={"camels": (1, 1, 0), "gold": (6, 1, 0)})
    state.camels[0] = camels
    state.gold[0] = gold
    match = Match(GAME, state)
    act(match, kind="take", floor="camels", action="floor")
    return match


def test_ysp_build_01_one_building_after_the_action() -> None:
    """YSP-BUILD-01: with 3-4 players, after the action one building at most per turn."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    state.camels[0] = 20
    state.gold[0] = 20
    match = Match(GAME, state)
    assert "build" not in kinds(match)  # not before the action
    act(match, kind="take", floor="camels", action="floor")
    assert len(_builds(match)) == 6
    act(match, kind="build", building="pen")
    assert _builds(match) == []
    assert kinds(match) == {"end"}


def test_ysp_build_02_pay_the_price_or_do_not_build() -> None:
    """YSP-BUILD-02: the price is paid; what cannot be paid is not offered."""
    match = _after_camels(camels=2, gold=2)
    assert _builds(match) == ["pen", "stall", "hammam"]
    act(match, kind="build", building="stall")
    assert (match.state.camels[0], match.state.gold[0]) == (1, 0)


def test_ysp_build_03_each_building_once_marked_by_a_good() -> None:
    """YSP-BUILD-03: a building is built once; the view shows it on its owner's board."""
    match = _after_camels()
    act(match, kind="build", building="pen")
    state = match.state
    assert state.built[0] == [data.PEN]
    view = shared(state)
    assert view["players"][0]["buildings"] == ["pen"]
    state.built_this_turn = False
    assert "pen" not in _builds(match)


def test_ysp_build_05_any_order() -> None:
    """YSP-BUILD-05: no prerequisite: the Crane may be the first building."""
    match = _after_camels()
    act(match, kind="build", building="crane")
    assert match.state.built[0] == [data.CRANE]


def test_ysp_build_06_points_for_the_third_to_sixth_building() -> None:
    """YSP-BUILD-06: 0, 0, 5, 5, 5, 10 VP, scored at once."""
    state = turn_state(4)
    state.camels[0] = 100
    state.gold[0] = 100
    from games.yspahan.buildings import build

    got = [points(build(state, 0, b), 0) for b in (5, 4, 3, 2, 1, 0)]
    assert got == [0, 0, 5, 5, 5, 10]
    assert state.breakdown[0]["buildings"] == 25


def test_ysp_build_07_power_from_the_moment_it_is_built() -> None:
    """YSP-BUILD-07: the Pen bought this turn works from the next camels action on."""
    state = turn_state(4, floors={"camels": (1, 2, 0)})
    state.camels[0] = 0
    match = Match(GAME, state)
    act(match, kind="take", floor="camels", action="floor")
    assert state.camels[0] == 2
    act(match, kind="build", building="pen")
    state.actor = 0
    state.stage = "turn"
    state.tower[data.CAMELS_FLOOR] = [2, 2, 0]
    act(Match(GAME, state), kind="take", floor="camels", action="floor")
    assert state.camels[0] == 3


def test_ysp_build_08_two_players_building_uses_a_dice_group() -> None:
    """YSP-BUILD-08: with 2 players building is the action of a group; no free build after."""
    state = turn_state(2, floors={"camels": (1, 2, 0), "gold": (6, 1, 0)})
    state.camels[0] = 2
    state.gold[0] = 1
    match = Match(GAME, state)
    builds = [c for c in choices(match) if c.get("action") == "build"]
    assert builds == [
        {"kind": "take", "floor": "camels", "action": "build"},
        {"kind": "take", "floor": "gold", "action": "build"},
    ]
    act(match, kind="take", floor="gold", action="build")
    assert match.decision is not None and match.decision.kind == "build"
    assert _builds(match) == ["pen"]
    act(match, kind="build", building="pen")
    assert state.camels[0] == 0 and state.gold[0] == 1  # the gold group gave nothing
    assert kinds(match) == {"end"}
    # After an ordinary action there is no build either.
    other = turn_state(2, floors={"camels": (1, 2, 0)})
    other.camels[0] = 5
    m2 = Match(GAME, other)
    act(m2, kind="take", floor="camels", action="floor")
    assert "build" not in kinds(m2)


def test_ysp_build_09_two_players_first_player_builds_twice_a_day() -> None:
    """YSP-BUILD-09: the first player acts twice a day, so may build twice."""
    state = turn_state(2, floors={"camels": (1, 2, 0), "sacks": (3, 1, 0), "gold": (6, 1, 0)})
    state.camels[0] = 4
    match = Match(GAME, state)
    act(match, kind="take", floor="camels", action="build")
    act(match, kind="build", building="pen")
    act(match, kind="end")
    act(match, kind="take", floor="sacks", action="card")
    act(match, kind="end")
    act(match, kind="take", floor="gold", action="build")
    act(match, kind="build", building="stall")
    assert state.built[0] == [data.PEN, data.STALL]


def test_ysp_build_10_pen_one_more_camel() -> None:
    """YSP-BUILD-10: the Pen's owner takes 1 more camel with the camels action."""
    state = turn_state(4, floors={"camels": (1, 3, 0)})
    state.built[0].append(data.PEN)
    act(Match(GAME, state), kind="take", floor="camels", action="floor")
    assert state.camels[0] == 4


def test_ysp_build_11_stall_two_more_gold() -> None:
    """YSP-BUILD-11: the Stall's owner takes 2 more gold with the gold action."""
    state = turn_state(4, floors={"gold": (6, 3, 0)})
    state.built[0].append(data.STALL)
    act(Match(GAME, state), kind="take", floor="gold", action="floor")
    assert state.gold[0] == 2 + 3 + 2


def test_ysp_build_13_caravanserai_draws_whoever_moved() -> None:
    """YSP-BUILD-13: the owner draws a card when their good is sent, by any mover."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.built[2].append(data.CARAVANSERAI)
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    events = act(match, kind="move", to="W3", gold=0)
    draws = [e for e in events if e.kind == "draw"]
    assert len(draws) == 1 and draws[0].data["seat"] == 2
    assert len(state.hands[2]) == 1 and state.hands[0] == []


def test_ysp_build_13_14_open_5_caravanserai_draws_every_time() -> None:
    """YSP-BUILD-13, YSP-BUILD-14, YSP-OPEN-5: «Le joueur pioche une carte chaque fois qu'une de
    ses marchandises est envoyée dans la caravane.» Every good of the owner that reaches the
    caravan draws: sent from a shop, sent from the reserve by a camel payment, and put there by
    the caravan card. Boardspace's exception for the caravan card (YSP-BUILD-14) is not
    followed; the seed wins."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.built[2].append(data.CARAVANSERAI)
    state.camels[2] = 1
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    events = act(match, kind="keep", shop="sk3.0", pay=True)
    assert [e.data["seat"] for e in events if e.kind == "draw"] == [2]

    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.built[0].append(data.CARAVANSERAI)
    give_card(state, 0, "place_caravan")
    events = act(Match(GAME, state), kind="play", card="place_caravan")
    assert state.caravan == [0]
    draws = [e for e in events if e.kind == "draw"]
    assert len(draws) == 1 and facts(draws[0]) == {"seat": 0, "reason": "caravanserai"}
    assert len(state.hands[0]) == 1


def test_ysp_build_13_action_07_08_caravanserai_with_an_empty_deck() -> None:
    """YSP-BUILD-13, YSP-ACTION-07, YSP-ACTION-08: with the deck empty the discard pile is
    shuffled into a new deck for the Caravanserai's card, as for every draw; with both empty no
    card is drawn (event ``no_card``) and none is owed later."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.built[0].append(data.CARAVANSERAI)
    give_card(state, 0, "place_caravan")
    give_card(state, 0, "place_caravan")
    state.discard.extend(state.deck)
    state.deck.clear()
    events = act(Match(GAME, state), kind="play", card="place_caravan")
    assert [e.kind for e in events if e.kind in ("reshuffle", "draw")] == ["reshuffle", "draw"]
    assert len(state.hands[0]) == 2 and len(state.deck) == 16  # 15 + the card played, - 1

    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.built[0].append(data.CARAVANSERAI)
    give_card(state, 0, "place_caravan")
    for seat in (1, 2, 3):
        state.hands[seat].extend(state.deck[:6] if seat < 3 else state.deck[6:])
        del state.deck[: 6 if seat < 3 else len(state.deck)]
    assert state.deck == [] and state.discard == []
    match = Match(GAME, state)
    events = act(match, kind="play", card="place_caravan")
    # The played card is the discard pile: it is reshuffled and drawn back.
    assert [e.kind for e in events if e.kind in ("reshuffle", "draw")] == ["reshuffle", "draw"]
    assert state.hands[0] == ["place_caravan"]
    state.hands[1].append(state.hands[0].pop())
    act(match, kind="take", floor="sacks", action="steward")
    put_goods(state, 0, "sk3.0")
    events = act(match, kind="move", to="W3", gold=0)
    assert any(e.kind == "no_card" and e.data["seat"] == 0 for e in events)
    assert state.hands[0] == [] and state.caravan == [0, 0]


def test_ysp_build_15_bazaar_two_more_per_complete_souk() -> None:
    """YSP-BUILD-15: at the week's scoring, +2 VP per complete souk of the Bazaar's owner."""
    state = turn_state(4)
    state.built[0].append(data.BAZAAR)
    put_goods(state, 0, "va1.0", "br2.0", "br2.1", "sk3.0")
    put_goods(state, 1, "va2.0", "va2.1")
    events: list[Event] = []
    week_scoring(state, events)
    assert state.breakdown[0]["souks"] == 4 + 3
    assert state.breakdown[0]["bazaar"] == 4
    assert state.breakdown[1]["souks"] == 6 and state.breakdown[1]["bazaar"] == 0


def test_ysp_build_16_crane_one_more_good() -> None:
    """YSP-BUILD-16: the Crane's owner places 1 more good with a goods action."""
    state = turn_state(4, floors={"barrels": (3, 2, 0)})
    state.built[0].append(data.CRANE)
    act(Match(GAME, state), kind="take", floor="barrels", action="floor")
    assert state.pending == 3


def test_ysp_build_17_powers_do_not_touch_card_effects() -> None:
    """YSP-BUILD-17: Pen, Stall and Crane add nothing to the 3-camels, 3-gold, one-good cards."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    state.built[0] += [data.PEN, data.STALL, data.CRANE]
    for card in ("3_camels", "3_gold", "place_board"):
        give_card(state, 0, card)
    match = Match(GAME, state)
    act(match, kind="play", card="3_camels")
    act(match, kind="play", card="3_gold")
    assert (state.camels[0], state.gold[0]) == (3, 5)
    act(match, kind="play", card="place_board")
    assert state.card == "place_board" and state.stage == "place"
    act(match, kind="place", shop="sk3.0")
    assert state.stage == "turn" and sum(1 for s in state.shops if s == 0) == 1


def test_ysp_open_9_build_after_drawing_for_lack_of_a_group() -> None:
    """YSP-OPEN-9: with 3-4 players, a player who drew for lack of a group may still build."""
    state = turn_state(4, floors={})
    state.camels[0] = 2
    match = Match(GAME, state)
    act(match, kind="draw")
    assert "pen" in _builds(match)
