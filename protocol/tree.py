"""Documents kept as canonical bytes per field: the incremental canonical encoding, and the patch
between two versions of a document made from those bytes.

A :class:`Tree` is one value as canonically encoded (``enc``) and, down to a fixed depth, one
tree per child (``kids``): a map's by key, in canonical key order, a list's by position.
:func:`track` gives the tree of a new version of a value, sharing every unchanged part with the
previous tree, so a version re-sorts and re-encodes only what changed; the spliced bytes are
exactly :func:`protocol.codec.canonical` of the whole value (the codec's header and key writers,
:func:`protocol.codec.map_header`, :func:`protocol.codec.canonical_key` and
:func:`protocol.codec.canonical_array`, write everything but the kept bytes). Both sides of the
wire use it:

- the server (:mod:`server.views`) keeps no decoded copy of a view between revisions (an engine
  may hand out lists that it later mutates, and bytes are invisible to the garbage collector)
  but the fields a game declares kept (``Game.kept_fields``: never mutated once handed out),
  which it passes as ``before``: below the depth any other value is encoded at every revision
  (compiled code) and equal bytes mean it did not change, the previous node reused, the very
  same object; :func:`diff_trees` then skips it by identity and diffs only the fields whose
  bytes changed, decoding their previous value;
- a client (:class:`protocol.hashing.ViewHasher`) passes the previous version of its view as
  ``before``: its patches are applied by path copying (:func:`protocol.patch.apply`), which shares
  every unchanged subtree with the previous view, so a subtree that *is* the previous one (the
  same object) keeps its node without being encoded at all.

Nothing here keeps a value alive but the caller's :class:`Work` of one revision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from protocol.codec import (
    array_header,
    array_length,
    canonical_array,
    canonical_key,
    map_header,
    pack,
)
from protocol.patch import (
    _NATIVE,
    Op,
    _at,
    _collapse,
    _diff,
    _diff_child,
    _OpBytes,
    _replaces_list,
    _step,
)
from protocol.patch import _canonical as canonical  # (codec's bytes; in C where built)
from protocol.patch import _unpack as unpack  # (codec's values; in C where built)

__all__ = ["Tree", "Work", "diff_trees", "track"]


class Tree:
    """One value as last encoded: its canonical bytes and, above the depth, one tree per child.

    ``kids`` is a dict of trees (a map), a list of trees (a list) or None (a *leaf*: a scalar,
    or a container below the depth, encoded whole). ``items``: for a list or map leaf tracked
    with ``itemized`` (see :func:`track`), the canonical bytes of each of its items (a map's
    by key, in canonical key order), whose concatenation under the container's header is
    ``enc``; else None. ``parts``: for a map with kids, the pieces ``enc`` was joined from
    (its header, then each key's bytes and its kid's), which the next version with the same
    keys copies, replacing the bytes of its changed kids only; else None.
    """

    __slots__ = ("enc", "items", "kids", "parts")

    def __init__(self, enc: bytes, kids: dict[str, Tree] | list[Tree] | None) -> None:
        self.enc = enc
        self.kids = kids
        self.items: list[bytes] | dict[str, bytes] | None = None
        self.parts: list[bytes] | None = None

    def value(self) -> Any:
        """A fresh decoded copy of the value."""
        return unpack(self.enc)


class Work:
    """What one version learns on the way, for its diff only: the value of every new leaf as
    the caller gave it (by ``id`` of its node), the value a changed leaf had before when the
    caller still holds it (``previous``, by ``id`` of the old node: a kept field's last value,
    see :func:`track`'s ``before``), the encoded size of every new container value (by its
    ``id``, for the size rule of :func:`protocol.patch.diff`) and the encoding of every op the
    size rule weighed (:meth:`encode_ops` reuses them)."""

    __slots__ = ("fresh", "packed", "previous", "sizes")

    def __init__(self) -> None:
        self.fresh: dict[int, Any] = {}
        self.previous: dict[int, Any] | None = None
        """(Made at its first entry: most versions have none.)"""
        self.sizes: dict[int, int] = {}
        self.packed = _OpBytes()

    def encode_ops(self, ops: list[Op]) -> bytes:
        """:func:`protocol.frames.encode_ops` of ops diffed with this work: the same bytes,
        without encoding again an op the size rule already encoded."""
        return self.packed.join(ops)

    def value(self, node: Tree) -> Any:
        """The value of ``node``: as given if new in this version, else decoded."""
        value = self.fresh.get(id(node), _MISSING)
        return unpack(node.enc) if value is _MISSING else value


_MISSING: Final[Any] = object()
_NO_KEYS: Final[dict[str, Any]] = {}
_NO_ITEMS: Final[list[Any]] = []
"""(Final, as the other constants: compiled, held in C statics, not looked up among the module's
globals at every use.)"""


def track(
    prev: Tree | None,
    value: Any,
    depth: int,
    work: Work,
    before: Any = _MISSING,
    small: int = 0,
    itemized: bool = False,
) -> Tree:
    """The tree of ``value``, sharing every unchanged part with ``prev`` (None: no previous).

    ``depth``: levels below this one that get trees of their own (0: a leaf). ``before``: the
    value ``prev`` was made from, if the caller still holds it and never edits values in place;
    a child that is the same object as before keeps its node without being encoded, and a leaf
    that changed is diffed (:func:`diff_trees`) from its last value instead of from its
    decoded bytes (the same value, but its unchanged parts are the very objects of the new one
    where the caller reused them, which the diff skips by identity). ``small``:
    within two levels of the leaves (``depth`` 1 or 2), a container of at most this many entries
    is a leaf too: one compiled encoding of it costs less than going through its entries.
    ``itemized``: a list or map leaf whose ``before`` is given keeps its items' encodings
    (:attr:`Tree.items`), and when it changed only its items that are not the very objects of
    ``before`` at the same index (or key) are encoded (a kept field of the server's view that
    grew by one entry, or had one of its entries replaced: the rest is spliced); the same
    bytes as :func:`protocol.codec.canonical` of the whole value, since a container's canonical
    encoding is its header and its items' canonical encodings (its keys sorted).
    """
    if before is value and prev is not None:
        return prev
    kind = type(value)
    if small and depth and depth <= 2 and (kind is dict or kind is list) and len(value) <= small:
        depth = 0
    if depth and kind is dict:
        old = None if prev is None else prev.kids
        known: dict[str, Tree] = old if type(old) is dict else {}
        was = before if type(before) is dict else _NO_KEYS
        mapping: dict[str, Any] = value  # (typed: compiled, the dict's own fast operations)
        # The kids in canonical key order: the previous node's when the keys are the same (the
        # usual case), so that neither this nor the splice sorts them again; each kid then
        # comes with its previous node from one walk of them (no look-up by key), and the map
        # is the same as before when every kid is.
        same = len(known) == len(mapping) and prev is not None and len(known) > 0
        if same:
            for key in known:
                if key not in mapping:
                    same = False
                    break
        pieces = None if prev is None else prev.parts
        if same and prev is not None and pieces is not None and len(pieces) == 2 * len(known) + 1:
            # (and the pieces of the previous node's bytes, in which only a changed kid's are
            # replaced; a kid given again as the very object it was made from is not visited)
            kids: dict[str, Tree] = {}
            parts: list[bytes] | None = None
            at = 2
            for key, last in known.items():
                child = mapping[key]
                was_child = was.get(key, _MISSING)
                if was_child is child:
                    kid = last
                else:
                    kid = track(last, child, depth - 1, work, was_child, small, itemized)
                    if kid is not last:
                        if parts is None:
                            parts = pieces.copy()
                        parts[at] = kid.enc
                kids[key] = kid
                at += 2
            if parts is None:
                return prev
            joined = Tree(b"".join(parts), kids)
            joined.parts = parts
            return joined
        kids = {
            key: track(
                known.get(key),
                mapping[key],
                depth - 1,
                work,
                was.get(key, _MISSING),
                small,
                itemized,
            )
            for key in sorted(mapping)
        }
        if (  # the same map as before (a leaf or a list before is not: even an empty one)
            prev is not None
            and type(old) is dict
            and len(kids) == len(known)
            and all(kid is known.get(key) for key, kid in kids.items())
        ):
            return prev
        return _map_node(kids)
    if depth and kind is list:
        old = None if prev is None else prev.kids
        had: list[Tree] = old if type(old) is list else []
        n = len(had)
        items_before = before if type(before) is list else _NO_ITEMS
        m = len(items_before)
        children: list[Any] = value
        items = [
            track(
                had[i] if i < n else None,
                child,
                depth - 1,
                work,
                items_before[i] if i < m else _MISSING,
                small,
                itemized,
            )
            for i, child in enumerate(children)
        ]
        if (
            prev is not None
            and type(old) is list
            and len(items) == n
            and all(a is b for a, b in zip(items, had, strict=True))
        ):
            return prev
        return Tree(canonical_array([kid.enc for kid in items]), items)
    if itemized and before is not _MISSING and (kind is list or kind is dict):
        node = _itemized(prev, value, before)
        enc = node.enc
    else:
        node = None
        enc = canonical(value)
    if prev is not None and prev.kids is None:
        if prev.enc == enc:  # (itemized: its items' bytes are those of the new value too)
            return prev
        if before is not _MISSING:  # (its last value, never edited: the diff need not decode)
            if work.previous is None:
                work.previous = {}
            work.previous[id(prev)] = before
    if node is None:
        node = Tree(enc, None)
    work.fresh[id(node)] = value
    if kind is dict or kind is list or kind is tuple:
        work.sizes[id(value)] = len(enc)
    return node


def _itemized(prev: Tree | None, value: Any, before: Any) -> Tree:
    """The leaf of a list or map ``value`` with its items' encodings (:attr:`Tree.items`),
    those of ``prev`` (made from ``before``, or from a value of the same bytes) reused for the
    items that are the same objects as in ``before``."""
    had = None if prev is None or prev.kids is not None else prev.items
    if type(value) is list:
        items: list[Any] = value
        olds: list[bytes] = had if type(had) is list else _NO_BYTES
        was: list[Any] = before if type(before) is list and len(before) == len(olds) else []
        m = len(was)
        encs = [
            olds[i] if i < m and was[i] is item else canonical(item) for i, item in enumerate(items)
        ]
        node = Tree(array_header(len(encs)) + b"".join(encs), None)
        node.items = encs
        return node
    mapping: dict[str, Any] = value
    known: dict[str, bytes] = had if type(had) is dict else _NO_ENCS
    prior: dict[str, Any] = before if type(before) is dict and len(known) else _NO_KEYS
    order = known if known.keys() == mapping.keys() else sorted(mapping)
    parts = [map_header(len(mapping))]
    encoded: dict[str, bytes] = {}
    for key in order:
        item = mapping[key]
        enc = known.get(key) if prior.get(key, _MISSING) is item else None
        if enc is None:
            enc = canonical(item)
        encoded[key] = enc
        parts.append(canonical_key(key))
        parts.append(enc)
    node = Tree(b"".join(parts), None)
    node.items = encoded
    return node


_NO_BYTES: Final[list[bytes]] = []
_NO_ENCS: Final[dict[str, bytes]] = {}


def _map_node(kids: dict[str, Tree]) -> Tree:
    """The node of a map whose kids are ``kids``, keys in canonical order already (:func:`track`
    keeps them so): :func:`protocol.codec.canonical_map` of their bytes, without sorting. (The
    next version with the same keys copies its :attr:`Tree.parts` and replaces only the bytes
    of the kids that changed, in :func:`track`.)"""
    parts = [map_header(len(kids))]
    for key, kid in kids.items():
        parts.append(canonical_key(key))
        parts.append(kid.enc)
    node = Tree(b"".join(parts), kids)
    node.parts = parts
    return node


_NOTHING_WHOLE: Final[frozenset[str]] = frozenset()
_NATIVE_DIFF: Final[Any] = None if _NATIVE is None else _NATIVE.diff
_NATIVE_DIFF_CHILD: Final[Any] = None if _NATIVE is None else _NATIVE.diff_child
_NATIVE_COLLAPSE: Final[Any] = None if _NATIVE is None else _NATIVE.collapse
_NATIVE_REPLACES_LIST: Final[Any] = None if _NATIVE is None else _NATIVE.replaces_list
"""The diff's native twins (:func:`protocol.patch._native`: ``protocol._diffc``), or None: the
Python ones. (Bound here, Final: compiled, C statics of this module.)"""
_REPLACE_HEAD: Final = map_header(3) + pack("op") + pack("replace") + pack("path")
_VALUE_KEY: Final = pack("value")


def diff_trees(
    old: Tree,
    new: Tree,
    path: str,
    work: Work,
    *,
    below: bool = False,
    whole: frozenset[str] = _NOTHING_WHOLE,
) -> list[Op]:
    """The operations that turn the value of ``old`` into that of ``new``, as
    :func:`protocol.patch.diff` makes them for the documents at ``path`` (the size rule included
    for the whole value too when it sits ``below`` the top of the document).

    ``whole``: keys of the top map whose value, when its bytes changed, is ``replace``d whole
    without being diffed (a seat's ``choices``: a new decision's list, SPEC section 3); that op's
    bytes in ``work`` (:meth:`Work.encode_ops`) splice the value's canonical bytes, which
    ``new`` holds already, instead of encoding it again (the value's maps then have their keys
    in canonical order)."""
    ops: list[Op] = []
    _diff_trees(old, new, path, ops, work, below, whole)
    return ops


def _diff_trees(
    old: Tree,
    new: Tree,
    path: str,
    ops: list[Op],
    work: Work,
    below: bool,
    whole: frozenset[str] = _NOTHING_WHOLE,
) -> None:
    if old is new:
        return
    ok, nk = old.kids, new.kids
    if ok is None and nk is None:
        if old.enc == new.enc:
            return
        previous = work.previous
        before = _MISSING if previous is None else previous.get(id(old), _MISSING)
        _diff_leaf(old.enc, new.enc, work.value(new), path, ops, work, below, before)
        return
    if type(ok) is not type(nk):
        ops.append({"op": "replace", "path": path, "value": work.value(new)})
        return
    start = len(ops)
    if type(nk) is dict:
        assert type(ok) is dict
        gone = False
        for key, kid in ok.items():
            other = nk.get(key)
            if other is None:
                ops.append({"op": "remove", "path": path + _step(key)})
                gone = True
            elif other is not kid:
                if key in whole:  # (another node: its bytes changed, track keeps equal ones)
                    at = path + _step(key)
                    op: Op = {"op": "replace", "path": at, "value": work.value(other)}
                    # (its bytes: the new value's canonical ones, not encoded again)
                    work.packed.put(op, _REPLACE_HEAD + pack(at) + _VALUE_KEY + other.enc)
                    ops.append(op)
                else:
                    _diff_trees(kid, other, path + _step(key), ops, work, True)
        if gone or len(nk) != len(ok):  # (else the same keys: none added)
            for key, kid in nk.items():
                if key not in ok:
                    ops.append({"op": "add", "path": path + _step(key), "value": work.value(kid)})
    else:
        assert type(ok) is list and type(nk) is list
        common = min(len(ok), len(nk))
        for i in range(common):
            if ok[i] is not nk[i]:
                _diff_trees(ok[i], nk[i], path + _at(i), ops, work, True)
        for i in range(len(ok) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": path + _at(i)})
        for i in range(common, len(nk)):
            ops.append({"op": "add", "path": path + _at(i), "value": work.value(nk[i])})
    if below and len(ops) - start >= 2:  # (else nothing to weigh)
        decoded: Callable[[], Any] = new.value
        if _NATIVE_COLLAPSE is not None:
            packed = work.packed
            _NATIVE_COLLAPSE(ops, start, path, len(new.enc), decoded, packed.enc, packed.keep)
        else:
            _collapse(ops, start, path, len(new.enc), decoded, work.packed)


def _diff_leaf(
    old: bytes,
    new: bytes,
    after: Any,
    path: str,
    ops: list[Op],
    work: Work,
    below: bool,
    before: Any = _MISSING,
) -> None:
    """The ops of a leaf whose bytes changed from ``old`` to ``new``, ``after`` its new value
    and ``before`` its last one (:data:`_MISSING`: decoded from ``old``, only if needed): what
    :func:`diff_trees` appends for two leaves, and :class:`server.views.Views` for an entry of
    a seat's own part (whose tree it does not keep, see there)."""
    if type(after) is list:
        header = array_length(old)
        if header is not None and _list_shortcut(
            old, header, new, after, path, ops, below, work.packed
        ):
            return
    if before is _MISSING:
        before = unpack(old)
    packed = work.packed
    if _NATIVE_DIFF is not None:
        native = _NATIVE_DIFF_CHILD if below else _NATIVE_DIFF
        native(before, after, path, ops, work.sizes, packed.enc, packed.keep)
    elif below:
        _diff_child(before, after, path, ops, work.sizes, packed)
    else:
        _diff(before, after, path, ops, work.sizes, packed)


