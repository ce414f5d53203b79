"""The room's side of the clocks: when they start and stop, and what happens at zero.

A mixin of :class:`server.room.Room` (the clocks themselves, and the policy, are in
:mod:`server.clock`). Everything runs in the room's task; time is the event loop's
``loop.time()``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from games.base import Match
from protocol.errors import ErrorCode, RequestError
from server.bots import Bot, RandomPlayer, make_bot
from server.clock import ClockDue, Clocks
from server.takeover import STANDIN_KIND

if TYPE_CHECKING:
    from server.room_state import RoomSettings, RoomState
    from server.seats import Seat
    from server.views import Views

_EARLY = 0.002
"""A timer that fires this much before zero counts as at zero (loop timer granularity)."""


class Timekeeping:
    seats: list[Seat]
    settings: RoomSettings
    state: RoomState
    match: Match[Any]
    views: Views
    rev: int
    paused: bool
    log: Any
    clocks: Clocks | None
    _bots: dict[int, Bot]
    _seed: int

    def _later(self, delay: float, command: Any) -> None:
        raise NotImplementedError

    def _announce(self) -> None:
        raise NotImplementedError

    async def _commit(self, seat: int, legal: dict[str, Any], t0: float) -> None:
        raise NotImplementedError

    def _clock_parts(self) -> dict[str, Any] | None:
        if self.clocks is None:
            return None
        return self.clocks.parts(self.match.to_move)

    def _clock_elapsed(self) -> int | None:
        """Milliseconds the running clock has run (for full views), None without clocks."""
        if self.clocks is None:
            return None
        return self.clocks.elapsed_ms(asyncio.get_running_loop().time())

    def _clock_turn(self, seat: int | None, *, undo: bool = False) -> None:
        """A revision was applied (by ``seat``; None: the match just started or was restored):
        charge it, start the clock of whoever decides next. An undo (``undo``) charges the
        time too, and takes back the increment of the step it took back."""
        clocks = self.clocks
        if clocks is None:
            return
        now = asyncio.get_running_loop().time()
        if seat is not None and undo:
            clocks.undone(seat, now)
        elif seat is not None:
            clocks.decided(seat, now)
        to_move = self.match.to_move
        clocks.start(to_move if self.state.value == "playing" else None, now)

    def _clock_arm(self) -> None:
        """Set the timer of the running clock (after the revision went out)."""
        clocks = self.clocks
        if clocks is None or clocks.running is None or self.paused:
            return
        left = max(0.0, clocks.left(asyncio.get_running_loop().time()))
        self._later(left, ClockDue(self.rev))

    def _clock_pause(self, paused: bool) -> None:
        clocks = self.clocks
        if clocks is None:
            return
        now = asyncio.get_running_loop().time()
        if paused:
            clocks.stop(now)
        else:
            clocks.restart(now)
            self._clock_arm()

    def _forfeits(self) -> dict[str, Any]:
        """What the archived result adds: the seats forfeited on time, if any."""
        return {} if self.clocks is None else self.clocks.result_extra()

    def _check_forfeit(self, seat: Seat) -> None:
        if seat.forfeited:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"seat {seat.index} forfeited on time")

    async def _clock_due(self, due: ClockDue, t0: float) -> None:
        clocks = self.clocks
        decision = self.match.decision
        if (
            clocks is None
            or due.rev != self.rev
            or self.paused
            or self.state.value != "playing"
            or decision is None
            or clocks.running != decision.seat
        ):
            return
        left = clocks.left(asyncio.get_running_loop().time())
        if left > _EARLY:
            self._clock_arm()
            return
        index = decision.seat
        seat = self.seats[index]
        clocks.timed_out(index)
        if clocks.settings.on_timeout == "forfeit" and not seat.bot:
            clocks.forfeit(index)
            seat.forfeited = True
            seat.bot_kind = "random"
            seat.standin = False
            self._bots[index] = RandomPlayer(self._seed, index)
            self.log.info("seat_forfeited", seat=index, rev=self.rev)
            self._announce()
        bot = self._bots.get(index) or make_bot(STANDIN_KIND, self.settings.game, self._seed, index)
        view = {"shared": self.views.shared, "own": self.views.own[index]}
        choice = bot.choose(view, self.rev)
        self.log.info("clock_timeout", seat=index, rev=self.rev, policy=clocks.settings.on_timeout)
        await self._commit(index, self.match.resolve(index, choice), t0)
