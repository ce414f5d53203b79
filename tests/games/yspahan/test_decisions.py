"""Card plays at every decision of one's own turn (YSP-CARD-05, YSP-OPEN-6), as
games/yspahan/decisions.py lays them out: one ``cards`` choice opening the card list."""

from __future__ import annotations

from typing import Any

from games.base import Match
from games.yspahan import GAME, data, decisions
from games.yspahan.state import YState
from tests.games.yspahan.helpers import act, choices, give_card, kinds, put_goods, turn_state

CARDS = {"kind": "cards"}


def _match(players: int = 4, hand: tuple[str, ...] = (), **floors: Any) -> Match[YState]:
    state = turn_state(players, floors=floors)
    for card in hand:
        give_card(state, 0, card)
    return Match(GAME, state)


def _count_cards(match: Match[YState]) -> int:
    return sum(1 for c in choices(match) if c == CARDS)


def test_ysp_card_05_open_6_one_cards_choice_at_every_decision_of_the_turn() -> None:
    """YSP-CARD-05, YSP-OPEN-6: «A tout moment, le joueur peut défausser une carte et appliquer
    l'action correspondante», within «son tour de jeu». Every decision of the actor's own turn
    besides ``turn`` and ``after`` (which list the plays themselves) carries exactly one
    ``cards`` choice while a card is playable: extra dice, goods, steward, send, keep (their own
    good), build (2 players)."""
    hand = ("3_gold", "3_camels", "3_camels")
    match = _match(hand=hand, sacks=(3, 2, 0))
    act(match, kind="take", floor="sacks", action="floor")
    assert match.decision is not None and match.decision.kind == "extra"
    assert _count_cards(match) == 1 and choices(match)[-1] == CARDS
    act(match, kind="extra", card=None)
    assert match.decision is not None and match.decision.kind == "place"
    assert _count_cards(match) == 1 and choices(match)[-1] == CARDS
    assert len(choices(match)) == 1 + sum(1 for c in choices(match) if c["kind"] == "place")

    match = _match(hand=hand, sacks=(1, 2, 0))
    state = match.state
    state.camels[0] = 1
    put_goods(state, 0, "br2.0")
    put_goods(state, 2, "va1.0")
    act(match, kind="take", floor="sacks", action="steward")
    assert match.decision is not None and match.decision.kind == "steward"
    assert _count_cards(match) == 1
    act(match, kind="move", to="E1", gold=0)
    assert match.decision is not None and match.decision.kind == "send"
    assert choices(match) == [
        {"kind": "send", "shop": "br2.0"},
        {"kind": "send", "shop": "va1.0"},
        CARDS,
    ]
    act(match, kind="send", shop="br2.0")
    assert match.decision is not None and match.decision.kind == "keep"
    assert choices(match) == [
        {"kind": "keep", "shop": "br2.0", "pay": False},
        {"kind": "keep", "shop": "br2.0", "pay": True},
        CARDS,
    ]

    match = _match(2, hand=("3_gold",), camels=(1, 2, 0))
    state = match.state
    state.camels[0] = 2
    act(match, kind="take", floor="camels", action="build")
    assert match.decision is not None and match.decision.kind == "build"
    assert choices(match)[-1] == CARDS and _count_cards(match) == 1


