"""protocol.patch: diff/apply round trips (ours and jsonpatch's), the size rule, path copying."""

from __future__ import annotations

import contextlib
import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonpatch  # type: ignore[import-untyped]
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import registry
from games.base import Match, audience_view
from protocol import patch, pointer
from protocol.codec import canonical
from protocol.hashing import view_hash
from protocol.patch import PatchError, apply, diff
from tests.protocol.strategies import documents, related_pairs

VECTORS = json.loads((Path(__file__).parents[2] / "protocol/vectors/patches.json").read_text())


@settings(max_examples=400, deadline=None)
@given(related_pairs())
def test_apply_of_diff_gives_the_new_document(pair: tuple[Any, Any]) -> None:
    a, b = pair
    before = canonical(a)
    ops = diff(a, b)
    assert canonical(apply(a, ops)) == canonical(b)
    assert canonical(a) == before, "apply must not mutate its input"


@settings(max_examples=400, deadline=None)
@given(related_pairs())
def test_jsonpatch_applies_our_diff(pair: tuple[Any, Any]) -> None:
    a, b = pair
    ops = diff(a, b)
    assert jsonpatch.apply_patch(copy.deepcopy(a), ops) == b
    assert {op["op"] for op in ops} <= {"add", "remove", "replace"}


def test_identical_documents_give_no_operations() -> None:
    doc = {"a": [1, {"b": None}], "c": "x"}
    assert diff(doc, copy.deepcopy(doc)) == []


def test_type_changes_are_replaced_even_when_python_calls_them_equal() -> None:
    assert diff({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert diff([1], [1.0]) == [{"op": "replace", "path": "/0", "value": 1.0}]
    assert diff({"a": [1]}, {"a": [True]}) == [{"op": "replace", "path": "/a/0", "value": True}]


def test_negative_zero_is_a_change() -> None:
    """0.0 and -0.0 are equal in Python but encode (and hash) differently."""
    for old, new in (({"v": 0.0}, {"v": -0.0}), ([0.0], [-0.0]), (0.0, -0.0)):
        ops = diff(old, new)
        assert ops
        assert view_hash(apply(old, ops)) == view_hash(new)


def test_list_growing_or_shrinking_at_the_end_gives_small_patches() -> None:
    long = list(range(100))
    assert diff(long, [*long, 100]) == [{"op": "add", "path": "/100", "value": 100}]
    assert diff(long, long[:98]) == [
        {"op": "remove", "path": "/99"},
        {"op": "remove", "path": "/98"},
    ]


def test_diff_paths_escape_their_keys() -> None:
    ops = diff({"a/b": 1, "~": 2}, {"a/b": 2, "~": 3})
    assert {op["path"] for op in ops} == {"/a~1b", "/~0"}
    # (each key's step is made once and kept: asked again, the same)
    assert {op["path"] for op in diff({"a/b": 1}, {"a/b": 3})} == {"/a~1b"}


def test_diff_paths_name_every_index_before_and_past_the_steps_made_once() -> None:
    """An index's step is made once for the first ``_INDICES`` of them, written past them."""
    n = patch._INDICES + 2
    old = [{"x": i} for i in range(n)]
    for i in (0, 9, 10, n - 3, n - 2, n - 1):
        new = [{"x": -1} if j == i else item for j, item in enumerate(old)]
        assert diff({"l": old}, {"l": new}) == [{"op": "replace", "path": f"/l/{i}/x", "value": -1}]


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/list/9", "value": 1}],
        [{"op": "add", "path": "/list/01", "value": 1}],
        [{"op": "add", "path": "no-slash", "value": 1}],
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "jump", "path": "/a"}],
        [{"path": "/a"}],
        [{"op": "add", "path": "/a/b/c", "value": 1}],
        [{"op": "move", "from": "/list", "path": "/list/0"}],
        [{"op": "add", "path": "/b"}],
        [{"op": "replace", "path": "/a"}],
        [{"op": "copy", "path": "/b"}],
        [{"op": "move", "from": 3, "path": "/b"}],
        ["not a map"],
    ],
)
def test_bad_patches_raise_patch_error_and_leave_the_input_alone(ops: list[Any]) -> None:
    doc = {"a": 1, "list": [1, 2]}
    with pytest.raises(PatchError):
        apply(doc, ops)
    assert doc == {"a": 1, "list": [1, 2]}


