"""The engine on the game contract: registry, decisions as short plain lists, refusals."""

from __future__ import annotations

import pytest

from games import registry
from games.base import Match
from games.errors import IllegalChoice
from games.ishtar import GAME, Ishtar
from games.ishtar import state as st
from protocol.codec import check_value
from tests.games.ishtar.helpers import choices, new_match, pick, play_turn
from tests.harness import play_random


def test_registered_as_ishtar() -> None:
    assert registry.get("ishtar").name == "ishtar"
    assert isinstance(registry.get("ishtar"), Ishtar)
    assert (GAME.min_players, GAME.max_players) == (2, 4)


def test_decisions_are_short_plain_lists_in_stable_order() -> None:
    longest: dict[str, int] = {}

    def check(match: Match[st.State]) -> None:
        d = match.decision
        if d is None:
            return
        assert d.seat == match.state.current
        for c in d.choices:
            check_value(c)
        longest[d.kind] = max(longest.get(d.kind, 0), len(d.choices))

    play_random(GAME, 4, 11, on_step=check)
    assert longest["rotation"] <= 6
    assert longest["choose"] <= 7


def test_result_counts_turns_and_events_name_what_happened() -> None:
    match = new_match(3, 2)
    kinds: set[str] = set()
    while match.decision is not None:
        d = match.decision
        kinds.update(e.kind for e in match.act(d.seat, 0))
    result = match.result()
    assert result is not None and result.turns == match.state.turns_played
    assert {"tile_taken", "tile_placed", "turn_ended", "game_over"} <= kinds


def test_turn_passes_to_the_left() -> None:
    match = new_match(2, 1)
    first = match.state.current
    play_turn(match)
    assert match.state.current == 1 - first


def test_position_choices_list_their_legal_rotations() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    positions = choices(match)
    first = positions[0]
    assert first["rotations"] and all(0 <= k < 6 for k in first["rotations"])
    match.act(match.state.current, first)
    assert [c["rotation"] for c in choices(match)] == first["rotations"]


def test_ish_place_01_a_placement_may_be_answered_without_its_derived_fields() -> None:
    """ISH-PLACE-01: «Add the selected Vegetation Tile to any Terrain Board, as per the following
    rules». A player names a placement by its tile, anchor and rotation: a position map without
    its ``rotations`` and a rotation map without its ``cells`` are accepted (issue 22, item 7);
    sent, they must be exact."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    state = match.state
    first = choices(match)[0]
    bare = {k: v for k, v in first.items() if k != "rotations"}
    with pytest.raises(IllegalChoice, match="send them as listed"):
        match.act(state.current, {**first, "rotations": [*first["rotations"][1:], 9]})
    match.act(state.current, bare)
    assert state.turn.step == st.ROTATION and list(state.turn.anchor or ()) == first["at"]
    listed = choices(match)[-1]
    bare = {k: v for k, v in listed.items() if k != "cells"}
    assert set(bare) == {"kind", "tile", "at", "rotation"}
    events = match.act(state.current, bare)
    placed = next(e for e in events if e.kind == "tile_placed")
    assert placed.data["rotation"] == listed["rotation"]
    assert placed.data["cells"] == listed["cells"]