def test_ysp_open_6_no_cards_choice_outside_ones_turn_or_inside_a_card() -> None:
    """YSP-OPEN-6, YSP-CARD-01: no card during the yellow dice (before the turns), in another
    player's turn (an owner keeping a good), or inside a card's own follow-up (an amount, the
    one-good card's placement); and none offered with no playable card."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    give_card(state, 0, "score_gold")
    give_card(state, 0, "place_board")
    match = Match(GAME, state)
    act(match, kind="play", card="score_gold")
    assert kinds(match) == {"pay"}
    act(match, kind="pay", gold=0)
    act(match, kind="play", card="place_board")
    assert kinds(match) == {"place"}

    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    give_card(state, 2, "3_camels")
    state.camels[2] = 1
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    assert match.decision is not None and match.decision.seat == 2
    assert kinds(match) == {"keep"}

    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.stage = "yellow"
    give_card(state, 0, "3_gold")
    assert kinds(Match(GAME, state)) == {"yellow"}

    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    assert CARDS not in choices(match)  # an empty hand


def test_ysp_open_6_the_card_list_and_back() -> None:
    """YSP-OPEN-6: ``cards`` lists each playable card once and ``back``; back returns to the
    same decision unchanged; a card played there returns to it afterwards."""
    match = _match(hand=("3_gold", "3_gold", "no_camels"), sacks=(3, 2, 0))
    state = match.state
    act(match, kind="take", floor="sacks", action="steward")
    before = list(choices(match))
    act(match, kind="cards")
    assert match.decision is not None and match.decision.kind == "cards"
    assert choices(match) == [
        {"kind": "play", "card": "3_gold"},
        {"kind": "play", "card": "no_camels"},
        {"kind": "back"},
    ]
    act(match, kind="back")
    assert choices(match) == before and state.resume == ""
    act(match, kind="cards")
    events = act(match, kind="play", card="3_gold")
    assert [e.kind for e in events] == ["play", "gain"]
    assert state.stage == "steward" and state.gold[0] == 5 and state.pending == 3
    assert len([c for c in choices(match) if c["kind"] == "move"]) > len(before) - 1


def test_ysp_open_6_a_caravanserai_card_pays_for_keeping_the_next_good() -> None:
    """YSP-OPEN-6, YSP-BUILD-13: the audit's case. During one's own steward move, the card the
    Caravanserai draws for the first good sent (3 camels) may be played at once to pay a camel
    and keep the next good, one's own too."""
    state = turn_state(4, floors={"sacks": (1, 2, 0)})
    state.built[0].append(data.CARAVANSERAI)
    state.camels[0] = 0
    put_goods(state, 0, "br2.0", "va1.0")
    state.deck.remove("3_camels")
    state.deck.append("3_camels")  # the next card drawn
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="E1", gold=0)
    events = act(match, kind="send", shop="br2.0")
    assert state.hands[0] == ["3_camels"] and state.caravan == [0]
    assert any(e.kind == "draw" for e in events)
    # No camel, but a card that gives some: the keep question is asked, with the card list.
    assert choices(match) == [{"kind": "keep", "shop": "va1.0", "pay": False}, CARDS]
    act(match, kind="cards")
    act(match, kind="play", card="3_camels")
    assert state.camels[0] == 3 and state.stage == "keep"
    assert {"kind": "keep", "shop": "va1.0", "pay": True} in choices(match)
    act(match, kind="keep", shop="va1.0", pay=True)
    assert state.shops[data.SHOP_INDEX["va1.0"]] == 0 and state.camels[0] == 2
    assert state.caravan == [0, 0] and len(state.hands[0]) == 1  # drew again for the reserve's
    assert state.stage == "after"


