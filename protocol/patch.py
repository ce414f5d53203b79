"""State diffs as RFC 6902 JSON Patch: the server's diff and every client's apply.

:func:`diff` produces only ``add``, ``remove`` and ``replace`` operations, with paths written as
RFC 6901 JSON Pointers (:mod:`protocol.pointer`). Documents are maps with string keys, lists,
ints, floats, strings, bools and None. Maps are diffed key by key; lists element by element over
their common length, then the tail is added (at explicit indices, in increasing order) or removed
(from the last index down), so a list that grows or shrinks at its end gives a patch the size of
the change, not of the list. The *size rule*: a map or list below the top whose changes take two
or more operations is instead ``replace``d whole when that one operation encodes (msgpack, path
included) to strictly fewer bytes than they do: a list whose contents all changed (a seat's new
legal choices) costs the new list, not one operation per element. Values of different types are
never "equal": ``1``, ``1.0`` and ``true`` replace one another, so ``apply(a, diff(a, b))`` has
the same canonical encoding as ``b``, not merely a Python-equal one.

:func:`apply` accepts the whole RFC 6902 vocabulary (``add``, ``remove``, ``replace``, ``move``,
``copy``, ``test``) so clients and tests can feed it patches from elsewhere. It works by *path
copying*: only the containers on the paths the operations touch are copied, every other subtree
is shared between the old and the new document, and the old one is never mutated. Both must
therefore be treated as read-only (a client's mirror replaces its view, never edits it), which
lets the incremental view hash (:class:`protocol.hashing.ViewHasher`) re-encode only what
changed. A patch that does not fit the document raises :class:`PatchError` and nothing else,
leaving nothing half-done.

The size rule's helpers (``_collapse``, ``_replaces_list``, ``_diff_child``) are shared with
:mod:`protocol.tree`, the server's diff over kept bytes, and are not public API.

The diff has a native twin, ``protocol._diffc`` (``protocol/_diffc.c``, built with the compiled
modules by ``scripts/build_compiled.py``): the same ops, in the same order, holding the same value
objects, and the same encodings recorded (``tests/protocol/test_diffc.py``). :func:`diff` and
:mod:`protocol.tree` call it when it imports (:data:`_NATIVE`), the Python here otherwise.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from protocol.codec import _int_size, _str_form, array_header, canonical, pack, unpack
from protocol.pointer import PointerError, escape
from protocol.pointer import index as _index
from protocol.pointer import parse as _parse

__all__ = ["Op", "PatchError", "apply", "diff"]

Op = dict[str, Any]


class PatchError(Exception):
    """A patch that cannot be applied to the document it was given."""


def _same(a: Any, b: Any) -> bool:
    """Strict equality: Python ``==`` (C speed) confirmed by :func:`_strict`.

    ``==`` alone would call ``1``, ``1.0`` and ``True`` equal; the types tell them apart.
    """
    return a is b or (a == b and _strict(a, b))


def _strict(a: Any, b: Any) -> bool:
    """Whether two values already ``==`` also have the same type everywhere (so the same
    canonical encoding): a walk of both, which costs less than encoding them (no allocation)
    and stops at the first subtree they share.

    ``==`` has settled the keys and the lengths. Floats equal but of another sign (``0.0`` and
    ``-0.0``) encode differently and are not the same; a map in another key order is (its
    canonical encoding is that of the other).
    """
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        first: dict[str, Any] = a  # (typed: compiled, the dict's own fast operations)
        second: dict[str, Any] = b
        for key, value in first.items():
            other = second[key]
            if value is not other and not _strict(value, other):
                return False
        return True
    if kind is list:
        xs: list[Any] = a
        ys: list[Any] = b
        for i in range(len(xs)):  # (an index loop: compiled, no generator nor zip)
            x = xs[i]
            y = ys[i]
            if x is not y and not _strict(x, y):
                return False
        return True
    if kind is float:
        return not _signed(a, b)
    return True


def diff(old: Any, new: Any, path: str = "", sizes: Mapping[int, int] | None = None) -> list[Op]:
    """The operations that turn ``old`` into ``new``.

    ``path``: where the two documents sit in a larger one (a JSON Pointer); every operation's
    path starts with it, and the byte counts of the size rule include it. ``sizes``: optional
    msgpack sizes of containers of ``new`` already known to the caller, by ``id``, so that the
    size rule need not encode them again. Subtrees that ``old`` and ``new`` share (the same
    object) are skipped without a look.
    """
    ops: list[Op] = []
    packed = _OpBytes()
    if _NATIVE_DIFF is not None:  # (a Mapping that is not a dict: copied, C reads a dict)
        known = sizes if type(sizes) is dict else dict(sizes) if sizes else _NO_SIZES_DICT
        _NATIVE_DIFF(old, new, path, ops, known, packed.enc, packed.keep)
    else:
        _diff(old, new, path, ops, sizes or _NO_SIZES, packed)
    return ops


class _OpBytes:
    """The encodings of the ops of one diff, each made once: the size rule weighs the ops of a
    container again at every enclosing container (``_collapse``, by :meth:`size`: an op with a
    scalar value is counted, not encoded), and the server splices the surviving ones into its
    frames (:meth:`protocol.tree.Work.encode_ops`).

    By ``id`` of the op, each op kept alive beside (``keep``) so that no id is reused while
    the diff runs, by a new op after the size rule dropped one. Ops are never edited once
    made, so their bytes stay true.
    """

    __slots__ = ("enc", "keep")

    def __init__(self) -> None:
        self.enc: dict[int, bytes] = {}
        self.keep: list[Op] = []

    def of(self, op: Op) -> bytes:
        """``pack(op)``, encoded on the first call only."""
        enc = self.enc.get(id(op))
        if enc is None:
            enc = pack(op)
            self.enc[id(op)] = enc
            self.keep.append(op)
        return enc

    def put(self, op: Op, enc: bytes) -> None:
        """Give ``op``'s encoding, made otherwise (a map that decodes to ``op``: its keys may
        come in another order, as in the canonical bytes of a kept value)."""
        self.enc[id(op)] = enc
        self.keep.append(op)

    def size(self, op: Op) -> int:
        """``len(pack(op))``: counted without encoding it for an op whose value is a string, an
        int, a bool or nil, or that has none (most ops, which the size rule weighs and most
        often keeps: they are encoded once, with the others of their frame, by :meth:`join`);
        else :meth:`of`'s bytes.

        Counts msgpack's forms as :func:`protocol.codec.pack` writes them, for the ops this
        module and :mod:`protocol.tree` make: a map of ``op``, ``path`` and perhaps ``value``.
        """
        n = len(op)
        name = op.get("op")
        path = op.get("path")
        if type(path) is str and (n == 3 or (n == 2 and name == "remove")):
            head = _OP_SIZES.get(name, 0) if type(name) is str else 0
            if head:
                if n == 2:
                    return head + _str_size(path)
                value = op.get("value", _ABSENT)
                kind = type(value)
                if kind is str:
                    return head + _str_size(path) + _str_size(value)
                if kind is int:
                    size = _int_size(value)
                    if size:
                        return head + _str_size(path) + size
                elif kind is bool or value is None:
                    return head + _str_size(path) + 1
        return len(self.of(op))

    def join(self, ops: list[Op]) -> bytes:
        """The concatenated encodings of ``ops`` (:func:`protocol.frames.encode_ops`'s bytes).

        Those not encoded yet are encoded together, each run of them as one list whose array
        header is cut off (msgpack writes a list's items one after the other, each as alone):
        one call to the encoder for the few ops of a revision instead of one per op; in C
        where built (:data:`_NATIVE_JOIN`: the same bytes, the plain ones written there)."""
        if _NATIVE_JOIN is not None:
            joined: bytes = _NATIVE_JOIN(ops, self.enc)
            return joined
        known = self.enc
        parts: list[bytes] = []
        run: list[Op] = []
        for op in ops:
            enc = known.get(id(op))
            if enc is None:
                run.append(op)
            else:
                if run:
                    parts.append(_pack_run(run))
                    run = []
                parts.append(enc)
        if run:
            parts.append(_pack_run(run))
        return b"".join(parts)


def _pack_run(ops: list[Op]) -> bytes:
    """The concatenated ``pack`` of each of ``ops``, from one call to the encoder."""
    n = len(ops)
    if n == 1:
        return pack(ops[0])
    return pack(ops)[len(array_header(n)) :]


_OP_SIZES: Final = {
    name: len(pack({"op": name, "path": ""})) - 1 + (len(pack("value")) if name != "remove" else 0)
    for name in ("replace", "add", "remove")
}
"""Bytes of an op besides its path's and its value's encodings (map header, keys, name)."""


def _str_size(text: str) -> int:
    """``len(pack(text))``: msgpack's string header and the UTF-8 bytes."""
    return _str_form(len(text) if text.isascii() else len(text.encode()))


_NO_SIZES: Final[Mapping[int, int]] = {}
_NO_SIZES_DICT: Final[dict[int, int]] = {}
_ABSENT: Final[Any] = object()
"""(Final: compiled, held in C statics, not looked up among the module's globals at every use.)"""
_REPLACE_OVERHEAD: Final = len(pack({"op": "replace", "path": "", "value": None})) - 2
"""Bytes of a ``replace`` op besides its path's and its value's encodings."""
_REMOVE_LEAST: Final = len(pack({"op": "remove", "path": "/0"}))
"""Bytes of a ``remove`` op at least, besides its path's characters (``/0`` being the shortest
index suffix, a path of no more bytes than characters, and a one-byte string header)."""


def _collapse(
    ops: list[Op],
    start: int,
    path: str,
    size: int,
    value: Callable[[], Any],
    packed: _OpBytes | None = None,
) -> None:
    """The size rule: replace ``ops[start:]``, the changes of one map or list at ``path``, by a
    single ``replace`` of its new value when that encodes to strictly fewer bytes.

    ``size``: the msgpack size of the new value; ``value`` makes it (called only if needed).
    ``packed``: the op encodings of this diff (each op is encoded once, not at every level).
    """
    if len(ops) - start < 2:
        return
    if packed is None:
        packed = _OpBytes()
    budget = _REPLACE_OVERHEAD + len(pack(path)) + size
    total = 0
    for i in range(start, len(ops)):
        total += packed.size(ops[i])
        if total > budget:
            while len(ops) > start:  # (popped: no slice made, as ``del ops[start:]`` would)
                ops.pop()
            ops.append({"op": "replace", "path": path, "value": value()})
            return


def _replaces_list(old_len: int, new: list[Any], path: str, size: int | None = None) -> bool:
    """Whether the size rule replaces a list of ``old_len`` items below the top by ``new``
    whole, when that much is known from the lengths alone (False: diff them to know).

    A list filled from empty or emptied (a seat's choices, mostly): two or more ``add`` or
    ``remove`` ops always encode to more than one ``replace`` of the whole new list (each op
    repeats the path and its envelope; the list costs an array header of 1 to 5 bytes). A list
    that loses more items than a replace of the new one weighs: the ``remove`` ops alone, at
    their smallest, already outweigh it. ``size``: the encoded size of ``new`` if known.
    """
    n = len(new)
    if old_len + n < 2:
        return False
    if old_len == 0 or n == 0:
        return True
    extra = old_len - n
    if extra < 2:
        return False
    if size is None:
        size = len(pack(new))
    return extra * (_REMOVE_LEAST + len(path)) > _REPLACE_OVERHEAD + len(pack(path)) + size


def _diff_child(
    old: Any,
    new: Any,
    path: str,
    ops: list[Op],
    sizes: Mapping[int, int],
    packed: _OpBytes | None = None,
) -> None:
    """Diff two containers below the top; one ``replace`` instead if that is smaller."""
    if packed is None:
        packed = _OpBytes()
    if (
        type(old) is list
        and type(new) is list
        and _replaces_list(len(old), new, path, sizes.get(id(new)))
    ):
        ops.append({"op": "replace", "path": path, "value": new})
        return
    start = len(ops)
    _diff(old, new, path, ops, sizes, packed)
    if len(ops) - start < 2:
        return
    known = sizes.get(id(new))
    if known is None:  # not tracked by the caller: encode it
        known = len(pack(new))
    _collapse(ops, start, path, known, lambda: new, packed)


def _diff(
    old: Any, new: Any, path: str, ops: list[Op], sizes: Mapping[int, int], packed: _OpBytes
) -> None:
    if old is new:
        return
    kind = type(old)
    if kind is not type(new):
        ops.append({"op": "replace", "path": path, "value": new})
        return
    if kind is dict:
        before: dict[str, Any] = old  # (typed: compiled, the dict's own fast operations)
        after: dict[str, Any] = new
        gone = False
        for key, value in before.items():
            other = after.get(key, _ABSENT)
            if other is _ABSENT:
                ops.append({"op": "remove", "path": path + _step(key)})
                gone = True
                continue
            if value is other:
                continue
            vt = type(value)
            if vt is type(other) and (vt is dict or vt is list):
                if not _same(value, other):
                    _diff_child(value, other, path + _step(key), ops, sizes, packed)
            elif vt is not type(other) or value != other or (vt is float and _signed(value, other)):
                ops.append({"op": "replace", "path": path + _step(key), "value": other})
        if gone or len(after) != len(before):  # (else the same keys: none added)
            for key, value in after.items():
                if key not in before:
                    ops.append({"op": "add", "path": path + _step(key), "value": value})
        return
    if kind is list:
        items: list[Any] = old
        others: list[Any] = new
        common = min(len(items), len(others))
        for i in range(common):
            a = items[i]
            b = others[i]
            if a is b:
                continue
            at = type(a)
            if at is type(b) and (at is dict or at is list):
                if not _same(a, b):
                    _diff_child(a, b, path + _at(i), ops, sizes, packed)
            elif at is not type(b) or a != b or (at is float and _signed(a, b)):
                ops.append({"op": "replace", "path": path + _at(i), "value": b})
        for i in range(len(items) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": path + _at(i)})
        for i in range(common, len(others)):
            ops.append({"op": "add", "path": path + _at(i), "value": others[i]})
        return
    if old != new or (kind is float and _signed(old, new)):
        ops.append({"op": "replace", "path": path, "value": new})


def _step(key: str) -> str:
    """``"/" + escape(key)``: a path's step to a map's ``key``, made once per key (a view's
    keys are a few hundred field names; past :data:`_STEPS_MAX` of them, made each time)."""
    step = _STEPS.get(key)
    if step is None:
        step = "/" + escape(key)
        if len(_STEPS) < _STEPS_MAX:
            _STEPS[key] = step
    return step


def _at(i: int) -> str:
    """``f"/{i}"``: a path's step to a list's item ``i``, the first :data:`_INDICES` made once."""
    return _AT[i] if i < _INDICES else f"/{i}"


_STEPS: Final[dict[str, str]] = {}
_STEPS_MAX: Final = 4096
_INDICES: Final = 256
_AT: Final = tuple(f"/{i}" for i in range(_INDICES))


def _signed(a: float, b: float) -> bool:
    """True for equal floats that still encode differently: ``0.0`` and ``-0.0``."""
    return a == 0.0 and math.copysign(1.0, a) != math.copysign(1.0, b)


def _native() -> Any:
    """``protocol._diffc``, the diff in C, given this module's encoder, step caches (the same
    ``_STEPS``: one cache for both) and op sizes; None where it is not built (pure Python, or a
    compiled build without it). Its functions take an :class:`_OpBytes`'s ``enc`` and ``keep``
    (and ``sizes`` as a dict): ``diff`` is :func:`_diff`, ``diff_child`` :func:`_diff_child`,
    ``collapse`` :func:`_collapse` (its value a callable), ``replaces_list``
    :func:`_replaces_list`, ``op_size`` :meth:`_OpBytes.size`; and ``join_ops``
    (:meth:`_OpBytes.join`), ``pack`` (:func:`protocol.codec.pack`'s bytes, which the C calls
    itself for the ops' encodings; the codec's own ``pack`` takes its ``plain``), ``canonical``
    and ``unpack`` (:func:`_canonical`, :func:`_unpack`), the view hash's ``blake2b_state`` and
    ``blake2b_hex`` (:mod:`protocol.hashing`)."""
    try:
        native = importlib.import_module("protocol._diffc")
    except ImportError:
        return None
    native.setup(
        pack,
        _STEPS,
        _STEPS_MAX,
        _AT,
        _OP_SIZES["replace"],
        _OP_SIZES["add"],
        _OP_SIZES["remove"],
        _REPLACE_OVERHEAD,
        _REMOVE_LEAST,
    )
    return native


_NATIVE: Final[Any] = _native()
_NATIVE_DIFF: Final[Any] = None if _NATIVE is None else _NATIVE.diff
_NATIVE_JOIN: Final[Any] = None if _NATIVE is None else _NATIVE.join_ops
_NATIVE_CANONICAL: Final[Any] = None if _NATIVE is None else _NATIVE.canonical
_NATIVE_UNPACK: Final[Any] = None if _NATIVE is None else _NATIVE.unpack
"""(The native functions bound once: Final, held in C statics when compiled.)"""


def _canonical(value: Any) -> bytes:
    """:func:`protocol.codec.canonical`'s bytes: written in C where built (``protocol._diffc``'s
    ``canonical``, for the plain types: each map's keys sorted by code point, as ormsgpack's
    key sorting and the reference path sort them; tested against it), else canonical's."""
    if _NATIVE_CANONICAL is not None:
        enc: bytes | None = _NATIVE_CANONICAL(value)
        if enc is not None:
            return enc
    return canonical(value)


class _Patcher:
    """One patch being applied: the document in a box, and the containers copied for it.

    A container is copied the first time an operation walks through it; the copies made for this
    patch (``fresh``, kept alive so that their ids stay unique) are then edited in place by the
    later operations. Values taken from the patch or by ``copy`` are shared, never edited: a
    later operation that goes into them copies them first.
    """

    __slots__ = ("box", "fresh")

    def __init__(self, doc: Any) -> None:
        self.box: list[Any] = [doc]
        self.fresh: dict[int, Any] = {}

    def _own(self, container: Any) -> Any:
        if id(container) in self.fresh:
            return container
        copied = dict(container) if type(container) is dict else list(container)
        self.fresh[id(copied)] = copied
        return copied

    def _parent(self, tokens: list[str]) -> Any:
        """The (copied) container holding the target of ``tokens`` (at least one token)."""
        holder: Any = self.box
        key: Any = 0
        for token in tokens[:-1]:
            child = holder[key]
            kind = type(child)
            if kind is dict:
                owned = self._own(child)
                holder[key] = owned
                if token not in owned:
                    raise PatchError(f"no member {token!r}")
                holder, key = owned, token
            elif kind is list:
                owned = self._own(child)
                holder[key] = owned
                holder, key = owned, _index(len(owned), token, adding=False)
            else:
                raise PatchError("path goes through a scalar")
        target = holder[key]
        if type(target) is not dict and type(target) is not list:
            raise PatchError("path goes through a scalar")
        owned = self._own(target)
        holder[key] = owned
        return owned

    def get(self, path: object) -> Any:
        tokens = _parse(path)
        if not tokens:
            return self.box[0]
        container = self._parent(tokens)
        token = tokens[-1]
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r}")
            return container[token]
        return container[_index(len(container), token, adding=False)]

    def add(self, path: object, value: Any) -> None:
        tokens = _parse(path)
        if not tokens:
            self.box[0] = value
            return
        container = self._parent(tokens)
        token = tokens[-1]
        if type(container) is dict:
            container[token] = value
        else:
            container.insert(_index(len(container), token, adding=True), value)

    def replace(self, path: object, value: Any) -> None:
        """In place, so a map keeps its key order (the hash does not depend on it anyway)."""
        tokens = _parse(path)
        if not tokens:
            self.box[0] = value
            return
        container = self._parent(tokens)
        token = tokens[-1]
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r} to replace")
            container[token] = value
        else:
            container[_index(len(container), token, adding=False)] = value

    def remove(self, path: object) -> Any:
        tokens = _parse(path)
        if not tokens:
            raise PatchError("cannot remove the whole document")
        container = self._parent(tokens)
        token = tokens[-1]
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r} to remove")
            return container.pop(token)
        return container.pop(_index(len(container), token, adding=False))


