"""What the full screen shows, as one value: :class:`Scene`, and the parts every game shares.

The interactive loop keeps a scene (what is typed, the page of choices, the filter, the log,
the chat, an open overlay) and the mirror of the room; :func:`full_screen` draws it for the
terminal's size through the game's ``body`` (:mod:`.ishtar`, :mod:`.yspahan`, or the generic
one for a game this client does not know) and :func:`clients.render.layout.compose`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from clients.choices import label
from clients.hexgrid import Grid
from clients.printable import printable
from clients.render.common import clock_time, seat_label
from clients.render.layout import Body, Panel, compose
from protocol.mirror import Mirror


@dataclass
class Scene:
    """Everything the full screen depends on besides the room's mirror."""

    mirror: Mirror
    width: int = 80
    height: int = 24
    hint: Text = field(default_factory=Text)
    typed: str = ""
    page: int = 0
    shown: list[int] | None = None
    """Indices of the choices a filter kept (None: all)."""
    filter_text: str = ""
    log: list[Text] = field(default_factory=list)
    chat: list[Text] = field(default_factory=list)
    panel: tuple[str, list[Text]] | None = None
    """A panel kept on screen until dismissed (Yspahan's week scoring): title and lines."""
    overlay: list[Text] | None = None
    clock_left: list[float] | None = None
    invite: str = ""
    """What the room waits for, above its seats (the hint line says how others join)."""
    data: Mapping[str, Any] | None = None
    """The game's static data from ``GET /games/<name>`` (None until fetched, or without)."""

    @property
    def view(self) -> Mapping[str, Any]:
        view = self.mirror.view
        return view if isinstance(view, dict) else {}

    @property
    def game(self) -> Mapping[str, Any]:
        game = self.mirror.shared.get("game")
        return game if isinstance(game, dict) else {}

    @property
    def choices(self) -> list[dict[str, Any]]:
        """This seat's choices while the match is on (before the start they cannot be taken)."""
        return self.mirror.choices if self.mirror.info.get("state") == "playing" else []

    @property
    def turn(self) -> Mapping[str, Any]:
        turn = self.mirror.shared.get("turn")
        return turn if isinstance(turn, dict) else {}


BodyFor = Callable[[Scene], Body]


def header(scene: Scene) -> Text:
    """``Oasis · ishtar · room 5f0c1a · P2 bob to choose a tile`` and the clocks on the right."""
    mirror = scene.mirror
    info = mirror.info
    text = Text()
    text.append(f"{str(info.get('game') or '?').capitalize()}", style="bold")
    text.append(f" · room {printable(mirror.room)}")
    if mirror.seat is not None:
        text.append(" · you are ")
        text.append(seat_label(info, mirror.seat), style="bold")
    elif mirror.spectator:
        text.append(" · spectator")
    state = info.get("state")
    if mirror.result is not None:
        text.append(" · match over", style="bold green")
    elif state != "playing":
        text.append(f" · {state or 'joining'}")
    elif info.get("paused"):
        text.append(" · paused", style="bold red")
    for entry in info.get("seats") or []:
        if not isinstance(entry, dict) or entry.get("seat") == mirror.seat:
            continue
        away = _away(entry, state == "playing")
        if away:
            text.append(f" · P{int(entry.get('seat', 0)) + 1} {away}", style="bold yellow")
    clocks = clock_text(scene)
    if clocks.cell_len:
        room = scene.width - text.cell_len - clocks.cell_len
        text.append(" " * max(room, 1))
        text.append_text(clocks)
    return text


def _away(entry: Mapping[str, Any], started: bool) -> str:
    """``away`` or ``bot plays`` for a player who is not at the table now."""
    if entry.get("forfeited"):
        return "forfeited"
    if entry.get("standin"):
        return "away, a bot plays"
    if started and entry.get("taken") and not entry.get("bot") and not entry.get("connected"):
        return "away"
    return ""


LOW_TIME = 30.0
"""Seconds under which the running clock of this seat is shown as a warning."""


def clock_text(scene: Scene) -> Text:
    """Each seat's clock, the running one marked, low time in red."""
    left = scene.clock_left
    clock = scene.view.get("clock")
    text = Text()
    if left is None or not isinstance(clock, dict):
        return text
    running = clock.get("running") if scene.mirror.info.get("state") == "playing" else None
    forfeited = set(clock.get("forfeited") or [])
    for seat, seconds in enumerate(left):
        if seat:
            text.append(" ")
        shown = f"P{seat + 1} {clock_time(seconds)}"
        style = "bold" if seat == running else "dim"
        if seat in forfeited:
            shown += " forfeited"
        elif seat == running:
            shown += "◀"
            if seconds < LOW_TIME:
                style = "bold white on red" if seat == scene.mirror.seat else "bold red"
        text.append(shown, style=style)
    return text


