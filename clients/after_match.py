"""The end of a match and the next one: the final screen, play again, follow the rematch.

The final screen stays until the player leaves it (Enter, ``q``, Ctrl-C) or plays again: ``p``
asks for a rematch (SPEC section 9), the next match with the same players in a new room.
Whoever asked, the server moves every member (a spectator too) into the new room
(:attr:`clients.connection.Session.moves`); :meth:`AfterMatch.moved` finds it, and the play loop
(:class:`clients.play.Player`) goes on there.

Who was not moved sees the new room in the finished room's ``info.rematch``, and the final
screen says "The players went on to a new match: room X". A player who had left and came back
(its seat there is free) goes on with ``p``, never by itself; a spectator of a room with
``spectator_delay`` (the server leaves it where its late feed is) follows by itself
:data:`FOLLOW_PAUSE` seconds after its feed showed the end, long enough to read the final
scores, or at once with ``p``.

:class:`AfterMatch` is the play loop's component for all this, one per loop: it keeps what
outlives a room (the rematch we asked for, the room a rematch moved us into) and is handed the
room's mirror at each call. What a line typed at the final screen means stays the loop's to
say (:meth:`AfterMatch.finish` hands each line back to it).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from clients.connection import ClientError, Session
from clients.errors import explain
from clients.printable import printable
from clients.render.common import result_line
from protocol.mirror import Mirror

OVER = "The match is over: press Enter to leave"
OVER_AGAIN = "The match is over: p to play again, or press Enter to leave"
"""The final screen's prompt (a seat's: a spectator cannot ask for a rematch, it follows one)."""
WENT_ON = "The players went on to a new match: room {room}"
"""The final screen's prompt once the finished room names a rematch we were not moved into."""
FOLLOW_PAUSE = 10.0
"""Seconds a spectator's final screen stays before it follows the players to their rematch."""


class FinalScreen(Protocol):
    """What the end of a match needs of the loop's screen (any :class:`clients.play.UI`)."""

    @property
    def lines(self) -> asyncio.Queue[str | None]: ...

    def message(self, text: str, kind: str = "info") -> None: ...
    def finished(self, prompt: str, result: str) -> None: ...


