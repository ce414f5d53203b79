"""The view hash (SPEC section 4): the one rule, for the server, replays and every client.

The hash of a view document is the first 8 bytes of BLAKE2b over its canonical msgpack encoding
(:func:`protocol.codec.canonical`), as 16 lowercase hex digits. Every hash on the wire is made
by :func:`hash_bytes` of canonical bytes, whichever way they were put together:

- :func:`view_hash`: a whole document (tests, vectors, tools);
- :func:`document_hash`: a document whose top-level entries are already encoded (the server
  encodes the shared part once per revision and splices each audience's own part and the room's
  parts beside it, :mod:`server.views`; replays do the same from an archive);
- :class:`DocumentHasher`: the same for several documents that differ in one entry only (every
  audience of a revision: only ``own`` differs), hashing what precedes that entry once;
- :class:`ViewHasher`: successive versions of one client's view, re-encoding only what changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from protocol.codec import canonical, canonical_key, canonical_map, map_header
from protocol.tree import Tree, Work, track

__all__ = ["DocumentHasher", "ViewHasher", "document_hash", "hash_bytes", "view_hash"]


def hash_bytes(encoded: bytes) -> str:
    """The view hash of an already canonical encoding."""
    return hashlib.blake2b(encoded, digest_size=8).hexdigest()


def view_hash(value: Any) -> str:
    """The view hash of a whole document."""
    return hash_bytes(canonical(value))


def document_hash(entries: Mapping[str, bytes]) -> str:
    """The view hash of the map whose entries are ``entries``, each value canonically encoded
    (``{"shared": ..., "own": ..., "clock": ...}`` of one audience)."""
    return hash_bytes(canonical_map(entries))


class DocumentHasher:
    """The view hashes of the documents ``{**entries, key: value}`` for several values of one
    entry, each :func:`document_hash` of that map exactly.

    The canonical bytes before ``key`` are hashed once (BLAKE2b's state is copied for each
    value) and those after it joined once, so each document costs its own value and one pass
    over the bytes after it, not a new map, a sort and a copy of the whole document. BLAKE2b
    cannot resume after a changed middle, so everything after ``key`` is still hashed for every
    value: the rule (SPEC section 4) hashes the whole document.
    """

    __slots__ = ("_after", "_before")

    def __init__(self, entries: Mapping[str, bytes], key: str) -> None:
        keys = sorted({*entries, key})
        at = keys.index(key)
        head = [map_header(len(keys))]
        for name in keys[:at]:
            head += (canonical_key(name), entries[name])
        head.append(canonical_key(key))
        tail: list[bytes] = []
        for name in keys[at + 1 :]:
            tail += (canonical_key(name), entries[name])
        self._before = hashlib.blake2b(b"".join(head), digest_size=8)
        self._after = b"".join(tail)

    def hash(self, value: bytes) -> str:
        """The view hash of the document whose ``key`` entry is ``value`` (canonical bytes)."""
        state = self._before.copy()
        state.update(value)
        state.update(self._after)
        return state.hexdigest()


_DEPTH: Final = 4
"""Levels of a client's view that keep their own encodings (``/shared/game/laid/3`` is kept,
its own small lists are encoded with it): deep enough for the big lists of a view, shallow
enough that bookkeeping costs less than it saves."""
_SMALL: Final = 8
"""Below the top two levels, a container of at most this many entries is encoded whole (one
compiled call beats going through its entries in Python; measured with ``bench/wire.py``)."""


class ViewHasher:
    """Hashes successive versions of one view, reusing the bytes of what did not change.

    A version that shares a subtree with the previous one (the same object: path-copying
    patches, :func:`protocol.patch.apply`) reuses its bytes without a look; anything else is
    encoded and compared (:func:`protocol.tree.track`). This relies on views never being edited
    in place, which the mirror guarantees (it replaces its view; a ``state`` or ``joined`` brings
    new objects).
    """

    __slots__ = ("_tree", "_view")

    def __init__(self) -> None:
        self._tree: Tree | None = None
        self._view: Any = None

    def hash(self, view: Any) -> str:
        before = self._view if self._tree is not None else _NOTHING
        self._tree = track(self._tree, view, _DEPTH, Work(), before, _SMALL)
        self._view = view
        return hash_bytes(self._tree.enc)


_NOTHING = object()
