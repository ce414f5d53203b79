"""protocol._diffc, the view diff in C, against protocol/patch.py's Python: the same ops (their
order, their keys' order, the very value objects), the same encodings recorded in the diff's
``_OpBytes``, the same sizes counted, and no reference leaked.

The extension is built with the compiled modules (``scripts/build_compiled.py``), not in a plain
checkout: these tests run in the compiled tier (``tests/test_compiled.py`` runs the protocol's
tests in its compiled copy with ``OASIS_NATIVE_DIFF=required``, where a missing extension fails
them), and are skipped elsewhere, saying so.
"""

from __future__ import annotations

import copy
import os
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import patch
from protocol.codec import pack

REQUIRED = os.environ.get("OASIS_NATIVE_DIFF") == "required"
NATIVE: Any = patch._NATIVE

pytestmark = pytest.mark.skipif(
    NATIVE is None and not REQUIRED,
    reason="protocol._diffc is not built here: these tests run in the compiled tier "
    "(tests/test_compiled.py builds it, and fails them if it is missing)",
)


def test_the_native_diff_is_loaded_and_used() -> None:
    """Where these tests run the extension is imported, set up, and what :func:`patch.diff`
    and :mod:`protocol.tree` call (a compiled copy without it fails here)."""
    assert NATIVE is not None, "protocol._diffc did not import"
    from protocol import tree

    assert patch._NATIVE_DIFF is NATIVE.diff
    assert tree._NATIVE_DIFF_CHILD is NATIVE.diff_child
    assert tree._NATIVE_COLLAPSE is NATIVE.collapse


# Documents ---------------------------------------------------------------------------------

_INT_EDGES = [0, 1, -1, 2**64 - 1, -(2**63)]
for _bound in (0x80, 0x100, 0x10000, 0x100000000, 0x8000000000000000):
    _INT_EDGES += [_bound - 1, _bound]
for _bound in (32, 0x80, 0x8000, 0x80000000):
    _INT_EDGES += [-_bound, -_bound - 1]
_TEXT = st.text(alphabet=st.sampled_from("ab~/0-_é€\U0001f600 "), max_size=6)
_LONG_TEXT = st.sampled_from(["x" * 31, "x" * 32, "é" * 16, "y" * 255, "y" * 256, "€" * 22000])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.sampled_from(_INT_EDGES)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 1.0, 0.5])
    | _TEXT
    | _LONG_TEXT
)
keys = st.text(alphabet=st.sampled_from("ab~/0é€"), max_size=3)


def documents(max_leaves: int = 25) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=20) | st.dictionaries(keys, children, max_size=18)
        ),
        max_leaves=max_leaves,
    )


def _twin(value: Any) -> Any:
    """A value ``==`` to ``value`` of another type where there is one (1, 1.0, True; 0.0 and
    -0.0): what strict equality tells apart."""
    if type(value) is bool:
        return int(value)
    if type(value) is int and -(2**53) < value < 2**53:
        return float(value)
    if type(value) is float:
        if value == 0.0:
            return -value
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return copy.deepcopy(value)


def _equal_copy(value: Any) -> Any:
    """An equal scalar of the same type that is another object where Python makes one (a
    string of two characters or more, an int beyond the small ones, a float): compared, not
    skipped by identity."""
    if type(value) is str:
        return "".join(list(value))
    if type(value) is int:
        return int(str(value))
    if type(value) is float:
        return float(repr(value)) if value == value else value
    return value


def _kin(value: Any) -> st.SearchStrategy[Any]:
    """Another value of the same type (a change the diff weighs without encoding it, mostly)."""
    if type(value) is bool:
        return st.booleans()
    if type(value) is int:
        return st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.sampled_from(_INT_EDGES)
    if type(value) is float:
        return st.floats()
    if type(value) is str:
        return _TEXT | _LONG_TEXT
    return scalars


