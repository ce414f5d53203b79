"""Path-copying JSON Patch: the protocol's results, the old view untouched, the rest shared."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.patching import apply
from games import registry
from games.base import Match, audience_view
from protocol import patch as protocol_patch
from protocol.patch import PatchError, diff, view_hash

VECTORS = json.loads((Path(__file__).parents[2] / "protocol/vectors/patches.json").read_text())


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_every_protocol_vector_gives_the_new_view_and_its_hash(case: dict[str, Any]) -> None:
    before = copy.deepcopy(case["old"])
    new = apply(case["old"], case["patch"])
    assert new == case["new"] and view_hash(new) == case["new_hash"]
    assert case["old"] == before


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_whole_matches_patch_like_the_protocol_and_share_what_did_not_change(game: str) -> None:
    engine = registry.get(game)
    match = Match.new(engine, 3, {}, 9)
    rng = random.Random(9)
    old: Any = audience_view(engine, match.state, 0).to_json()
    while (decision := match.decision) is not None:
        match.act(decision.seat, rng.randrange(len(decision.choices)))
        new: Any = audience_view(engine, match.state, 0).to_json()
        frozen = copy.deepcopy(old)
        rebuilt = apply(old, diff(old, new))
        assert rebuilt == new and view_hash(rebuilt) == view_hash(new)
        assert old == frozen, "the old view is never edited"
        for key, value in old["shared"]["game"].items():
            if rebuilt["shared"]["game"].get(key) == value and isinstance(value, dict | list):
                assert rebuilt["shared"]["game"][key] is value, key
        old = rebuilt


DOC = {"a": [1, 2, {"b": "x"}], "c": {"d": 1, "e~/f": [True]}, "n": None}
OPS: list[list[dict[str, Any]]] = [
    [{"op": "move", "from": "/a/2", "path": "/c/moved"}],
    [{"op": "copy", "from": "/c", "path": "/a/-"}, {"op": "replace", "path": "/a/3/d", "value": 5}],
    [{"op": "test", "path": "/c/d", "value": 1}, {"op": "add", "path": "/c/e~0~1f/0", "value": 0}],
    [{"op": "test", "path": "/c/d", "value": 1.0}],
    [{"op": "test", "path": "/c/d", "value": True}],
    [{"op": "remove", "path": "/a/3"}],
    [{"op": "add", "path": "/a/01", "value": 0}],
    [{"op": "replace", "path": "/zz", "value": 0}],
    [{"op": "add", "path": "/n/x", "value": 0}],
    [{"op": "move", "from": "/c", "path": "/c/d/x"}],
    [{"op": "remove", "path": ""}],
    [{"op": "replace", "path": "", "value": [1]}],
    [{"op": "jump", "path": "/a"}],
    [{"path": "/a"}],
    [{"op": "add", "path": "a", "value": 1}],
    [{"op": "add", "path": "/a/1"}],
]


@pytest.mark.parametrize("ops", OPS)
def test_every_operation_and_every_failure_agree_with_the_protocol(
    ops: list[dict[str, Any]],
) -> None:
    frozen = copy.deepcopy(DOC)
    try:
        want: Any = protocol_patch.apply(DOC, ops)
    except (PatchError, KeyError) as exc:
        want = type(exc)
    try:
        got: Any = apply(DOC, ops)
    except PatchError as exc:
        got = type(exc)
    assert got == (PatchError if want is KeyError else want)
    assert frozen == DOC


keys = st.text("ab/~", max_size=2)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | keys,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values, json_values)
def test_any_diff_applies_to_the_same_document_as_the_protocol(old: Any, new: Any) -> None:
    frozen = copy.deepcopy(old)
    ops = diff(old, new)
    assert view_hash(apply(old, ops)) == view_hash(new) == view_hash(protocol_patch.apply(old, ops))
    assert old == frozen
