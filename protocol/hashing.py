"""The view hash (SPEC section 4): its two rules, for the server, replays and every client.

**Rule 1** (every client, unless it asks for another in ``hello``): the hash of a view document
is the first 8 bytes of BLAKE2b over its canonical msgpack encoding
(:func:`protocol.codec.canonical`), as 16 lowercase hex digits.

**Rule 2** (a client that sends ``hello.hash_rule: 2``, protocol 1.4): a view whose ``own`` is
nil (the spectators') hashes as under rule 1; a seat's view hashes as BLAKE2b over the 8 raw
bytes of the spectators' hash of the same revision (its document with ``own`` nil) followed by
the canonical bytes of its ``own`` (:func:`chained_hash`). The server then hashes the shared
part once per revision instead of once per audience; the spectators' frames are the same under
both rules.

Every hash on the wire is made by :func:`hash_bytes` of canonical bytes, or chained on one by
:func:`chained_hash`, whichever way the bytes were put together:

- :func:`view_hash`: a whole document (tests, vectors, tools);
- :func:`document_hash`: a document whose top-level entries are already encoded (the server
  encodes the shared part once per revision and splices each audience's own part and the room's
  parts beside it, :mod:`server.views`; replays do the same from an archive);
- :class:`DocumentHasher`: the same for several documents that differ in one entry only (every
  audience of a revision: only ``own`` differs), hashing what precedes that entry once;
- :class:`ChainedHasher`: :func:`chained_hash` of one spectators' hash for several seats (every
  rule-2 seat of a revision), the spectators' raw bytes hashed once;
- :class:`ViewHasher`: successive versions of one client's view, re-encoding only what changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from protocol.codec import canonical, canonical_key, map_header
from protocol.patch import _NATIVE
from protocol.tree import Tree, Work, track

__all__ = [
    "HASH_RULES",
    "ChainedHasher",
    "DocumentHasher",
    "ViewHasher",
    "chained_hash",
    "document_hash",
    "hash_bytes",
    "view_hash",
]

HASH_RULES: Final = (1, 2)
"""The view hash rules a client may ask for (``hello.hash_rule``); 1 when it does not ask."""


_EMPTY: Final = hashlib.blake2b(digest_size=8)
"""BLAKE2b-64 with nothing hashed yet: every hash starts as a copy of it (a copy costs half
of what the constructor's keyword arguments do, for the few dozen bytes a seat's rule-2 hash
covers; ``bench/run.py rules`` times the hashes apart)."""


_STATE: Final[Any] = None if _NATIVE is None else _NATIVE.blake2b_state
_HEX: Final[Any] = None if _NATIVE is None else _NATIVE.blake2b_hex
"""The same BLAKE2b-64 in C (``protocol._diffc``, built with the compiled modules), or None:
hashlib's. ``_STATE(data)`` is the hash's state after ``data`` (bytes); ``_HEX(state, value,
after)`` the hex digest of that state's data followed by ``value`` and ``after``, the state
unchanged: one call where hashlib's object takes a copy, an update and a digest (each a
method call, the digest copying the state again; about 1,300 instructions saved per hash, in
the few dozen bytes of a seat's rule-2 hash the one block compressed is the rest)."""
_EMPTY_STATE: Final[bytes] = b"" if _STATE is None else _STATE()
_NOTHING_AFTER: Final = b""
_FROMHEX: Final[Any] = bytes.fromhex
"""``bytes.fromhex`` bound once (Final: a C static where compiled; ``bytes.fromhex(...)`` looks
the method up at every call: about 600 instructions more per revision's rule-2 hasher)."""


def hash_bytes(encoded: bytes) -> str:
    """The view hash of an already canonical encoding."""
    if _HEX is not None:
        digest: str = _HEX(_EMPTY_STATE, encoded, _NOTHING_AFTER)
        return digest
    state = _EMPTY.copy()
    state.update(encoded)
    return state.hexdigest()


def chained_hash(spectators: str, own: bytes) -> str:
    """A seat's view hash under rule 2: ``spectators``, the hash of the same document with
    ``own`` nil, chained with ``own``, the canonical bytes of the seat's own part (one
    :class:`ChainedHasher`: the chain is written there once)."""
    return ChainedHasher(spectators).hash(own)


