"""State diffs as RFC 6902 JSON Patch, and the view hash clients use to detect desync.

:func:`diff` produces only ``add``, ``remove`` and ``replace`` operations, with paths written as
RFC 6901 JSON Pointers (``~`` escaped as ``~0``, ``/`` as ``~1``). Documents are maps with string
keys, lists, ints, floats, strings, bools and None. Maps are diffed key by key; lists element by
element over their common length, then the tail is added (at explicit indices, in increasing
order) or removed (from the last index down), so a list that grows or shrinks at its end gives a
patch the size of the change, not of the list. A map or list below the top whose changes take two
or more operations is instead ``replace``d whole when that one operation encodes (msgpack, path
included) to strictly fewer bytes than they do: a list whose contents all changed (a seat's new
legal choices) costs the new list, not one operation per element. Values of different types are
never "equal": ``1``, ``1.0`` and ``true`` replace one another, so ``apply(a, diff(a, b))`` has
the same canonical encoding as ``b``, not merely a Python-equal one.

:func:`apply` accepts the whole RFC 6902 vocabulary (``add``, ``remove``, ``replace``, ``move``,
``copy``, ``test``) so clients and tests can feed it patches from elsewhere; it never mutates its
input and raises :class:`PatchError` for a patch that does not fit the document.

:func:`view_hash` is the first 8 bytes of BLAKE2b over the canonical msgpack encoding
(:func:`protocol.codec.canonical`), as 16 lowercase hex digits.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from protocol.codec import canonical, pack

Op = dict[str, Any]


class PatchError(Exception):
    """A patch that cannot be applied to the document it was given."""


def escape(token: str) -> str:
    """One JSON Pointer reference token."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape(token: str) -> str:
    if "~" in token:
        return token.replace("~1", "/").replace("~0", "~")
    return token


def pointer(*tokens: str | int) -> str:
    return "".join("/" + escape(str(t)) for t in tokens)


_pack = pack


def _same(a: Any, b: Any) -> bool:
    """Strict equality: Python ``==`` (C speed) confirmed by identical msgpack bytes.

    ``==`` alone would call ``1``, ``1.0`` and ``True`` equal; the bytes tell them apart. Maps with
    the same content in another key order give different bytes and are then diffed key by key,
    which finds nothing to change, so the check is only ever conservative.
    """
    return a is b or (a == b and _pack(a) == _pack(b))


def diff(old: Any, new: Any, path: str = "", sizes: Mapping[int, int] | None = None) -> list[Op]:
    """The operations that turn ``old`` into ``new``.

    ``path``: where the two documents sit in a larger one (a JSON Pointer); every operation's
    path starts with it, and the byte counts of the size rule include it. ``sizes``: optional
    msgpack sizes of containers of ``new`` already known to the caller, by ``id``, so that the
    size rule need not encode them again. Subtrees that ``old`` and ``new`` share (the same
    object) are skipped without a look.
    """
    ops: list[Op] = []
    _diff(old, new, path, ops, sizes or _NO_SIZES)
    return ops


_NO_SIZES: Mapping[int, int] = {}
_REPLACE_OVERHEAD = len(_pack({"op": "replace", "path": "", "value": None})) - 2
"""Bytes of a ``replace`` op besides its path's and its value's encodings."""
_REMOVE_LEAST = len(_pack({"op": "remove", "path": "/0"}))
"""Bytes of a ``remove`` op at least, besides its path's characters (``/0`` being the shortest
index suffix, a path of no more bytes than characters, and a one-byte string header)."""


def diff_into(
    old: Any, new: Any, path: str, ops: list[Op], sizes: Mapping[int, int] | None = None
) -> None:
    """Append to ``ops`` the operations that turn ``old`` into ``new``, two documents *below
    the top* of a larger one (at ``path``): the size rule applies to them as a whole too."""
    _diff_child(old, new, path, ops, sizes or _NO_SIZES)


def collapse(ops: list[Op], start: int, path: str, size: int, value: Callable[[], Any]) -> None:
    """The size rule: replace ``ops[start:]``, the changes of one map or list at ``path``, by a
    single ``replace`` of its new value when that encodes to strictly fewer bytes.

    ``size``: the msgpack size of the new value; ``value`` makes it (called only if needed).
    """
    if len(ops) - start < 2:
        return
    budget = _REPLACE_OVERHEAD + len(_pack(path)) + size
    total = 0
    for i in range(start, len(ops)):
        total += len(_pack(ops[i]))
        if total > budget:
            del ops[start:]
            ops.append({"op": "replace", "path": path, "value": value()})
            return


def replaces_list(old_len: int, new: list[Any], path: str, size: int | None = None) -> bool:
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
        size = len(_pack(new))
    return extra * (_REMOVE_LEAST + len(path)) > _REPLACE_OVERHEAD + len(_pack(path)) + size


def _diff_child(old: Any, new: Any, path: str, ops: list[Op], sizes: Mapping[int, int]) -> None:
    """Diff two containers below the top; one ``replace`` instead if that is smaller."""
    if (
        type(old) is list
        and type(new) is list
        and replaces_list(len(old), new, path, sizes.get(id(new)))
    ):
        ops.append({"op": "replace", "path": path, "value": new})
        return
    start = len(ops)
    _diff(old, new, path, ops, sizes)
    if len(ops) - start < 2:
        return
    known = sizes.get(id(new))
    if known is None:  # not tracked by the caller: encode it
        known = len(_pack(new))
    collapse(ops, start, path, known, lambda: new)


