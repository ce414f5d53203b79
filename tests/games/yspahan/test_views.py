"""Views and hidden information (YSP-VIEW)."""

from __future__ import annotations

from typing import Any

from games.base import Match, audience_view
from games.rng import Rng
from games.yspahan import GAME, data
from games.yspahan.state import YState
from games.yspahan.views import copy_state
from protocol.codec import canonical
from tests.games.yspahan.helpers import act, give_card, put_goods, shared, turn_state
from tests.harness import play_random


def _mid_game(players: int = 4, seed: int = 3, steps: int = 150) -> YState:
    out = play_random(GAME, players, seed)
    match = Match.new(GAME, players, {}, seed)
    for index in out.choices[:steps]:
        decision = match.decision
        assert decision is not None
        match.act(decision.seat, index)
    return match.state


def _views(state: YState) -> dict[int | None, bytes]:
    return {a: canonical(audience_view(GAME, state, a).to_json()) for a in [*range(4), None]}


def test_ysp_view_01_hands_are_seen_by_their_owner_only() -> None:
    """YSP-VIEW-01: the hand is in its owner's own view; everyone sees the count."""
    state = turn_state(4)
    give_card(state, 1, "3_gold")
    give_card(state, 1, "no_camels")
    assert GAME.own_view(state, 1) == {"hand": ["3_gold", "no_camels"]}
    assert GAME.own_view(state, 0) == {"hand": []}
    view = shared(state)
    assert [p["cards"] for p in view["players"]] == [0, 2, 0, 0]
    assert "3_gold" not in str(view)


def test_ysp_view_02_deck_order_hidden_size_public() -> None:
    """YSP-VIEW-02: states differing only in deck order give identical views to all."""
    a = turn_state(4)
    b = copy_state(a)
    b.deck.reverse()
    assert a.deck != b.deck
    assert _views(a) == _views(b)
    assert shared(a)["deck"] == 18


def test_ysp_view_03_drawn_cards_shown_to_the_drawer_only() -> None:
    """YSP-VIEW-03: the draw action, the draw with no group, the Caravanserai draw."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    events = act(Match(GAME, state), kind="take", floor="camels", action="card")
    draw = next(e for e in events if e.kind == "draw")
    card = state.hands[0][0]
    assert draw.project(0)["card"] == card
    assert "card" not in draw.project(1) and "card" not in draw.project(None)

    state = turn_state(4, floors={})
    events = act(Match(GAME, state), kind="draw")
    draw = next(e for e in events if e.kind == "draw")
    assert "card" in draw.project(0) and "card" not in draw.project(3)

    state = turn_state(4, floors={"sacks": (3, 1, 0)})
    state.built[2].append(data.CARAVANSERAI)
    put_goods(state, 2, "sk3.0")
    match = Match(GAME, state)
    act(match, kind="take", floor="sacks", action="steward")
    events = act(match, kind="move", to="W3", gold=0)
    draw = next(e for e in events if e.kind == "draw")
    assert "card" in draw.project(2) and "card" not in draw.project(0)


def test_ysp_view_04_cards_played_for_effect_are_public() -> None:
    """YSP-VIEW-04: a played card is named in the public event and lies on the discard pile."""
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    give_card(state, 0, "3_camels")
    events = act(Match(GAME, state), kind="play", card="3_camels")
    seen = events[0].project(None)
    assert {k: seen[k] for k in ("kind", "seat", "card")} == {
        "kind": "play",
        "seat": 0,
        "card": "3_camels",
    }
    assert shared(state)["discard"] == ["3_camels"]


def test_ysp_view_05_dice_public_once_rolled_never_before() -> None:
    """YSP-VIEW-05: before the roll the tower is empty and the generator never shows."""
    state = GAME.setup(4, {}, 11)
    other = copy_state(state)
    other.rng = Rng(12345)
    assert _views(state) == _views(other)
    assert all(f["value"] == 0 for f in shared(state)["tower"])
    match = Match(GAME, state)
    events = act(match, kind="yellow", dice=0)
    roll: Any = events[0].project(None)
    tower = shared(state)["tower"]
    assert sorted(roll["white"]) == roll["white"]
    assert sum(f["white"] for f in tower) == 9
    assert str(state.rng.state) not in str(shared(state))


def test_ysp_view_06_everything_else_is_public() -> None:
    """YSP-VIEW-06: tower, city, caravan, steward, camels, gold, buildings, scores, day, week."""
    state = turn_state(4, floors={"camels": (2, 3, 0)})
    put_goods(state, 1, "sk3.0")
    state.caravan = [2]
    state.built[3].append(data.HAMMAM)
    view = shared(state)
    for key in ("tower", "city", "caravan", "steward", "players", "week", "day", "pawn", "deck"):
        assert key in view
    player = view["players"][1]
    assert {"gold", "camels", "score", "buildings", "breakdown", "cards"} <= set(player)
    assert view["city"]["sk3"] == [1, None, None]
    assert view["caravan"] == {"capacity": 12, "goods": [2]}
    assert view["players"][3]["buildings"] == ["hammam"]
    assert view["steward"] == "C"


def test_ysp_view_07_hidden_variants_look_the_same_to_every_other_seat() -> None:
    """YSP-VIEW-07: re-dealing hands and deck changes no view of a seat that cannot see them."""
    state = _mid_game()
    rng = Rng(5)
    for viewer in [*range(4), None]:
        variant = GAME.hidden_variant(state, viewer, rng)
        mine = canonical(audience_view(GAME, state, viewer).to_json())
        theirs = canonical(audience_view(GAME, variant, viewer).to_json())
        assert mine == theirs
    # and the variant really differs somewhere hidden (so the check has teeth)
    variant = GAME.hidden_variant(state, 0, Rng(6))
    assert variant.rng.state != state.rng.state


def test_final_view_holds_the_breakdown() -> None:
    """At the end the shared view holds each player's score per category."""
    out = play_random(GAME, 4, 21)
    assert out.match is not None
    view: Any = out.match.view(None).to_json()
    result = view["shared"]["result"]
    assert result is not None
    players = view["shared"]["game"]["players"]
    assert [p["breakdown"] for p in players] == result["breakdown"]
    assert [sum(p["breakdown"].values()) for p in players] == result["scores"]
