"""What the cheaper hot paths share or keep between moves, proved on seeded playouts: the
position choices' shared ``[q, r]`` lists, the kept fountain points, and that neither changes
what a player sees."""

from __future__ import annotations

from typing import Any

from games.ishtar.scoring import fountain_points, score_position
from games.ishtar.state import State
from games.ishtar.turn import placements
from games.rng import Rng
from tests.games.ishtar.helpers import new_match


def _positions_of_a_playout(seed: int) -> list[tuple[State, list[dict[str, Any]]]]:
    """Each position decision of a seeded random 4-seat match, with the state it was listed on
    (a snapshot taken then: the match goes on)."""
    from games.ishtar import GAME

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
