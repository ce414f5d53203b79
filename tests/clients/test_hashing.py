"""The incremental view hash is the protocol's hash, and re-encodes only what changed."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.hashing import ViewHasher
from clients.patching import apply
from games import registry
from games.base import Match, audience_view
from protocol.patch import diff, view_hash


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_view_of_a_match_hashes_as_the_protocol_says(game: str) -> None:
    engine = registry.get(game)
    match = Match.new(engine, 2, {}, 13)
    rng = random.Random(13)
    hasher = ViewHasher()
    view = audience_view(engine, match.state, 1).to_json()
    assert hasher.hash(view) == view_hash(view)
    while (decision := match.decision) is not None:
        match.act(decision.seat, rng.randrange(len(decision.choices)))
        new = audience_view(engine, match.state, 1).to_json()
        view = apply(view, diff(view, new))
        assert hasher.hash(view) == view_hash(new)


def test_unchanged_containers_keep_their_encoding_once_their_parents_change_often() -> None:
    hasher = ViewHasher()
    view: Any = {"shared": {"big": list(range(100)), "n": 1}, "own": None}
    for n in range(2, 6):
        view = apply(view, [{"op": "replace", "path": "/shared/n", "value": n}])
        assert hasher.hash(view) == view_hash(view)
    assert hasher._root is not None
    big = hasher._root.kids["shared"].kids["big"]
    view = apply(view, [{"op": "replace", "path": "/shared/n", "value": 9}])
    assert hasher.hash(view) == view_hash(view)
    assert hasher._root.kids["shared"].kids["big"] is big


def test_large_maps_and_lists_use_the_wider_headers() -> None:
    view = {"m": {f"k{i}": i for i in range(20)}, "l": list(range(70_000)), "f": 1.5, "t": True}
    assert ViewHasher().hash(view) == view_hash(view)


keys = st.text(max_size=3)
scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False)
json_values = st.recursive(
    scalars | keys,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=4))
def test_any_sequence_of_documents_hashes_as_the_protocol(docs: list[Any]) -> None:
    hasher = ViewHasher()
    current = docs[0]
    assert hasher.hash(current) == view_hash(current)
    for doc in docs[1:]:
        current = apply(current, diff(current, doc))
        assert hasher.hash(current) == view_hash(current)
