"""The engines' random generator: its stream and how a state holding it is copied.
rules-checklist: none (the generator under every engine's dice and shuffles)."""

from __future__ import annotations

import copy
import os
import pickle
import random

import pytest

from games import rng as rng_module
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


def test_the_native_draws_are_the_pythons_draw_for_draw() -> None:
    """``games._gamesc`` (built with the compiled modules) gives the very states and draws of the
    Python steps, over many states (0, the top, any int read modulo 2**64), bounds (1, powers of
    two, just past them, near 2**64) and shuffles of lists of every small length. Where it is
    not built it is skipped, except in the compiled tier (``OASIS_NATIVE_DIFF=required``)."""
    if rng_module.NATIVE is None:
        if os.environ.get("OASIS_NATIVE_DIFF") == "required":
            pytest.fail("games._gamesc is not built")
        pytest.skip("games._gamesc is not built (pure Python)")
    native = rng_module.NATIVE
    source = random.Random(21)
    states = [0, 1, 2**63, 2**64 - 1, -1, 2**64, 2**70 + 5] + [
        source.getrandbits(64) for _ in range(500)
    ]
    bounds = [1, 2, 3, 6, 7, 12, 2**32, 2**32 + 1, 2**63, 2**63 + 1, 2**64 - 1]
    for state in states:
        assert native.next_u64(state) == rng_module._next_u64(state)
        for n in [*bounds, source.randrange(1, 1000), source.randrange(1, 2**64)]:
            assert native.below(state, n) == rng_module._below(state, n)
        items = list(range(source.randrange(0, 40)))
        expected = list(items)
        assert native.shuffle(state, items) == rng_module._shuffle(state, expected)
        assert items == expected


def test_a_generator_gives_the_python_steps_whichever_draws_it() -> None:
    """:class:`Rng` (with the native draws where built) against the Python steps alone: a long
    stream of mixed draws, shuffles of a list and of another sequence, and the bound
    2**64 (Python's only)."""
    rng, state = Rng.from_seed(2026), rng_module._next_u64(2026)[1]
    assert rng.state == state
    for round in range(300):
        state, value = rng_module._next_u64(state)
        assert rng.next_u64() == value
        for n in (1, 6, 1 + round, 2**64 - 1, 2**64):
            state, value = rng_module._below(state, n)
            assert rng.below(n) == value
        items, expected = list(range(round % 30)), list(range(round % 30))
        rng.shuffle(items)
        state = rng_module._shuffle(state, expected)
        assert items == expected
        other, expected_other = bytearray(range(round % 20)), bytearray(range(round % 20))
        rng.shuffle(other)
        state = rng_module._shuffle(state, expected_other)
        assert other == expected_other
        assert rng.state == state
