"""The line mode (``--plain``): everything printed as lines, for scripts and screen readers.

Nothing is redrawn in place: the board is printed when the match starts and whenever this seat
must decide, each event as one line ``  [rev] text`` as it comes, chat as ``  <P2 bob> text``,
then the numbered choices and one prompt::

    Your choice 1-18 (rev 12; h for help) >

stdin is read by a daemon thread (a blocking ``readline`` works the same on a terminal, a pty and
a pipe, and cannot leave the terminal in non-blocking mode); its lines reach the loop through an
asyncio queue, and end of input counts as ``quit``. The line mode is what ``oasis`` uses when
its input or output is not a terminal.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from clients import render
from clients.gamedata import GameData
from clients.render.common import add_row, seats_table
from clients.render.scene import Scene, choice_lines
from protocol.mirror import Mirror


class LineReader:
    """Lines of a text stream, read in a daemon thread and handed to the event loop."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.lines_read = 0
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._run, name="oasis-stdin", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                line = self.stream.readline()
            except (OSError, ValueError):
                line = ""
            if not line:
                self._loop.call_soon_threadsafe(self.queue.put_nowait, None)
                return
            self.lines_read += 1
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line.rstrip("\r\n"))


class Plain:
    """The :class:`clients.play.UI` of the line mode."""

    def __init__(self, mirror: Mirror | None = None, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.mirror = mirror or Mirror("")
        self.data: GameData | None = None
        """Where the board's static data comes from (set by the command that plays)."""
        self.shown: list[int] | None = None
        self._reader: LineReader | None = None
        self._prompted_at = -1
        """Lines read when the last prompt was printed (its line is still open until one more)."""
        self._ending = ""
        """The final screen's prompt, once the match is over."""

    @property
    def lines(self) -> asyncio.Queue[str | None]:
        if self._reader is None:
            self._reader = LineReader()
        return self._reader.queue

    # Printing ------------------------------------------------------------------------------

    def line(self, text: str | Text, style: str | None = None) -> None:
        shown = Text(text, style=style or "") if isinstance(text, str) else text
        read = self._reader.lines_read if self._reader is not None else 0
        if self._prompted_at == read:
            self.console.print()  # the prompt's line is still open (Ctrl-C, a frame)
        self._prompted_at = -1
        self.console.print(shown, soft_wrap=True)

    def log(self, rev: int, text: str) -> None:
        self.line(f"  [{rev}] {text}", "dim")

    def chat(self, text: Text) -> None:
        self.line(Text("  ").append_text(text))

    def message(self, text: str, kind: str = "info") -> None:
        if kind == "notice":
            self.line(f"! {text}", "bold yellow")
        elif kind == "error":
            self.line(f"! {text}", "bold red")
            self._prompt()
        else:
            self.line(text, "bold")

    def notice(self, text: str) -> None:
        """For the session's connection notices."""
        self.message(text, "notice")

    def error(self, text: str) -> None:
        self.line(f"! {text}", "bold red")

    def show(self, mirror: Mirror, *, choices: bool = True) -> None:
        self.console.print(render.screen(mirror, choices=choices, data=self._data()))

    def changed(self) -> None:
        pass

    def _data(self) -> dict[str, Any] | None:
        return self.data.known(self.mirror.game) if self.data is not None else None

    def started(self) -> None:
        if not self.mirror.choices:
            self.console.print(render.screen(self.mirror, choices=False, data=self._data()))

    def waiting(self, text: str, invite: str = "") -> None:
        self.console.print(seats_table(self.mirror.info))
        self.line(text)

    def ask(self, prompt: str, lone: bool = False) -> None:
        self.shown = None
        if lone:  # no board again for a step that needs nothing from the player
            self.line(prompt)
            return
        self.console.print(render.screen(self.mirror, data=self._data()))
        self._prompt()

    def _prompt(self) -> None:
        n = len(self.mirror.choices)
        if self._ending:
            prompt = f"{self._ending} > "
        elif not n or self.mirror.info.get("state") != "playing":
            return
        else:
            prompt = f"Your choice 1-{n} (rev {self.mirror.rev}; h for help) > "
        self.console.print(Text(prompt, style="bold"), end="")
        self._prompted_at = self._reader.lines_read if self._reader is not None else 0

    def hint(self, text: str) -> None:
        pass

    def show_filter(self, indices: list[int] | None, text: str = "") -> None:
        self.shown = indices
        if indices is None:
            return
        scene = Scene(self.mirror, shown=indices)
        table = Table(
            title=f"{len(indices)} choices match {text!r}",
            title_justify="left",
            show_edge=False,
            show_header=False,
        )
        table.add_column("choice")
        for line in choice_lines(scene):
            add_row(table, line)
        self.console.print(table)
        self._prompt()

    def page(self, delta: int) -> None:
        self.line("The whole list is printed above; /word shows the choices that mention it.")
        self._prompt()

    def keep(self, title: str, lines: list[Text]) -> None:
        self.line(title, "bold")
        for text in lines:
            self.line(Text("  ").append_text(text))

    def dismiss(self) -> bool:
        return False

    def help(self, pages: list[Text]) -> None:
        for text in pages[1:]:
            self.console.print(text)
        self._prompt()

    def tick(self) -> float | None:
        return None

    def typed_since(self, since: float) -> bool:
        return False

    def finished(self, prompt: str, result: str) -> None:
        """The board and ``result`` once, then ``prompt`` (again on a line of its own when it
        changes: the finished room named its rematch)."""
        read = self._reader.lines_read if self._reader is not None else 0
        if not self._ending:
            self.console.print(render.screen(self.mirror, choices=False, data=self._data()))
            self.line(result, "bold green")
        elif self._prompted_at == read:
            self.console.print()  # the last prompt's line is still open
        self._ending = prompt
        self._prompt()

    def switch(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.shown = None
        self._ending = ""

    def helping(self) -> bool:
        return False

    def after(self, line: str, style: str = "") -> None:
        self.line(line, style or None)

    def close(self) -> None:
        pass