def test_apply_supports_the_whole_rfc6902_vocabulary() -> None:
    doc = {"a": {"b": 1}, "l": [1, 2, 3]}
    ops = [
        {"op": "test", "path": "/a/b", "value": 1},
        {"op": "copy", "from": "/a", "path": "/c"},
        {"op": "move", "from": "/l/0", "path": "/l/-"},
        {"op": "add", "path": "/l/-", "value": 9},
        {"op": "replace", "path": "", "value": {"whole": True}},
    ]
    assert apply(doc, ops[:4]) == {"a": {"b": 1}, "c": {"b": 1}, "l": [2, 3, 1, 9]}
    assert apply(doc, ops) == {"whole": True}
    assert jsonpatch.apply_patch(doc, ops[:4]) == apply(doc, ops[:4])


@given(st.lists(st.integers(), max_size=20), st.lists(st.integers(), max_size=20))
def test_list_diffs_touch_only_changed_positions(a: list[int], b: list[int]) -> None:
    ops = diff(a, b)
    changed = sum(1 for x, y in zip(a, b, strict=False) if x != y)
    assert len(ops) == changed + abs(len(a) - len(b))


def test_a_list_whose_contents_all_changed_is_replaced_whole_when_that_is_smaller() -> None:
    old = {"own": {"choices": [{"kind": "place", "shop": f"sk{i}.0"} for i in range(6)]}}
    new = {"own": {"choices": [{"kind": "move", "to": f"W{i}", "gold": i} for i in range(5)]}}
    ops = diff(old, new)
    assert ops == [{"op": "replace", "path": "/own/choices", "value": new["own"]["choices"]}]
    # Two small changes in a long list stay element-wise: that is fewer bytes.
    long = {"l": list(range(50))}
    assert diff(long, {"l": [*range(49), 99, 7]}) == [
        {"op": "replace", "path": "/l/49", "value": 99},
        {"op": "add", "path": "/l/50", "value": 7},
    ]


@settings(max_examples=300, deadline=None)
@given(related_pairs())
def test_no_container_below_the_top_costs_more_than_replacing_it(pair: tuple[Any, Any]) -> None:
    """The size rule: per container, the ops under it never outweigh one replace of it."""
    a, b = pair
    ops = diff({"doc": a}, {"doc": b})
    by_parent: dict[str, int] = {}
    for op in ops:
        size = len(msgpack.packb(op))
        path = op["path"]
        while path.count("/") > 1:
            path = path.rsplit("/", 1)[0]
            by_parent[path] = by_parent.get(path, 0) + size
    for path, size in by_parent.items():
        value: Any = {"doc": b}
        for token in pointer.parse(path):
            value = (
                value[pointer.index(len(value), token, adding=False)]
                if isinstance(value, list)
                else value[token]
            )
        whole = {"op": "replace", "path": path, "value": value}
        assert (
            size <= len(msgpack.packb(whole))
            or sum(1 for op in ops if op["path"].startswith(path + "/")) < 2
        )


def test_diff_at_a_path_prefixes_every_operation() -> None:
    assert diff({"a": 1}, {"a": 2}, "/shared") == [
        {"op": "replace", "path": "/shared/a", "value": 2}
    ]


def _by_the_rule(old: list[Any], new: list[Any], path: str) -> list[dict[str, Any]]:
    """The ops of the size rule made the long way: every op, then the rule's comparison."""
    ops: list[dict[str, Any]] = []
    patch._diff(old, new, path, ops, {}, patch._OpBytes())
    patch._collapse(ops, 0, path, len(msgpack.packb(new)), lambda: new)
    return ops


