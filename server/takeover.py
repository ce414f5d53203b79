"""Stand-ins: a bot plays the seat of a player who has been gone past a grace period.

A mixin of :class:`server.room.Room`, run only in the room's task. When a seated player's last
connection to a started room goes (``leave`` or a drop), a timer of ``takeover_grace`` seconds
(``OASIS_TAKEOVER_GRACE``, default 60) starts; if the seat is still without a connection when
it fires (:class:`TakeoverDue`), a heuristic bot takes the seat over: the room info marks the seat
``standin: true`` with its ``bot_kind``, and the bot makes the seat's decisions. When the player
resumes with the seat's token the bot stops at once (before its next move) and the seat is
theirs again (``standin: false``). A timer carries the seat's *epoch*, bumped at every drop and
resume, so a timer from an earlier absence never fires for a later one.

Stand-ins are not stored: after a restart every player is gone, so each human seat of a started
room gets a fresh grace period from the moment the room is restored, then a stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server.bots import Bot, make_bot

if TYPE_CHECKING:
    from server.room_state import RoomSettings, RoomState
    from server.seats import Seat

STANDIN_KIND = "heuristic"
"""Stand-ins play for a person, so they play as well as the server can."""


@dataclass(frozen=True, slots=True)
class TakeoverDue:
    seat: int
    epoch: int


class Takeover:
    seats: list[Seat]
    settings: RoomSettings
    state: RoomState
    log: Any
    _bots: dict[int, Bot]
    _seed: int
    _takeover_grace: float
    _epochs: list[int]

    def _later(self, delay: float, command: Any) -> None:
        raise NotImplementedError

    def _announce(self) -> None:
        raise NotImplementedError

    def _bot_next(self) -> None:
        raise NotImplementedError

    def _await_takeover(self, index: int) -> None:
        """Seat ``index`` has no connection now: start its grace period."""
        self._epochs[index] += 1
        if self._takeover_grace < 0:
            return  # negative: never take over
        due = TakeoverDue(index, self._epochs[index])
        self._later(self._takeover_grace, due)  # (cancelled if the room closes first)

    def _takeover_due(self, due: TakeoverDue) -> None:
        seat = self.seats[due.seat]
        if (
            self.state.value != "playing"
            or due.epoch != self._epochs[due.seat]
            or seat.conn is not None
            or seat.bot
            or seat.standin
            or seat.forfeited
        ):
            return
        seat.standin, seat.bot_kind = True, STANDIN_KIND
        self._bots[due.seat] = make_bot(STANDIN_KIND, self.settings.game, self._seed, due.seat)
        self.log.info("seat_taken_over", seat=due.seat, kind=STANDIN_KIND)
        self._announce()
        self._bot_next()

    def _hand_back(self, seat: Seat) -> None:
        """The seat's player is back: cancel a pending takeover, stop a stand-in."""
        self._epochs[seat.index] += 1
        if seat.standin:
            seat.standin, seat.bot_kind = False, ""
            self._bots.pop(seat.index, None)
            self.log.info("seat_handed_back", seat=seat.index)
