"""protocol/tree.py: the incremental canonical encoding is the canonical encoding, whatever the
versions, and the diff made from the kept bytes turns each version into the next."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import array_header, canonical, pack, unpack
from protocol.frames import encode_ops
from protocol.patch import apply
from protocol.tree import Tree, Work, diff_trees, track
from tests.protocol.strategies import documents

versions = st.lists(documents(max_leaves=20), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(versions, st.integers(0, 4), st.sampled_from([0, 1, 3]))
def test_the_kept_bytes_are_the_canonical_encoding_of_every_version(
    docs: list[Any], depth: int, small: int
) -> None:
    tree: Tree | None = None
    for doc in docs:
        tree = track(tree, doc, depth, Work(), small=small)
        assert tree.enc == canonical(doc)
        assert canonical(tree.value()) == canonical(doc)


@settings(max_examples=300, deadline=None)
@given(versions, st.integers(0, 3), st.booleans())
def test_the_diff_of_two_trees_turns_one_version_into_the_next(
    docs: list[Any], depth: int, below: bool
) -> None:
    """Server side: no previous value is kept, only bytes; a scalar or a list that becomes an
    empty map (or the other way round) is a change too."""
    work = Work()
    tree = track(None, {"doc": docs[0]}, depth, work)
    current: Any = {"doc": docs[0]}
    for doc in docs[1:]:
        work = Work()
        frozen = copy.deepcopy(doc)
        new = track(tree, {"doc": doc}, depth, work)
        ops = diff_trees(tree, new, "", work, below=below)
        current = apply(current, ops)
        assert canonical(current) == canonical({"doc": frozen})
        tree = new


@settings(max_examples=300, deadline=None)
@given(versions, st.integers(0, 3), st.booleans(), st.sampled_from(["", "/s", "/" + "é" * 140]))
def test_the_ops_spliced_for_the_frames_are_each_op_s_encoding(
    docs: list[Any], depth: int, below: bool, path: str
) -> None:
    """The size rule encodes each op once per diff, whatever the levels that weigh it, and the
    frames reuse those bytes: :func:`protocol.frames.encode_ops`'s bytes exactly."""
    tree = track(None, {"doc": docs[0]}, depth, Work())
    for doc in docs[1:]:
        work = Work()
        new = track(tree, {"doc": doc}, depth, work)
        ops = diff_trees(tree, new, path, work, below=below)
        for op in work.packed.keep:
            assert work.packed.enc[id(op)] == pack(op), op
        assert work.encode_ops(ops) == encode_ops(ops)
        tree = new


@settings(max_examples=200, deadline=None)
@given(versions, st.integers(0, 4), st.sampled_from([0, 1, 3]), st.booleans())
def test_a_caller_that_keeps_its_values_gets_the_same_bytes(
    docs: list[Any], depth: int, small: int, itemized: bool
) -> None:
    """Client side (``before``): values are never edited, so an identical subtree is reused;
    the same bytes with leaves ``itemized`` (their unchanged items spliced)."""
    tree: Tree | None = None
    before: Any = object()
    for doc in docs:
        version = doc if tree is None else _sharing(before, doc)
        tree = track(tree, version, depth, Work(), before, small, itemized)
        assert tree.enc == canonical(version)
        before = version


def test_an_itemized_leaf_encodes_only_the_items_it_did_not_have() -> None:
    """A kept list that grew and a kept map with one entry replaced: the other items' bytes are
    the very bytes the last node held, and the whole is the canonical encoding."""
    first, second = {"tile": 3, "at": [0, 1]}, {"tile": 4, "at": [2, 1]}
    last = {"laid": [first], "gems": {"b": "red", "a": ["x"]}}
    tree = track(None, last, 1, Work())
    grown: dict[str, Any] = {"laid": [first, second], "gems": {"b": "red", "a": ["y"]}}
    one = track(tree, grown, 1, Work(), last, itemized=True)
    now = {"laid": [first, second, {"tile": 5}], "gems": {"b": grown["gems"]["b"], "a": ["z"]}}
    two = track(one, now, 1, Work(), grown, itemized=True)
    assert isinstance(one.kids, dict) and isinstance(two.kids, dict)
    laid, gems = two.kids["laid"], two.kids["gems"]
    assert laid.enc == canonical(now["laid"]) and gems.enc == canonical(now["gems"])
    had, has = one.kids["laid"].items, laid.items
    assert isinstance(had, list) and isinstance(has, list)
    assert has[0] is had[0] and has[1] is had[1] and has[2] == canonical({"tile": 5})
    kept, keeps = one.kids["gems"].items, gems.items
    assert isinstance(kept, dict) and isinstance(keeps, dict)
    assert list(keeps) == ["a", "b"] and keeps["b"] is kept["b"]


def test_a_map_with_the_same_keys_reuses_the_bytes_of_its_keys() -> None:
    old = track(None, {"b": 1, "a": [1], "c": "x"}, 1, Work())
    new = track(old, {"b": 2, "a": [1], "c": "y"}, 1, Work())
    assert new.enc == canonical({"a": [1], "b": 2, "c": "y"})
    assert old.parts is not None and new.parts is not None
    assert all(new.parts[i] is old.parts[i] for i in (0, 1, 3, 5))
    other = track(new, {"b": 2, "d": None}, 1, Work())
    assert other.enc == canonical({"b": 2, "d": None})


