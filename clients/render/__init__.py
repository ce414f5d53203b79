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

from clients.hexgrid import Grid
from clients.printable import printable
from clients.render import common, ishtar, yspahan
from clients.render.layout import Body
from clients.render.scene import Scene, full_screen, generic_body
from protocol.mirror import Mirror

__all__ = [
    "BOARDS",
    "BODIES",
    "Board",
    "board",
    "common",
    "event_line",
    "full",
    "ishtar",
    "screen",
    "yspahan",
]

Board = Callable[
    [Mapping[str, Any], Mapping[str, Any], list[dict[str, Any]], Mapping[str, Any] | None],
    RenderableType,
]
"""A game's drawing: the view, the room's info, the choices, the static data (or None)."""

BOARDS: dict[str, Board] = {"ishtar": ishtar.board, "yspahan": yspahan.board}


def board(
    game: str,
    view: Mapping[str, Any],
    info: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
) -> RenderableType:
    """The game's drawing of ``view`` (with ``data``, its ``GET /games/<name>``); choices that
    name places are marked on it."""
    own = view.get("own")
    choices = own.get("choices") if isinstance(own, dict) else None
    draw = BOARDS.get(game)
    if draw is None:
        return common.fallback_board(view)
    try:
        return draw(view, info, choices if isinstance(choices, list) else [], data)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        # A view of a newer shape than this client knows: still show it, as data.
        return common.fallback_board(view)


def screen(
    mirror: Mirror, *, choices: bool = True, data: Mapping[str, Any] | None = None
) -> RenderableType:
    """Header, board, and (when this seat must decide) the numbered choices; or the scores."""
    view = mirror.view if isinstance(mirror.view, dict) else {}
    parts: list[RenderableType] = [
        common.header(mirror.room, mirror.info, view, mirror.rev),
        board(mirror.game, view, mirror.info, data),
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
    """One event as a sentence: the server's ``text`` (protocol 1.1), else the generic form.

    ``game`` and ``view`` are kept for the callers' sake: the client has no wording of its own.
    """
    del game, view
    given = event.get("text")
    if isinstance(given, str) and given.strip():
        return printable(given)
    return printable(common.generic_event(event, common.namer(info)))
