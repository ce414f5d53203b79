"""Texts for legal choices, so a player can pick one by its number.

The server lists every legal choice as a map ``{"kind": ..., arguments}`` with a ``label`` in
game terms (SPEC section 3, protocol 1.1): the client shows it as the server wrote it, made
printable, and knows no rule and no wording of its own. A choice without a label (a server of
protocol 1.0) gets a generic form, its ``kind`` and arguments in words. Numbers shown to people
start at 1; the index sent in ``act`` is the number minus one.

A choice that names one Ishtar space (``at``) is prefixed with the space's name (``f7:``) when a
:class:`~clients.hexgrid.Grid` is given, so the list and the map agree and a narrow column that
cuts a long label still shows where (the label's own ``on f7`` then reads ``here``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clients.hexgrid import Grid, as_hex
from clients.printable import printable

Choice = Mapping[str, Any]


def numbered(
    game: str, choices: list[dict[str, Any]], grid: Grid | None = None
) -> list[tuple[int, str]]:
    """``(number, text)`` for each choice, numbered from 1."""
    return [(i + 1, label(game, c, grid)) for i, c in enumerate(choices)]


def space_of(choice: Choice) -> tuple[int, int] | None:
    """The one space a choice names: its ``at``, or a bloom token's first cell."""
    at = as_hex(choice.get("at"))
    if at is None and choice.get("kind") == "bloom":
        cells = choice.get("cells")
        at = as_hex(cells[0]) if isinstance(cells, list) and cells else None
    return at


def label(game: str, choice: Choice, grid: Grid | None = None) -> str:
    """A short text for one choice: the server's label, or the generic form.

    ``game`` is kept for the callers' sake (a text never depends on it).
    """
    del game
    given = choice.get("label")
    text = printable(given) if isinstance(given, str) and given.strip() else generic(choice)
    at = space_of(choice) if grid is not None and choice.get("kind") != "rotation" else None
    if grid is not None and at is not None and at in grid.spaces:
        name = grid.name(at)
        said = re.compile(rf"\b(on|at) {re.escape(name)}\b")
        return f"{name}: {said.sub('here', text, count=1)}"
    return text


def generic(choice: Choice) -> str:
    """``kind`` and its arguments: ``pile: pile=2 cost=1``."""
    kind = choice.get("kind", "?")
    args = " ".join(
        f"{k}={_value(v)}" for k, v in choice.items() if k not in ("kind", "label", "effects")
    )
    return printable(f"{kind}: {args}" if args else str(kind))


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ",".join(_value(v) for v in value) + ")"
    if value is None:
        return "-"
    return str(value)
