"""Interactive play in a terminal: the view, the event log, numbered choices, a number to choose.

The loop waits for either a line typed by the player or a change of the room (a frame, a drop,
a resume). Whenever this seat must decide at a revision it has not yet asked about, it draws
the whole screen (board, players, numbered choices) and prints one prompt::

    Your choice 1-18 (rev 12; h for help) >

and sends ``act`` with that revision and the index (number - 1). Other players' moves appear
as event lines as their patches arrive. Every refusal is explained in words
(:func:`clients.errors.explain`): a stale revision prompts again from the new view. Lines typed
while it is not this seat's turn are answered, not queued, so an early keystroke never plays a
move the player has not seen.

stdin is read by a daemon thread (a blocking ``readline`` works the same on a terminal, a pty and
a pipe, and cannot leave the terminal in non-blocking mode); its lines reach the loop through an
asyncio queue, and end of input counts as ``quit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from clients import render
from clients.connection import ClientError, ConnectionLost, ServerError, Session
from clients.errors import explain
from clients.render.common import result_line, seats_table
from protocol.mirror import Mirror, Update

HELP = (
    "Type the number of a choice and Enter. Other commands: "
    "r redraw · s start the match (host: bots fill free seats) · say TEXT chat · q quit"
)


class LineReader:
    """Lines of a text stream, read in a daemon thread and handed to the event loop."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
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
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line.rstrip("\r\n"))


class Screen:
    """Everything ``play`` and ``watch`` print, on one rich console."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)

    def show(self, mirror: Mirror, *, choices: bool = True) -> None:
        self.console.print(render.screen(mirror, choices=choices))

    def line(self, text: str, style: str | None = None) -> None:
        self.console.print(Text(text, style=style or ""))

    def notice(self, text: str) -> None:
        self.line(f"! {text}", "bold yellow")

    def error(self, text: str) -> None:
        self.line(f"! {text}", "bold red")

    def events(self, mirror: Mirror, frame: dict[str, Any], update: Update) -> None:
        for event in update.events:
            line = render.event_line(mirror.game, event, mirror.info)
            self.line(f"  [{frame.get('rev')}] {line}", "dim")

    def chat(self, mirror: Mirror, frame: dict[str, Any]) -> None:
        sender = frame.get("from") or {}
        seat = sender.get("seat")
        who = f"P{seat + 1} " if isinstance(seat, int) else "spectator "
        self.line(f"  <{who}{sender.get('name', '')}> {frame.get('text', '')}", "cyan")


def follow(session: Session, mirror: Mirror, screen: Screen) -> None:
    """Print this room's events and chat as they come."""

    def on_frame(room: str, frame: dict[str, Any], update: Update) -> None:
        if room != mirror.room:
            return
        if frame.get("type") == "patch":
            screen.events(mirror, frame, update)
        elif frame.get("type") == "chat":
            screen.chat(mirror, frame)

    session.listeners.append(on_frame)


