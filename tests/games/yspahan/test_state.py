"""Snapshots and untrusted input: typed errors, and the state unchanged on refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from games.base import Match
from games.errors import (
    GameOverError,
    IllegalChoice,
    MalformedChoice,
    NotYourTurnError,
    SnapshotError,
)
from games.rng import Rng
from games.yspahan import GAME, data
from games.yspahan.decisions import group_size
from protocol.codec import canonical
from tests.games.yspahan.helpers import check_state, give_card, put_goods, turn_state
from tests.harness import play_random


def test_dump_load_round_trip_is_exact_and_json_safe() -> None:
    out = play_random(GAME, 3, 17)
    assert out.match is not None
    dumped = GAME.dump(out.match.state)
    again = GAME.load(json.loads(json.dumps(dumped)))
    assert canonical(GAME.dump(again)) == canonical(dumped)
    fresh = GAME.setup(4, {}, 2)
    assert GAME.dump(GAME.load(GAME.dump(fresh))) == GAME.dump(fresh)


def _broken(**changes: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = dict(GAME.dump(GAME.setup(4, {}, 1)))
    dumped.update(changes)
    return dumped


@pytest.mark.parametrize(
    "garbage",
    [
        {},
        {"schema": 2},
        _broken(players=7),
        _broken(players="4"),
        _broken(gold=[2, 2, 2]),
        _broken(gold=[2, 2, -1, 2]),
        _broken(camels=[0, 0, 0, True]),
        _broken(deck=["3_gold"]),
        _broken(deck=[*GAME.setup(4, {}, 1).deck[:-1], "joker"]),
        _broken(shops=[0] * 47),
        _broken(shops=[9] + [-1] * 46),
        _broken(caravan=[0] * 12),
        _broken(stage="dancing"),
        _broken(steward=40),
        _broken(tower=[[0, 0, 0]] * 5),
        _broken(breakdown=[{}] * 4),
        _broken(built=[[9], [], [], []]),
        _broken(rng="seed"),
    ],
)
def test_load_refuses_garbage_with_a_snapshot_error(garbage: dict[str, Any]) -> None:
    with pytest.raises(SnapshotError):
        GAME.load(garbage)


def test_load_refuses_non_maps() -> None:
    bad: Any
    for bad in (None, [], "x", 3):
        with pytest.raises(SnapshotError):
            GAME.load(bad)


def test_bad_choices_raise_typed_errors_and_leave_the_state_unchanged() -> None:
    state = turn_state(4, floors={"camels": (1, 2, 0), "sacks": (3, 1, 0)})
    put_goods(state, 1, "sk4.0")
    give_card(state, 0, "3_camels")
    match = Match(GAME, state)
    before = canonical(GAME.dump(state))
    with pytest.raises(NotYourTurnError):
        match.act(1, 0)
    with pytest.raises(IllegalChoice, match="out of range"):
        match.act(0, 99)
    with pytest.raises(IllegalChoice, match="no group"):
        match.act(0, {"kind": "take", "floor": "gold", "action": "floor"})
    with pytest.raises(IllegalChoice, match="no tower floor"):
        match.act(0, {"kind": "take", "floor": "roof", "action": "floor"})
    with pytest.raises(IllegalChoice, match="extra dice are chosen next"):
        match.act(0, {"kind": "take", "floor": "camels", "action": "floor", "extra": "3_camels"})
    with pytest.raises(IllegalChoice, match="not possible"):
        match.act(0, {"kind": "fly"})
    with pytest.raises(IllegalChoice, match="no '3_gold' card in hand"):
        match.act(0, {"kind": "play", "card": "3_gold"})
    for bad in ("take", True, None, [0], {"floor": "camels"}):
        with pytest.raises(MalformedChoice):
            match.act(0, bad)
    assert canonical(GAME.dump(state)) == before


def test_why_illegal_names_the_goods_rule_broken() -> None:
    state = turn_state(4, floors={"sacks": (3, 2, 0)})
    put_goods(state, 0, "sk3.0")
    put_goods(state, 1, "sk4.0")
    match = Match(GAME, state)
    match.act(0, {"kind": "take", "floor": "sacks", "action": "floor"})
    before = canonical(GAME.dump(state))
    with pytest.raises(IllegalChoice, match="already holds"):
        match.act(0, {"kind": "place", "shop": "sk3.0"})
    with pytest.raises(IllegalChoice, match="occupied by seat 1"):
        match.act(0, {"kind": "place", "shop": "sk4.1"})
    with pytest.raises(IllegalChoice, match="partly filled"):
        match.act(0, {"kind": "place", "shop": "sk5.0"})
    with pytest.raises(IllegalChoice, match="sacks quarter"):
        match.act(0, {"kind": "place", "shop": "va1.0"})
    with pytest.raises(IllegalChoice, match="no shop named"):
        match.act(0, {"kind": "place", "shop": "zz"})
    assert canonical(GAME.dump(state)) == before


def test_why_illegal_for_buildings_and_cards() -> None:
    state = turn_state(4, floors={"camels": (1, 1, 0)})
    state.camels[0] = 2
    give_card(state, 0, "3_gold")
    match = Match(GAME, state)
    with pytest.raises(IllegalChoice, match="bought after the turn's action"):
        match.act(0, {"kind": "build", "building": "pen"})
    with pytest.raises(IllegalChoice, match="right after taking a group"):
        match.act(0, {"kind": "extra", "card": "3_gold"})
    match.act(0, {"kind": "take", "floor": "camels", "action": "floor"})
    with pytest.raises(IllegalChoice, match="no 'x' card in hand to add"):
        match.act(0, {"kind": "extra", "card": "x"})
    match.act(0, {"kind": "extra", "card": None})
    with pytest.raises(IllegalChoice, match="costs more"):
        match.act(0, {"kind": "build", "building": "bazaar"})
    with pytest.raises(IllegalChoice, match="no building named"):
        match.act(0, {"kind": "build", "building": "tower"})
    match.act(0, {"kind": "build", "building": "pen"})
    with pytest.raises(IllegalChoice, match="only one building per turn"):
        match.act(0, {"kind": "build", "building": "stall"})
    state.built_this_turn = True
    assert (
        GAME.why_illegal(state, {"kind": "build", "building": "pen"}) == "the pen is already built"
    )
    state.camels[0] = 9
    state.gold[0] = 9
    assert GAME.why_illegal(state, {"kind": "build", "building": "stall"}) == (
        "only one building per turn"
    )


def test_finished_match_refuses_choices() -> None:
    out = play_random(GAME, 2, 4)
    assert out.match is not None
    with pytest.raises(GameOverError):
        out.match.act(0, 0)


def test_load_fuzz_accepts_or_refuses_with_our_error() -> None:
    """A snapshot with one field corrupted loads to a playable state or raises SnapshotError."""
    from games.rng import Rng

    out = play_random(GAME, 4, 8)
    assert out.match is not None
    match = Match.new(GAME, 4, {}, 8)
    dumps = []
    for i, index in enumerate(out.choices):
        decision = match.decision
        assert decision is not None
        match.act(decision.seat, index)
        if i % 25 == 0:
            dumps.append(GAME.dump(match.state))
    junk: list[Any] = [None, -1, 0, 1, 5, 99, "x", "turn", [], [0], [-1, 2], {}, True, 2**70]
    rng = Rng(3)
    for _ in range(600):
        dumped = dict(rng.choice(dumps))
        key = rng.choice(sorted(dumped))
        dumped[key] = rng.choice(junk)
        try:
            state = GAME.load(dumped)
        except SnapshotError:
            continue
        decision = GAME.decision(state)
        if decision is not None:
            assert decision.choices
            GAME.shared_view(state)


SNAPSHOTS = Path(__file__).with_name("data") / "snapshots-main-9b44ac7.json"
"""Matches in progress dumped by main 9b44ac7 (schema 1, the release before issue 22's rules):
28 random playouts stopped at every stage, for 2, 3 and 4 players."""


def _old_snapshots() -> list[dict[str, Any]]:
    doc = json.loads(SNAPSHOTS.read_text("utf-8"))
    snapshots: list[dict[str, Any]] = doc["snapshots"]
    return snapshots


def test_snapshots_of_the_previous_release_load_migrated_and_finish() -> None:
    """Real schema-1 snapshots load (migrated to schema 2: no group held for extra dice, the
    one-good card's placement no longer in ``pending``), keep every other field, and play on to
    the end under the new rules with the invariants after every step."""
    snapshots = _old_snapshots()
    assert {(s["players"], s["stage"]) for s in snapshots} >= {
        (n, stage)
        for n in (2, 3, 4)
        for stage in ("yellow", "turn", "place", "steward", "send", "keep", "after")
    }
    for i, snap in enumerate(snapshots):
        raw = snap["state"]
        assert raw["schema"] == 1
        state = GAME.load(raw)
        dumped = GAME.dump(state)
        assert dumped["schema"] == 2 and (dumped["floor"], dumped["extra"]) == (-1, 0)
        for key, value in raw.items():
            if key not in ("schema", "pending"):
                assert dumped[key] == value, key
        if raw["card"] == "place_board":
            assert dumped["pending"] == 0 and state.stage == "place"
        else:
            assert dumped["pending"] == raw["pending"]
        assert GAME.dump(GAME.load(dumped)) == dumped
        match = Match(GAME, state)
        chooser = Rng.from_seed(i)
        steps = 0
        while (decision := match.decision) is not None:
            assert decision.choices
            match.act(decision.seat, chooser.below(len(decision.choices)))
            check_state(match.state)
            steps += 1
            assert steps < 5_000
        result = match.result()
        assert result is not None and list(result.scores) == match.state.score


def test_choices_of_the_previous_release_still_apply_on_the_trusted_path() -> None:
    """A stored log replayed after the upgrade (recovery's trusted apply): a take of the floor
    action naming its one extra card adds it and does the action at once, as it did."""
    snap = next(s for s in _old_snapshots() if s["players"] == 4 and s["stage"] == "turn")
    state = GAME.load(snap["state"])
    seat = state.actor
    floor = next(f for f in range(len(data.FLOORS)) if group_size(state, f))
    give_card(state, seat, "3_gold")
    give_card(state, seat, "3_camels")
    size = group_size(state, floor)
    events = GAME.apply(
        state,
        {"kind": "take", "floor": data.FLOORS[floor], "action": "floor", "extra": "3_gold"},
    )
    take = next(e for e in events if e.kind == "take")
    assert take.data["dice"] == size + 1 and take.data["extra_dice"] == 1
    assert state.hands[seat] == ["3_camels"] and state.stage != "extra"
    state = GAME.load(snap["state"])
    give_card(state, seat, "3_gold")
    GAME.apply(
        state, {"kind": "take", "floor": data.FLOORS[floor], "action": "floor", "extra": None}
    )
    assert state.hands[seat] == ["3_gold"] and state.stage != "extra"


def test_a_dump_lists_its_fields_in_the_documented_order() -> None:
    """``dump`` writes its fields one by one: the order of its map is still ``schema``, ``rng``,
    the integers, the integer lists, then the others (a stored snapshot's bytes unchanged)."""
    from games.yspahan.state import _INT_LISTS, _INTS, _INTS_TAIL

    state = GAME.setup(3, {}, 7)
    rest = ["breakdown", "hands", "built", "deck", "discard", "tower", "stage"]
    rest += ["built_this_turn", "card", "resume"]
    assert list(GAME.dump(state)) == ["schema", "rng", *_INTS, *_INTS_TAIL, *_INT_LISTS, *rest]
