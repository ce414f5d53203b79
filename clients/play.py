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
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any, Protocol

from rich.text import Text

from clients import render
from clients.choices import label
from clients.connection import DEFAULT_SERVER, ClientError, ConnectionLost, ServerError, Session
from clients.errors import explain
from clients.gamedata import GameData
from clients.hexgrid import Grid
from clients.intents import HELP, Choose, Command, Filter, Intent, Plan, Problem, interpret
from clients.notices import clock_changes, seat_changes
from clients.printable import printable
from clients.render.common import result_line, seat_label
from clients.render.scene import prompt_of
from protocol.mirror import Mirror, Update

AUTO_DELAY = 1.0
"""Seconds a lone choice stays on screen before it is sent by itself."""


class UI(Protocol):
    """What the loop needs of a screen: the full screen (:mod:`.fullscreen`) or lines
    (:mod:`.plain`)."""

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
    async def finish(self) -> None: ...
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
                if self.mirror.over:
                    if line_task is not None:
                        line_task.cancel()  # the screen reads its own keys from now on
                        line_task = None
                    await self._finish()
                    return 0
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
        plan = self.plan
        if plan is None:
            return False
        choices = self.mirror.choices
        wanted: dict[str, Any] | None = plan.steps[0] if plan.steps else None
        index = None
        if wanted is not None:
            index = next(
                (i for i, c in enumerate(choices) if all(c.get(k) == v for k, v in wanted.items())),
                None,
            )
        if index is None and plan.fill is not None:
            index = next(
                (
                    i
                    for i, c in enumerate(choices)
                    if c.get("kind") == "place"
                    and str(c.get("shop", "")).startswith(plan.fill + ".")
                ),
                None,
            )
        if index is None:
            self.plan = None
            return False
        self.plan = Plan(plan.steps[1:], plan.fill) if plan.steps[1:] or plan.fill else None
        await self._choose(index)
        return True

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

    async def _finish(self) -> None:
        """The final screen until the player leaves it (Enter, q, Ctrl-C), then the scores."""
        finished = asyncio.ensure_future(self.ui.finish())
        interrupted = asyncio.ensure_future(self.quitting.wait())
        try:
            await asyncio.wait({finished, interrupted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            finished.cancel()
            interrupted.cancel()
        self.ui.after(result_line(self.mirror.result or {}, self.mirror.info), "bold green")

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
            if mirror.game == "yspahan":
                self._week_scoring(update.events)
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

    def _week_scoring(self, events: list[dict[str, Any]]) -> None:
        ends = [e for e in events if e.get("kind") == "week_end"]
        if not ends:
            return
        cut = events.index(ends[-1])
        start = max(
            (i for i, e in enumerate(events[:cut]) if e.get("kind") == "day_end"), default=0
        )
        scored: dict[int, list[str]] = {}
        for event in events[start:cut]:
            if event.get("kind") == "score" and type(event.get("seat")) is int:
                reason = printable(event.get("reason") or event.get("category") or "")
                if event.get("category") == "bazaar":  # a souk scored twice: say why
                    reason = f"Bazaar {reason}"
                scored.setdefault(event["seat"], []).append(f"{event.get('points')} ({reason})")
        lines = []
        for seat in sorted(scored):
            total = sum(int(p.split()[0]) for p in scored[seat] if p.split()[0].isdigit())
            lines.append(
                Text(
                    f"{seat_label(self.mirror.info, seat)}: +{total} VP = {', '.join(scored[seat])}"
                )
            )
        if not lines:
            lines = [Text("nobody scored this week")]
        self.ui.keep(f"Week {ends[-1].get('week')} scoring", lines)


def prompt_of_mirror(mirror: Mirror) -> str:
    from clients.render.scene import Scene

    return prompt_of(Scene(mirror))


def chat_text(frame: dict[str, Any]) -> Text:
    sender = frame.get("from") or {}
    seat = sender.get("seat")
    who = f"P{seat + 1} " if isinstance(seat, int) else "spectator "
    text = Text(f"<{who}{printable(sender.get('name', ''))}> ", style="bold cyan")
    text.append(printable(frame.get("text", "")))
    return text


def server_option(server: str) -> str:
    """`` --server URL`` when it is not the default, for commands printed to copy."""
    plain = server.rstrip("/")
    return "" if plain == DEFAULT_SERVER else f" --server {printable(server)}"


def leaving_lines(mirror: Mirror, server: str) -> list[str]:
    """What happens to the seat, and the one-line command that comes back to it."""
    room = printable(mirror.room)
    if mirror.spectator:
        return [
            f"You stopped watching room {room}; watch again with: oasis watch {room}"
            f"{server_option(server)}"
        ]
    state = mirror.info.get("state")
    if state == "open":
        return [f"You left room {room} before the match started: your seat is free again."]
    if not mirror.token or state != "playing":
        return []
    bots = any(
        isinstance(s, dict) and s.get("bot") and s.get("seat") != mirror.seat
        for s in mirror.info.get("seats") or []
    )
    seat = f"P{(mirror.seat or 0) + 1}"
    what = (
        "the match goes on: after the server's grace period (a minute by default) a bot plays"
        " your seat"
    )
    what += " and finishes the match for you" if bots else " until you come back"
    return [
        f"You keep your seat {seat} in room {room}; {what}.",
        f"Come back with: oasis join {room} --token={printable(mirror.token)}"
        f"{server_option(server)}",
    ]


def announce_seat(ui: UI, mirror: Mirror, server: str = DEFAULT_SERVER) -> None:
    """Say which seat we hold and how to come back to it."""
    seat = mirror.seat
    ui.message(
        f"Room {printable(mirror.room)} ({printable(mirror.game)}): you are P{(seat or 0) + 1}."
    )
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
    "chat_text",
    "leaving_lines",
    "server_option",
]