def apply(doc: Any, ops: Iterable[Mapping[str, Any]]) -> Any:
    """``doc`` with ``ops`` applied, sharing what they did not change (``doc`` is not mutated)."""
    patcher = _Patcher(doc)
    for op in ops:
        if type(op) is not dict and not isinstance(op, Mapping):
            raise PatchError(f"not an operation: {op!r}")
        name, path = op.get("op"), op.get("path")
        if type(path) is not str:
            raise PatchError(f"not an operation with a path: {op!r}")
        try:
            if name == "add":
                patcher.add(path, _value(op, name))
            elif name == "remove":
                patcher.remove(path)
            elif name == "replace":
                patcher.replace(path, _value(op, name))
            elif name == "move":
                source = _source(op, name)
                if path.startswith(source + "/"):
                    raise PatchError("cannot move a value into itself")
                patcher.add(path, patcher.remove(source))
            elif name == "copy":
                patcher.add(path, patcher.get(_source(op, name)))
            elif name == "test":
                # Strict equality, as the protocol means it: 1, 1.0 and true differ.
                if canonical(patcher.get(path)) != canonical(_value(op, name)):
                    raise PatchError(f"test failed at {path!r}")
            else:
                raise PatchError(f"unknown operation {name!r}")
        except PointerError as exc:
            raise PatchError(str(exc)) from None
    return patcher.box[0]


def _value(op: Mapping[str, Any], name: str) -> Any:
    if "value" not in op:
        raise PatchError(f"{name} without a value")
    return op["value"]


def _source(op: Mapping[str, Any], name: str) -> str:
    source = op.get("from")
    if type(source) is not str:
        raise PatchError(f"{name} without a 'from' pointer")
    return source


def _unpack(data: bytes) -> Any:
    """:func:`protocol.codec.unpack`'s value: decoded in C where built (``protocol._diffc``'s
    ``unpack``: the plain types of the server's own encodings, short map keys from a cache of
    str objects, tested against it; one C call where unpack calls ormsgpack, about 8,000
    instructions for a 90-byte view), else unpack's (and for what the C leaves: bin, ext, keys
    that are not strings...)."""
    if _NATIVE_UNPACK is not None:
        value = _NATIVE_UNPACK(data, _ABSENT)
        if value is not _ABSENT:
            return value
    return unpack(data)
