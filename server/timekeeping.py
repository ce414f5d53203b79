"""The room's side of the clocks: when they start and stop, and what happens at zero.

:class:`Timekeeper` is the room core's clock component (``core.timekeeper``); the clocks
themselves, and the policy at zero, are :mod:`server.clock`'s. It does no I/O and reads no
clock: the time is the command's (the outbox's ``now``, the event loop's monotonic
``loop.time()`` in the room, any number in a test) or an argument, and it arms no timer: it
puts an :class:`~server.effects.Arm` of :class:`~server.clock.ClockDue` in the room's outbox
(:meth:`Timekeeper.arm`). What happens at zero is a move: :meth:`server.autoplay.Autoplay.timeout`.
"""

from __future__ import annotations

from typing import Any, Final

from games.base import Match
from protocol.errors import ErrorCode, RequestError
from server.clock import ClockDue, Clocks, ClockSettings
from server.effects import Outbox
from server.room_state import RoomState, Status
from server.seats import Seat

_EARLY: Final = 0.002
"""A timer that fires this much before zero counts as at zero (loop timer granularity)."""
_PLAYING: Final = RoomState.PLAYING
"""(A final name: compiled code reads it as a constant, not the class among the module's
globals and then its member, at every revision of a clock room.)"""


class Timekeeper:
    """The clocks of one room (:attr:`clocks` is None in a room without clocks)."""

    def __init__(
        self,
        settings: ClockSettings | None,
        players: int,
        *,
        match: Match[Any],
        status: Status,
        out: Outbox,
    ) -> None:
        self.clocks = None if settings is None else Clocks(settings, players)
        self._match = match
        self._status = status
        self._out = out

    # The room's clock timer -------------------------------------------------------------------

    def current_parts(self) -> dict[str, Any] | None:
        """The clocks' view parts now (None without clocks)."""
        clocks = self.clocks
        return None if clocks is None else clocks.parts(self._match.to_move)

    def turned(self, seat: int | None, *, undo: bool = False, at: float | None = None) -> None:
        """A revision was applied (by ``seat`` at ``at``, default now; None: started or
        restored): the clocks turn."""
        if self.clocks is None:  # (nothing to turn: not even the seat to move is asked)
            return
        to_move = self._match.to_move if self._status.state is _PLAYING else None
        self.turn(seat, to_move, self._out.now if at is None else at, undo=undo)

    def arm(self, rev: int) -> None:
        """Set the timer of the running clock at ``rev`` (after the revision went out)."""
        if self.clocks is None or self._status.paused:
            return
        left = self.due_in(self._out.now)
        if left is not None:
            self._out.later(left, ClockDue(rev))

    def set_paused(self, paused: bool, rev: int) -> None:
        """The room paused or resumed (at ``rev``): stop the running clock, or count again."""
        self.pause(paused, self._out.now)
        if not paused:
            self.arm(rev)

    # The clocks -------------------------------------------------------------------------------

    def parts(self, to_move: int | None) -> dict[str, Any] | None:
        """The room-level view parts of the clocks (:mod:`server.views`), None without."""
        return None if self.clocks is None else self.clocks.parts(to_move)

    def elapsed(self, now: float) -> int | None:
        """Milliseconds the running clock has run (for full views), None without clocks."""
        return None if self.clocks is None else self.clocks.elapsed_ms(now)

    def turn(
        self, seat: int | None, to_move: int | None, now: float, *, undo: bool = False
    ) -> None:
        """A revision was applied (by ``seat``; None: the match just started or was restored):
        charge it, start the clock of ``to_move`` (None: nobody's, the match is not on). An
        undo (``undo``) charges the time too, and takes back the increment of the step it
        took back."""
        clocks = self.clocks
        if clocks is None:
            return
        if seat is not None and undo:
            clocks.undone(seat, now)
        elif seat is not None:
            clocks.decided(seat, now)
        clocks.start(to_move, now)

    def due_in(self, now: float) -> float | None:
        """Seconds until the running clock reaches zero (the room's timer), None if none runs."""
        clocks = self.clocks
        if clocks is None or clocks.running is None:
            return None
        return max(0.0, clocks.left(now))

    def pause(self, paused: bool, now: float) -> None:
        """Stop the running clock while the room is paused, count again once it resumes."""
        clocks = self.clocks
        if clocks is None:
            return
        if paused:
            clocks.stop(now)
        else:
            clocks.restart(now)

    def restore(self, saved: Any) -> None:
        """The clock part the store kept (``clock_state``)."""
        if self.clocks is not None:
            self.clocks.restore(saved)

    def stored(self, to_move: int | None) -> dict[str, Any] | None:
        """What the room's metadata keeps of the clocks (``clock_state``), None without."""
        return None if self.clocks is None else self.clocks.part(to_move)

    def stored_after(self, seat: int, now: float, *, undo: bool = False) -> dict[str, Any] | None:
        """What :meth:`stored` will say once ``seat``'s choice (or undo) of ``now`` is applied
        (:meth:`turn`), None without clocks: the room stores it with the choice itself."""
        clocks = self.clocks
        if clocks is None:
            return None
        after = clocks.copy()
        (after.undone if undo else after.decided)(seat, now)
        return after.part(None)

    def forfeits(self) -> dict[str, Any]:
        """What the archived result adds: the seats forfeited on time, if any."""
        return {} if self.clocks is None else self.clocks.result_extra()

    @staticmethod
    def check_forfeit(seat: Seat) -> None:
        """A seat forfeited on time never acts again."""
        if seat.forfeited:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"seat {seat.index} forfeited on time")

    def at_zero(self, deciding: int | None, now: float) -> bool | None:
        """The room's clock timer fired while ``deciding`` must decide: True if that seat's
        time is up (counted as a timeout), False if time is left (arm again), None if the timer
        is stale (no clocks, or another clock runs)."""
        clocks = self.clocks
        if clocks is None or deciding is None or clocks.running != deciding:
            return None
        if clocks.left(now) > _EARLY:
            return False
        clocks.timed_out(deciding)
        return True

    def forfeits_at_zero(self, seat: Seat) -> bool:
        """The policy forfeits ``seat`` at zero (never a bot's seat): it is recorded here."""
        clocks = self.clocks
        if clocks is None or clocks.settings.on_timeout != "forfeit" or seat.bot:
            return False
        clocks.forfeit(seat.index)
        return True

    @property
    def policy(self) -> str:
        return "" if self.clocks is None else self.clocks.settings.on_timeout