@st.composite
def edited(draw: st.DrawFn, doc: Any, depth: int = 0) -> Any:
    """A new version of ``doc``: shared subobjects (the very objects), equal copies, twins of
    another type, values of the same type or fresh ones, entries added and removed, lists grown
    and cut; the top container always edited entry by entry (the size rule's ground)."""
    if type(doc) is not dict and type(doc) is not list:
        how = draw(st.integers(0, 6))
        if how == 0:
            return doc
        if how == 1:
            return _twin(doc)
        if how == 2:
            return _equal_copy(doc)
        if how == 6:
            return draw(documents(6))
        return draw(_kin(doc))
    how = draw(st.integers(0, 19)) if depth else 19
    if how <= 1:
        return doc  # (shared: skipped by identity)
    if how <= 3:
        return copy.deepcopy(doc)  # (equal, not the same objects)
    if how == 4:
        return _twin(doc)
    if how == 5 or depth > 4:
        return draw(documents(8))
    if type(doc) is dict:
        out = {}
        for key, value in doc.items():
            if draw(st.integers(0, 7)) == 0:
                continue  # removed
            out[key] = draw(edited(value, depth + 1))
        for key in draw(st.lists(keys, max_size=3)):
            out[key] = draw(documents(4))
        if draw(st.booleans()):  # (another key order: the same map)
            out = dict(reversed(list(out.items())))
        return out
    out_list = [draw(edited(item, depth + 1)) for item in doc]
    out_list += draw(st.lists(documents(4), max_size=4))
    cut = draw(st.integers(0, len(out_list)))
    return out_list[:cut] if draw(st.integers(0, 3)) == 0 else out_list


tops = st.dictionaries(keys, documents(12), min_size=1, max_size=10) | st.lists(
    documents(12), min_size=1, max_size=14
)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    old = draw(tops if draw(st.integers(0, 7)) else documents())
    return old, draw(edited(old))


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if type(item) is dict:
            found.append(item)
            todo.extend(item.values())
        elif type(item) is list:
            found.append(item)
            todo.extend(item)
    return found


@st.composite
def size_hints(draw: st.DrawFn, new: Any) -> dict[int, int]:
    """``sizes`` as the server gives them (true sizes of some containers of ``new``), or wrong
    ones (both diffs must still agree: they read them the same way)."""
    sizes: dict[int, int] = {}
    for container in _containers(new):
        kind = draw(st.integers(0, 3))
        if kind == 1:
            sizes[id(container)] = len(pack(container))
        elif kind == 2:
            sizes[id(container)] = draw(st.integers(0, 500))
    return sizes


paths = st.sampled_from(["", "/shared", "/own/choices", "/é~0/a~1b", "/" + "x" * 40])


# The two diffs, side by side ----------------------------------------------------------------

Ops = list[dict[str, Any]]


def _python(
    kind: str, old: Any, new: Any, path: str, sizes: dict[int, int]
) -> tuple[Ops, patch._OpBytes]:
    ops: Ops = []
    packed = patch._OpBytes()
    if kind == "diff":
        patch._diff(old, new, path, ops, sizes, packed)
    else:
        patch._diff_child(old, new, path, ops, sizes, packed)
    return ops, packed


def _native(
    kind: str, old: Any, new: Any, path: str, sizes: dict[int, int]
) -> tuple[Ops, patch._OpBytes]:
    ops: Ops = []
    packed = patch._OpBytes()
    function = NATIVE.diff if kind == "diff" else NATIVE.diff_child
    function(old, new, path, ops, sizes, packed.enc, packed.keep)
    return ops, packed