@settings(max_examples=300, deadline=None)
@given(
    st.lists(documents(max_leaves=4), max_size=12),
    st.lists(documents(max_leaves=4), max_size=12),
    st.sampled_from(["/l", "/own/choices", "/shared/game/" + "x" * 40]),
)
def test_lists_settled_from_their_lengths_get_the_rule_s_answer(
    old: list[Any], new: list[Any], path: str
) -> None:
    """``_replaces_list`` answers from the lengths only (filled from empty, emptied, or more
    ``remove`` ops than a replace weighs): whenever it says replace, the size rule made the long
    way says one replace too; and the diff's answer is the rule's answer either way."""
    if patch._replaces_list(len(old), new, path):
        assert _by_the_rule(old, new, path) == [{"op": "replace", "path": path, "value": new}]
    ops: list[dict[str, Any]] = []
    patch._diff_child(old, new, path, ops, {})
    assert ops == _by_the_rule(old, new, path)


def test_a_seat_s_choices_filled_and_emptied_are_one_replace() -> None:
    choices = [{"kind": "position", "at": [q, 0], "rotations": [0, 1]} for q in range(40)]
    assert patch._replaces_list(0, choices, "/own/choices")
    assert patch._replaces_list(40, [], "/own/choices")
    assert patch._replaces_list(40, choices[:2], "/own/choices")
    assert not patch._replaces_list(0, [1], "/own/choices")  # one add is smaller
    assert not patch._replaces_list(40, choices[:39], "/own/choices")  # one remove is smaller
    assert diff({"c": []}, {"c": choices}) == [{"op": "replace", "path": "/c", "value": choices}]


# Apply by path copying -------------------------------------------------------------------------


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_every_protocol_vector_gives_the_new_view_and_its_hash(case: dict[str, Any]) -> None:
    before = copy.deepcopy(case["old"])
    new = apply(case["old"], case["patch"])
    assert new == case["new"] and view_hash(new) == case["new_hash"]
    assert view_hash(new, 2) == case["new_hash2"]
    assert case["old"] == before


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_whole_matches_patch_and_share_what_did_not_change(game: str) -> None:
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
OPS: list[list[Any]] = [
    [{"op": "move", "from": "/a/2", "path": "/c/moved"}],
    [{"op": "copy", "from": "/c", "path": "/a/-"}, {"op": "replace", "path": "/a/3/d", "value": 5}],
    [{"op": "test", "path": "/c/d", "value": 1}, {"op": "add", "path": "/c/e~0~1f/0", "value": 0}],
    [{"op": "test", "path": "/c/d", "value": 1.0}],
    [{"op": "test", "path": "/c/d", "value": True}],
    [{"op": "remove", "path": "/a/3"}],
    [{"op": "add", "path": "/a/01", "value": 0}],
    [{"op": "add", "path": "/a/\u00b2", "value": 0}],
    [{"op": "replace", "path": "/zz", "value": 0}],
    [{"op": "add", "path": "/n/x", "value": 0}],
    [{"op": "move", "from": "/c", "path": "/c/d/x"}],
    [{"op": "remove", "path": ""}],
    [{"op": "replace", "path": "", "value": [1]}],
    [{"op": "jump", "path": "/a"}],
    [{"path": "/a"}],
    [{"op": "add", "path": "a", "value": 1}],
    [{"op": "add", "path": "/a/1"}],
    [{"op": "copy", "path": "/b"}],
    [{"op": "move", "from": 3, "path": "/b"}],
    [{"op": "add", "path": 3, "value": 1}],
    ["not a map"],
]