@settings(max_examples=300, deadline=None)
@given(versions, st.integers(0, 3), st.booleans(), st.booleans())
def test_the_diff_from_the_values_the_caller_kept_turns_one_version_into_the_next(
    docs: list[Any], depth: int, below: bool, itemized: bool
) -> None:
    """Server side with kept fields (``before``: the last version, never edited): a changed
    leaf is diffed from its kept value, not from its decoded bytes, and the parts the new
    version shares with it (the same objects) are skipped; the ops are those of the bytes'
    diff, perhaps in another order for the keys of one map."""
    tree = track(None, {"doc": docs[0]}, depth, Work())
    before: Any = {"doc": docs[0]}
    current: Any = copy.deepcopy(before)
    for doc in docs[1:]:
        # the next version shares every part of the last one the caller did not replace
        version = {"doc": _sharing(before["doc"], doc)}
        work = Work()
        new = track(tree, version, depth, work, before, itemized=itemized)
        assert new.enc == canonical(version)
        ops = diff_trees(tree, new, "", work, below=below)
        plain = diff_trees(tree, track(tree, version, depth, Work()), "", Work(), below=below)
        assert sorted(map(canonical, ops)) == sorted(map(canonical, plain))
        current = apply(current, ops)
        assert canonical(current) == canonical(version)
        tree, before = new, version


def _sharing(old: Any, new: Any) -> Any:
    """``new``, with every part equal (same bytes) to ``old``'s at the same place being
    ``old``'s very object."""
    if canonical(old) == canonical(new):
        return old
    if type(old) is dict and type(new) is dict:
        return {k: _sharing(old[k], v) if k in old else v for k, v in new.items()}
    if type(old) is list and type(new) is list:
        return [_sharing(old[i], v) if i < len(old) else v for i, v in enumerate(new)]
    return new


def test_a_changed_kept_leaf_is_diffed_from_its_kept_value() -> None:
    """Its parts shared with the new value are skipped by identity: the kept value is what the
    diff reads (a decoded copy would equal it but share nothing)."""
    same = {"gold": 3, "built": ["a"]}
    last = {"players": [same, {"gold": 1}]}
    now = {"players": [same, {"gold": 2}]}
    tree = track(None, last, 1, Work())
    work = Work()
    new = track(tree, now, 1, work, last)
    assert work.previous is not None
    assert any(value is last["players"] for value in work.previous.values())
    ops = diff_trees(tree, new, "/shared", work)
    assert ops == [{"op": "replace", "path": "/shared/players/1/gold", "value": 2}]


def test_an_unchanged_field_keeps_its_node_and_a_changed_one_does_not() -> None:
    work = Work()
    old = track(None, {"a": [1, 2], "b": {"c": 1}}, 1, work)
    new = track(old, {"a": [1, 2], "b": {"c": 2}}, 1, Work())
    assert isinstance(old.kids, dict) and isinstance(new.kids, dict)
    assert new.kids["a"] is old.kids["a"] and new.kids["b"] is not old.kids["b"]
    assert track(new, {"a": [1, 2], "b": {"c": 2}}, 1, Work()) is new
    assert track(new, {"a": [1, 2]}, 1, Work()).kids == {"a": old.kids["a"]}


@settings(max_examples=200, deadline=None)
@given(versions, st.integers(1, 3))
def test_an_entry_diffed_whole_is_one_replace_whenever_its_bytes_change(
    docs: list[Any], depth: int
) -> None:
    """``whole``: a top-level entry whose bytes changed is one ``replace`` of its whole new value
    (a seat's choices, SPEC section 3), an unchanged one no op; the others are diffed as before,
    and the ops still turn each version into the next; the ops' bytes decode to the ops."""
    first = {"whole": docs[0], "other": docs[0]}
    tree = track(None, first, depth, Work())
    current: Any = copy.deepcopy(first)
    for doc in docs[1:]:
        work = Work()
        version = {"whole": doc, "other": doc}
        new = track(tree, version, depth, work)
        ops = diff_trees(tree, new, "/own", work, whole=frozenset({"whole"}))
        mine = [op for op in ops if op["path"].startswith("/own/whole")]
        if canonical(doc) == canonical(current["whole"]):
            assert mine == []
        else:
            assert mine == [{"op": "replace", "path": "/own/whole", "value": doc}]
            # (spliced into frames from the new value's canonical bytes, not encoded again)
            assert work.encode_ops(mine).endswith(pack("value") + canonical(doc))
        sent = unpack(array_header(len(ops)) + work.encode_ops(ops))
        assert canonical(sent) == canonical(ops)
        others = [op for op in ops if not op["path"].startswith("/own/whole")]
        plain = track(tree, version, depth, Work())
        assert others == [
            op
            for op in diff_trees(tree, plain, "/own", Work())
            if not op["path"].startswith("/own/whole")
        ]
        current = apply({"own": current}, ops)["own"]
        assert canonical(current) == canonical(version)
        tree = new