def _same_op(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same op: the same keys in the same order, equal names and paths, the very value."""
    return (
        type(a) is dict
        and type(b) is dict
        and list(a) == list(b)
        and a["op"] == b["op"]
        and type(a["path"]) is str
        and a["path"] == b["path"]
        and ("value" not in a or a["value"] is b["value"])
    )


def _assert_same(python: tuple[Ops, patch._OpBytes], native: tuple[Ops, patch._OpBytes]) -> None:
    (ops, packed), (their_ops, their_packed) = python, native
    assert len(their_ops) == len(ops), (their_ops, ops)
    for a, b in zip(ops, their_ops, strict=True):
        assert _same_op(a, b), (a, b)
    # The encodings recorded: of the same ops, in the same order, the same bytes.
    assert len(their_packed.keep) == len(packed.keep) == len(packed.enc) == len(their_packed.enc)
    for a, b in zip(packed.keep, their_packed.keep, strict=True):
        assert _same_op(a, b), (a, b)
        assert packed.enc[id(a)] == their_packed.enc[id(b)] == pack(a)
    assert their_packed.join(their_ops) == packed.join(ops)


def _outcome(run: Callable[[], tuple[Ops, patch._OpBytes]]) -> Any:
    try:
        return run()
    except Exception as exc:  # (both must raise the same where one does)
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(pairs(), paths, st.sampled_from(["diff", "diff_child"]), st.data())
def test_the_native_diff_makes_the_python_ops_and_encodings(
    pair: tuple[Any, Any], path: str, kind: str, data: st.DataObject
) -> None:
    old, new = pair
    sizes = data.draw(size_hints(new))
    python = _outcome(lambda: _python(kind, old, new, path, sizes))
    native = _outcome(lambda: _native(kind, old, new, path, sizes))
    if isinstance(python, type):
        assert native is python
    else:
        assert not isinstance(native, type), native
        _assert_same(python, native)


@settings(max_examples=100, deadline=None)
@given(pairs(), paths)
def test_patch_diff_is_the_python_diff(pair: tuple[Any, Any], path: str) -> None:
    """:func:`patch.diff` (which calls the extension) gives the Python's ops."""
    old, new = pair
    ops = patch.diff(old, new, path)
    python, _ = _python("diff", old, new, path, {})
    assert len(ops) == len(python) and all(map(_same_op, ops, python))


_CHANGES: dict[str, tuple[Any, Any]] = {
    "str": ("p", "qé" * 5),
    "int": (1, 70000),
    "bool": (True, False),
    "none": (0, None),
    "float": (0.0, -0.0),
    "list": ([1], [2]),
}


@pytest.mark.parametrize("path", ["", "/s", "/é~0", "/" + "x" * 40])
@pytest.mark.parametrize("change", [*_CHANGES, "remove", "add", "items"])
def test_the_size_rule_s_edge_is_the_python_s(change: str, path: str) -> None:
    """Two changes in a container beside unchanged filler of every size from nothing to past
    the budget: the size rule's answer flips at one filler size, the same in both (every way
    an op is weighed: counted by its value's type, by its path's steps and indices, encoded)."""
    for filler in range(0, 120):
        rest = "z" * filler
        if change == "items":  # (indices 9 to 11: a path of one digit more)
            old: Any = {"c": [rest, *range(11)]}
            new: Any = {"c": [rest, *range(9), "x", "y", "w"]}
        elif change in ("remove", "add"):
            small = {"f": rest}
            large = {"f": rest, "a~": 1, "b/": "é"}
            old, new = (
                ({"c": large}, {"c": small}) if change == "remove" else ({"c": small}, {"c": large})
            )
        else:
            before, after = _CHANGES[change]
            old = {"c": {"f": rest, "a": before, "b/": copy.deepcopy(before)}}
            new = {"c": {"f": rest, "a": after, "b/": copy.deepcopy(after)}}
        python = _python("diff", old, new, path, {})
        _assert_same(python, _native("diff", old, new, path, {}))


def test_beyond_64_bits_both_raise_where_the_size_rule_encodes() -> None:
    """An int ``pack`` refuses: weighed by encoding it, it raises from both alike."""
    old: dict[str, Any] = {"a": [1, 2, 3, 4], "b": 1}
    new: dict[str, Any] = {"a": [5, 6, 7, 2**64], "b": 2**70}
    for run in (_python, _native):
        for kind in ("diff", "diff_child"):
            with pytest.raises(OverflowError):
                run(kind, {"x": old}, {"x": new}, "", {})
    # (at the top, a scalar replaced: no size weighed, no error)
    python, _ = _python("diff", old["b"], new["b"], "", {})
    native, _ = _native("diff", old["b"], new["b"], "", {})
    assert len(native) == len(python) == 1 and _same_op(python[0], native[0])


def test_strict_equality_tells_apart_what_python_calls_equal() -> None:
    for old, new in (
        ([1, 0.0, True], [1.0, -0.0, 1]),
        ({"a": [0.0]}, {"a": [-0.0]}),
        ({"a": {"b": 1}}, {"a": {"b": True}}),
        ([float("nan")], [float("nan")]),
    ):
        python = _python("diff", old, new, "/p", {})
        assert python[0], (old, new)
        _assert_same(python, _native("diff", old, new, "/p", {}))


# Sizes ---------------------------------------------------------------------------------------

_EDGES: list[Any] = [None, True, False, 0.5, -0.0, [1], {"a": 1}, "", "a" * 31, "a" * 32]
_EDGES += ["é" * 20, "x" * 255, "x" * 256, "y" * 65535, "y" * 65536, "\U0001f600" * 9]
_EDGES += [*_INT_EDGES, [0] * 15, [0] * 16, [0] * 65536, {str(i): i for i in range(16)}]
_EDGES += [{str(i): i for i in range(15)}, {str(i): None for i in range(65536)}]


@pytest.mark.parametrize("value", _EDGES, ids=range(len(_EDGES)))
def test_sizes_are_counted_as_pack_writes_them(value: Any) -> None:
    """Every boundary of msgpack's forms: the count is ``len(pack(value))`` (ormsgpack's
    bytes, msgpack's too)."""
    assert NATIVE.counted_size(value) == len(pack(value)) == len(msgpack.packb(value))
    assert NATIVE.packed_size(value) == len(pack(value))


@settings(max_examples=150, deadline=None)
@given(documents())
def test_sizes_of_random_documents_are_counted_as_pack_writes_them(value: Any) -> None:
    assert NATIVE.counted_size(value) == len(pack(value))


class _Str(str):
    pass


def test_what_the_count_does_not_know_is_measured_by_pack() -> None:
    """A subclass, a tuple, an int beyond 64 bits, a non-string key, a lone surrogate, deep
    nesting: not counted (None), measured (or refused) by ``pack``."""
    deep: Any = 1
    for _ in range(150):
        deep = [deep]
    for value in ([_Str("a")], (1, 2), [2**64], {1: 2}, ["\ud800"], deep):
        assert NATIVE.counted_size(value) is None
        try:
            expected: Any = len(pack(value))
        except Exception as exc:
            expected = type(exc)
        try:
            got: Any = NATIVE.packed_size(value)
        except Exception as exc:
            got = type(exc)
        assert got == expected, value


def test_ops_are_weighed_as_the_python_weighs_them() -> None:
    """``op_size`` is ``_OpBytes.size``: the same count, and the same encodings recorded (an op
    whose value is not counted is encoded, once)."""
    for path in ("", "/a", "/é" * 20, "/x" * 200):
        for op in [{"op": "remove", "path": path}] + [
            {"op": name, "path": path, "value": value}
            for name in ("replace", "add", "test")
            for value in [*_EDGES[:40], 2**64, -(2**63) - 1, _Str("s")]
        ]:
            mine, theirs = patch._OpBytes(), patch._OpBytes()
            expected = _outcome(lambda op=op, mine=mine: mine.size(op))  # type: ignore[misc]
            got = _outcome(lambda op=op, t=theirs: NATIVE.op_size(op, t.enc, t.keep))  # type: ignore[misc]
            assert got == expected, op
            assert theirs.enc == mine.enc and theirs.keep == mine.keep
    odd = {"op": "remove", "path": "/a", "from": "/b"}  # (three keys, no value: encoded)
    packed = patch._OpBytes()
    assert NATIVE.op_size(odd, packed.enc, packed.keep) == len(pack(odd))
    assert packed.keep == [odd]


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 40),
    st.lists(documents(3), max_size=40),
    paths,
    st.none() | st.integers(0, 400),
)
def test_replaces_list_is_the_python_rule(
    old_len: int, new: list[Any], path: str, size: int | None
) -> None:
    assert NATIVE.replaces_list(old_len, new, path, size) == patch._replaces_list(
        old_len, new, path, size
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda name, path, value, has: (
                {"op": name, "path": path, "value": value} if has else {"op": name, "path": path}
            ),
            st.sampled_from(["add", "replace", "remove"]),
            paths,
            scalars | documents(4),
            st.booleans(),
        ),
        max_size=12,
    ),
    st.integers(0, 4),
    paths,
    st.integers(0, 300),
)
def test_collapse_is_the_python_rule(ops: Ops, start: int, path: str, size: int) -> None:
    """The same ops left (or the one replace), and the same ops weighed and encoded on the
    way: the weighing stops at the first op past the budget in both."""
    whole = ["new"]
    mine, theirs = list(ops), list(ops)
    packed, their_packed = patch._OpBytes(), patch._OpBytes()
    patch._collapse(mine, start, path, size, lambda: whole, packed)
    NATIVE.collapse(theirs, start, path, size, lambda: whole, their_packed.enc, their_packed.keep)
    assert len(mine) == len(theirs) and all(map(_same_op, mine, theirs))
    assert packed.keep == their_packed.keep and packed.enc == their_packed.enc


