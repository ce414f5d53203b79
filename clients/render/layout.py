"""The full screen: every line of the terminal, computed for its size, never wider than it.

A screen is a list of exactly ``height`` lines of ``Text``, each at most ``width`` cells (cropped
with an ellipsis, never wrapped), so a redraw replaces the terminal's content in place. From
the top:

- the header: room, game, whose turn, clocks;
- the body: the game's main drawing (Ishtar's map, Yspahan's city) and the panels around it;
- the hint: what the player is asked, or what is going on;
- the input line, with what is being typed.

Panels are :class:`Panel` s in priority order: the decision first (its choices, paged), then
the game's own panels, then the log and the chat. With room beside the main drawing (at least
:data:`SIDE_MIN` columns) they go in a column to its right and under it; on a narrow terminal
they go under it. Each panel gets its ``least`` lines in priority order while room remains,
then more up to what it wants, in the same order; a panel that gets no line is left out,
except the first (the decision), which takes what there is and pages. An
overlay (help, reference, week scoring) takes the whole body until it is closed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.text import Text

SIDE_MIN = 34
"""Columns a side column needs to be worth having."""
SIDE_LAST = 20
"""Columns a side column may shrink to when under the main drawing there would be too little
room (:data:`UNDER_MIN` lines) for the decision (a 4-player Ishtar map on 80x24)."""
UNDER_MIN = 8
GAP = " │ "


@dataclass
class Panel:
    """A titled block of lines; ``fit`` crops it to the lines it was given."""

    title: Text | str | None
    lines: list[Text]
    least: int = 2
    """Lines (title included) below which the panel is not worth showing."""
    tail: bool = False
    """Keep the last lines when cropped (logs), else the first."""
    pager: Callable[[int], list[Text]] | None = None
    """For the choices: given the lines available (title excluded), the lines of that page."""

    def wants(self) -> int:
        return len(self.lines) + (1 if self.title is not None else 0)

    def fit(self, height: int) -> list[Text]:
        out: list[Text] = []
        if self.title is not None and height > 0:
            title = Text(self.title) if isinstance(self.title, str) else self.title.copy()
            title.stylize("bold")
            out.append(title)
            height -= 1
        if height <= 0:
            return out
        if self.pager is not None:
            return out + self.pager(height)[:height]
        body = self.lines[-height:] if self.tail else self.lines[:height]
        return out + body


@dataclass
class Body:
    """What a game draws for the body: its main drawing and its panels (in priority order)."""

    main: list[Text]
    panels: list[Panel] = field(default_factory=list)
    main_width: int | None = None
    """Columns the main drawing needs (default: its widest line)."""
    below: list[Panel] = field(default_factory=list)
    """Panels for under the main drawing when the others go beside it (the log, the chat);
    on a narrow terminal they come after the others."""


def crop(line: Text, width: int) -> Text:
    """``line`` cut to ``width`` cells, with an ellipsis when something was cut."""
    out = line.copy()
    out.no_wrap = True
    out.end = "\n"
    if out.cell_len > width:
        out.truncate(width, overflow="ellipsis")
    return out


def pad(line: Text, width: int) -> Text:
    out = crop(line, width)
    if out.cell_len < width:
        out.append(" " * (width - out.cell_len))
    return out


def stack(panels: Sequence[Panel], height: int, *, gap: bool = True) -> list[Text]:
    """Panels one under the other in ``height`` lines (see the module docstring)."""
    shown: list[int] = [0] * len(panels)
    left = height
    for i, panel in enumerate(panels):
        need = min(panel.least, panel.wants()) + (1 if gap and any(shown) else 0)
        if i == 0 and panel.wants() and need > left > 1:
            need = left  # the first panel (the decision) is never left out: it pages
        if panel.wants() and need <= left:
            shown[i] = need - (1 if gap and any(shown) else 0)
            left -= need
    for i, panel in enumerate(panels):
        if shown[i]:
            more = min(panel.wants() - shown[i], left)
            shown[i] += more
            left -= more
    lines: list[Text] = []
    for i, panel in enumerate(panels):
        if shown[i]:
            if gap and lines:
                lines.append(Text(""))
            lines += panel.fit(shown[i])
    return lines


def compose(
    header: Text,
    body: Body,
    hint: Text,
    prompt: Text,
    width: int,
    height: int,
    overlay: list[Text] | None = None,
) -> list[Text]:
    """The whole screen: exactly ``height`` lines of at most ``width`` cells."""
    width = max(width, 20)
    height = max(height, 6)
    rows = height - 3
    if overlay is not None:
        middle = [crop(line, width) for line in overlay[:rows]]
    else:
        middle = _body(body, width, rows)
    middle += [Text("")] * (rows - len(middle))
    screen = [header, *middle, hint, prompt]
    return [crop(line, width) for line in screen]


def _body(body: Body, width: int, rows: int) -> list[Text]:
    main = body.main
    main_width = body.main_width or max((line.cell_len for line in main), default=0)
    side = width - main_width - len(GAP)
    cramped = rows - len(main) < UNDER_MIN and side >= SIDE_LAST
    if main_width and (side >= SIDE_MIN or cramped):
        below = rows - len(main)
        # Under the main drawing: its own panels, then what the side column had no room for.
        right = stack(body.panels, rows)
        used = _shown(body.panels, rows)
        rest = body.below + [p for p, n in zip(body.panels, used, strict=True) if not n]
        left = main[:rows] + (stack(rest, below) if below > 1 and rest else [])
        out: list[Text] = []
        for i in range(rows):
            line = pad(left[i], main_width) if i < len(left) else Text(" " * main_width)
            line.append(GAP, style="dim")
            if i < len(right):
                line.append_text(crop(right[i], side))
            out.append(line)
        return out
    top = [crop(line, width) for line in main[:rows]]
    return top + stack(body.panels + body.below, rows - len(top))


def _shown(panels: Sequence[Panel], height: int) -> list[int]:
    """How many lines :func:`stack` gives each panel in ``height`` lines (0: left out)."""
    shown = [0] * len(panels)
    left = height
    for i, panel in enumerate(panels):
        need = min(panel.least, panel.wants()) + (1 if any(shown) else 0)
        if i == 0 and panel.wants() and need > left > 1:
            need = left
        if panel.wants() and need <= left:
            shown[i] = need
            left -= need
    return shown