class Player:
    """The interactive loop for one seat of one room."""

    def __init__(
        self,
        session: Session,
        mirror: Mirror,
        screen: Screen,
        lines: LineReader,
        *,
        host: bool = False,
        auto_start: bool = False,
    ) -> None:
        self.session = session
        self.mirror = mirror
        self.screen = screen
        self.lines = lines
        self.host = host
        self.auto_start = auto_start
        self.prompted: int | None = None
        self.shown_info: Any = None
        self.started = False

    async def run(self) -> int:
        """Play until the match ends (0), the player quits (0) or the server is lost (1)."""
        follow(self.session, self.mirror, self.screen)
        line_task: asyncio.Task[str | None] | None = None
        try:
            while True:
                seen = self.session.version
                if self.session.gone is not None:
                    self.screen.error(explain(self.session.gone))
                    return 1
                if self.mirror.over:
                    self._finish()
                    return 0
                await self._step()
                if line_task is None:
                    line_task = asyncio.ensure_future(self.lines.queue.get())
                change = asyncio.ensure_future(self.session.changed(seen))
                await asyncio.wait({line_task, change}, return_when=asyncio.FIRST_COMPLETED)
                if not change.done():
                    change.cancel()
                elif not change.cancelled():
                    change.exception()  # a lost session: the loop's next turn reports it
                if line_task.done():
                    line = line_task.result()
                    line_task = None
                    if line is None or line.strip().lower() in ("q", "quit", "exit"):
                        await self._quit()
                        return 0
                    await self._command(line.strip())
        finally:
            if line_task is not None:
                line_task.cancel()

    async def _step(self) -> None:
        """Show what changed: the seats while waiting to start, the screen when it is our turn."""
        state = self.mirror.info.get("state")
        if state == "open":
            seats = self.mirror.info.get("seats")
            if seats != self.shown_info:
                self.shown_info = seats
                self.screen.console.print(seats_table(self.mirror.info))
                if self.host:
                    self.screen.line(
                        "Waiting for players; type s to start now (bots fill the free seats)"
                    )
                else:
                    self.screen.line("Waiting for players; the match starts when the room is full")
            if self.auto_start and not self.started and self._full():
                await self._start()
            return
        if self.mirror.choices and self.prompted != self.mirror.rev:
            self.prompted = self.mirror.rev
            self.screen.show(self.mirror)
            self._prompt()

    def _full(self) -> bool:
        seats = self.mirror.info.get("seats") or []
        return bool(seats) and all(isinstance(s, dict) and s.get("taken") for s in seats)

    def _prompt(self) -> None:
        n = len(self.mirror.choices)
        self.screen.console.print(
            Text(f"Your choice 1-{n} (rev {self.mirror.rev}; h for help) > ", style="bold"),
            end="",
        )

    async def _command(self, line: str) -> None:
        if not line:
            if self.mirror.choices:
                self._prompt()
            return
        word = line.split()[0].lower()
        if line.isdigit():
            await self._choose(int(line))
        elif word in ("h", "help", "?"):
            self.screen.line(HELP)
            self.prompted = None
        elif word in ("r", "redraw"):
            self.screen.show(self.mirror)
            self.prompted = None
        elif word in ("s", "start"):
            await self._start()
        elif word == "say":
            await self._say(line[3:].strip())
        else:
            self.screen.error(f"{line!r} is not a choice number or a command. {HELP}")
            if self.mirror.choices:
                self._prompt()

    async def _choose(self, number: int) -> None:
        choices = self.mirror.choices
        if not choices:
            whose = (self.mirror.shared.get("turn") or {}).get("seat")
            who = f"P{whose + 1}" if isinstance(whose, int) else "nobody"
            self.screen.error(f"Not your turn: {who} must decide now. Please wait.")
            return
        if not 1 <= number <= len(choices):
            self.screen.error(f"Choose a number from 1 to {len(choices)}.")
            self._prompt()
            return
        rev = self.mirror.rev
        frame = {"type": "act", "room": self.mirror.room, "rev": rev, "choice": number - 1}
        try:
            await self.session.request(frame)
        except ServerError as exc:
            self.screen.error(explain(exc))
            self.prompted = None
            if exc.code == "stale_rev":
                await self.session.sync(self.mirror.room)
        except ConnectionLost as exc:
            self.screen.error(f"{explain(exc)} The view will tell whether the move was taken.")
            self.prompted = None

    async def _start(self) -> None:
        self.started = True
        frame = {"type": "start", "room": self.mirror.room, "bots": self.host}
        try:
            await self.session.request(frame)
        except ClientError as exc:
            self.screen.error(explain(exc))

    async def _say(self, text: str) -> None:
        if not text:
            self.screen.error("Usage: say TEXT")
            return
        try:
            await self.session.request({"type": "chat", "room": self.mirror.room, "text": text})
        except ClientError as exc:
            self.screen.error(explain(exc))

    async def _quit(self) -> None:
        mirror = self.mirror
        if mirror.token and mirror.info.get("state") == "playing":
            self.screen.line(
                f"You keep your seat; come back with: oasis join {mirror.room} "
                f"--token={mirror.token}"
            )
        with contextlib.suppress(ClientError):
            await self.session.request({"type": "leave", "room": mirror.room}, patience=5)
        self.screen.line("Bye.")

    def _finish(self) -> None:
        result = self.mirror.result or {}
        self.screen.show(self.mirror, choices=False)
        self.screen.line(result_line(result, self.mirror.info), "bold green")


def announce_seat(screen: Screen, mirror: Mirror) -> None:
    """Say which seat we hold and how to come back to it."""
    seat = mirror.seat
    screen.line(f"Room {mirror.room} ({mirror.game}): you are P{(seat or 0) + 1}.", "bold")
    if mirror.token:
        screen.line(
            f"To resume after a crash: oasis join {mirror.room} --token={mirror.token}", "dim"
        )
