"""What the cheaper hot paths share or keep between moves, proved on seeded playouts: the
position choices' shared ``[q, r]`` lists and their maps made when asked for, the kept fountain
points, the laid items a dump shares, and that none changes what a player sees."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from games.ishtar import GAME
from games.ishtar.scoring import fountain_points, score_position
from games.ishtar.state import State
from games.ishtar.turn import placements
from games.rng import Rng
from tests.games.ishtar.helpers import new_match


def _positions_of_a_playout(seed: int) -> list[tuple[State, list[dict[str, Any]]]]:
    """Each position decision of a seeded random 4-seat match, with the state it was listed on
    (a snapshot taken then: the match goes on)."""
    match = new_match(4, seed)
    chooser = Rng.from_seed(seed)
    found: list[tuple[State, list[dict[str, Any]]]] = []
    while (decision := match.decision) is not None:
        if decision.kind == "position":
            found.append((GAME.load(GAME.dump(match.state)), list(decision.choices)))
        match.act(decision.seat, chooser.below(len(decision.choices)))
    return found


def test_ish_place_01_to_05_position_choices_are_the_legal_anchors_with_shared_lists() -> None:
    """ISH-PLACE-01..05: every position choice names an anchor with its legal rotations, exactly
    the legal placements grouped by anchor, and the same anchor is the very same ``[q, r]``
    list in every decision (made once per space of the grid), never changed by the play."""
    seen: dict[tuple[int, int], list[Any]] = {}
    for state, listed in _positions_of_a_playout(5):
        if listed[0]["kind"] == "discard":
            continue
        assert all(list(c) == ["kind", "tile", "at", "rotations"] for c in listed)
        pairs = [((c["at"][0], c["at"][1]), k) for c in listed for k in c["rotations"]]
        assert pairs == placements(state)
        for c in listed:
            key = (c["at"][0], c["at"][1])
            assert seen.setdefault(key, c["at"]) is c["at"]
            assert c["at"] == [key[0], key[1]]


def test_ish_score_05_to_09_kept_fountain_points_equal_the_drawn_fountains() -> None:
    """ISH-SCORE-05..09: the fountain points kept on the vegetation are those of the fountains
    drawn at setup, asked for again or not, and the final rows score with them."""
    match = new_match(4, 11)
    chooser = Rng.from_seed(11)
    state = match.state
    by_id = {f.id: f.points for f in state.edition.fountains}
    fresh = {
        cell: by_id[fid]
        for cell, fid in zip(state.terrain.fountain_cells, state.fountains, strict=True)
    }
    first = fountain_points(state)
    assert first == fresh
    while (decision := match.decision) is not None:
        match.act(decision.seat, chooser.below(len(decision.choices)))
    assert fountain_points(match.state) is first
    assert first == fresh
    rows = score_position(state.edition, state.terrain, state.veg, fresh, match.state.players)
    result = match.result()
    assert result is not None
    assert tuple(r["total"] for r in rows) == result.scores


def test_ish_place_01_to_05_a_position_choice_is_made_once_and_shown_with_its_label_last() -> None:
    """ISH-PLACE-01..05: a position decision's legal list, whose maps are made when first asked
    for, gives one map per index, the same by index, from the end, by slice and by iteration;
    an answer names it; and the seat is shown exactly those maps, each with its label last."""
    match = new_match(4, 7)
    chooser = Rng.from_seed(7)
    seen = 0
    while (decision := match.decision) is not None:
        choices = decision.choices
        if decision.kind == "position" and choices[0]["kind"] == "position":
            listed = list(choices)
            assert len(listed) == len(choices) > 2
            assert all(choices[i] is c for i, c in enumerate(listed))
            assert choices[-1] is listed[-1]
            assert all(a is b for a, b in zip(choices[1:3], listed[1:3], strict=True))
            with pytest.raises(IndexError):
                choices[len(listed)]
            shown = GAME.describe(match.state, decision)
            assert [list(c) for c in shown] == [[*c, "label"] for c in listed]
            assert [{k: v for k, v in c.items() if k != "label"} for c in shown] == listed
            pick = chooser.below(len(listed))
            assert match.resolve(decision.seat, dict(listed[pick])) is listed[pick]
            seen += 1
        match.act(decision.seat, chooser.below(len(choices)))
    assert seen > 10


def test_a_dump_shares_the_laid_items_which_never_change_once_laid() -> None:
    """A dump shares ``state.laid``'s items instead of copying them (snapshot.dump): each item
    stays the very same, unchanged, from the move that lays it to the end, and a loaded state
    makes its own."""
    match = new_match(4, 9)
    chooser = Rng.from_seed(9)
    kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
    while (decision := match.decision) is not None:
        laid = match.state.laid
        kept += [(item, copy.deepcopy(item)) for item in laid[len(kept) :]]
        dumped = GAME.dump(match.state)["laid"]
        assert isinstance(dumped, list) and dumped is not laid
        assert all(a is b for a, b in zip(dumped, laid, strict=True))
        match.act(decision.seat, chooser.below(len(decision.choices)))
    laid = match.state.laid
    assert len(laid) == len(kept) > 30
    assert all(item is was and item == then for item, (was, then) in zip(laid, kept, strict=True))
    loaded = GAME.load(GAME.dump(match.state)).laid
    assert loaded == laid and not any(a is b for a, b in zip(loaded, laid, strict=True))


def test_ish_place_01_to_05_rotation_lists_are_made_once_for_every_match() -> None:
    """ISH-PLACE-01..05: the legal rotations of a position are one of the lists made once per
    set of rotations for every match, in increasing order, and no play changes them."""
    from games.ishtar.garden import _ROTATION_LISTS, _ROTATION_SETS

    seen = 0
    for seed in (5, 6):
        for _, listed in _positions_of_a_playout(seed):
            for c in listed:
                if c["kind"] == "position":
                    assert any(c["rotations"] is made for made in _ROTATION_LISTS)
                    assert c["rotations"] == sorted(set(c["rotations"]))
                    seen += 1
    assert seen > 1000
    assert all(list(ks) == made for ks, made in zip(_ROTATION_SETS, _ROTATION_LISTS, strict=True))