# The path step caches --------------------------------------------------------------------------


def test_steps_are_made_into_the_python_s_cache() -> None:
    """The extension fills patch's ``_STEPS`` (one cache for both), with the Python's
    ``_step``; past ``_STEPS_MAX`` entries a step is made each time, not kept."""
    key = "native~/step é"
    patch._STEPS.pop(key, None)
    ops = patch.diff({key: 1}, {key: 2})
    assert ops == [{"op": "replace", "path": "/native~0~1step é", "value": 2}]
    assert patch._STEPS[key] == "/native~0~1step é"
    other = "not~kept"
    patch._STEPS.pop(other, None)
    NATIVE.setup(pack, patch._STEPS, len(patch._STEPS), patch._AT, *_constants())
    try:
        ops = patch.diff({other: 1}, {other: 2})
        assert ops == [{"op": "replace", "path": "/not~0kept", "value": 2}]
        assert other not in patch._STEPS
    finally:
        NATIVE.setup(pack, patch._STEPS, patch._STEPS_MAX, patch._AT, *_constants())
    far = list(range(patch._INDICES + 3))
    ops = patch.diff(far, [*far[:-1], -1])
    assert ops == [{"op": "replace", "path": f"/{len(far) - 1}", "value": -1}]


def _constants() -> tuple[int, ...]:
    sizes = patch._OP_SIZES
    return (
        sizes["replace"],
        sizes["add"],
        sizes["remove"],
        patch._REPLACE_OVERHEAD,
        patch._REMOVE_LEAST,
    )