@pytest.mark.parametrize("ops", OPS)
def test_every_operation_and_every_failure_agree_with_jsonpatch(ops: list[Any]) -> None:
    """An off-the-shelf RFC 6902 implementation is the reference: same document, or both
    refuse (ours always with PatchError, and the input is never touched)."""
    frozen = copy.deepcopy(DOC)
    try:
        want: Any = jsonpatch.apply_patch(copy.deepcopy(DOC), ops)
    except Exception:
        want = PatchError
    try:
        got: Any = apply(DOC, ops)
    except PatchError:
        got = PatchError
    if want is not PatchError and got is not PatchError:
        assert canonical(got) == canonical(want)
    elif ops != [{"op": "test", "path": "/c/d", "value": True}]:  # jsonpatch: True == 1
        assert got is want
    assert frozen == DOC


keys = st.text("ab/~", max_size=2)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | keys,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values, json_values)
def test_any_diff_applies_to_the_same_document_as_jsonpatch_does(old: Any, new: Any) -> None:
    frozen = copy.deepcopy(old)
    ops = diff(old, new)
    assert view_hash(apply(old, ops)) == view_hash(new)
    assert jsonpatch.apply_patch(copy.deepcopy(old), ops) == new
    assert old == frozen


ops_ = st.lists(
    st.dictionaries(
        st.sampled_from(["op", "path", "from", "value"]),
        st.sampled_from(["add", "remove", "replace", "move", "copy", "test"])
        | st.sampled_from(["", "/", "/a", "/a/0", "/a/-", "/c/d", "/x/y", "~", "/a/01"])
        | json_values,
    )
    | json_values,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(json_values, ops_)
def test_any_patch_applies_or_raises_patch_error_and_nothing_else(doc: Any, ops: Any) -> None:
    frozen = copy.deepcopy(doc)
    with contextlib.suppress(PatchError):
        apply(doc, ops)
    assert doc == frozen


_EDGES: list[Any] = [None, True, False, 0.5, [1], {"a": 1}, "", "a" * 31, "a" * 32, "é" * 20]
_EDGES += ["x" * 255, "x" * 256, "y" * 65535, "y" * 65536, 2**64, -(2**63) - 1]
for _bound in (0x80, 0x100, 0x10000, 0x100000000, 0x10000000000000000):
    _EDGES += [_bound - 1, _bound]
for _bound in (32, 0x80, 0x8000, 0x80000000, 0x8000000000000000):
    _EDGES += [-_bound, -_bound - 1]


def test_the_size_rule_weighs_each_op_at_its_encoded_size() -> None:
    """An op weighed without being encoded (a scalar value, or none) counts exactly the bytes
    that ``pack`` writes for it, every boundary of msgpack's forms included; the others too."""
    packed = patch._OpBytes()
    for path in ("", "/a", "/é" * 20, "/x" * 200):
        assert packed.size({"op": "remove", "path": path}) == len(
            msgpack.packb({"op": "remove", "path": path})
        )
        for name in ("replace", "add"):
            for value in _EDGES:
                op = {"op": name, "path": path, "value": value}
                try:
                    expected = len(msgpack.packb(op))
                except (OverflowError, ValueError):
                    with pytest.raises((OverflowError, ValueError)):
                        packed.size(op)
                    continue
                assert packed.size(op) == expected, op


class _Str(str):
    """A string that ormsgpack refuses (a subclass): ``pack`` hands it to msgpack."""


def test_joined_ops_are_each_op_s_encoding_in_order() -> None:
    """Runs of ops not encoded yet are encoded together; the bytes are still each op's own,
    in order, beside the ops whose bytes were given (``put``) or weighed (``of``)."""
    ops: list[dict[str, Any]] = [{"op": "replace", "path": f"/{i}", "value": i} for i in range(40)]
    ops.append({"op": "add", "path": "/sub", "value": _Str("x")})  # (msgpack's own path)
    packed = patch._OpBytes()
    packed.put(ops[3], b"\x01")
    packed.of(ops[20])
    expected = b"".join(
        b"\x01" if i == 3 else msgpack.packb(op, use_bin_type=True) for i, op in enumerate(ops)
    )
    assert packed.join(ops) == expected
    assert packed.join(ops[4:20]) == b"".join(msgpack.packb(op) for op in ops[4:20])
