"""What every game's screen shares: seats, whose turn, the choices, the event log, the scores.

Renderers take the plain view documents of SPEC section 3 (``shared.game`` is the game's public
view, ``own.private`` the seat's secrets) and return rich renderables; they never print, so
``play`` and ``watch`` decide what to show when, and tests can render to a string.

Players are shown as ``P1``, ``P2``... (seat + 1), with their name from the room's ``info``, the
way the server names its bots (``bot 2`` sits in seat 1).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.pretty import Pretty
from rich.table import Table
from rich.text import Text

from clients.choices import numbered
from clients.printable import printable

EventText = Callable[[Mapping[str, Any], Callable[[Any], str]], str]
"""Turns one event into a sentence, given a function that names a seat."""


def add_row(table: Table, *cells: RenderableType | str, style: str | None = None) -> None:
    """``Table.add_row`` with plain strings taken literally (``[1 | 2]`` is not rich markup) and
    made printable (they may come from other players)."""
    table.add_row(*(Text(printable(c)) if isinstance(c, str) else c for c in cells), style=style)


def seat_label(info: Mapping[str, Any], seat: Any) -> str:
    """``P1 ann``, ``P2 bot 2 (bot)``, or ``P3`` when the room info does not name the seat."""
    if not isinstance(seat, int):
        return str(seat)
    name = ""
    bot = False
    for entry in info.get("seats") or []:
        if isinstance(entry, dict) and entry.get("seat") == seat:
            name = printable(entry.get("name") or "")
            bot = bool(entry.get("bot"))
    text = f"P{seat + 1}" + (f" {name}" if name else "")
    return text + (" (bot)" if bot and "bot" not in name else "")


def namer(info: Mapping[str, Any]) -> Callable[[Any], str]:
    return lambda seat: seat_label(info, seat)


def header(room: str, info: Mapping[str, Any], view: Mapping[str, Any], rev: int) -> Text:
    """One line: the room, the game, the revision and who must decide what."""
    shared = view.get("shared") or {}
    text = Text()
    text.append(f"Room {printable(room)}", style="bold")
    text.append(f" · {printable(info.get('game', '?'))} · {printable(info.get('state', '?'))}")
    text.append(f" · rev {rev}")
    turn = shared.get("turn")
    if isinstance(turn, dict):
        text.append(" · ")
        text.append(seat_label(info, turn.get("seat")), style="bold cyan")
        text.append(f" to decide ({printable(turn.get('decision', '?'))})")
    elif shared.get("result") is not None:
        text.append(" · match over", style="bold green")
    return text


def seats_table(info: Mapping[str, Any]) -> Table:
    table = Table(title="Seats", title_justify="left", show_edge=False)
    for column in ("seat", "name", "status"):
        table.add_column(column)
    for entry in info.get("seats") or []:
        if not isinstance(entry, dict):
            continue
        if not entry.get("taken"):
            status = "free"
        elif entry.get("forfeited"):
            status = "forfeited (bot)"
        elif entry.get("bot"):
            status = f"bot ({entry.get('bot_kind')})" if entry.get("bot_kind") else "bot"
        elif entry.get("standin"):
            status = "away (a bot plays)"
        else:
            status = "connected" if entry.get("connected") else "away"
        add_row(table, f"P{int(entry.get('seat', 0)) + 1}", str(entry.get("name") or ""), status)
    return table


def result_table(result: Mapping[str, Any], info: Mapping[str, Any]) -> Table:
    """The final scores with the per-category breakdown, winners marked."""
    scores = result.get("scores") or []
    winners = set(result.get("winners") or [])
    breakdown = result.get("breakdown") or []
    table = Table(title="Final scores", title_justify="left", title_style="bold green")
    table.add_column("category")
    for seat in range(len(scores)):
        mark = " (winner)" if seat in winners else ""
        table.add_column(seat_label(info, seat) + mark, justify="right")
    categories: list[str] = []
    for entry in breakdown:
        if isinstance(entry, dict):
            categories += [k for k in entry if k not in categories and k != "total"]
    for category in categories:
        row = [category]
        for seat in range(len(scores)):
            entry = breakdown[seat] if seat < len(breakdown) else {}
            row.append(str(entry.get(category, "")) if isinstance(entry, dict) else "")
        add_row(table, *row)
    add_row(table, "total", *(str(s) for s in scores), style="bold")
    return table


def result_line(result: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    """``Final scores: P1 ann 25, P2 bot 2 (bot) 20 · winner: P1 ann`` (for logs and tests)."""
    scores = result.get("scores") or []
    winners = [seat_label(info, w) for w in result.get("winners") or []]
    parts = ", ".join(f"{seat_label(info, i)} {s}" for i, s in enumerate(scores))
    won = "winner" if len(winners) == 1 else "winners"
    return f"Final scores: {parts} · {won}: {', '.join(winners)}"


def choices_table(
    game: str,
    choices: list[dict[str, Any]],
    prompt: str | None = None,
    grid: Any = None,
) -> Table:
    title = printable(prompt) if prompt else "Your choices"
    table = Table(title=title, title_justify="left", show_edge=False, show_header=False)
    table.add_column("n", justify="right", style="bold cyan")
    table.add_column("choice")
    for number, text in numbered(game, choices, grid):
        add_row(table, str(number), text)
    return table


def generic_event(event: Mapping[str, Any], name: Callable[[Any], str]) -> str:
    """``P1 ann: tile_placed tile=... at=(1,2)`` for any event."""
    who = name(event["seat"]) + ": " if "seat" in event else ""
    args = " ".join(f"{k}={_short(v)}" for k, v in event.items() if k not in ("kind", "seat"))
    return f"{who}{event.get('kind', '?')}" + (f" {args}" if args else "")


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "(" + ",".join(_short(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_short(v)}" for k, v in value.items()) + "}"
    return "-" if value is None else str(value)


def fallback_board(view: Mapping[str, Any]) -> RenderableType:
    """For a game this client has no drawing for: the public view as data."""
    shared = view.get("shared") or {}
    own = view.get("own") or {}
    parts: list[RenderableType] = [Pretty(shared.get("game"), max_length=20, max_depth=4)]
    if own:
        parts.append(Text("Your secrets:", style="bold"))
        parts.append(Pretty(own.get("private"), max_length=20, max_depth=4))
    return Group(*parts)


KNOWN_SHARED = frozenset({"game", "turn", "result"})
KNOWN_VIEW = frozenset({"shared", "own", "clock"})


def clock_time(seconds: float) -> str:
    """``1:05`` (``0:09.4`` under ten seconds)."""
    if seconds < 10:
        return f"0:{seconds:04.1f}"
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def clock_table(
    view: Mapping[str, Any], info: Mapping[str, Any], left: list[float] | None
) -> Table | None:
    """Every seat's clock (``left``: seconds, see ``Mirror.clock_left``), the running one marked."""
    clock = view.get("clock")
    if not isinstance(clock, dict) or left is None:
        return None
    increment = (clock.get("increment_ms") or 0) / 1000
    rule = f"+{increment:g}s per decision; at zero: {clock.get('on_timeout')}"
    table = Table(
        title="Clocks",
        title_justify="left",
        caption=rule,
        caption_justify="left",
        show_edge=False,
        min_width=len(rule) + 2,
    )
    for column in ("seat", "time", "timeouts"):
        table.add_column(column)
    running = clock.get("running")
    timeouts = clock.get("timeouts") or []
    forfeited = set(clock.get("forfeited") or [])
    for seat, seconds in enumerate(left):
        mark = " ◀" if seat == running else ""
        note = " forfeited" if seat in forfeited else ""
        count = str(timeouts[seat]) if seat < len(timeouts) else ""
        style = "bold red" if seconds < 10 and seat == running else None
        shown = clock_time(seconds) + mark + note
        add_row(table, seat_label(info, seat), shown, count, style=style)
    return table


def extra_parts(view: Mapping[str, Any]) -> RenderableType | None:
    """Parts of the view this client has no drawing for (a newer server's, e.g. clocks), as data.

    SPEC section 3 lets the server add parts; showing them keeps a player informed until the
    client learns to draw them.
    """
    shared = view.get("shared") or {}
    found = {k: v for k, v in shared.items() if k not in KNOWN_SHARED}
    found |= {k: v for k, v in view.items() if k not in KNOWN_VIEW}
    if not found:
        return None
    table = Table(title="More", title_justify="left", show_edge=False, show_header=False)
    table.add_column("part", style="bold")
    table.add_column("value")
    for key, value in found.items():
        add_row(table, key, Pretty(value, max_length=12, max_depth=3))
    return table


def to_text(renderable: RenderableType, width: int = 120) -> str:
    """Render without colour to a string (tests, logs)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()
