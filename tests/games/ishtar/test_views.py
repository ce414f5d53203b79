"""What each audience sees (ISH-VIEW): face-down piles and deck, secret planted cards."""

from __future__ import annotations

import json
from typing import Any

from games.base import audience_view
from games.ishtar import GAME
from games.ishtar.state import State
from games.rng import Rng
from protocol.codec import canonical
from tests.games.ishtar.helpers import game_view, new_match, pick, play_turn
from tests.harness import play_random


def _text(state: State, seat: int | None) -> str:
    return json.dumps(audience_view(GAME, state, seat).to_json())


def _all_texts(state: State) -> list[str]:
    return [_text(state, s) for s in [*range(len(state.players)), None]]


def _hidden_tiles(state: State) -> set[str]:
    hidden = set(state.cut)
    for pile, up in zip(state.piles, state.top_up, strict=True):
        hidden |= set(pile[:-1] if up else pile)
    return hidden


def test_ish_view_01_03_04_face_down_tiles_are_never_shown() -> None:
    """Also ISH-VIEW-03 ISH-VIEW-04."""

    def check(m: Any) -> None:
        state = m.state
        texts = _all_texts(state)
        for tid in _hidden_tiles(state):
            assert all(f'"{tid}"' not in t for t in texts), tid
        shared = game_view(state)
        assert [p["count"] for p in shared["piles"]] == [len(p) for p in state.piles]

    play_random(GAME, 2, 3, on_step=check)


def test_ish_view_02_03_tops_public_once_face_up() -> None:
    """Also ISH-VIEW-03."""
    match = new_match(2, 1)
    state = match.state
    piles = game_view(state)["piles"]
    assert [p["top"]["id"] for p in piles] == [p[-1] for p in state.piles]
    pick(match, "pile", pile=0)
    new_top = state.piles[0][-1]
    assert all(f'"{new_top}"' not in t for t in _all_texts(state))  # taker included
    play_turn(match)
    pick(match, "pile", pile=1)
    assert f'"{new_top}"' in _text(state, None)


def test_ish_view_05_deck_order_hidden_size_public() -> None:
    state = new_match(3).state
    shared = game_view(state)
    assert shared["deck"] == 21
    for card in state.deck:
        assert all(f'"{card}"' not in t for t in _all_texts(state))


def _buy_one(seed: int = 0) -> tuple[Any, str]:
    match = new_match(2, seed)
    while True:
        d = match.decision
        assert d is not None
        buys = [c for c in d.choices if c["kind"] == "buy"]
        if buys:
            match.state.player.gems = {"purple": 9, "red": 9, "white": 9}
            card = str(buys[0]["card"])
            match.act(d.seat, buys[0])
            match.act(d.seat, 0)
            return match, card
        if d.kind == "plant":
            match.state.player.gems = {"purple": 9, "red": 9, "white": 9}
            match.state.cache.clear()
            from games.base import Match

            match = Match(GAME, match.state)
            continue
        kinds = [c["kind"] for c in d.choices]
        match.act(d.seat, kinds.index("pass") if "pass" in kinds else 0)


def test_ish_view_06_planted_cards_seen_by_their_owner_only() -> None:
    match, card = _buy_one()
    state = match.state
    owner = state.current
    assert f'"{card}"' in _text(state, owner)
    assert f'"{card}"' not in _text(state, 1 - owner)
    assert f'"{card}"' not in _text(state, None)
    shared = game_view(state)
    assert shared["players"][owner]["planted"] == 1


def test_ish_view_07_everything_revealed_at_the_end() -> None:
    out = play_random(GAME, 2, 5)
    assert out.match is not None
    state = out.match.state
    shared = game_view(state)
    for p in state.players:
        assert shared["players"][p.seat]["planted_cards"] == p.planted