def low_time(scene: Scene) -> str | None:
    """A warning when this seat's running clock is low, for the hint line."""
    left = scene.clock_left
    clock = scene.view.get("clock")
    seat = scene.mirror.seat
    if left is None or not isinstance(clock, dict) or seat is None:
        return None
    if scene.mirror.info.get("state") != "playing":
        return None
    if clock.get("running") != seat or not 0 <= seat < len(left) or left[seat] >= LOW_TIME:
        return None
    on = "a bot decides for you" if clock.get("on_timeout") != "forfeit" else "you forfeit"
    return f"Only {clock_time(left[seat])} left on your clock: at zero {on}."


def prompt_line(scene: Scene) -> Text:
    text = Text("> ", style="bold")
    text.append(scene.typed)
    text.append("█", style="blink")
    return text


ChoiceText = Callable[["Scene", Mapping[str, Any]], str | None]
"""A game's own short text for a choice (None: the label)."""


def choice_lines(
    scene: Scene, grid: Grid | None = None, text: ChoiceText | None = None, wrap: int = 0
) -> list[Text]:
    """``  3  f7: put an assistant on the flowerbed`` for each choice shown (filter applied);
    with ``wrap``, a text longer than that many columns goes on under its number instead of
    being cut (the continuation never starts with a digit, which would read as a number)."""
    choices = scene.choices
    indices = scene.shown if scene.shown is not None else list(range(len(choices)))
    width = len(str(len(choices)))
    out = []
    for i in indices:
        if not 0 <= i < len(choices):
            continue
        short = text(scene, choices[i]) if text is not None else None
        words = short or label(scene.mirror.game, choices[i], grid)
        parts = _wrap(words, wrap - width - 1) if wrap else [words]
        line = Text(f"{i + 1:>{width}} ", style="bold cyan")
        line.append(parts[0])
        out.append(line)
        out += [Text(" " * (width + 1) + part) for part in parts[1:]]
    return out


def _wrap(words: str, width: int) -> list[str]:
    """``words`` in lines of at most ``width`` (a word longer than that is cut by the panel)."""
    if width < 10 or len(words) <= width:
        return [words]
    lines: list[str] = []
    rest = words
    while len(rest) > width:
        cut = rest.rfind(" ", 0, width + 1)
        while cut > 0 and rest[cut + 1 : cut + 2].isdigit():
            cut = rest.rfind(" ", 0, cut)
        if cut <= 0:
            break
        lines.append(rest[:cut])
        rest = rest[cut + 1 :]
    return [*lines, rest]


WRAP_UP_TO = 8
"""A list of this many choices or fewer wraps its long texts (a longer one is cut and paged)."""
WRAPPED_AT_MOST = 12
"""...unless wrapped it takes more lines than this (the panels under it keep their room)."""


def decision_panel(
    scene: Scene,
    grid: Grid | None = None,
    hint: Text | None = None,
    least: int = 10,
    width: int | None = None,
    text: ChoiceText | None = None,
) -> Panel | None:
    """The prompt and the choices, paged: the panel that comes first.

    ``hint`` (how to choose on the board) stays above every page; at least ``least`` choices
    are shown when there are that many (fewer when the board itself is the way to choose).
    Given its ``width``, a long list of short choices takes two columns.
    """
    if not scene.choices:
        return None
    shown = len(scene.shown) if scene.shown is not None else len(scene.choices)
    lines = choice_lines(scene, grid, text)
    wrapped = lines
    if width is not None and shown <= WRAP_UP_TO:
        wrapped = choice_lines(scene, grid, text, width)
        if len(wrapped) > WRAPPED_AT_MOST:
            wrapped = lines
    elif width is not None and len(lines) > 6:
        column = width // 2 - 1
        if all(line.cell_len <= column - 1 for line in lines):
            lines = wrapped = _columns(lines, column)
    title = Text(prompt_of(scene))
    if scene.shown is not None:
        title = Text(f"{len(lines)} of {len(scene.choices)} choices match {scene.filter_text!r}")
    top = [hint] if hint is not None else []
    whole, cut = paged(scene, top, wrapped), paged(scene, top, lines)

    def pager(height: int) -> list[Text]:  # wrapped when it all fits, else cut and paged
        return whole(height) if len(top) + len(wrapped) <= height else cut(height)

    least = min(len(wrapped), least) + 1 + len(top)
    return Panel(title, top + wrapped, least=least, pager=pager)


def paged(scene: Scene, top: list[Text], lines: list[Text]) -> Callable[[int], list[Text]]:
    """A pager of ``lines`` under ``top``: the scene's page, with a line saying how to turn it."""

    def pager(height: int) -> list[Text]:
        height -= len(top)
        if len(lines) <= height:
            return top + lines
        per_page = max(height - 1, 1)
        pages = (len(lines) + per_page - 1) // per_page
        page = min(max(scene.page, 0), pages - 1)
        scene.page = page
        shown = lines[page * per_page : (page + 1) * per_page]
        more = Text(f"page {page + 1}/{pages}: PgDn/PgUp (or > <) · /word filters", style="dim")
        return [*top, *shown, more]

    return pager


