"""The full screen: the terminal redrawn in place at every change, keys read one by one.

:class:`FullScreen` is the :class:`clients.play.UI` of a terminal: rich's ``Live`` on the
alternate screen shows :func:`clients.render.full` for the terminal's size, redrawn after every
frame of the room (so a waiting seat and a spectator see each move), every keystroke, a resize
(SIGWINCH), and while a clock runs every second (five times a second under ten seconds).
Redraws are coalesced: at most one is pending, and they are at least :data:`FRAME` seconds
apart, so a fast match of bots cannot keep a 2-core machine busy redrawing. Every frame
rewrites every cell (rich pads each line to the width, the screen to its height) and is
written between :data:`SYNC_BEGIN` and :data:`SYNC_END`.

Keys (:mod:`clients.keys`, cbreak mode): text goes into the input line; Enter hands the line to
the loop; Backspace, Ctrl-U (clear), Esc (clear, or close the help or a kept panel); PgDn/PgUp
and the arrows turn the pages of the choices (or of the help); Ctrl-L redraws; Ctrl-D on an
empty line leaves. Ctrl-C is SIGINT, which the loop turns into leaving. Typing ``/word`` filters
the choices as it is typed.

Lines meant to stay (the resume command, the final scores) are kept until :meth:`close`, which
leaves the alternate screen and prints them in the terminal's own scrollback, unwrapped.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from clients import render
from clients.gamedata import GameData
from clients.keys import KeyReader
from clients.printable import printable
from clients.render.scene import Scene, choice_lines, low_time
from protocol.mirror import Mirror

FRAME = 0.04
"""Seconds between two redraws at most 25 times a second."""
LOG_LINES = 200
SYNC_BEGIN, SYNC_END = "\x1b[?2026h", "\x1b[?2026l"
"""Synchronized output around each frame: a terminal that knows it (kitty, WezTerm, iTerm2,
foot, Windows Terminal...) shows the whole frame at once instead of its top over the old
bottom while the rest arrives; the others ignore an unknown private mode."""


class FullScreen:
    """Full-screen drawing and key input for one room (see the module docstring)."""

    def __init__(self, mirror: Mirror, data: GameData | None = None) -> None:
        self.mirror = mirror
        self.data = data
        self.console = Console(highlight=False)
        self.scene = Scene(mirror)
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.shown: list[int] | None = None
        self._typed_at = 0.0
        self._after: list[tuple[str, str]] = []
        self._live: Live | None = None
        self._keys: KeyReader | None = None
        self._loop = asyncio.get_running_loop()
        self._pending: asyncio.TimerHandle | None = None
        self._drawn_at = 0.0
        self._overlay: list[Text] | None = None
        self._overlay_top = 0
        self._prompt = ""
        self._prompt_rev = -1
        """The revision the prompt was given for: a newer view waits for its own prompt."""
        self._notice: Text | None = None
        self._filtering = False
        """The filter shown follows what is being typed (``/word``), not a line entered."""

    # Starting and stopping -----------------------------------------------------------------

    def open(self) -> FullScreen:
        self._live = Live(
            console=self.console,
            screen=True,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()
        with contextlib.suppress(OSError, ValueError):
            self._keys = KeyReader(sys.stdin.fileno(), self._key)
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):
            self._loop.add_signal_handler(signal.SIGWINCH, self.changed)
        self.redraw()
        return self

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        if self._keys is not None:
            self._keys.close()
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):
            self._loop.remove_signal_handler(signal.SIGWINCH)
        if self._live is not None:
            self._live.stop()
            self._live = None
        for line, style in self._after:
            self.console.print(Text(line, style=style), soft_wrap=True)
        self._after = []

    # Drawing -------------------------------------------------------------------------------

    def changed(self) -> None:
        """Redraw soon (coalesced with other changes)."""
        if self._pending is not None:
            return
        wait = max(self._drawn_at + FRAME - time.monotonic(), 0.0)
        self._pending = self._loop.call_later(wait, self.redraw)

    def redraw(self) -> None:
        self._pending = None
        self._drawn_at = time.monotonic()
        if self._live is None:
            return
        width, height = self.console.size
        scene = self.scene
        scene.width, scene.height = width, height
        scene.clock_left = self.mirror.clock_left()
        scene.data = self.data.known(self.mirror.game) if self.data is not None else None
        scene.hint = self._hint_line()
        scene.overlay = self._overlay_lines(width, height - 3)
        if scene.typed.startswith("/") and len(scene.typed) > 1:
            self._live_filter(scene.typed[1:])
        elif self._filtering:
            self.show_filter(None)
        frame = Group(*render.full(scene))
        file = self.console.file
        file.write(SYNC_BEGIN)
        self._live.update(frame, refresh=True)
        file.write(SYNC_END)
        file.flush()

    def _hint_line(self) -> Text:
        warning = low_time(self.scene)
        if warning:
            return Text(warning, style="bold white on red")
        if self._notice is not None:
            return self._notice
        if self._prompt_rev != self.mirror.rev and self.mirror.info.get("state") == "playing":
            return Text("…", style="dim")  # the view moved on; its prompt comes in a moment
        suffix = "  (h help · q quit)"
        if len(self._prompt) + len(suffix) > self.scene.width:
            suffix = ""  # the prompt whole rather than cut (a command to copy, say)
        return Text(self._prompt + suffix, style="bold")

    def _overlay_lines(self, width: int, rows: int) -> list[Text] | None:
        if self._overlay is None:
            return None
        wrapped: list[Text] = []
        for paragraph in self._overlay:
            if not paragraph.plain:
                wrapped.append(Text(""))
                continue
            wrapped += list(paragraph.wrap(self.console, width))
        top = min(max(self._overlay_top, 0), max(len(wrapped) - rows, 0))
        self._overlay_top = top
        shown = wrapped[top : top + rows]
        if len(wrapped) > rows:
            more = f"lines {top + 1}-{top + len(shown)} of {len(wrapped)}: PgDn/PgUp"
            shown[-1] = Text(more, style="dim")
        return shown

    def _live_filter(self, wanted: str) -> None:
        needle = wanted.lower()
        scene = Scene(self.mirror)
        texts = [line.plain.lower() for line in choice_lines(scene)]
        indices = [i for i, t in enumerate(texts) if needle in t.split(" ", 1)[-1]]
        self.scene.shown = indices
        self.scene.filter_text = wanted
        self.shown = indices
        self._filtering = True

    # Keys ----------------------------------------------------------------------------------

    def _key(self, key: str) -> None:
        self._typed_at = time.monotonic()
        self._notice = None  # read: the prompt comes back
        scene = self.scene
        if key == "enter":
            line, scene.typed = scene.typed, ""
            self._notice = None
            self.lines.put_nowait(line)
        elif key == "backspace":
            scene.typed = scene.typed[:-1]
        elif key == "ctrl-u":
            scene.typed = ""
        elif key == "esc":
            scene.typed = ""
            if not self.dismiss():
                self.show_filter(None)
        elif key in ("pgdn", "down", "tab"):
            self.page(1)
        elif key in ("pgup", "up"):
            self.page(-1)
        elif key == "ctrl-l":
            self.console.clear()
        elif key in ("ctrl-d", "ctrl-c"):
            if not scene.typed:
                self.lines.put_nowait(None)
        elif len(key) == 1 and len(scene.typed) < 200:
            scene.typed += key
        self.changed()

    # The loop's calls ----------------------------------------------------------------------

    def log(self, rev: int, text: str) -> None:
        line = Text(f"[{rev}] ", style="dim")
        line.append(text)
        self.scene.log.append(line)
        del self.scene.log[:-LOG_LINES]

    def chat(self, text: Text) -> None:
        self.scene.chat.append(text)
        del self.scene.chat[:-LOG_LINES]
        self._notice = text  # on the hint line until the next key: a person sees it

    def message(self, text: str, kind: str = "info") -> None:
        style = {"notice": "bold yellow", "error": "bold red"}.get(kind, "bold")
        line = Text(printable(text), style=style)
        if kind != "info":
            self._notice = Text("! ", style=style).append_text(line)
        self.scene.log.append(Text("! ", style=style).append_text(line))
        del self.scene.log[:-LOG_LINES]
        self.changed()

    def notice(self, text: str) -> None:
        """For the session's connection notices."""
        self.message(text, "notice")

    def started(self) -> None:
        self.changed()

    def waiting(self, text: str, invite: str = "") -> None:
        """The room waits for players: how others join on the hint line, what is awaited
        above the seats."""
        self._prompt = invite or text
        self._prompt_rev = self.mirror.rev
        self.scene.invite = text if invite else ""
        self.changed()

    def ask(self, prompt: str, lone: bool = False) -> None:
        self._prompt = prompt
        self._prompt_rev = self.mirror.rev
        self._notice = None
        self.scene.page = 0
        self.show_filter(None)
        self.changed()

    def hint(self, text: str) -> None:
        self._prompt = text
        self._prompt_rev = self.mirror.rev
        self.changed()

    def show_filter(self, indices: list[int] | None, text: str = "") -> None:
        self._filtering = False
        self.shown = indices
        self.scene.shown = indices
        self.scene.filter_text = text
        self.scene.page = 0
        self.changed()

    def page(self, delta: int) -> None:
        if self._overlay is not None:
            self._overlay_top += delta * max(self.console.size[1] - 5, 1)
        else:
            self.scene.page = max(self.scene.page + delta, 0)
        self.changed()

    def keep(self, title: str, lines: list[Text]) -> None:
        self.scene.panel = (title, lines)
        self.changed()

    def dismiss(self) -> bool:
        """Close the help or the kept panel; False when neither is open."""
        if self._overlay is not None:
            self._overlay = None
        elif self.scene.panel is not None:
            self.scene.panel = None
        else:
            return False
        self.changed()
        return True

    def help(self, pages: list[Text]) -> None:
        self._overlay = pages
        self._overlay_top = 0
        self.changed()

    def tick(self) -> float | None:
        left = self.mirror.clock_left()
        view = self.mirror.view
        clock = view.get("clock") if isinstance(view, dict) else None
        if left is None or not isinstance(clock, dict) or self.mirror.over:
            return None
        running = clock.get("running")
        if not isinstance(running, int) or not 0 <= running < len(left):
            return None
        return 0.2 if left[running] < 10 else 1.0

    def typed_since(self, since: float) -> bool:
        return self._typed_at > since

    def finished(self, prompt: str, result: str) -> None:
        """The final scores, ``prompt`` on the hint line (the loop reads the lines typed);
        ``result`` is printed on leaving, after every match's played on this screen."""
        self._prompt = prompt
        self._prompt_rev = self.mirror.rev
        self._notice = None
        self.scene.shown = None
        self.after(result, "bold green")
        self.redraw()

    def switch(self, mirror: Mirror) -> None:
        """Show ``mirror``'s room from now on (a rematch moved us there): its board, seats and
        a new log; the chat goes on."""
        self.mirror = mirror
        scene = self.scene
        scene.mirror = mirror
        scene.log = []
        scene.typed = scene.filter_text = scene.invite = ""
        scene.page = 0
        scene.shown = self.shown = None
        scene.panel = self._overlay = None
        self._filtering = False
        self._prompt, self._prompt_rev = "", -1
        self.changed()

    def helping(self) -> bool:
        return self._overlay is not None

    def after(self, line: str, style: str = "") -> None:
        if self._after and self._after[-1][0] == line:
            return
        self._after.append((line, style))


def use_full_screen(plain: bool) -> bool:
    """The full screen unless asked for lines or not talking to a terminal both ways."""
    return not plain and sys.stdin.isatty() and sys.stdout.isatty()


__all__ = ["FullScreen", "use_full_screen"]