def view_hash(value: Any, rule: int = 1) -> str:
    """The view hash of a whole document under ``rule``."""
    if rule == 2 and isinstance(value, Mapping) and value.get("own") is not None:
        return chained_hash(hash_bytes(canonical({**value, "own": None})), canonical(value["own"]))
    return hash_bytes(canonical(value))


def document_hash(entries: Mapping[str, bytes]) -> str:
    """The view hash (rule 1) of the map whose entries are ``entries``, each value canonically
    encoded (``{"shared": ..., "own": ..., "clock": ...}`` of one audience), hashed entry by
    entry (no joined copy of the document)."""
    state = _EMPTY.copy()
    state.update(map_header(len(entries)))
    for name in sorted(entries):
        state.update(canonical_key(name))
        state.update(entries[name])
    return state.hexdigest()


class ChainedHasher:
    """The rule-2 view hashes of several seats of one revision: :func:`chained_hash` of
    ``spectators`` and each seat's own bytes exactly, the spectators' raw bytes decoded and
    hashed once (BLAKE2b's state is copied for each seat: per seat, one copy, one update and
    the digest; in C where built, :data:`_HEX`, one call)."""

    __slots__ = ("_base", "_state")

    def __init__(self, spectators: str) -> None:
        raw: bytes = _FROMHEX(spectators)
        if _STATE is not None:
            self._state: bytes = _STATE(raw)
            self._base: Any = None
        else:
            base = _EMPTY.copy()
            base.update(raw)
            self._state, self._base = b"", base

    def hash(self, own: bytes) -> str:
        """:func:`chained_hash` of the spectators' hash and ``own`` (a seat's canonical bytes)."""
        if _HEX is not None:
            digest: str = _HEX(self._state, own, _NOTHING_AFTER)
            return digest
        state = self._base.copy()
        state.update(own)
        hexed: str = state.hexdigest()
        return hexed


class DocumentHasher:
    """The view hashes of the documents ``{**entries, key: value}`` for several values of one
    entry, each :func:`document_hash` of that map exactly.

    The canonical bytes before ``key`` are hashed once (BLAKE2b's state is copied for each
    value) and those after it joined once, so each document costs its own value and one pass
    over the bytes after it, not a new map, a sort and a copy of the whole document. BLAKE2b
    cannot resume after a changed middle, so everything after ``key`` is still hashed for every
    value: the rule (SPEC section 4) hashes the whole document.
    """

    __slots__ = ("_after", "_before", "_state")

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
        self._after = b"".join(tail)
        if _STATE is not None:  # (in C: the state as bytes, :data:`_HEX` resumes it)
            self._state: bytes = _STATE(b"".join(head))
            self._before: Any = None
        else:
            self._state = b""
            self._before = _EMPTY.copy()
            self._before.update(b"".join(head))

    def hash(self, value: bytes) -> str:
        """The view hash of the document whose ``key`` entry is ``value`` (canonical bytes)."""
        if _HEX is not None:
            digest: str = _HEX(self._state, value, self._after)
            return digest
        state = self._before.copy()
        state.update(value)
        if self._after:  # (nothing after the last key: a call saved)
            state.update(self._after)
        hexed: str = state.hexdigest()
        return hexed


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

    def hash(self, view: Any, rule: int = 1) -> str:
        """The hash of ``view`` under ``rule`` (one hasher is meant for one rule: under rule 2
        it tracks the seat's document with ``own`` nil, whose big shared part is the same
        object from one version to the next)."""
        own = view.get("own") if rule == 2 and isinstance(view, Mapping) else None
        tracked = view if own is None else {**view, "own": None}
        before = self._view if self._tree is not None else _NOTHING
        self._tree = track(self._tree, tracked, _DEPTH, Work(), before, _SMALL)
        self._view = tracked
        spectators = hash_bytes(self._tree.enc)
        return spectators if own is None else chained_hash(spectators, canonical(own))


_NOTHING: Final = object()
