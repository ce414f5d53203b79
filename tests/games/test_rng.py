"""The engines' random generator: its stream and how a state holding it is copied.
rules-checklist: none (the generator under every engine's dice and shuffles)."""

from __future__ import annotations

import copy
import pickle

from games.rng import Rng


def test_a_seed_gives_the_same_stream_and_nearby_seeds_unrelated_ones() -> None:
    first = [Rng.from_seed(7).next_u64() for _ in range(2)]
    assert first[0] == first[1]
    streams = {Rng.from_seed(seed).next_u64() for seed in range(100)}
    assert len(streams) == 100
    rng = Rng.from_seed(3)
    rolls = [rng.die() for _ in range(600)]
    assert set(rolls) == {1, 2, 3, 4, 5, 6}


def test_a_copy_continues_the_same_stream_on_its_own() -> None:
    """``copy.copy``, ``copy.deepcopy`` and pickle (compiled, the class has no instance dict:
    it is rebuilt from its state)."""
    rng = Rng.from_seed(11)
    rng.next_u64()
    state = rng.state
    reference = Rng(state)
    expected = [reference.below(1000) for _ in range(5)]
    for clone in (
        copy.copy(rng),
        copy.deepcopy(rng),
        copy.deepcopy({"rng": rng})["rng"],
        pickle.loads(pickle.dumps(rng)),
    ):
        assert clone is not rng and clone.state == state
        assert [clone.below(1000) for _ in range(5)] == expected
        assert rng.state == state  # (the original did not move with its copy)
