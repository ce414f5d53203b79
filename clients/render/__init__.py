"""Drawing views with rich: one module per game, :mod:`.common` for what they share.

:func:`screen` picks the game's drawing by the room's ``info.game`` and falls back to the plain
data for a game this client does not know, so a new game on the server is still playable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Group, RenderableType

from clients.render import common, ishtar, yspahan
from protocol.mirror import Mirror

__all__ = [
    "BOARDS",
    "EVENTS",
    "Board",
    "board",
    "common",
    "event_line",
    "ishtar",
    "screen",
    "yspahan",
]

Board = Callable[[Mapping[str, Any], Mapping[str, Any], list[dict[str, Any]]], RenderableType]

BOARDS: dict[str, Board] = {"ishtar": ishtar.board, "yspahan": yspahan.board}
EVENTS: dict[str, dict[str, common.EventText]] = {
    "ishtar": ishtar.EVENTS,
    "yspahan": yspahan.EVENTS,
}


def board(game: str, view: Mapping[str, Any], info: Mapping[str, Any]) -> RenderableType:
    """The game's drawing of ``view``; choices that name places are marked on it."""
    own = view.get("own")
    choices = own.get("choices") if isinstance(own, dict) else None
    draw = BOARDS.get(game)
    if draw is None:
        return common.fallback_board(view)
    try:
        return draw(view, info, choices if isinstance(choices, list) else [])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        # A view of a newer shape than this client knows: still show it, as data.
        return common.fallback_board(view)


def screen(mirror: Mirror, *, choices: bool = True) -> RenderableType:
    """Header, board, and (when this seat must decide) the numbered choices; or the scores."""
    view = mirror.view if isinstance(mirror.view, dict) else {}
    parts: list[RenderableType] = [
        common.header(mirror.room, mirror.info, view, mirror.rev),
        board(mirror.game, view, mirror.info),
    ]
    clocks = common.clock_table(view, mirror.info, mirror.clock_left())
    if clocks is not None:
        parts.append(clocks)
    extra = common.extra_parts(view)
    if extra is not None:
        parts.append(extra)
    result = mirror.result
    if result is not None:
        parts.append(common.result_table(result, mirror.info))
    elif choices and mirror.choices:
        parts.append(common.choices_table(mirror.game, mirror.choices))
    return Group(*parts)


def event_line(game: str, event: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    """One event as a sentence, with the game's wording when there is one."""
    name = common.namer(info)
    pretty = EVENTS.get(game, {}).get(str(event.get("kind")))
    if pretty is not None:
        try:
            return pretty(event, name)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            pass
    return common.generic_event(event, name)
