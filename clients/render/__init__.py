"""Drawing views with rich: one module per game, :mod:`.common` for what they share.

:func:`screen` (the plain line mode) and :func:`full` (the full screen, :mod:`.scene` and
:mod:`.layout`) pick the game's drawing by the room's ``info.game`` and fall back to the plain
data for a game this client does not know, so a new game on the server is still playable.

Every string from the server is made printable (:mod:`clients.printable`) before it is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from clients.hexgrid import Grid, as_hex
from clients.printable import printable
from clients.render import common, ishtar, yspahan
from clients.render.layout import Body
from clients.render.scene import Scene, full_screen, generic_body
from protocol.mirror import Mirror

__all__ = [
    "BOARDS",
    "BODIES",
    "EVENTS",
    "Board",
    "board",
    "common",
    "event_line",
    "full",
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
        turn = mirror.shared.get("turn")
        prompt = turn.get("prompt") if isinstance(turn, dict) else None
        game = mirror.shared.get("game")
        grid = None
        if mirror.game == "ishtar" and isinstance(game, dict):
            grid = Grid.of_terrain(game.get("terrain"))
        parts.append(
            common.choices_table(
                mirror.game,
                mirror.choices,
                prompt if isinstance(prompt, str) else None,
                grid,
                game if isinstance(game, dict) else None,
            )
        )
    return Group(*parts)


BODIES: dict[str, Callable[[Scene], Body]] = {"ishtar": ishtar.body, "yspahan": yspahan.body}


def full(scene: Scene) -> list[Text]:
    """Every line of the full screen for ``scene`` (the game's body, or the generic one)."""
    draw = BODIES.get(scene.mirror.game)
    try:
        return full_screen(scene, draw)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        # A view of a newer shape than this client knows: the choices and the log still work.
        return full_screen(scene, generic_body)


def event_line(
    game: str,
    event: Mapping[str, Any],
    info: Mapping[str, Any],
    view: Mapping[str, Any] | None = None,
) -> str:
    """One event as a sentence: the server's ``text``, else the game's wording, else generic.

    With the ``view``, Ishtar spaces are named as the map names them (``f7``).
    """
    given = event.get("text")
    if isinstance(given, str) and given.strip():
        return printable(given)
    name = common.namer(info)
    pretty = EVENTS.get(game, {}).get(str(event.get("kind")))
    text = None
    if pretty is not None:
        try:
            text = pretty(event, name)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            text = None
    if text is None:
        text = common.generic_event(event, name)
    at = as_hex(event.get("at"))
    if game == "ishtar" and at is not None and view is not None:
        shared = view.get("shared") or {}
        grid = Grid.of_terrain((shared.get("game") or {}).get("terrain"))
        if at in grid.spaces:
            text = text.replace(f"({at[0]},{at[1]})", grid.name(at))
    return printable(text)
