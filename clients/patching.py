"""RFC 6902 JSON Patch applied by path copying: the old view stays intact, the rest is shared.

:func:`protocol.patch.apply` copies the whole document before applying a patch, which is the
simple way never to mutate its input; for a client that mirrors many rooms (``oasis bots``)
that copy was half of its CPU. :func:`apply` here gives the same result and the same guarantee
(``doc`` is never mutated, a failed patch leaves nothing half-done) by copying only the
containers on the paths the operations touch, sharing every other subtree between the old and
the new view. Both views must therefore be treated as immutable, which the mirror does: it
replaces its view, it never edits it.

A container is copied the first time an operation walks through it; the copies made for this
patch (``fresh``, kept alive so their ids stay unique) are then edited in place by the later
operations. Values taken from the patch or from ``copy`` are shared, never edited: a later
operation that goes into them copies them first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from protocol.codec import canonical
from protocol.patch import PatchError, unescape


class _Patcher:
    def __init__(self, doc: Any) -> None:
        self.box: list[Any] = [doc]
        self.fresh: dict[int, Any] = {}

    def _own(self, container: Any) -> Any:
        if id(container) in self.fresh:
            return container
        copied = dict(container) if type(container) is dict else list(container)
        self.fresh[id(copied)] = copied
        return copied

    def _parent(self, path: str) -> tuple[Any, str]:
        """The (copied) container holding the target of ``path``, and the last token."""
        if not isinstance(path, str):
            raise PatchError("path must be a string")
        if path == "":
            return self.box, ""
        if not path.startswith("/"):
            raise PatchError(f"pointer {path!r} does not start with '/'")
        tokens = [unescape(t) for t in path[1:].split("/")]
        holder: Any = self.box
        key: Any = 0
        for token in tokens[:-1]:
            child = holder[key]
            if type(child) is dict:
                owned = self._own(child)
                holder[key] = owned
                if token not in owned:
                    raise PatchError(f"no member {token!r}")
                holder, key = owned, token
            elif type(child) is list:
                owned = self._own(child)
                holder[key] = owned
                holder, key = owned, _index(owned, token, for_add=False)
            else:
                raise PatchError("path goes through a scalar")
        target = holder[key]
        if type(target) not in (dict, list):
            raise PatchError("path goes through a scalar")
        owned = self._own(target)
        holder[key] = owned
        return owned, tokens[-1]

    def get(self, path: str) -> Any:
        if path == "":
            return self.box[0]
        container, token = self._parent(path)
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r}")
            return container[token]
        return container[_index(container, token, for_add=False)]

    def add(self, path: str, value: Any) -> None:
        if path == "":
            self.box[0] = value
            return
        container, token = self._parent(path)
        if type(container) is dict:
            container[token] = value
        else:
            container.insert(_index(container, token, for_add=True), value)

    def replace(self, path: str, value: Any) -> None:
        """In place, so a map keeps its key order (the hash does not depend on it anyway)."""
        if path == "":
            self.box[0] = value
            return
        container, token = self._parent(path)
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r} to replace")
            container[token] = value
        else:
            container[_index(container, token, for_add=False)] = value

    def remove(self, path: str) -> Any:
        if path == "":
            raise PatchError("cannot remove the whole document")
        container, token = self._parent(path)
        if type(container) is dict:
            if token not in container:
                raise PatchError(f"no member {token!r} to remove")
            return container.pop(token)
        return container.pop(_index(container, token, for_add=False))


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"bad list index {token!r}")
    i = int(token)
    if i > (len(container) if for_add else len(container) - 1):
        raise PatchError(f"list index {i} out of range")
    return i


def apply(doc: Any, ops: Iterable[Mapping[str, Any]]) -> Any:
    """``doc`` with ``ops`` applied, as :func:`protocol.patch.apply`, without copying it all."""
    patcher = _Patcher(doc)
    for op in ops:
        try:
            name, path = op["op"], op["path"]
        except (KeyError, TypeError):
            raise PatchError(f"not an operation: {op!r}") from None
        try:
            if name == "add":
                patcher.add(path, op["value"])
            elif name == "remove":
                patcher.remove(path)
            elif name == "replace":
                patcher.replace(path, op["value"])
            elif name == "move":
                source = op["from"]
                if isinstance(source, str) and path.startswith(source + "/"):
                    raise PatchError("cannot move a value into itself")
                patcher.add(path, patcher.remove(source))
            elif name == "copy":
                patcher.add(path, patcher.get(op["from"]))
            elif name == "test":
                # Strict equality, as the protocol means it: 1, 1.0 and true differ.
                if canonical(patcher.get(path)) != canonical(op["value"]):
                    raise PatchError(f"test failed at {path!r}")
            else:
                raise PatchError(f"unknown operation {name!r}")
        except KeyError as exc:
            raise PatchError(f"{name} without {exc}") from None
    return patcher.box[0]
