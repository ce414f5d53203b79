"""protocol.patch: diff/apply round trips (ours and jsonpatch's), pointers, the view hash."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch  # type: ignore[import-untyped]
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import patch
from protocol.codec import canonical
from protocol.patch import PatchError, apply, diff, escape, pointer, unescape, view_hash
from tests.protocol.strategies import documents, related_pairs


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


@settings(max_examples=300, deadline=None)
@given(documents(), documents())
def test_hash_equal_iff_canonical_encodings_equal(a: Any, b: Any) -> None:
    assert (view_hash(a) == view_hash(b)) == (canonical(a) == canonical(b))
    assert len(view_hash(a)) == 16


def test_hash_ignores_key_order_and_sees_types() -> None:
    assert view_hash({"a": 1, "b": 2}) == view_hash({"b": 2, "a": 1})
    assert view_hash({"a": 1}) != view_hash({"a": True})
    assert view_hash({"a": 1}) != view_hash({"a": 1.0})


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


def test_pointer_escaping_round_trips() -> None:
    assert escape("a/b~c") == "a~1b~0c"
    assert unescape("a~1b~0c") == "a/b~c"
    assert unescape("~01") == "~1"
    assert pointer("x/y", 3, "~") == "/x~1y/3/~0"
    ops = diff({"a/b": 1, "~": 2}, {"a/b": 2, "~": 3})
    assert {op["path"] for op in ops} == {"/a~1b", "/~0"}


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
        for token in path.split("/")[1:]:
            value = value[int(token) if isinstance(value, list) else unescape(token)]
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
    patch._diff(old, new, path, ops, {})
    patch.collapse(ops, 0, path, len(msgpack.packb(new)), lambda: new)
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
    """``replaces_list`` answers from the lengths only (filled from empty, emptied, or more
    ``remove`` ops than a replace weighs): whenever it says replace, the size rule made the long
    way says one replace too; and the diff's answer is the rule's answer either way."""
    if patch.replaces_list(len(old), new, path):
        assert _by_the_rule(old, new, path) == [{"op": "replace", "path": path, "value": new}]
    ops: list[dict[str, Any]] = []
    patch.diff_into(old, new, path, ops)
    assert ops == _by_the_rule(old, new, path)


def test_a_seat_s_choices_filled_and_emptied_are_one_replace() -> None:
    choices = [{"kind": "position", "at": [q, 0], "rotations": [0, 1]} for q in range(40)]
    assert patch.replaces_list(0, choices, "/own/choices")
    assert patch.replaces_list(40, [], "/own/choices")
    assert patch.replaces_list(40, choices[:2], "/own/choices")
    assert not patch.replaces_list(0, [1], "/own/choices")  # one add is smaller
    assert not patch.replaces_list(40, choices[:39], "/own/choices")  # one remove is smaller
    assert diff({"c": []}, {"c": choices}) == [{"op": "replace", "path": "/c", "value": choices}]