class AfterMatch:
    """The end of a match and the rematch after it, for the play loop of one session."""

    def __init__(
        self,
        session: Session,
        ui: FinalScreen,
        quitting: asyncio.Event,
        *,
        follow_pause: float = FOLLOW_PAUSE,
    ) -> None:
        self.session = session
        self.ui = ui
        self.quitting = quitting
        self.follow_pause = follow_pause
        self.again: str | None = None
        """The finished room whose rematch we asked for (we are the new room's host)."""
        self.moved_in: str | None = None
        """The room a rematch moved us into (a ``p`` typed late there is no mistake)."""

    async def finish(self, mirror: Mirror, on_line: Callable[[str], Awaitable[bool]]) -> bool:
        """The final screen until the player leaves it (True: Enter, q, Ctrl-C, the end of
        input) or goes on in a rematch (False: the loop follows it): moved there by the server,
        or to the one the finished room names (a spectator after :attr:`follow_pause`, a player
        on ``p``). ``on_line`` carries out a typed line; True when the player leaves."""
        result = result_line(mirror.result or {}, mirror.info)
        ended = time.monotonic()
        shown: tuple[str | None] | None = None  # the rematch the prompt names, once shown
        loop = asyncio.get_running_loop()
        interrupted = asyncio.ensure_future(self.quitting.wait())
        line_task: asyncio.Future[str | None] = asyncio.ensure_future(self.ui.lines.get())
        change: asyncio.Future[None] = loop.create_future()
        seen = -1
        follow_at: float | None = None  # when a spectator follows the rematch the room names
        tried = False
        try:
            while True:
                if self.moved(mirror) is not None:
                    return False
                rematch = self.rematch(mirror)
                if rematch is not None and mirror.seat is None and follow_at is None:
                    follow_at = max(ended + self.follow_pause, time.monotonic())
                if shown != (rematch,):
                    shown = (rematch,)
                    left = (follow_at or 0.0) - time.monotonic()
                    self.ui.finished(_over_prompt(mirror, rematch, left), result)
                if follow_at is not None and not tried and time.monotonic() >= follow_at:
                    tried = True  # (once: a failure is told, and the final screen stays)
                    await self._go_on(mirror)
                    continue
                if self.session.version != seen and self.session.gone is None:
                    seen = self.session.version
                    change.cancel()
                    change = asyncio.ensure_future(self.session.changed(seen))
                waits: set[asyncio.Future[Any]] = {line_task, change, interrupted}
                timeout = None
                if follow_at is not None and not tried:
                    timeout = max(follow_at - time.monotonic(), 0.0)
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if change.done() and not change.cancelled() and change.exception() is not None:
                    # The server is gone (a notice said so): no rematch, the scores stay.
                    change = loop.create_future()
                if interrupted.done():
                    return True
                if line_task.done():
                    line = line_task.result()
                    if line is None or await on_line(line):
                        return True
                    line_task = asyncio.ensure_future(self.ui.lines.get())
        finally:
            for task in (change, interrupted, line_task):
                task.cancel()

    async def play_again(self, mirror: Mirror) -> None:
        """``p``: the next match with the same players (a rematch, SPEC section 9). The server
        moves us into it whoever asked; the loop follows that move (:meth:`moved`). Where the
        finished room names a rematch we were not moved into, ``p`` goes there."""
        if self.rematch(mirror) is not None:
            await self._go_on(mirror)
            return
        if mirror.seat is None:
            self.ui.message("Only players ask to play again; spectators follow them.", "error")
            return
        if mirror.room == self.moved_in and not mirror.over:
            room = printable(mirror.room)
            self.ui.message(f"This is the new match already: room {room}.", "notice")
            return
        if not mirror.over:
            self.ui.message("The match is not over yet: p plays again once it is.", "error")
            return
        self.ui.message("Asking for a new match with the same players…", "notice")
        self.again = mirror.room
        try:
            await self.session.rematch(mirror.room)
        except ClientError as exc:
            self.again = None
            self.ui.message(explain(exc), "error")

    @staticmethod
    def rematch(mirror: Mirror) -> str | None:
        """The rematch this finished room names (``info.rematch``), once its end is shown."""
        rematch = mirror.info.get("rematch")
        return rematch if isinstance(rematch, str) and mirror.over else None

    def moved(self, mirror: Mirror) -> Mirror | None:
        """The room a rematch moved us into from this one (SPEC section 9), if it did."""
        room, moves = mirror.room, self.session.moves
        while room in moves:
            room = moves[room]
        return self.session.rooms.get(room) if room != mirror.room else None

    def followed(self, old: str, new: str) -> bool:
        """Note that a rematch moved us from room ``old`` into room ``new``; True when we
        asked for it (then we are the new room's host)."""
        asked = self.again == old
        self.again = None
        self.moved_in = new
        return asked

    async def _go_on(self, mirror: Mirror) -> None:
        """Go to the rematch the finished room names: watch it, or take our seat there (SPEC
        section 9); the loop follows (:meth:`moved`), or the screen says why not."""
        try:
            await self.session.follow_rematch(mirror.room)
        except ClientError as exc:
            self.ui.message(explain(exc), "error")


def _over_prompt(mirror: Mirror, rematch: str | None, left: float) -> str:
    """The final screen's prompt: what ``p`` does, given the rematch the finished room names
    (``left``: seconds until a spectator follows it)."""
    if rematch is None:
        return OVER if mirror.seat is None else OVER_AGAIN
    went = WENT_ON.format(room=printable(rematch))
    if mirror.seat is None:
        return f"{went}; you follow in {max(math.ceil(left), 0)} s (p: now)"
    return f"{went}: p joins it, Enter leaves"


__all__ = ["FOLLOW_PAUSE", "OVER", "OVER_AGAIN", "WENT_ON", "AfterMatch", "FinalScreen"]