def _list_shortcut(
    old: bytes,
    header: tuple[int, int],
    new: bytes,
    after: list[Any],
    path: str,
    ops: list[Op],
    below: bool,
    packed: _OpBytes,
) -> bool:
    """The ops of a list leaf whose change its bytes tell without decoding the old list (True),
    or False: diff them.

    Either the size rule replaces it whole, known from the lengths, or the old list is the start
    of the new one (a list that grew at its end, like Ishtar's ``laid``): its canonical items are
    then the first bytes of the new list's items, since a msgpack value is self-delimiting, and
    the ops are the ``add`` of the new items (or one ``replace`` if smaller, below the top).
    """
    count, size = header
    if below and (
        _replaces_list(count, after, path, len(new))
        if _NATIVE_REPLACES_LIST is None
        else _NATIVE_REPLACES_LIST(count, after, path, len(new))
    ):
        ops.append({"op": "replace", "path": path, "value": after})
        return True
    grown = array_length(new)
    if grown is None or grown[0] <= count:
        return False
    body = old[size:]
    if new[grown[1] : grown[1] + len(body)] != body:
        return False
    start = len(ops)
    for i in range(count, grown[0]):
        ops.append({"op": "add", "path": path + _at(i), "value": after[i]})
    if below and len(ops) - start >= 2:  # (else nothing to weigh)
        if _NATIVE_COLLAPSE is not None:
            _NATIVE_COLLAPSE(ops, start, path, len(new), lambda: after, packed.enc, packed.keep)
        else:
            _collapse(ops, start, path, len(new), lambda: after, packed)
    return True
