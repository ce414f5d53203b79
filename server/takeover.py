"""Stand-ins: a bot plays the seat of a player who has been gone past a grace period.

:class:`Standins` is part of the room core's membership (``membership.standins``): it decides,
it does no I/O and arms no timer itself. When a seated player's last connection to a started
room goes (``leave`` or a drop), :meth:`Standins.gone` names the timer the room arms for
``takeover_grace`` seconds (``OASIS_TAKEOVER_GRACE``, default 60); if the seat is still without
a connection when it fires (:class:`TakeoverDue`), :meth:`Standins.take_over` gives the
heuristic bot that takes the seat over: the room info marks the seat ``standin: true`` with its
``bot_kind``, and the bot makes the seat's decisions. When the player resumes with the seat's
token (:meth:`Standins.back`) the bot stops at once (before its next move) and the seat is
theirs again (``standin: false``). A timer carries the seat's *epoch*, bumped at every drop and
resume, so a timer from an earlier absence never fires for a later one.

Stand-ins are not stored: after a restart every player is gone, so each human seat of a started
room gets a fresh grace period from the moment the room is restored, then a stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from server.bots import Bot, make_bot
from server.seats import Seat

STANDIN_KIND: Final = "heuristic"
"""Stand-ins play for a person, so they play as well as the server can."""


@dataclass(frozen=True, slots=True)
class TakeoverDue:
    seat: int
    epoch: int


class Standins:
    """The grace periods and stand-ins of one room's seats."""

    def __init__(self, players: int, grace: float, game: str, seed: int) -> None:
        self.grace = grace
        """Seconds a seat may stay without its player before a stand-in plays it (< 0: never)."""
        self._game = game
        self._seed = seed
        self._epochs = [0] * players

    def gone(self, index: int) -> TakeoverDue | None:
        """Seat ``index`` has no connection now: the timer to arm for :attr:`grace` seconds
        (None: this room never takes over)."""
        self._epochs[index] += 1
        if self.grace < 0:
            return None
        return TakeoverDue(index, self._epochs[index])

    def take_over(self, due: TakeoverDue, seat: Seat, playing: bool) -> Bot | None:
        """The grace period of ``due`` ended: the stand-in that now plays ``seat``, or None when
        the timer is stale (the player came back, the seat is a bot's, the match is not on)."""
        if (
            not playing
            or due.epoch != self._epochs[due.seat]
            or seat.conn is not None
            or seat.bot
            or seat.standin
            or seat.forfeited
        ):
            return None
        seat.standin, seat.bot_kind = True, STANDIN_KIND
        return make_bot(STANDIN_KIND, self._game, self._seed, due.seat)

    def back(self, seat: Seat) -> bool:
        """The seat's player is back: a pending takeover is void; True if a stand-in played
        the seat (the room drops its bot)."""
        self._epochs[seat.index] += 1
        if not seat.standin:
            return False
        seat.standin, seat.bot_kind = False, ""
        return True
