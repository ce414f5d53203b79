"""The room core's autoplay: the seats no person decides for now, and the clock at zero.

:class:`Autoplay` is part of the room's play (:class:`server.play.Play` builds it and hands it
itself): it holds the bots that play seats now (bot seats, stand-ins of :mod:`server.takeover`,
seats forfeited on time) and a replay room's remaining archived choices, queues their turns
(:class:`~server.room_state.BotTurn`, after ``bot_delay`` or a replay's ``replay_interval``)
and, when the running clock reaches zero, decides for the seat to move (its bot, or a
stand-in) and hands a forfeiting policy's seat to the random bot for good. Every choice it makes
takes the one path of every accepted choice (:meth:`server.play.Play.commit`). No I/O: its
timers and frames go to the room's outbox, and it yields the store effects it waits for.

Bots see only their seat's view document (:meth:`Autoplay.view`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from protocol.errors import ErrorCode, RequestError
from server.bots import Bot, RandomPlayer, make_bot
from server.clock import ClockDue
from server.effects import Breathe, Outbox, Steps
from server.room_state import BotTurn, RoomSettings, RoomState, Status, Tuning, detached
from server.seats import Seating
from server.store.records import UNDO, Action
from server.takeover import STANDIN_KIND
from server.timekeeping import Timekeeper

if TYPE_CHECKING:
    from server.play import Play

_PLAYING: Final = RoomState.PLAYING
"""(A final name, as :mod:`server.play`'s: compiled code reads it as a constant, not the class
among the module's globals and then its member, at every turn; while the states' module was
interpreted, the member was looked up through the enum's metaclass, about 1,000 instructions.)"""

BOT_RETRY_SECONDS: Final = 0.2
"""A bot's choice refused without a pause (a rev the log is ahead of) is tried again this late."""


class Autoplay:
    """One room's bots, replay script and timeouts (see the module doc)."""

    __deletable__ = ("_play",)

    def __init__(
        self,
        play: Play,
        settings: RoomSettings,
        tuning: Tuning,
        *,
        status: Status,
        out: Outbox,
        seating: Seating,
        timekeeper: Timekeeper,
        announce: Callable[[], None],
        log: Any,
        seed: int,
    ) -> None:
        self.bots: dict[int, Bot] = {}
        """The bots that play seats now: bot seats, stand-ins, seats forfeited on time."""
        self.script: deque[Action] = deque()
        """A replay room's remaining archived choices."""
        self._play = play
        self._game = settings.game
        self._replay_interval = settings.replay_interval
        self._bot_delay = tuning.bot_delay
        self._status = status
        self._out = out
        self._seating = seating
        self._clocks = timekeeper
        self._announce = announce
        self._log = log
        self._seed = seed

    def detach(self) -> None:
        """The room closed: let go of its play and its core (see :meth:`Play.detach`)."""
        self._announce = detached
        del self._play

    def bot(self, kind: str, seat: int) -> Bot:
        """A new bot of ``kind`` for ``seat`` (of this room's game and seed)."""
        return make_bot(kind, self._game, self._seed, seat)

    def next(self) -> None:
        """Queue the turn of the seat to move if a bot (or the replay's script) decides it."""
        status = self._status
        if status.state is not _PLAYING or status.paused or not (self.script or self.bots):
            return  # (no bot, no script: the seat to move, which the game computes, is not read)
        to_move = self._play.match.to_move
        if to_move is None:
            return
        if self.script or to_move in self.bots:
            delay = self._replay_interval if self.script else self._bot_delay
            if delay > 0:
                self._out.later(delay, BotTurn(self._play.rev))
            else:
                self._out.post(BotTurn(self._play.rev))

    def turn(self, turn: BotTurn) -> Steps:
        """A queued bot turn (or the replay's next choice) is due: decide, commit."""
        status, play = self._status, self._play
        if status.paused or status.state is not _PLAYING:
            return
        yield from play.catch_up()
        match = play.match
        decision = match.decision
        if turn.rev != play.rev or status.state is not _PLAYING or decision is None:
            return
        # A bot-only stretch must not monopolise the loop: let other rooms run between moves.
        yield Breathe()
        if self.script:
            action = self.script.popleft()
            if action.undo:
                why = match.why_no_undo(action.seat)
                if why is not None:
                    raise RequestError(ErrorCode.NOT_ALLOWED, why)
                yield from play.commit(action.seat, UNDO)
            else:
                legal = match.resolve(action.seat, action.choice)
                yield from play.commit(action.seat, legal)
            return
        bot = self.bots.get(decision.seat)
        if bot is None:
            return
        index = bot.choose(self.view(decision.seat), play.rev)
        try:
            yield from play.commit(decision.seat, match.resolve(decision.seat, index))
        except RequestError:
            if not status.paused:  # refused without a pause (a rev the log is ahead of): retry
                self._out.later(BOT_RETRY_SECONDS, BotTurn(play.rev))
            raise

    def view(self, seat: int) -> dict[str, Any]:
        """What a bot sees: its seat's view document."""
        views = self._play.views
        return {"shared": views.shared, "own": views.own[seat]}

    def timeout(self, due: ClockDue) -> Steps:
        """The running clock's timer fired: at zero, the seat's bot (or a stand-in) decides,
        and a forfeiting policy hands the seat to the random bot for good."""
        status, play = self._status, self._play
        if due.rev != play.rev or status.paused or status.state is not _PLAYING:
            return
        decision = play.match.decision
        deciding = None if decision is None else decision.seat
        expired = self._clocks.at_zero(deciding, self._out.now)
        if expired is None:
            return
        if not expired:
            self._clocks.arm(play.rev)
            return
        assert deciding is not None
        seat = self._seating.seats[deciding]
        if self._clocks.forfeits_at_zero(seat):
            seat.forfeited = True
            seat.bot_kind = "random"
            seat.standin = False
            self.bots[deciding] = RandomPlayer(self._seed, deciding)
            self._log.info("seat_forfeited", seat=deciding, rev=play.rev)
            self._announce()
        bot = self.bots.get(deciding) or self.bot(STANDIN_KIND, deciding)
        choice = bot.choose(self.view(deciding), play.rev)
        self._log.info("clock_timeout", seat=deciding, rev=play.rev, policy=self._clocks.policy)
        yield from play.commit(deciding, play.match.resolve(deciding, choice))