def test_ish_view_08_reservations_are_public() -> None:
    state = new_match(2).state
    state.players[1].reserved_tree = state.deck[-1]
    state.players[1].reserved_tile = state.cut[0] if state.cut else state.piles[0][0]
    shared = game_view(state, 0)
    p1 = shared["players"][1]
    assert p1["reserved_tree"]["card"] == state.deck[-1]
    assert p1["reserved_tile"]["id"] == state.players[1].reserved_tile


def test_ish_view_09_public_parts_are_in_the_shared_view() -> None:
    match = new_match(2, 4)
    play_turn(match)
    shared = game_view(match.state)
    for key in (
        "terrain", "fountains", "rock_gems", "laid", "piles", "can", "display",
        "deck", "markers", "tokens", "stock", "players",
    ):  # fmt: skip
        assert key in shared
    assert "rng" not in json.dumps(shared)


def test_ish_view_10_hidden_variants_look_the_same_to_who_may_not_see() -> None:
    match, _ = _buy_one(2)
    state = match.state
    owner = state.current
    rng = Rng.from_seed(9)
    for viewer in (1 - owner, None):
        variant = GAME.hidden_variant(state, viewer, rng)
        assert variant.players[owner].planted != state.players[owner].planted or len(state.deck) < 2
        a = canonical(audience_view(GAME, state, viewer).to_json())
        b = canonical(audience_view(GAME, variant, viewer).to_json())
        assert a == b
    variant = GAME.hidden_variant(state, owner, rng)
    assert variant.players[owner].planted == state.players[owner].planted


def test_ish_view_09_kept_parts_match_a_state_rebuilt_from_its_snapshot() -> None:
    """ISH-VIEW-09: what the shared view keeps between revisions (``laid``, ``beds``,
    ``fountains``, ``rock_gems``, ``provisional``, ``players``, ``piles``, ``display``,
    ``tokens``) is what a state loaded from the snapshot, which keeps nothing, shows, after
    every step of a game with undos; and while nothing changes the kept parts are handed out
    again as the very same objects."""
    kept = (
        "laid",
        "beds",
        "fountains",
        "rock_gems",
        "provisional",
        "players",
        "piles",
        "display",
        "tokens",
    )
    steps = 0

    def check(m: Any) -> None:
        nonlocal steps
        state = m.state
        live = game_view(state)
        fresh = game_view(GAME.load(GAME.dump(state)))
        assert canonical(live) == canonical(fresh)
        again = game_view(state)
        for name in kept:
            assert again[name] is live[name] or live[name] is None, name
        steps += 1

    play_random(GAME, 3, 5, on_step=check, undo=0.2)
    assert steps > 100


def test_ish_view_09_kept_parts_follow_each_fact_changed_alone() -> None:
    """ISH-VIEW-09: each fact that a kept part shows, changed alone between two views (a
    face-down pile's count, a gem of a player with skill C, an assistant of one with skill E),
    changes that part: the kept parts are compared with the state, not only with what was laid;
    and what did not change is handed out again as the very same object."""
    state = new_match(3, seed=4).state
    for seat, skill in enumerate("ACE"):
        state.players[seat].skills[skill] = 0
        state.players[seat].skill_gems[skill] = []
    state.top_up[0] = False

    def changed(name: str, change: Any) -> None:
        before = game_view(state)
        change()
        after = game_view(state)
        assert canonical(after) == canonical(game_view(GAME.load(GAME.dump(state))))
        assert after[name] != before[name], name
        for other in ("laid", "beds", "fountains", "rock_gems", "display", "tokens"):
            assert after[other] is before[other], other

    def pay_one() -> None:
        state.stock["red"] -= 1
        state.players[1].gems["red"] += 1

    def block_one() -> None:
        state.players[2].assistants -= 1
        state.players[2].blocked += 1

    changed("piles", lambda: state.discarded.append(state.piles[0].pop(0)))
    changed("provisional", pay_one)
    changed("provisional", block_one)
    changed("players", lambda: state.players[0].skill_gems["A"].append("red"))