def _diff(old: Any, new: Any, path: str, ops: list[Op], sizes: Mapping[int, int]) -> None:
    if old is new:
        return
    kind = type(old)
    if kind is not type(new):
        ops.append({"op": "replace", "path": path, "value": new})
        return
    if kind is dict:
        for key, value in old.items():
            if key not in new:
                ops.append({"op": "remove", "path": path + "/" + escape(key)})
                continue
            other = new[key]
            if value is other:
                continue
            vt = type(value)
            if vt is type(other) and (vt is dict or vt is list):
                if not _same(value, other):
                    _diff_child(value, other, path + "/" + escape(key), ops, sizes)
            elif vt is not type(other) or value != other or (vt is float and _signed(value, other)):
                ops.append({"op": "replace", "path": path + "/" + escape(key), "value": other})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": path + "/" + escape(key), "value": value})
        return
    if kind is list:
        common = min(len(old), len(new))
        for i in range(common):
            a = old[i]
            b = new[i]
            if a is b:
                continue
            at = type(a)
            if at is type(b) and (at is dict or at is list):
                if not _same(a, b):
                    _diff_child(a, b, f"{path}/{i}", ops, sizes)
            elif at is not type(b) or a != b or (at is float and _signed(a, b)):
                ops.append({"op": "replace", "path": f"{path}/{i}", "value": b})
        for i in range(len(old) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": f"{path}/{i}"})
        for i in range(common, len(new)):
            ops.append({"op": "add", "path": f"{path}/{i}", "value": new[i]})
        return
    if old != new or (kind is float and _signed(old, new)):
        ops.append({"op": "replace", "path": path, "value": new})


def _signed(a: float, b: float) -> bool:
    """True for equal floats that still encode differently: ``0.0`` and ``-0.0``."""
    return a == 0.0 and math.copysign(1.0, a) != math.copysign(1.0, b)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"pointer {path!r} does not start with '/'")
    return [unescape(t) for t in path[1:].split("/")]


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"bad list index {token!r}")
    i = int(token)
    limit = len(container) if for_add else len(container) - 1
    if i > limit:
        raise PatchError(f"list index {i} out of range")
    return i


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if type(node) is dict:
            if token not in node:
                raise PatchError(f"no member {token!r}")
            node = node[token]
        elif type(node) is list:
            node = node[_index(node, token, for_add=False)]
        else:
            raise PatchError("path goes through a scalar")
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if type(parent) is dict:
        if last not in parent:
            raise PatchError(f"no member {last!r}")
        return parent[last]
    if type(parent) is list:
        return parent[_index(parent, last, for_add=False)]
    raise PatchError("path goes through a scalar")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if type(parent) is dict:
        parent[last] = value
    elif type(parent) is list:
        parent.insert(_index(parent, last, for_add=True), value)
    else:
        raise PatchError("path goes through a scalar")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _tokens(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if type(parent) is dict:
        if last not in parent:
            raise PatchError(f"no member {last!r} to remove")
        return doc, parent.pop(last)
    if type(parent) is list:
        return doc, parent.pop(_index(parent, last, for_add=False))
    raise PatchError("path goes through a scalar")


def apply(doc: Any, ops: Iterable[Mapping[str, Any]]) -> Any:
    """Apply a JSON Patch to a copy of ``doc`` and return the copy."""
    result = _copy(doc)
    for op in ops:
        try:
            name = op["op"]
            path = op["path"]
        except (KeyError, TypeError):
            raise PatchError(f"not an operation: {op!r}") from None
        if not isinstance(path, str):
            raise PatchError("path must be a string")
        if name in _NEEDS_VALUE and "value" not in op:
            raise PatchError(f"{name} without a value")
        if name in ("move", "copy") and not isinstance(op.get("from"), str):
            raise PatchError(f"{name} without a 'from' pointer")
        if name == "add":
            result = _add(result, path, _copy(op["value"]))
        elif name == "remove":
            result, _ = _remove(result, path)
        elif name == "replace":
            _get(result, path)
            if path == "":
                result = _copy(op["value"])
            else:
                result, _ = _remove(result, path)
                result = _add(result, path, _copy(op["value"]))
        elif name == "move":
            source = op["from"]
            if path.startswith(source + "/"):
                raise PatchError("cannot move a value into itself")
            result, value = _remove(result, source)
            result = _add(result, path, value)
        elif name == "copy":
            result = _add(result, path, _copy(_get(result, op["from"])))
        elif name == "test":
            if not _same(_get(result, path), op["value"]):
                raise PatchError(f"test failed at {path!r}")
        else:
            raise PatchError(f"unknown operation {name!r}")
    return result


_NEEDS_VALUE = frozenset({"add", "replace", "test"})


def view_hash(value: Any) -> str:
    """The 16-hex-digit hash of a view (BLAKE2b-64 of its canonical msgpack)."""
    return hash_bytes(canonical(value))


def hash_bytes(encoded: bytes) -> str:
    """The view hash of an already canonical encoding."""
    return hashlib.blake2b(encoded, digest_size=8).hexdigest()
