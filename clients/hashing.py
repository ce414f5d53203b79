"""The view hash of SPEC section 4, recomputed only for the parts of a view that changed.

:func:`protocol.patch.view_hash` encodes the whole view canonically at every revision; a client
that mirrors many rooms (``oasis bots``) spent most of its CPU there. :class:`ViewHasher`
produces the same digest but keeps the canonical bytes of containers down to :data:`DEPTH`
levels, keyed by the container *object*: a container that is the very same object as last time
(path-copying patches, :mod:`clients.patching`, share everything they do not change) reuses its
bytes. A changed container is gone through entry by entry only when an earlier version of it was
seen and it is big enough to be worth it; anything new is encoded whole by msgpack, so the paths
that change often are the ones that end up cached finely.

This relies on views never being edited in place, which the mirror guarantees (it replaces its
view; a ``state`` or ``joined`` brings all new objects and is encoded in full). The canonical
form is the protocol's: maps sorted by the UTF-8 bytes of their keys, the smallest headers,
msgpack's own scalars (floats as float 64).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgpack

from protocol.codec import canonical
from protocol.patch import hash_bytes

DEPTH = 4
"""Containers deeper than this are encoded whole with their parent (``/shared/game/laid/3``
is cached, its own small lists are not): deep enough for the big lists of a view, shallow
enough that bookkeeping costs less than it saves."""

SMALL = 8
"""Below the top two levels, a changed container of at most this many entries is encoded whole:
going through its entries one by one in Python costs more than msgpack encoding them at once."""


@dataclass(slots=True)
class _Node:
    value: Any
    data: bytes
    kids: dict[Any, _Node] = field(default_factory=dict)


def _header(n: int, fix: int, b16: bytes, b32: bytes) -> bytes:
    if n < 16:
        return bytes([fix | n])
    if n < 1 << 16:
        return b16 + n.to_bytes(2, "big")
    return b32 + n.to_bytes(4, "big")


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def _key(key: str) -> bytes:
    return key.encode()


class ViewHasher:
    """Hashes successive versions of one view, reusing the bytes of unchanged containers."""

    def __init__(self) -> None:
        self._root: _Node | None = None

    def hash(self, view: Any) -> str:
        self._root = self._encode(view, self._root, 0)
        return hash_bytes(self._root.data)

    def _encode(self, value: Any, node: _Node | None, depth: int) -> _Node:
        if node is not None and node.value is value:
            return node
        kind = type(value)
        if (
            node is None  # nothing to reuse below: encode whole, at msgpack's speed
            or kind not in (dict, list)
            or type(node.value) is not kind
            or depth >= DEPTH
            or (depth >= 2 and len(value) <= SMALL)
        ):
            return _Node(value, canonical(value))
        old = node.kids
        kids: dict[Any, _Node] = {}
        parts: list[bytes]
        if kind is dict:
            parts = [_header(len(value), 0x80, b"\xde", b"\xdf")]
            for key in sorted(value, key=_key):
                parts.append(_pack(key))
                parts.append(self._child(value[key], key, old, kids, depth))
        else:
            parts = [_header(len(value), 0x90, b"\xdc", b"\xdd")]
            for index, item in enumerate(value):
                parts.append(self._child(item, index, old, kids, depth))
        return _Node(value, b"".join(parts), kids)

    def _child(
        self, value: Any, key: Any, old: dict[Any, _Node], kids: dict[Any, _Node], depth: int
    ) -> bytes:
        if type(value) is dict or type(value) is list:
            kid = self._encode(value, old.get(key), depth + 1)
            kids[key] = kid
            return kid.data
        return _pack(value)