# References ------------------------------------------------------------------------------------


def test_the_native_diff_leaks_no_reference() -> None:
    """Many diffs (ops made, collapsed, weighed, encoded, steps cached; and diffs that raise
    half-way) leave every input's reference count as it was."""
    shared = {"kept": [1, 2, 3]}
    old: dict[str, Any] = {
        "a": [{"x": i, "y": "é" * i} for i in range(20)],
        "b": shared,
        "c": 1.5,
        "d": {"gone": 1, "t": [0.0]},
        "e": list(range(30)),
        "f": "x",
    }
    new: dict[str, Any] = {
        "a": [{"x": i + 1, "y": "é" * i} for i in range(18)],
        "b": shared,
        "c": 1.5,
        "d": {"t": [-0.0], "new": [1, {"z": None}]},
        "e": [],
        "g": True,
    }
    bad_old = {"k": [1, 2, {3: 4}]}
    bad_new = {"k": [1, 2, {3: 5}]}  # (a key that is not a string: TypeError half-way)
    big_old = {"k": [1, 2, 3, 4]}
    big_new = {"k": [5, 6, 7, 2**64]}  # (pack refuses it: OverflowError from the size rule)
    path = "/shared"
    sizes = {id(new["a"]): len(pack(new["a"]))}
    watched = [old, new, shared, old["a"], new["a"], new["a"][3], old["a"][3], new["d"], path]
    watched += [bad_old, bad_new, big_old, big_new, sizes, new["d"]["new"]]
    watched += [patch._STEPS, patch._AT]

    def run() -> None:
        for function in (NATIVE.diff, NATIVE.diff_child):
            for at in (path, ""):  # ("" + step: the cached step itself, not a new string)
                packed = patch._OpBytes()
                ops: Ops = []
                function(old, new, at, ops, sizes, packed.enc, packed.keep)
                assert ops
                packed.join(ops)
            for bad in ((bad_old, bad_new), (big_old, big_new)):
                try:  # (not pytest.raises: what it keeps would count as a leak below)
                    function({"w": bad[0]}, {"w": bad[1]}, path, [], {}, {}, [])
                except (TypeError, OverflowError):
                    pass
                else:
                    raise AssertionError("no error")
            NATIVE.collapse(ops, 0, path, 5, lambda: new, packed.enc, packed.keep)
            NATIVE.replaces_list(30, [1], path, None)
            NATIVE.packed_size(new)

    run()  # (the steps cached, once)
    steps = [patch._STEPS[key] for key in ("a", "d", "e", "f", "g", "gone", "new", "t", "x")]
    watched += steps
    assert_no_leak(run, watched)


def assert_no_leak(run: Callable[[], object], watched: list[Any]) -> None:
    """300 more calls of ``run`` (called once before) change no reference count of
    ``watched``, nor leave a new object behind (a path, an op, an encoding): memory stays as
    it was."""
    before = [sys.getrefcount(x) for x in watched]
    for _ in range(300):
        run()
    after = [sys.getrefcount(x) for x in watched]
    assert after == before
    tracemalloc.start()
    try:
        run()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            run()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 4096, grown