def _columns(lines: list[Text], column: int) -> list[Text]:
    """Two columns, numbers running down the first then the second."""
    half = (len(lines) + 1) // 2
    out = []
    for i in range(half):
        line = lines[i].copy()
        if i + half < len(lines):
            line.append(" " * (column + 1 - line.cell_len))
            line.append_text(lines[i + half])
        out.append(line)
    return out


def prompt_of(scene: Scene) -> str:
    """The server's prompt for this decision, or the decision's name from a server without."""
    given = scene.turn.get("prompt")
    if isinstance(given, str) and given.strip():
        text = printable(given).strip()
        return text[:1].upper() + text[1:]
    decision = str(scene.turn.get("decision") or "decide")
    return f"Your choice ({printable(decision).replace('_', ' ')})"


def log_panel(scene: Scene) -> Panel | None:
    if not scene.log:
        return None
    return Panel(None, scene.log, least=2, tail=True)


def chat_panel(scene: Scene) -> Panel | None:
    if not scene.chat:
        return None
    return Panel("Chat (say TEXT to talk)", scene.chat, least=2, tail=True)


def kept_panel(scene: Scene) -> Panel | None:
    if scene.panel is None:
        return None
    title, lines = scene.panel
    return Panel(f"{title} (Enter to dismiss)", lines, least=len(lines) + 1)


def seats_panel(scene: Scene) -> Panel:
    """Who sits where, and who is really playing (while waiting, and for the notices)."""
    lines = []
    for entry in scene.mirror.info.get("seats") or []:
        if not isinstance(entry, dict):
            continue
        seat = entry.get("seat")
        line = Text(seat_label(scene.mirror.info, seat).ljust(22), style="bold")
        line.append(seat_status(entry))
        lines.append(line)
    title = "Seats"
    if scene.invite:
        head, _, rest = scene.invite.partition("; ")
        title = f"Seats: {head}"
        if rest:
            lines.append(Text(rest[:1].upper() + rest[1:], style="bold"))
    return Panel(title, lines, least=len(lines) + 1)


def seat_status(entry: Mapping[str, Any]) -> str:
    if not entry.get("taken"):
        return "free"
    if entry.get("forfeited"):
        return "forfeited on time (a bot plays the seat)"
    if entry.get("bot"):
        kind = entry.get("bot_kind")
        return f"bot ({printable(kind)})" if kind else "bot"
    if entry.get("standin"):
        return "away: a bot plays for them"
    return "connected" if entry.get("connected") else "away"


def result_panel(scene: Scene) -> Panel | None:
    """The final scores, category by category, winners marked."""
    result = scene.mirror.result
    if result is None:
        return None
    info = scene.mirror.info
    scores = result.get("scores") or []
    winners = set(result.get("winners") or [])
    breakdown = result.get("breakdown") or []
    lines = []
    for seat, score in enumerate(scores):
        line = Text(f"{seat_label(info, seat)}: {score} points", style="bold")
        if seat in winners:
            line.append(" (winner)", style="bold green")
        lines.append(line)
        entry = breakdown[seat] if seat < len(breakdown) else {}
        if isinstance(entry, dict):
            parts = [
                f"{printable(k).replace('_', ' ')} {v}"
                for k, v in entry.items()
                if k != "total" and v
            ]
            row = "  "
            for part in parts:
                if len(row) + len(part) > 34 and row.strip():
                    lines.append(Text(row.rstrip(" ·")))
                    row = "  "
                row += part + " · "
            if row.strip():
                lines.append(Text(row.rstrip(" ·")))
    return Panel("Final scores", lines, least=len(lines) + 1)


def generic_body(scene: Scene) -> Body:
    """For a game this client has no drawing for: the choices and the logs."""
    panels = [p for p in (decision_panel(scene), log_panel(scene), chat_panel(scene)) if p]
    return Body(main=[], panels=panels)


def full_screen(scene: Scene, body: BodyFor | None) -> list[Text]:
    """Every line of the terminal for ``scene``."""
    built = (body or generic_body)(scene) if scene.mirror.view is not None else Body(main=[])
    extra = [result_panel(scene)]
    if scene.mirror.info.get("state") == "open":
        extra.append(seats_panel(scene))
    panels = [p for p in extra if p is not None]
    if panels:
        built = Body(built.main, [*panels, *built.panels], built.main_width, built.below)
    return compose(
        header(scene),
        built,
        scene.hint,
        prompt_line(scene),
        scene.width,
        scene.height,
        overlay=scene.overlay,
    )
