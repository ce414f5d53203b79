"""The game contract (games.base) and the shared harness, exercised on the tiny test game."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from games import registry
from games.base import Decision, Match, answers, bare, own_part, same, seat_name, shared_part
from games.errors import (
    GameOverError,
    IllegalChoice,
    MalformedChoice,
    NotYourTurnError,
    OptionsError,
)
from protocol.codec import canonical
from tests.games.tiny import TINY, TinyState
from tests.harness import check_playout, play_random


def _conserved(state: TinyState) -> None:
    held = sum(len(h) for h in state.hands)
    played = sum(state.scores)
    assert held + len(state.deck) <= 12
    assert played + sum(map(sum, state.hands)) + sum(state.deck) == 42


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(5))
def test_harness_passes_on_the_tiny_game(players: int, seed: int) -> None:
    out = check_playout(TINY, players, seed, invariants=_conserved)
    assert out.match is not None and out.match.over
    assert out.steps >= 12


def test_same_seed_same_match() -> None:
    a = play_random(TINY, 3, 42)
    b = play_random(TINY, 3, 42)
    assert a.choices == b.choices
    assert a.match is not None and b.match is not None
    assert canonical(TINY.dump(a.match.state)) == canonical(TINY.dump(b.match.state))


def test_harness_catches_a_leaking_view() -> None:
    class Leaky(type(TINY)):  # type: ignore[misc]
        def shared_view(self, state: TinyState) -> dict[str, object]:  # type: ignore[override]
            return {**super().shared_view(state), "hands_shown": copy.deepcopy(state.hands)}

    with pytest.raises(AssertionError, match="sees something hidden"):
        check_playout(Leaky(), 2, 1)


def test_harness_catches_a_seat_seeing_another_hand() -> None:
    class Peeking(type(TINY)):  # type: ignore[misc]
        def own_view(self, state: TinyState, seat: int) -> dict[str, object]:  # type: ignore[override]
            other = (seat + 1) % len(state.hands)
            return {**super().own_view(state, seat), "peek": sorted(state.hands[other])}

    with pytest.raises(AssertionError, match="audience 0 sees something hidden"):
        check_playout(Peeking(), 2, 1)


def test_harness_catches_a_snapshot_that_loses_state() -> None:
    class Forgetful(type(TINY)):  # type: ignore[misc]
        def dump(self, state: TinyState) -> dict[str, object]:  # type: ignore[override]
            return {**super().dump(state), "scores": [0] * len(state.scores)}

    with pytest.raises(AssertionError, match="restored"):
        check_playout(Forgetful(), 2, 1)


def test_bad_choices_raise_typed_errors_and_change_nothing() -> None:
    match = Match.new(TINY, 2, {}, 7)
    before = canonical(TINY.dump(match.state))
    decision = match.decision
    assert decision is not None
    with pytest.raises(NotYourTurnError):
        match.act(1 - decision.seat, 0)
    with pytest.raises(IllegalChoice):
        match.act(decision.seat, len(decision.choices))
    with pytest.raises(IllegalChoice):
        match.act(decision.seat, {"kind": "play", "card": 99})
    with pytest.raises(IllegalChoice, match="not possible"):
        match.act(decision.seat, {"kind": "fly"})
    for bad in ("draw", True, None, [0], {"card": 1}):
        with pytest.raises(MalformedChoice):
            match.act(decision.seat, bad)
    assert canonical(TINY.dump(match.state)) == before
    match.act(decision.seat, dict(decision.choices[0]))  # a choice map equal to a legal one


def test_finished_match_refuses_choices() -> None:
    out = play_random(TINY, 2, 3)
    assert out.match is not None
    with pytest.raises(GameOverError):
        out.match.act(0, 0)
    result = out.match.result()
    assert result is not None
    assert max(result.scores) == result.scores[result.winners[0]]


def test_options_and_player_counts_are_checked() -> None:
    with pytest.raises(OptionsError):
        Match.new(TINY, 5, {}, 1)
    with pytest.raises(OptionsError, match="unknown options"):
        Match.new(TINY, 2, {"speed": 3}, 1)


def test_registry_finds_registered_games_and_names_unknown_ones() -> None:
    registry.register(TINY)
    assert registry.get("tiny") is TINY
    assert "tiny" in registry.names()
    with pytest.raises(OptionsError, match="unknown game"):
        registry.get("chess")


def test_a_built_in_engine_that_is_absent_is_an_unknown_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(registry._BUILTIN, "ghost", "tests.games.engines.ghost")
    assert "ghost" not in registry.names()
    with pytest.raises(OptionsError, match="unknown game 'ghost'"):
        registry.get("ghost")


@pytest.mark.parametrize(
    ("module", "error"),
    [("broken_import", ModuleNotFoundError), ("no_game", AttributeError)],
)
def test_a_built_in_engine_that_is_broken_fails_loudly(
    monkeypatch: pytest.MonkeyPatch, module: str, error: type[Exception]
) -> None:
    """A bug inside an engine (even a missing module it imports) is never "unknown game"."""
    monkeypatch.setitem(registry._BUILTIN, "broken", f"tests.games.engines.{module}")
    assert "broken" in registry.names()
    with pytest.raises(error):
        registry.get("broken")


class _Counting(type(TINY)):  # type: ignore[misc]
    """The tiny game, counting how often the legal choices are listed."""

    listed = 0

    def decision(self, state: TinyState) -> Decision | None:
        type(self).listed += 1
        found: Decision | None = super().decision(state)
        return found


def test_push_applies_a_resolved_choice_and_legality_is_decided_once() -> None:
    """``act`` is ``resolve`` then ``push``; ``push`` lists no choices and checks the seat."""
    game = _Counting()
    a, b = Match.new(game, 2, {}, 5), Match.new(TINY, 2, {}, 5)
    for _ in range(6):
        _Counting.listed = 0
        decision = a.decision
        assert decision is not None
        legal = a.resolve(decision.seat, 0)
        a.push(decision.seat, legal)
        assert _Counting.listed == 1
        b.act(decision.seat, 0)
        assert canonical(TINY.dump(a.state)) == canonical(TINY.dump(b.state))


def test_push_for_the_wrong_seat_or_after_the_end_raises_and_changes_nothing() -> None:
    match = Match.new(TINY, 2, {}, 7)
    decision = match.decision
    assert decision is not None
    before = canonical(TINY.dump(match.state))
    with pytest.raises(NotYourTurnError):
        match.push(1 - decision.seat, decision.choices[0])
    assert canonical(TINY.dump(match.state)) == before
    out = play_random(TINY, 2, 3)
    assert out.match is not None
    with pytest.raises(GameOverError):
        out.match.push(0, {"kind": "draw"})


def test_events_project_private_fields_to_their_seat_only() -> None:
    match = Match.new(TINY, 2, {}, 11)
    decision = match.decision
    assert decision is not None
    draw = next(i for i, c in enumerate(decision.choices) if c["kind"] == "draw")
    (event,) = match.act(decision.seat, draw)
    assert "card" in event.project(decision.seat)
    assert "card" not in event.project(1 - decision.seat)
    assert "card" not in event.project(None)


def test_a_choice_map_must_match_with_the_same_types() -> None:
    """``True``, ``1`` and ``1.0`` are different answers (issue 22): Python's ``==`` would take
    ``{"pile": True}`` for ``{"pile": 1}``; Match refuses it, at any depth, and names the cause.
    """
    game = registry.get("ishtar")
    match = Match.new(game, 2, {}, 7)
    decision = match.decision
    assert decision is not None
    assert {"kind": "pile", "pile": 1, "cost": 0} in decision.choices
    before = canonical(game.dump(match.state))
    for wrong in (
        {"kind": "pile", "pile": True, "cost": 0},
        {"kind": "pile", "pile": 1.0, "cost": 0},
        {"kind": "pile", "pile": 1, "cost": False},
    ):
        with pytest.raises(IllegalChoice, match=r"true, 1 and 1\.0 are different answers"):
            match.act(decision.seat, wrong)
    assert canonical(game.dump(match.state)) == before
    match.act(decision.seat, {"kind": "pile", "pile": 1, "cost": 0})
    decision = match.decision
    assert decision is not None
    position = next(c for c in decision.choices if c["kind"] == "position")
    at = position["at"]
    assert isinstance(at, list)
    with pytest.raises(IllegalChoice, match=r"true, 1 and 1\.0 are different answers"):
        match.act(decision.seat, {**position, "at": [float(str(at[0])), at[1]]})


def test_same_and_answers_compare_types_at_every_depth() -> None:
    assert same({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]})
    assert not same({"a": [1, {"b": 0}]}, {"a": [1, {"b": False}]})
    assert not same([1, 2], [1, 2.0])
    assert not same([1, 2], (1, 2))
    assert not same(1, True) and not same(0.0, 0) and not same("1", 1)
    legal: dict[str, Any] = {"kind": "k", "at": [1, 2], "cells": [[1, 2]]}
    assert answers(legal, {"kind": "k", "at": [1, 2], "cells": [[1, 2]]})
    assert not answers(legal, {"kind": "k", "at": [1, 2]})
    assert answers(legal, {"kind": "k", "at": [1, 2]}, ("cells",))
    assert not answers(legal, {"kind": "k", "at": [1, 2], "cells": [[1, 2.0]]}, ("cells",))
    assert not answers(legal, {"kind": "k", "at": [1, 2], "x": 1}, ("cells",))
    assert not answers(legal, {"kind": "k", "at": [True, 2], "cells": [[1, 2]]})


def test_a_listed_choice_matches_with_or_without_its_label_and_effects() -> None:
    """SPEC section 3: a client may send back a listed map as shown (label, effects) or bare."""
    game = registry.get("ishtar")
    for listed_as in ("shown", "bare", "effects"):
        match = Match.new(game, 2, {}, 5)
        decision = match.decision
        assert decision is not None
        shown = own_part(game, match.state, decision.seat, decision)["choices"]
        choice = dict(shown[1])  # type: ignore[arg-type]
        assert isinstance(choice["label"], str) and choice["label"]
        if listed_as == "bare":
            del choice["label"]
        elif listed_as == "effects":
            choice["effects"] = {"anything": 1}
        assert match.resolve(decision.seat, choice) is decision.choices[1]
        assert "label" not in decision.choices[1], "the legal map (what is stored) stays bare"
    with pytest.raises(IllegalChoice):
        match.resolve(decision.seat, {**bare(choice), "pile": 99, "label": choice["label"]})


def test_texts_name_seats_from_one_and_default_to_words() -> None:
    """Games without a labels module still explain themselves, in generic words."""
    match = Match.new(TINY, 2, {}, 11)
    decision = match.decision
    assert decision is not None
    shown = own_part(TINY, match.state, decision.seat, decision)["choices"]
    assert [c["label"] for c in shown][-1] == "draw"  # type: ignore[index]
    assert shared_part(TINY, match.state)["turn"] == {
        "seat": decision.seat,
        "decision": "turn",
        "prompt": "choose: turn",
    }
    (event,) = match.act(decision.seat, len(decision.choices) - 1)
    seat = decision.seat
    assert event.project(None)["text"] == f"P{seat + 1}: drew"
    assert event.project(seat)["text"] == f"P{seat + 1}: drew (card {event.private[seat]['card']})"
    assert seat_name(3) == "P4"


@pytest.mark.parametrize("name", ["tiny", "ishtar", "yspahan"])
def test_a_match_has_a_result_exactly_when_nobody_must_decide(name: str) -> None:
    """The contract :func:`shared_part` counts on to ask for the result only at the end: at
    every step of a match, :meth:`Game.result` is None while a decision is pending, and the
    shared part's result is the game's."""
    game = TINY if name == "tiny" else registry.get(name)

    def check(match: Match[Any]) -> None:
        decision = match.game.decision(match.state)
        result = match.game.result(match.state)
        assert (result is None) == (decision is not None)
        expected = None if result is None else result.to_json()
        assert shared_part(match.game, match.state)["result"] == expected
        assert shared_part(match.game, match.state, decision)["result"] == expected

    out = play_random(game, 2, 3, on_step=check)
    assert out.match is not None and out.match.over
    check(out.match)
