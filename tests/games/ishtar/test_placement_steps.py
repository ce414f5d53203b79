"""The two placement decisions: a position lists its rotations, the rotation step offers them."""

from __future__ import annotations

from games.ishtar import GAME
from games.rng import Rng
from tests.games.ishtar.helpers import new_match


def test_ish_place_01_rotations_offered_are_the_position_s_and_those_a_snapshot_finds() -> None:
    """ISH-PLACE-01: the tile is laid in one of its 6 rotations, on 3 spaces of the boards. The
    rotation step offers exactly the ``rotations`` of the position chosen (kept from that
    choice), and a state loaded from a snapshot at that step, with nothing kept, finds the same
    rotation choices by itself, with the same spaces."""
    seen = 0
    for seed in (3, 4):
        match = new_match(3, seed)
        chooser = Rng.from_seed(seed)
        listed: object = None
        while (decision := match.decision) is not None:
            if decision.kind == "rotation":
                offered = [dict(c) for c in decision.choices]
                assert [c["rotation"] for c in offered] == listed
                anchor = match.state.turn.anchor
                assert anchor is not None and all(c["at"] == list(anchor) for c in offered)
                fresh = GAME.decision(GAME.load(GAME.dump(match.state)))
                assert fresh is not None and [dict(c) for c in fresh.choices] == offered
                seen += 1
            choice = decision.choices[chooser.below(len(decision.choices))]
            listed = choice.get("rotations")
            match.push(decision.seat, choice)
    assert seen > 20
