"""Interactive play: the loop for one seat of one room, in the full screen or the line mode.

The loop waits for whichever comes first: a line the player typed, a change of the room (a
frame, a drop, a resume), a Ctrl-C, or a timer (a lone choice about to be sent, the clock to
redraw). Whenever this seat must decide at a revision it has not yet asked about, it asks (the
full screen redraws with the prompt; the line mode prints the board and ``Your choice 1-18 (rev
12; h for help) >``). What the player types is read by :func:`clients.intents.interpret` and
carried out here: a choice is sent as ``act`` with that revision and its index; every refusal
is explained in words (:func:`clients.errors.explain`), and a stale revision asks again from the
new view. Lines typed while it is not this seat's turn are answered, not queued, so an early
keystroke never plays a move the player has not seen.

Fewer forced keystrokes: a decision with a single legal choice is shown with that choice and
sent by itself after ``auto_delay`` seconds (any key stops it; ``--no-auto`` turns it off);
a :class:`~clients.intents.Plan` (goods into a souk) sends its next step at once at each
decision that offers it, and ends at the first that does not.

Who is really playing (:mod:`clients.notices`): the loop compares each ``room`` frame's seats
and each view's clock with the previous ones and says when a player dropped, a bot took a seat
over, a player came back, or a clock ran out. Yspahan's week scoring is kept on screen until
the player dismisses it.

Leaving: ``q``, Ctrl-C or the end of input leave the room (``leave``), and print on one line
the command that comes back to the seat, with a sentence on what happens to it meanwhile.

The end of a match (the final screen, ``p`` to play again, a spectator following the players)
is :mod:`clients.after_match`'s. When a rematch (SPEC section 9) moves us, the loop goes on in
the new room: the screen switches to it, its seat and token (the resume command printed on
leaving is the new room's), a notice says so, and the one who asked is the new room's host
(``s`` starts it with bots when a player who had left leaves a seat free).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any, Protocol

from rich.text import Text

from clients import render
from clients.after_match import FOLLOW_PAUSE, AfterMatch
from clients.choices import label
from clients.connection import DEFAULT_SERVER, ClientError, ConnectionLost, ServerError, Session
from clients.errors import explain
from clients.gamedata import GameData
from clients.hexgrid import Grid
from clients.intents import HELP, Choose, Command, Filter, Intent, Plan, Problem, interpret
from clients.notices import (
    chat_text,
    clock_changes,
    leaving_lines,
    new_match,
    seat_changes,
    server_option,
    week_scoring,
)
from clients.printable import printable
from clients.render.common import seat_label
from clients.render.scene import prompt_of
from protocol.mirror import Mirror, Update

AUTO_DELAY = 1.0
"""Seconds a lone choice stays on screen before it is sent by itself."""


class UI(Protocol):
    """What the loop needs of a screen: the full screen (:mod:`.fullscreen`) or lines
    (:mod:`.plain`). ``finished`` shows the final screen with a prompt (and keeps the final
    scores' line to print), ``switch`` another room (a rematch moved us), ``helping`` says
    whether the help is open (Enter closes it)."""

    @property
    def lines(self) -> asyncio.Queue[str | None]: ...

    shown: list[int] | None
    """The choices a filter shows (None: all)."""

    def log(self, rev: int, text: str) -> None: ...
    def chat(self, text: Text) -> None: ...
    def message(self, text: str, kind: str = "info") -> None: ...
    def changed(self) -> None: ...
    def started(self) -> None: ...
    def waiting(self, text: str, invite: str = "") -> None: ...
    def ask(self, prompt: str, lone: bool = False) -> None: ...
    def hint(self, text: str) -> None: ...
    def show_filter(self, indices: list[int] | None, text: str = "") -> None: ...
    def page(self, delta: int) -> None: ...
    def keep(self, title: str, lines: list[Text]) -> None: ...
    def dismiss(self) -> bool: ...
    def help(self, pages: list[Text]) -> None: ...
    def tick(self) -> float | None: ...
    def typed_since(self, since: float) -> bool: ...
    def finished(self, prompt: str, result: str) -> None: ...
    def switch(self, mirror: Mirror) -> None: ...
    def helping(self) -> bool: ...
    def after(self, line: str, style: str = "") -> None: ...


class Player:
    """The interactive loop for one seat of one room (or a spectator's, without choices)."""

    def __init__(
        self,
        session: Session,
        mirror: Mirror,
        ui: UI,
        *,
        host: bool = False,
        auto_start: bool = False,
        auto: bool = True,
        auto_delay: float = AUTO_DELAY,
        server: str = DEFAULT_SERVER,
        data: GameData | None = None,
        follow_pause: float = FOLLOW_PAUSE,
    ) -> None:
        self.session = session
        self.mirror = mirror
        self.ui = ui
        self.host = host
        self.auto_start = auto_start
        self.auto = auto
        self.auto_delay = auto_delay
        self.server = server
        self.data = data or GameData(server)
        self.asked: int | None = None
        self.auto_rev: int | None = None
        self.undid = False
        """Our last request was an undo: the decision it is back at is never sent by itself,
        even with one choice (else taking back a forced step would redo it at once)."""
        self.auto_at = 0.0
        self.plan: Plan | None = None
        self.started = False
        self.shown_open: Any = None
        self.shown_playing = False
        self.quitting = asyncio.Event()
        self.after_match = AfterMatch(session, ui, self.quitting, follow_pause=follow_pause)
        self._info = dict(mirror.info)
        self._clock = self._clock_part()

    # The loop ------------------------------------------------------------------------------

    async def run(self) -> int:
        """Play until the match ends (0), the player quits (0) or the server is lost (1)."""
        self.session.listeners.append(self._on_frame)
        self._info = dict(self.mirror.info)
        self._clock = self._clock_part()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self.quitting.set)
        line_task: asyncio.Task[str | None] | None = None
        quit_task = asyncio.ensure_future(self.quitting.wait())
        data_task = asyncio.ensure_future(self._fetch_data())
        try:
            while True:
                seen = self.session.version
                if self.session.gone is not None:
                    self.ui.message(explain(self.session.gone), "error")
                    self.ui.after(explain(self.session.gone))
                    return 1
                moved = self.after_match.moved(self.mirror)
                if moved is not None:
                    self._follow(moved)
                    continue
                if self.mirror.over:
                    if line_task is not None:
                        line_task.cancel()  # the end of the match reads the lines from now on
                        line_task = None
                    if await self.after_match.finish(self.mirror, self._after_the_match):
                        return 0
                    continue
                await self._step()
                if self.mirror.over or self.session.version != seen:
                    continue
                if line_task is None:
                    line_task = asyncio.ensure_future(self.ui.lines.get())
                change = asyncio.ensure_future(self.session.changed(seen))
                await asyncio.wait(
                    {line_task, change, quit_task},
                    timeout=self._timeout(),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if not change.done():
                    change.cancel()
                elif not change.cancelled():
                    change.exception()  # a lost session: the loop's next turn reports it
                if quit_task.done():
                    await self._quit()
                    return 0
                if line_task.done():
                    line = line_task.result()
                    line_task = None
                    if line is None:
                        await self._quit()
                        return 0
                    if await self._line(line):
                        return 0
                await self._timers()
        finally:
            with contextlib.suppress(ValueError):
                self.session.listeners.remove(self._on_frame)
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
            quit_task.cancel()
            data_task.cancel()
            if line_task is not None:
                line_task.cancel()

    async def _fetch_data(self) -> None:
        """The game's static data (``GET /games/<name>``), fetched once at the start: the
        screen draws the souks' points, the steward's path and the cards' effects from it."""
        if self.mirror.game:
            await self.data.get(self.mirror.game)
            self.ui.changed()

    def _timeout(self) -> float | None:
        waits = []
        if self.auto_rev is not None:
            waits.append(max(self.auto_at - time.monotonic(), 0.0))
        tick = self.ui.tick()
        if tick is not None:
            waits.append(tick)
        return min(waits) if waits else None

    async def _timers(self) -> None:
        if self.ui.tick() is not None:
            self.ui.changed()
        if self.auto_rev is None:
            return
        if self.auto_rev != self.mirror.rev or len(self.mirror.choices) != 1:
            self.auto_rev = None
            return
        if self.ui.typed_since(self.auto_at - self.auto_delay):
            self.auto_rev = None
            self.ui.message(
                "Sending it by itself stopped: press Enter (or 1) to choose it.", "notice"
            )
            return
        if time.monotonic() >= self.auto_at:
            self.auto_rev = None
            await self._choose(0)

    async def _step(self) -> None:
        """Show what changed: the seats while waiting to start, the prompt at our decisions."""
        mirror = self.mirror
        state = mirror.info.get("state")
        if state == "open":
            seats = mirror.info.get("seats")
            if seats != self.shown_open:
                self.shown_open = seats
                room = printable(mirror.room)
                invite = f"Others join with: oasis join {room}{server_option(self.server)}"
                if self.host:
                    self.ui.waiting(
                        "Waiting for players; type s to start now (bots fill the free seats)",
                        invite,
                    )
                else:
                    self.ui.waiting(
                        "Waiting for players; the match starts when the room is full", invite
                    )
            if self.auto_start and not self.started and self._full():
                await self._start()
            return
        if state == "playing" and not self.shown_playing:
            self.shown_playing = True
            self.ui.started()
        choices = mirror.choices if state == "playing" else []
        if not choices:
            if self.asked != -mirror.rev - 2:
                self.asked = -mirror.rev - 2
                self._waiting_hint()
            return
        if self.asked == mirror.rev:
            return
        self.asked = mirror.rev
        self.ui.show_filter(None)
        if self.plan is not None and await self._plan_step():
            return
        if len(choices) == 1 and self.undid:
            text = label(mirror.game, choices[0], self._grid())
            self.ui.ask(f"Only one choice: {text}. Enter takes it; u takes back the step before.")
            return
        if len(choices) == 1 and self.auto:
            self.auto_rev = mirror.rev
            self.auto_at = time.monotonic() + self.auto_delay
            text = label(mirror.game, choices[0], self._grid())
            self.ui.ask(
                f"Only one choice: {text}. Sent by itself in a moment (a key stops it).", lone=True
            )
            return
        self.ui.ask(prompt_of_mirror(mirror))

    def _waiting_hint(self) -> None:
        turn = self.mirror.shared.get("turn")
        if not isinstance(turn, dict):
            return
        who = seat_label(self.mirror.info, turn.get("seat"))
        what = prompt_of_mirror(self.mirror).lower()
        self.ui.hint(f"Waiting for {who} ({what}); type say TEXT to chat, h for help")

    def _full(self) -> bool:
        seats = self.mirror.info.get("seats") or []
        return bool(seats) and all(isinstance(s, dict) and s.get("taken") for s in seats)

    def _grid(self) -> Grid | None:
        if self.mirror.game != "ishtar":
            return None
        game = self.mirror.shared.get("game")
        return Grid.of_terrain(game.get("terrain")) if isinstance(game, dict) else None

    # Lines ---------------------------------------------------------------------------------

    async def _line(self, line: str) -> bool:
        """Carry out one typed line; True when the player leaves."""
        intent = interpret(line, self.mirror, self._grid())
        self.auto_rev = None
        return await self._carry_out(intent)

    async def _carry_out(self, intent: Intent) -> bool:
        ui = self.ui
        if isinstance(intent, Choose):
            await self._choose(intent.index)
        elif isinstance(intent, Filter):
            ui.show_filter(list(intent.indices), intent.text)
        elif isinstance(intent, Plan):
            self.plan = intent
            if not await self._plan_step():
                ui.message("That cannot be done now.", "error")
        elif isinstance(intent, Problem):
            ui.message(intent.text, "error")
        elif isinstance(intent, Command):
            return await self._command(intent)
        return False

    async def _command(self, command: Command) -> bool:
        ui = self.ui
        name = command.name
        if name == "quit":
            await self._quit()
            return True
        if name == "help":
            ui.help(await self._reference())
        elif name == "redraw":
            self.asked = None
            ui.changed()
        elif name == "start":
            await self._start()
        elif name == "undo":
            await self._undo()
        elif name == "again":
            await self.after_match.play_again(self.mirror)
        elif name == "say":
            await self._say(command.argument)
        elif name in ("next", "previous"):
            ui.page(1 if name == "next" else -1)
        elif name == "clear":
            ui.show_filter(None)
        elif name == "enter":
            await self._enter()
        return False

    async def _enter(self) -> None:
        """An empty line: close what is open, else take the only choice shown."""
        if self.ui.dismiss():
            return
        shown = self.ui.shown
        choices = self.mirror.choices if self.mirror.info.get("state") == "playing" else []
        if shown is not None and len(shown) == 1:
            await self._choose(shown[0])
        elif shown is not None:
            self.ui.show_filter(None)
        elif len(choices) == 1:
            await self._choose(0)
        elif choices:
            self.asked = None

    async def _reference(self) -> list[Text]:
        from clients.reference import pages

        data = await self.data.get(self.mirror.game)
        return pages(self.mirror, data, self.data.problem)

    async def _plan_step(self) -> bool:
        """Send the plan's next step if the decision offers it; False (plan over) otherwise."""
        step = self.plan.step(self.mirror.choices) if self.plan is not None else None
        self.plan = step[1] if step is not None else None
        if step is not None:
            await self._choose(step[0])
        return step is not None

    async def _choose(self, index: int) -> None:
        choices = self.mirror.choices
        if not 0 <= index < len(choices):
            self.ui.message("That choice is gone; choose again.", "error")
            self.asked = None
            return
        rev = self.mirror.rev
        self.undid = False
        frame = {"type": "act", "room": self.mirror.room, "rev": rev, "choice": index}
        try:
            await self.session.request(frame)
        except ServerError as exc:
            self.ui.message(explain(exc), "error")
            self.asked = None
            self.plan = None
            if exc.code == "stale_rev":
                await self.session.sync(self.mirror.room)
        except ConnectionLost as exc:
            self.ui.message(f"{explain(exc)} The view will tell whether the move was taken.")
            self.asked = None

    async def _undo(self) -> None:
        """Take back the last step of this turn (SPEC section 24); the server says why not."""
        own = self.mirror.own or {}
        if not own.get("undo"):
            self.ui.message("Nothing to take back now.", "error")
            return
        frame = {"type": "undo", "room": self.mirror.room, "rev": self.mirror.rev}
        self.undid = True
        try:
            await self.session.request(frame)
        except ServerError as exc:
            self.undid = False
            self.ui.message(explain(exc), "error")
            if exc.code == "stale_rev":
                await self.session.sync(self.mirror.room)
        except ConnectionLost as exc:
            self.ui.message(f"{explain(exc)} The view will tell whether the step was taken back.")
        self.asked = None
        self.plan = None

    async def _start(self) -> None:
        self.started = True
        frame = {"type": "start", "room": self.mirror.room, "bots": self.host}
        try:
            await self.session.request(frame)
        except ClientError as exc:
            self.ui.message(explain(exc), "error")

    async def _say(self, text: str) -> None:
        if not text:
            self.ui.message("Usage: say TEXT", "error")
            return
        try:
            await self.session.request({"type": "chat", "room": self.mirror.room, "text": text})
        except ClientError as exc:
            self.ui.message(explain(exc), "error")

    # Leaving -------------------------------------------------------------------------------

    async def _quit(self) -> None:
        mirror = self.mirror
        with contextlib.suppress(ClientError):
            await self.session.request({"type": "leave", "room": mirror.room}, patience=5)
        for line in leaving_lines(mirror, self.server):
            self.ui.after(line)
        self.ui.after("Bye.")

    # The end of a match, and the next one -----------------------------------------------------

    async def _after_the_match(self, line: str) -> bool:
        """Carry out a line typed at the final screen; True when the player leaves."""
        intent = interpret(line, self.mirror, self._grid())
        if not isinstance(intent, Command) or intent.name in ("start", "undo"):
            if self.after_match.rematch(self.mirror) is not None:
                again = "p goes to the new match, "
            else:
                again = "p plays again, " if self.mirror.seat is not None else ""
            self.ui.message(f"{line.strip()!r}: the match is over; {again}Enter leaves.", "error")
        elif intent.name == "enter" and self.ui.helping():
            self.ui.dismiss()
        elif intent.name in ("enter", "quit"):
            return True
        else:
            await self._command(intent)
        return False

    def _follow(self, mirror: Mirror) -> None:
        """Go on in ``mirror``'s room, where a rematch moved us: its screen, seat and token;
        the host's part (start with bots) when we asked for it."""
        asked = self.after_match.followed(self.mirror.room, mirror.room)
        self.mirror = mirror
        self.host = self.auto_start = asked
        self.asked = self.auto_rev = self.plan = None
        self.undid = self.started = self.shown_playing = False
        self.shown_open = None
        self._info = dict(mirror.info)
        self._clock = self._clock_part()
        self.ui.switch(mirror)
        self.ui.message(new_match(mirror.room, mirror.info, mirror.seat), "notice")
        _announce_token(self.ui, mirror, self.server)

    # Frames --------------------------------------------------------------------------------

    def _on_frame(self, room: str, frame: dict[str, Any], update: Update) -> None:
        if room != self.mirror.room:
            return
        kind = frame.get("type")
        mirror = self.mirror
        me = mirror.seat
        if kind == "patch":
            for event in update.events:
                self.ui.log(
                    int(frame.get("rev", -1)),
                    render.event_line(mirror.game, event, mirror.info, mirror.view),
                )
            clock = self._clock_part()
            for text in clock_changes(self._clock, clock, mirror.info, me):
                self.ui.message(text, "notice")
            self._clock = clock
            scored = week_scoring(update.events, mirror.info) if mirror.game == "yspahan" else None
            if scored is not None:
                self.ui.keep(scored[0], [Text(line) for line in scored[1]])
        elif kind in ("joined", "state"):
            self._clock = self._clock_part()
        elif kind == "room":
            for text in seat_changes(self._info, mirror.info, me):
                self.ui.message(text, "notice")
            self._info = dict(mirror.info)
        elif kind == "chat":
            self.ui.chat(chat_text(frame))
        self.ui.changed()

    def _clock_part(self) -> dict[str, Any] | None:
        view = self.mirror.view
        clock = view.get("clock") if isinstance(view, dict) else None
        return clock if isinstance(clock, dict) else None


def prompt_of_mirror(mirror: Mirror) -> str:
    from clients.render.scene import Scene

    return prompt_of(Scene(mirror))


def announce_seat(ui: UI, mirror: Mirror, server: str = DEFAULT_SERVER) -> None:
    """Say which seat we hold and how to come back to it."""
    seat = mirror.seat
    ui.message(
        f"Room {printable(mirror.room)} ({printable(mirror.game)}): you are P{(seat or 0) + 1}."
    )
    _announce_token(ui, mirror, server)


def _announce_token(ui: UI, mirror: Mirror, server: str) -> None:
    if mirror.token:
        ui.message(
            f"To resume after a crash: oasis join {printable(mirror.room)}"
            f" --token={printable(mirror.token)}{server_option(server)}"
        )


__all__ = [
    "AUTO_DELAY",
    "HELP",
    "UI",
    "Player",
    "announce_seat",
]
