"""RFC 6901 JSON Pointers: the one writer and the one parser of patch paths (SPEC section 3).

A pointer is ``""`` (the whole document) or ``/``-separated reference tokens, each with ``~``
escaped as ``~0`` and ``/`` as ``~1``. Into a list, a token is a decimal index without leading
zeros; ``-`` names the position after the last item, and only where a value is added. Every
failure is a :class:`PointerError` (a :class:`ValueError`) saying which token is wrong.
"""

from __future__ import annotations

__all__ = ["PointerError", "escape", "index", "parse", "pointer", "unescape"]


class PointerError(ValueError):
    """A pointer that is not well formed, or a list index that does not fit its list."""


def escape(token: str) -> str:
    """One reference token as written in a pointer."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def unescape(token: str) -> str:
    """One reference token as written in a pointer, back to the key it names."""
    if "~" in token:
        return token.replace("~1", "/").replace("~0", "~")
    return token


def pointer(*tokens: str | int) -> str:
    """The pointer to the value reached by ``tokens`` (keys or list indices) from the top."""
    return "".join("/" + escape(str(t)) for t in tokens)


def parse(path: object) -> list[str]:
    """The reference tokens of a pointer, unescaped (``[]``: the whole document)."""
    if type(path) is not str:
        raise PointerError(f"a pointer is a string, not {type(path).__name__}")
    if path == "":
        return []
    if path[0] != "/":
        raise PointerError(f"pointer {path!r} does not start with '/'")
    if "~" not in path:
        return path[1:].split("/")
    return [unescape(t) for t in path[1:].split("/")]


def index(length: int, token: str, *, adding: bool) -> int:
    """The list position ``token`` names in a list of ``length`` items.

    ``adding``: the position is where a value is inserted, so ``-`` and ``length`` itself are
    allowed; otherwise it must name an existing item.
    """
    if adding and token == "-":
        return length
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise PointerError(f"bad list index {token!r}")
    i = int(token)
    if i > (length if adding else length - 1):
        raise PointerError(f"list index {i} out of range")
    return i