def test_ysp_open_6_a_keep_asked_again_after_a_card() -> None:
    """YSP-OPEN-6: a card that spends the camel a keep needs sends the good at once (the only
    possible answer left)."""
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    state.camels[0] = 1
    give_card(state, 0, "score_camels")
    put_goods(state, 0, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    act(match, kind="cards")
    act(match, kind="play", card="score_camels")
    events = act(match, kind="pay", camels=1)
    assert state.camels[0] == 0 and state.caravan == [0]
    assert any(e.kind == "caravan" for e in events) and state.stage == "after"


def test_ysp_open_6_the_one_good_card_in_the_middle_of_a_goods_action() -> None:
    """YSP-OPEN-6, YSP-CARD-12: the one-good card played while placing goods puts its good in
    any quarter; the goods action then goes on where it was (goods left, quarter), and ends if
    the card took its last legal shop."""
    state = turn_state(4, floors={"vases": (5, 2, 0)})
    give_card(state, 0, "place_board")
    put_goods(state, 1, "va2.0", "va3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="vases", action="floor")
    act(match, kind="extra", card=None)
    assert state.pending == 2 and [c.get("shop") for c in choices(match)] == ["va1.0", None]
    act(match, kind="cards")
    act(match, kind="play", card="place_board")
    assert state.stage == "place" and state.card == "place_board"
    assert "sk3.0" in [c["shop"] for c in choices(match)]
    view = GAME.shared_view(state)["pending"]
    assert view["goods"] == 2 and view["quarter"] == "vases" and view["card"] == "place_board"
    act(match, kind="place", shop="sk3.0")
    assert state.stage == "place" and state.pending == 2 and state.card == ""
    assert choices(match) == [{"kind": "place", "shop": "va1.0"}]  # the hand is empty now
    events = act(match, kind="place", shop="va1.0")
    assert [e.kind for e in events] == ["place", "overflow"] and state.stage == "after"

    state = turn_state(4, floors={"vases": (5, 2, 0)})
    give_card(state, 0, "place_board")
    put_goods(state, 1, "va2.0", "va3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="vases", action="floor")
    act(match, kind="extra", card=None)
    act(match, kind="cards")
    act(match, kind="play", card="place_board")
    events = act(match, kind="place", shop="va1.0")  # the card takes the quarter's last shop
    assert [e.kind for e in events] == ["place", "overflow"] and state.stage == "after"
    assert events[1].data["goods"] == 2


def test_ysp_open_6_a_card_in_the_middle_of_the_extra_dice() -> None:
    """YSP-OPEN-6: the card list during the extra-dice question; once the last card is gone
    the floor action goes on with the dice added so far."""
    match = _match(hand=("3_gold", "3_camels"), camels=(1, 2, 0))
    state = match.state
    act(match, kind="take", floor="camels", action="floor")
    act(match, kind="extra", card="3_camels")
    act(match, kind="cards")
    events = act(match, kind="play", card="3_gold")
    take = next(e for e in events if e.kind == "take")
    assert take.data["dice"] == 3 and take.data["extra_dice"] == 1
    assert state.gold[0] == 5 and state.camels[0] == 3 and state.stage == "after"


def test_ysp_open_6_two_players_a_build_the_player_can_no_longer_pay() -> None:
    """YSP-OPEN-6, YSP-BUILD-08: with 2 players a card played during the build a dice group
    pays for may leave nothing affordable; the group then builds nothing (event no_build)."""
    match = _match(2, hand=("score_camels",), camels=(1, 2, 0))
    state = match.state
    state.camels[0] = 2
    state.gold[0] = 0
    act(match, kind="take", floor="camels", action="build")
    assert [c.get("building") for c in choices(match)] == ["pen", None]
    act(match, kind="cards")
    act(match, kind="play", card="score_camels")
    events = act(match, kind="pay", camels=2)
    assert [e.kind for e in events][-1] == "no_build"
    assert state.stage == "after" and state.built[0] == [] and state.score[0] == 4


def test_ysp_view_07_being_asked_reveals_nothing_of_the_hand() -> None:
    """YSP-VIEW-07, YSP-OPEN-6: whether the actor is asked about their own good without a camel
    depends on the hand's size (public), not on its cards: a hand that could buy the camel and
    one that could not lead to the same public decisions."""
    seen = []
    for card in ("3_camels", "no_gold"):
        state = turn_state(4, floors={"sacks": (3, 2, 0)})
        give_card(state, 0, card)
        put_goods(state, 0, "sk3.0")
        match = Match(GAME, state)
        act(match, kind="take", floor="sacks", action="steward")
        act(match, kind="move", to="W3", gold=0)
        decision = match.decision
        assert decision is not None
        seen.append((decision.seat, decision.kind, GAME.shared_view(state)))
        assert decision.choices[0] == {"kind": "keep", "shop": "sk3.0", "pay": False}
    assert seen[0] == seen[1] and seen[0][1] == "keep"


def test_ysp_open_6_a_last_card_played_at_a_keep_round_trips_and_resumes() -> None:
    """YSP-OPEN-6: the exchange card, the actor's last, played at the keep of their own good
    without a camel: the snapshot of its amount step loads (the keep waits to be asked again)
    and the keep then stands on what the card gave."""
    state = turn_state(3, floors={"sacks": (3, 2, 0)})
    give_card(state, 0, "swap_camels_gold")
    put_goods(state, 0, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    assert choices(match) == [{"kind": "keep", "shop": "sk3.0", "pay": False}, CARDS]
    act(match, kind="cards")
    act(match, kind="play", card="swap_camels_gold")
    assert state.stage == "amount" and state.hands[0] == [] and state.resume == "keep"
    assert GAME.dump(GAME.load(GAME.dump(state))) == GAME.dump(state)
    act(match, kind="swap", camels=1)
    assert state.stage == "keep" and state.camels[0] == 1
    act(match, kind="keep", shop="sk3.0", pay=True)
    assert state.shops[data.SHOP_INDEX["sk3.0"]] == 0 and state.caravan == [0]

    state = turn_state(3, floors={"sacks": (3, 2, 0)})
    give_card(state, 0, "swap_camels_gold")
    put_goods(state, 0, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    act(match, kind="move", to="W3", gold=0)
    act(match, kind="cards")
    act(match, kind="play", card="swap_camels_gold")
    events = act(match, kind="swap", camels=0)  # nothing gained: the good goes at once
    assert any(e.kind == "caravan" for e in events) and state.stage == "after"


def test_each_take_choice_is_a_map_of_its_own() -> None:
    """The take choices are copies of models: no two decisions share a map, nor hand a model
    out (a legal choice goes to the log and the undo steps as it is)."""
    state = turn_state(4, floors={"camels": (1, 2, 0), "gold": (6, 1, 0)})
    first, again = decisions.turn_choices(state), decisions.turn_choices(state)
    assert first == again and len(first) == 6
    assert all(a is not b for a, b in zip(first, again, strict=True))
    models = [model for takes in decisions._TAKES for model in takes]
    assert not any(c is model for c in first for model in models)
    first[0]["action"] = "changed"
    assert decisions.turn_choices(state) == again
