"""The room core's play component: starting, choices and undo, one path for every choice.

:class:`Play` owns the match's progress in the room: the revision number, the views
(:mod:`server.views`), the buffer of recent revisions a resume catches up from, and its
:class:`~server.autoplay.Autoplay` (the bots that play seats now, a replay room's script, the
clock at zero), whose choices take the same path. It does no I/O: it puts effects in the room's
outbox (:class:`~server.effects.Outbox`) and yields the store effects it waits for
(:data:`~server.effects.Steps`).

Every accepted choice takes one path (:meth:`Play.commit`), in this order: checked at the
boundary (member, seat, turn, legal, rev seen; resolved once), appended to the store
(:class:`~server.effects.Append`; a failure refuses it with ``unavailable`` and changes
nothing), applied (one revision, :meth:`games.base.Match.push`: the trusted half), fanned out
(one frame per audience), acknowledged to its sender (the ``ack`` written with its patch, one
system call: :mod:`server.effector`); only then is a due snapshot stored
(:class:`~server.effects.Keep`). A clock room's clocks are stored with the choice, in the
append's one round trip. Undo (SPEC section 24), bots, timeouts on the clock and a replay's
script take the same path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from games.base import Match
from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server.autoplay import Autoplay
from server.effects import (
    Append,
    Keep,
    Landed,
    Outbox,
    Publish,
    Revised,
    Send,
    Steps,
    StoreSeats,
)
from server.quotas import Holdings, Quotas
from server.room_state import (
    RoomEvent,
    RoomSettings,
    RoomState,
    Status,
    Tuning,
    detached,
    lost_error,
)
from server.seats import PatchBuffer, Seat, Seating
from server.spectators import Spectators
from server.store.meta import RoomMeta
from server.store.records import UNDO, Action, is_undo
from server.timekeeping import Timekeeper
from server.views import Views

if TYPE_CHECKING:
    from server.member import Member

_OPEN: Final = RoomState.OPEN
_FINISHED: Final = RoomState.FINISHED
"""(The room's states every move is checked against, as final names: compiled code reads
them as constants; ``RoomState.OPEN`` looked the class up among the module's globals, then the
member on the class, about 1,000 instructions each, on every move.)"""
_PLAYING_STATE: Final = RoomState.PLAYING.value
"""(The stored state of a match that starts, read once: ``.value`` of an enum member is an
interpreted property.)"""


class Play:
    """One room's match in play (see the module doc)."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        match: Match[Any],
        tuning: Tuning,
        *,
        status: Status,
        out: Outbox,
        seating: Seating,
        spectators: Spectators,
        timekeeper: Timekeeper,
        transition: Callable[[RoomEvent], None],
        announce: Callable[[], None],
        finished: Callable[[], None],
        meta: Callable[..., RoomMeta],
        holdings: Holdings,
        quotas: Quotas | None,
        log: Any,
        seed: int,
    ) -> None:
        self.settings = settings
        self.match = match
        self.rev = 0
        self.views = Views(room_id, match, settings.players, timekeeper.current_parts(), lazy=True)
        self.buffer = PatchBuffer(settings.players, max(1, tuning.patch_buffer))
        self.auto = Autoplay(
            self,
            settings,
            tuning,
            status=status,
            out=out,
            seating=seating,
            timekeeper=timekeeper,
            announce=announce,
            log=log,
            seed=seed,
        )
        """The bots, a replay's script, the clock at zero (:mod:`server.autoplay`)."""
        self._status = status
        self._out = out
        self._seating = seating
        self._spectators = spectators
        self._clocks = timekeeper
        self._transition = transition
        self._announce = announce
        self._finished = finished
        self._meta = meta
        self._holdings = holdings
        self._quotas = quotas
        self._log = log
        self._room = room_id
        self._ack_head = f.ack_head(room_id)
        """(A choice's ``ack`` spliced from it: :func:`protocol.frames.encode_ack`.)"""

    def detach(self) -> None:
        """The room closed: let go of the core's methods and of the bots' back reference, the
        reference cycles between the room's parts (:meth:`server.core.RoomCore.detach`)."""
        self._announce = self._finished = detached
        self.auto.detach()

    # Starting ---------------------------------------------------------------------------------

    def start(self, conn: Member, req: m.Start) -> Steps:
        """``start``: every seat taken, or the host fills the free ones with bots; a match
        nobody plays in counts against its host's quota."""
        if self._room not in conn.rooms and conn.session != self.settings.host:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join room {self._room} to start it")
        if self._status.state is not RoomState.OPEN:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"room {self._room} is {self._status.state.value}"
            )
        free = [seat for seat in self._seating.seats if not seat.taken]
        if free:
            if not req.bots:
                raise RequestError(ErrorCode.NOT_ALLOWED, f"{len(free)} seats are still free")
            if conn.session != self.settings.host:
                raise RequestError(ErrorCode.NOT_ALLOWED, "only the host may start with bots")
        bots_only = all(seat.bot or not seat.taken for seat in self._seating.seats)
        quotas = self._quotas if bots_only else None
        if quotas is not None:
            # A match nobody plays in is the costliest thing a client can ask for: counted.
            self._holdings.take(quotas.bot_matches, conn.ip)
        try:
            yield from self.begin(free)
        except BaseException:
            if quotas is not None:
                self._holdings.give_back(quotas.bot_matches, conn.ip)
            raise
        self._out.reply(conn, f.Ack(req.id, self._room, self.rev))

    def begin(self, bots: list[Seat] | None = None, *, announce: bool = True) -> Steps:
        """Seat the bots and start, once the store has the room as it will play (``announce``
        False: the caller tells the members, a rematch's ``joined`` frames)."""
        for seat in bots or ():
            seat.bot, seat.name, seat.bot_kind = True, f"bot {seat.index + 1}", self.settings.bot
        meta = self._meta(state=_PLAYING_STATE)
        try:
            yield StoreSeats(meta, required=True)
        except RequestError:
            for seat in bots or ():
                seat.release()
            raise
        auto = self.auto
        for seat in self._seating.seats:
            if seat.bot:
                auto.bots[seat.index] = auto.bot(seat.bot_kind, seat.index)
        self._transition(RoomEvent.START)
        self._clocks.turned(None)
        self._clocks.arm(self.rev)
        self._log.info("match_started", bots=sorted(auto.bots))
        if announce:
            self._announce()
        auto.next()

    # A member's choice or undo ----------------------------------------------------------------

    def act(self, conn: Member, req: m.Act, watching: bool) -> Steps:
        """``watching``: ``conn`` is one of the spectators."""
        seat = self._seating.seat_of(conn, watching)
        self._clocks.check_forfeit(seat)
        if req.seat is not None and req.seat != seat.index:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"you hold seat {seat.index}, not seat {req.seat}"
            )
        if self._status.unsure:
            yield from self._ready_to_play(req.rev)
        else:
            self._ready(req.rev)
        legal = self.match.resolve(seat.index, req.choice)
        yield from self.commit(seat.index, legal, (conn, req.id))

    def undo(self, conn: Member, req: m.Undo, watching: bool) -> Steps:
        """Take back the seat's last step (SPEC section 24): an entry of the log like a choice,
        stored before it is applied and acknowledged; refused with ``not_allowed`` and the
        match's reason where the barrier stands (:meth:`Match.why_no_undo`)."""
        seat = self._seating.seat_of(conn, watching)
        self._clocks.check_forfeit(seat)
        if self._status.unsure:
            yield from self._ready_to_play(req.rev)
        else:
            self._ready(req.rev)
        why = self.match.why_no_undo(seat.index)
        if why is not None:
            raise RequestError(ErrorCode.NOT_ALLOWED, why)
        yield from self.commit(seat.index, UNDO, (conn, req.id))

    def _ready_to_play(self, rev: int) -> Steps:
        """The checks every move passes: started, not over, not paused, what landed adopted,
        ``rev`` the room's. A generator only for the choices an unsure append may have stored
        (:meth:`catch_up`): while the room is sure of its log, :meth:`act` and :meth:`undo`
        call :meth:`_ready`, the same checks without a generator made and run per move (about
        5,000 instructions of a choice, compiled)."""
        self._playable()
        yield from self.catch_up()
        self._ready(rev)  # (the choices that landed, if any, may have ended the match)

    def _ready(self, rev: int) -> None:
        """:meth:`_ready_to_play` with nothing to catch up: the checks, then ``rev``."""
        self._playable()
        if rev != self.rev:
            raise RequestError(
                ErrorCode.STALE_REV, f"you saw rev {rev}; the room is at rev {self.rev}"
            )

    def _playable(self) -> None:
        """Started, not over, the room's log not lost, not paused."""
        status = self._status
        state = status.state
        if state is _OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, "the match has not started")
        if state is _FINISHED:
            raise RequestError(ErrorCode.GAME_OVER, "the match is over")
        if status.lost:
            raise lost_error(self._room, self.rev)
        if status.paused:
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; the room is paused")

    def catch_up(self) -> Steps:
        """Apply the choices an append with an unknown outcome did store (see the keeper)."""
        if not self._status.unsure:
            return
        landed: list[Action] = yield Landed(self.rev)
        self._status.unsure = False
        if landed:
            self._log.warning("adopting_landed_actions", revs=[a.rev for a in landed])
        for action in landed:
            if action.rev != self.rev + 1:
                self._log.error("landed_out_of_order", rev=action.rev, at=self.rev)
                break
            self._advance(action.seat, action.choice, self._out.now)  # (its clocks went too)
            yield from self._settle()

    # The one path of every accepted choice ----------------------------------------------------

    def commit(
        self,
        seat: int,
        legal: dict[str, Any],
        asker: tuple[Member, m.RequestId] | None = None,
    ) -> Steps:
        """Store, apply, fan out, acknowledge (to ``asker``, if a member asked), then what is
        stored after the acknowledgement: the one path of every accepted choice (and undo:
        ``legal`` is then :data:`~server.store.UNDO`).

        The acknowledgement waits for the append alone: the choice is durable once the log has
        it (:mod:`server.keeper`), with a clock room's clocks as the choice leaves them (one
        round trip); a due snapshot is written after the acknowledgement. The clocks are charged
        at ``at``, the time the choice was committed (the store's round trip is nobody's)."""
        at = self._out.now
        # (refused: the error goes to the asker; a lost room was paused before, see the core)
        yield Append(Action(self.rev + 1, seat, legal), self._stored_with(seat, legal, at))
        if not self._advance(seat, legal, at, asker) and asker is not None:
            self._out.add(Send((asker[0],), f.encode_ack(self._ack_head, self.rev, asker[1])))
        if self.match.over:
            yield from self._settle()
        else:  # (:meth:`_settle` without a generator made and run per choice)
            self._keep()

    def _stored_with(self, seat: int, legal: dict[str, Any], at: float) -> dict[str, Any] | None:
        """The metadata stored with a choice: in a clock room its clocks after it (the archive's
        meta then holds the clocks of the final view) and the seats (forfeits on time)."""
        clocks = self._clocks.stored_after(seat, at, undo=is_undo(legal))
        if clocks is None:
            return None
        return {"clock_state": clocks, "seats": self._seating.to_json()}

    def _advance(
        self,
        seat: int,
        legal: dict[str, Any],
        at: float,
        asker: tuple[Member, m.RequestId] | None = None,
    ) -> bool:
        """Apply a stored choice (or undo) and fan the revision out (``at``: the time it was
        decided). True if the ``ack`` to ``asker`` went with its seat's patch (its ``then``):
        always but at the end of the match, where the ``room`` frame of the end goes between
        them (the three still in one write: the actor writes a socket's frames of one command
        together, :mod:`server.effector`)."""
        self.views.ensure()  # the diff starts from the views before the choice
        # Resolved (or the undo allowed) once, before it was stored.
        undo = is_undo(legal)
        events = self.match.undo(seat) if undo else self.match.push(seat, legal)
        self.rev += 1
        # The next decision, listed once now (the match keeps it until it changes): the end,
        # the clocks, the views and the bots all ask for it or for the seat to move, which
        # would otherwise list it again for each asking (Game.seat_to_move's default).
        if self.match.decision is None:
            self._transition(RoomEvent.FINISH)
        self._clocks.turned(seat, undo=undo, at=at)
        seats = self._seating.seats
        revision = self.views.advance(
            self.rev, events, self._clocks.current_parts(), [seat.hash_rule for seat in seats]
        )
        self.buffer.append(revision)
        out = self._out
        frames = revision.seat_frames
        # The asker's ack goes with its patch, one write (but at the end: see the docstring).
        acking = None if asker is None or self.match.over else asker[0]
        acked = False
        for index, holder in enumerate(seats):
            conn = holder.conn
            if conn is None:
                continue
            if conn is acking and asker is not None:
                out.add(
                    Send((conn,), frames[index], f.encode_ack(self._ack_head, self.rev, asker[1]))
                )
                acked = True
            else:
                out.add(Send((conn,), frames[index]))
        self._spectators.send(revision.spectator_frame, revision)
        out.add(Publish(b"p", revision.spectator_frame))
        out.add(Revised(len(revision.spectator_frame)))
        if self.match.over:
            self._log.info("match_finished", rev=self.rev)
            self._finished()
        else:
            self._clocks.arm(self.rev)
        return acked

    def _keep(self) -> None:
        """:meth:`_settle` before the end: the bots' next turn, then a snapshot if one is due,
        which nothing waits for."""
        self.auto.next()
        self._out.add(Keep(self.rev, {}, waits=False))

    def result(self) -> dict[str, Any]:
        """What the archive keeps of the match's end (the seats forfeited on time too)."""
        done = self.match.result()
        return {**({} if done is None else done.to_json()), **self._clocks.forfeits()}

    def _settle(self) -> Steps:
        """After a revision went out: the snapshot or archive (:meth:`Keeper.keep`), the
        bots. Only the end waits for the store's answer (whether the archive was written);
        before it the bots' next turn is queued first and the snapshot is not waited for
        (:class:`~server.effects.Keep`: one round through the core less per choice)."""
        if not self.match.over:
            self._keep()
            return
        archived = yield Keep(self.rev, self._clocks.forfeits())
        if archived is not None:
            self._status.finish_pending = None if archived else self.result()
        self.auto.next()
