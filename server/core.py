"""The room core: the rules of one room as commands and the time in, effects out, no I/O.

The sans-I/O half of a room (websockets' ``Protocol`` is the model; :mod:`server.room` is the
thin actor that runs it). :meth:`RoomCore.handle` takes one command (a request of a member, an
internal command of the room's own, or the answer to a store effect) and the time, and returns
the effects (:mod:`server.effects`) the actor carries out in order: frames to send, timers to
arm, and store calls the core waits for. Nothing here awaits, reads a clock, arms a timer or
writes to a socket, so the room's behaviour is tested in process, at chosen times
(tests/server/core/).

A command whose handling needs the store is a generator (``Steps``): it yields each store
effect and gets the store's answer back where it yielded it (websockets' parser is written
the same way); :meth:`RoomCore.handle` runs it up to its next store effect, and the next call
(with :class:`~server.effects.Done` or :class:`~server.effects.Failed`) resumes it. The actor
handles one command at a time, so at most one is pending.

The order of the effects is the room's rules made visible. An accepted choice is, in this order:
checked at the boundary (member, seat, turn, legal, rev seen), appended to the store
(:class:`~server.effects.Append`; a failure refuses it with ``unavailable`` and changes
nothing), applied (one revision), fanned out (one frame per audience, see :mod:`server.views`),
acknowledged to its sender; only then is a due snapshot stored. A clock room's clocks are stored
with the choice, in the append's one round trip.

Errors: every exception a command raises is answered here, in one place, with the ``error``
frame :func:`server.errors.wire_error` maps it to (an unexpected one logged with its traceback,
its details never sent).

What the core reads of the world is given to it: the time (``now``, the event loop's
monotonic clock in the room), the keeper's flags (:class:`~server.keeper.Keeper`'s ``lost``,
``unsure``, ``finish_pending``, set by the store calls the actor makes), the logger and the
metrics (counters in memory). Chat's rate limits keep their own token buckets
(:mod:`server.limits`) and its lines carry the wall-clock time of ``wall()``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import Any

from games.base import Match
from protocol import frames as f
from protocol import messages as m
from protocol.codec import encode
from protocol.errors import ErrorCode, RequestError
from server.bots import Bot, RandomPlayer, make_bot
from server.chat import ChatLog
from server.clock import ClockDue
from server.connection import Connection
from server.effects import (
    Answer,
    Append,
    AppendChat,
    Arm,
    Breathe,
    Closed,
    Done,
    Effect,
    Failed,
    Finish,
    Keep,
    Landed,
    Post,
    Publish,
    Retire,
    Retry,
    Revised,
    Send,
    StoreSeats,
    Watch,
)
from server.errors import wire_error
from server.keeper import Keeper
from server.membership import Seating, missed
from server.metrics import Metrics
from server.quotas import Holdings, Quotas
from server.room_state import (
    RESTORED,
    TRANSITIONS,
    Announce,
    BotTurn,
    Command,
    Evict,
    Gone,
    Internal,
    Reap,
    Refinish,
    RelayedChat,
    Resync,
    RoomEvent,
    RoomSettings,
    RoomState,
    StorageLost,
    StoreReady,
)
from server.seats import Seat
from server.spectators import SpectatorFeed
from server.store import UNDO, Action, RoomMeta, StoreError, is_undo
from server.takeover import STANDIN_KIND, Standins, TakeoverDue
from server.timekeeping import Timekeeper
from server.views import Revision, Views

Steps = Generator[Effect, Any, None]
"""A command being handled: yields the store effects it waits for, gets their answers."""

SPECTATORS_ANNOUNCED_AT_ONCE = 64
"""Up to this many spectators, one coming or going is announced (``room``) at once; past it, at
most once every ``SPECTATOR_ANNOUNCE_EVERY`` seconds: 10,000 spectators arriving one by one
must not cost every member 10,000 frames."""
SPECTATOR_ANNOUNCE_EVERY = 0.5
RETIRE_RETRY_SECONDS = 5.0
"""A room whose retirement the store could not record tries again this much later (closing it
without would leave it live in the store, and a node would restore it as an orphan)."""
BOT_RETRY_SECONDS = 0.2
"""A bot's choice refused without a pause (a rev the log is ahead of) is tried again this late."""


class RoomCore:
    """One room's rules and state (see the module doc); ``handle`` is its one entry point."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        match: Match[Any],
        *,
        keeper: Keeper,
        metrics: Metrics,
        log: Any,
        patch_buffer: int,
        chat_per_minute: int,
        chat_log: int,
        bot_delay: float,
        idle_ttl: float,
        seed: int,
        paused: bool,
        takeover_grace: float = -1.0,
        quotas: Quotas | None = None,
        room_chat_per_minute: int = 0,
        finished_ttl: float | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.id = room_id
        self.settings = settings
        self.match = match
        self.keeper = keeper
        self.metrics = metrics
        self.log = log
        self.state = RoomState.OPEN
        """Changed only by :meth:`_transition` (the lifecycle table)."""
        self.rev = 0
        self.paused = paused
        self.seating = Seating(room_id, settings.players)
        self.standins = Standins(settings.players, takeover_grace, settings.game, seed)
        self.timekeeper = Timekeeper(settings.clock, settings.players)
        self.views = Views(room_id, match, settings.players, self._clock_parts(), lazy=True)
        self.buffer: deque[Revision] = deque(maxlen=max(1, patch_buffer))
        self.quotas = quotas
        self.holdings = Holdings()
        """What this room holds of its creator's quotas, given back when it finishes or goes."""
        self.chat = ChatLog(chat_per_minute, chat_log, room_chat_per_minute)
        self.spectators = self._feed()
        self.counted = False
        """The room is counted in the ``rooms`` gauge (from :meth:`open` on)."""
        self._bot_delay = bot_delay
        self._bots: dict[int, Bot] = {}
        """The bots that play seats now: bot seats, stand-ins, seats forfeited on time."""
        self._seed = seed
        self._idle_ttl = idle_ttl
        self._finished_ttl = idle_ttl if finished_ttl is None else finished_ttl
        self._script: deque[Action] = deque()
        """A replay room's remaining archived choices."""
        self._announcing = False
        """A batched announcement of spectators is armed."""
        self._empty_since: float | None = None
        self._told_lost = False
        self._wall = wall
        self.now = 0.0
        """The time of the command being handled."""
        self._out: list[Effect] = []
        self._pending: Steps | None = None
        self._asker: tuple[Connection | None, object] = (None, None)
        """The connection and command of the pending steps (for the error frame)."""

    # The one entry point ----------------------------------------------------------------------

    def handle(
        self, command: Command | Internal | Answer, now: float, conn: Connection | None = None
    ) -> list[Effect]:
        """Handle ``command`` (from ``conn``, a member, or None) at time ``now``: the effects.

        An answer (:class:`Done`, :class:`Failed`) resumes the command that waits for it; any
        other command may come only when none waits."""
        self.now = now
        if isinstance(command, Done | Failed):
            steps = self._pending
            assert steps is not None, "an answer with no store effect pending"
            return self._drive(steps, command)
        assert self._pending is None, "a command while another waits for the store"
        self._asker = (conn, command)
        return self._drive(self._dispatch(conn, command), None)

    def _drive(self, steps: Steps, answer: Answer | None) -> list[Effect]:
        out = self._out = []
        self._pending = None
        try:
            if isinstance(answer, Failed):
                waited = steps.throw(answer.error)
            else:
                waited = steps.send(None if answer is None else answer.value)
        except StopIteration:
            pass
        except Exception as exc:
            self._refuse(exc)
        else:
            self._pending = steps
            out.append(waited)
        self._out = []
        return out

    def _refuse(self, exc: Exception) -> None:
        """The one place a command's failure becomes an ``error`` frame to its sender."""
        conn, command = self._asker
        code, message, expected = wire_error(exc)
        if not expected:
            seat = None if conn is None else conn.rooms.get(self.id)
            self.log.exception(
                "room_error",
                command=type(command).__name__,
                seat=seat,
                conn=None if conn is None else conn.session,
            )
        if conn is not None:
            self.metrics.errors.labels(code.value).inc()
            limit = exc.limit if isinstance(exc, RequestError) else None
            rid = getattr(command, "id", None)
            self._reply(conn, f.ErrorFrame.of(rid, code, message, self.id, limit))

    def _dispatch(self, conn: Connection | None, command: Command | Internal) -> Steps:
        if isinstance(command, BotTurn):
            yield from self._bot_turn(command)
        elif isinstance(command, Reap):
            yield from self._reap()
        elif isinstance(command, StoreReady):
            yield from self._store_ready(command.ready)
        elif isinstance(command, StorageLost):
            self._storage_lost()
        elif isinstance(command, ClockDue):
            yield from self._clock_due(command)
        elif isinstance(command, TakeoverDue):
            self._takeover_due(command)
        elif isinstance(command, Announce):
            self._announcing = False
            if self.state is not RoomState.CLOSED:
                self._announce()
        elif isinstance(command, Evict):
            self._close()
        elif isinstance(command, RelayedChat):
            yield from self._relayed_chat(command)
        elif isinstance(command, Refinish):
            if self.keeper.finish_pending is None:
                result = self.match.result()
                done = {} if result is None else result.to_json()
                yield Finish({**done, **self.timekeeper.forfeits()})
        else:
            assert conn is not None, type(command).__name__
            if isinstance(command, m.Act):
                yield from self._act(conn, command)
            elif isinstance(command, m.Undo):
                yield from self._undo(conn, command)
            elif isinstance(command, m.Join):
                yield from self._join(conn, command)
            elif isinstance(command, m.Spectate):
                self._spectate(conn, command)
            elif isinstance(command, m.Sync):
                self._sync(conn, command.id)
            elif isinstance(command, Resync):
                self._sync(conn, None)
            elif isinstance(command, m.Leave):
                yield from self._leave(conn, command)
            elif isinstance(command, m.Start):
                yield from self._start(conn, command)
            elif isinstance(command, m.Chat):
                yield from self._chat(conn, command)
            elif isinstance(command, Gone):
                yield from self._gone(conn)

    # Effects ----------------------------------------------------------------------------------

    def _reply(self, conn: Connection, frame: f.ServerFrame) -> None:
        self._out.append(Send((conn,), f.encode_frame(frame)))

    def _send(self, to: list[Connection], data: bytes) -> None:
        if to:
            self._out.append(Send(to, data))

    def _later(self, delay: float, command: Internal) -> None:
        self._out.append(Arm(delay, command))

    # Lifecycle --------------------------------------------------------------------------------

    def open(self, now: float) -> list[Effect]:
        """The room's task starts: it counts in the gauge; timers of a restored room."""
        self.now = now
        out = self._out = []
        self.metrics.rooms.labels(self.state.value).inc()
        self.counted = True
        self._schedule_reap()
        if self.state is RoomState.PLAYING and self.settings.replay_of is None:
            for seat in self.seats:  # restored: every player is gone (see server.takeover)
                if not seat.bot and not seat.forfeited:
                    self._await_takeover(seat.index)
            self._clock_turn(None)
            self._clock_arm()
        self._bot_next()
        self._out = []
        return out

    def adopt(self, rev: int, meta: RoomMeta, chat: list[dict[str, Any]]) -> list[Effect]:
        """Take over a room rebuilt from the store (the match is already at ``rev``), before
        its task starts (the lobby's :meth:`~server.lobby.Lobby.restore`).

        Seats come back with their names, bots and token digests, so players resume with
        their tokens; the patch buffer starts empty, so they get the full view. The room
        reaches its stored state through the lifecycle table (:data:`RESTORED`: the events it
        went through). A match that is over is archived again (its archive may not have been
        written before the crash).
        """
        self.rev = rev
        for seat in self.seating.restore(meta.seats, meta.tokens):
            bot = make_bot(seat.bot_kind, self.settings.game, self._seed, seat.index)
            self._bots[seat.index] = bot
        for line in chat:
            self.chat.add(line)
        state = RoomState.FINISHED if self.match.over else RoomState(meta.state)
        events = RESTORED.get(state)
        if events is None:
            raise ValueError(f"a stored room is never {state.value}")
        for event in events:
            self._transition(event)
        self.timekeeper.restore(meta.clock_state)
        parts = self._clock_parts()
        if parts is not None:
            self.views.set_parts(parts)
        self.spectators = self._feed()
        self.log.debug("room_restored", rev=rev, state=state.value)
        return [Post(Refinish())] if self.match.over else []

    def replay(self, actions: list[Action]) -> None:
        """Make this a replay room: it plays ``actions`` by itself, seats held by nobody."""
        self._script.extend(actions)
        self._transition(RoomEvent.START)

    def _transition(self, event: RoomEvent) -> None:
        """The one place the room's state changes: a lookup in the lifecycle table."""
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"cannot {event.value} a room that is {self.state.value}"
            )
        if self.counted:  # (a closed room is no longer counted)
            self.metrics.rooms.labels(self.state.value).dec()
            if new is not RoomState.CLOSED:
                self.metrics.rooms.labels(new.value).inc()
        self.state = new
        if new in (RoomState.FINISHED, RoomState.CLOSED):
            self.holdings.release()

    def _close(self) -> None:
        self._transition(RoomEvent.CLOSE)
        self.spectators.closed = True

    def close(self) -> None:
        """Close a room whose task is gone (evicted while flooded)."""
        if self.state is not RoomState.CLOSED:
            self._close()

    # Who is here ------------------------------------------------------------------------------

    @property
    def seats(self) -> list[Seat]:
        return self.seating.seats

    def info(self) -> dict[str, Any]:
        """What the lobby lists and members are told when it changes."""
        s = self.settings
        return {
            "room": self.id,
            "game": s.game,
            "players": s.players,
            "options": s.options,
            "public": s.public,
            "state": self.state.value,
            "rev": self.rev,
            "seats": self.seating.to_json(),
            "spectators": len(self.spectators),
            "spectator_delay": s.spectator_delay,
            "spectator_chat": s.spectator_chat,
            "paused": self.paused,
            **({"replay_of": s.replay_of} if s.replay_of is not None else {}),
            **({"clock": s.clock.to_json()} if s.clock is not None else {}),
        }

    def meta(self) -> RoomMeta:
        """Room metadata for the store (token digests only, never tokens)."""
        info = self.info()
        info["tokens"] = self.seating.digests()
        info["quick"] = self.settings.quick
        info["host"] = self.settings.host
        info["bot"] = self.settings.bot
        clock_state = self.timekeeper.stored(None)
        if clock_state is not None:
            info["clock_state"] = clock_state
        return RoomMeta.from_json(info)

    def free_seats(self) -> int:
        return self.seating.free()

    def _members(self) -> list[Connection]:
        out = self.seating.connected()
        out.extend(self.spectators)
        return out

    def _announce(self) -> None:
        data = f.encode_frame(f.RoomInfo(self.id, self.info()))
        self._send(self.seating.connected(), data)
        self._out.append(Watch(data, None, delayed=False))
        self._out.append(Publish(b"i", data))
        if self.seating.connected() or len(self.spectators):
            self._empty_since = None
        elif self._empty_since is None:
            self._schedule_reap()

    def _announce_spectators(self) -> None:
        """A spectator came or went: announced at once in a small audience, else batched."""
        if len(self.spectators) <= SPECTATORS_ANNOUNCED_AT_ONCE:
            self._announce()
        elif not self._announcing:
            self._announcing = True
            self._later(SPECTATOR_ANNOUNCE_EVERY, Announce())

    def _feed(self) -> SpectatorFeed:
        """A spectator feed at the current rev (the view is computed only for a delayed one)."""
        delay = self.settings.spectator_delay
        if delay <= 0:
            return SpectatorFeed(0.0, {}, "", self.rev, self.quotas)
        view, view_hash = self.views.full(None)
        return SpectatorFeed(delay, view, view_hash, self.rev, self.quotas)

    def _schedule_reap(self) -> None:
        self._empty_since = self.now
        self._later(self._reap_after(), Reap())

    def _reap_after(self) -> float:
        """How long the room may stay empty: ``room_idle_ttl``, or once its match is over the
        shorter ``finished_room_ttl`` (its archive keeps the match; an all-bot match that
        nobody watches must not hold its memory for ten minutes)."""
        if self.state is RoomState.FINISHED:
            return min(self._finished_ttl, self._idle_ttl)
        return self._idle_ttl

    def _reap(self) -> Steps:
        """Close the room if nobody has been connected for the whole idle time.

        What the store keeps of it is :meth:`Keeper.retire`'s policy; a paused room waits (its
        store could not record the retirement, and a restart would bring it back)."""
        empty_since = self._empty_since
        if self._members() or self.state is RoomState.CLOSED or empty_since is None:
            return
        left = self._reap_after() - (self.now - empty_since)
        if self.paused and not self.keeper.lost:
            left = max(left, self._idle_ttl)
        if left > 0.001:  # it emptied again after this timer was set: wait for the rest
            self._later(left, Reap())
            return
        if self.settings.replay_of is None:
            if self.state is RoomState.FINISHED:
                yield Retry()
            elif not (yield Retire(self.state is RoomState.PLAYING, self.rev)):
                self._later(RETIRE_RETRY_SECONDS, Reap())  # the store is struggling: stay
                return
        self._close()
        self._out.append(Closed())

    # Joining, resuming, watching, leaving -----------------------------------------------------

    def _join(self, conn: Connection, req: m.Join) -> Steps:
        if req.token is not None:
            self._resume(conn, req, req.token)
            return
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        if self.state is not RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"room {self.id} is {self.state.value}")
        seat = self.seating.pick(req.seat)
        token = seat.claim(req.name, conn)
        try:
            yield StoreSeats(self.meta(), required=True)
        except RequestError:
            seat.release()
            raise
        conn.rooms[self.id] = seat.index
        self.log.info("seat_taken", seat=seat.index, conn=conn.session)
        view, view_hash = self.views.full(seat.index)
        self._reply(conn, self._joined(req.id, seat.index, token, self.rev, view, view_hash))
        self._announce()
        if self.settings.quick and self.free_seats() == 0:
            yield from self._begin()

    def _resume(self, conn: Connection, req: m.Join, token: str) -> None:
        old = self.seating.resume(conn, token, req.seat)
        if old is not None:
            error = f.ErrorFrame.of(None, ErrorCode.NOT_ALLOWED, "seat resumed elsewhere", self.id)
            self._reply(old, error)
        self.spectators.discard(conn)
        index = conn.rooms[self.id]
        assert index is not None
        if self.standins.back(self.seats[index]):
            self._bots.pop(index, None)
            self.log.info("seat_handed_back", seat=index)
        self.log.info("seat_resumed", seat=index, conn=conn.session, since=req.rev)
        self._send_joined(conn, req.id, index, req.rev, self.rev)
        self._announce()

    def _send_joined(
        self, conn: Connection, rid: m.RequestId, seat: int | None, since: int | None, upto: int
    ) -> None:
        """A ``joined``, then either the full view or the missed patches from the buffer."""
        frames = missed(self.buffer, seat, since, upto)
        if frames is None:
            if seat is None and self.settings.spectator_delay > 0:
                view, _, view_hash = self.spectators.delayed_view()
            else:
                view, view_hash = self.views.full(seat)
            self._reply(conn, self._joined(rid, seat, None, upto, view, view_hash))
            return
        assert since is not None
        self._reply(conn, self._joined(rid, seat, None, since, None, None))
        for frame in frames:
            self._out.append(Send((conn,), frame))

    def _joined(
        self,
        rid: m.RequestId,
        seat: int | None,
        token: str | None,
        rev: int,
        view: dict[str, Any] | None,
        view_hash: str | None,
    ) -> f.Joined:
        chat = self.chat.recent(self.spectators.delay if seat is None else None)
        elapsed = self.timekeeper.elapsed(self.now)
        info = self.info()
        return f.Joined(rid, self.id, seat, rev, view, view_hash, info, chat, token, elapsed)

    def _spectate(self, conn: Connection, req: m.Spectate) -> None:
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        self.spectators.add(conn)
        conn.rooms[self.id] = None
        upto = self.spectators.delayed_view()[1] if self.spectators.delayed else self.rev
        self._send_joined(conn, req.id, None, req.rev, upto)
        self._announce_spectators()

    def _sync(self, conn: Connection, rid: m.RequestId) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and self.settings.spectator_delay > 0:
            doc, rev, view_hash = self.spectators.delayed_view()
            self._reply(conn, f.State(rid, self.id, rev, doc, view_hash))
            return
        view, view_hash = self.views.full(seat)
        elapsed = self.timekeeper.elapsed(self.now)
        self._reply(conn, f.State(rid, self.id, self.rev, view, view_hash, elapsed))

    def _leave(self, conn: Connection, req: m.Leave) -> Steps:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {self.id}")
        spectator = conn.rooms[self.id] is None
        yield from self._drop(conn)
        self._reply(conn, f.Ack(req.id, self.id))
        if spectator:
            self._announce_spectators()
        else:
            self._announce()

    def _gone(self, conn: Connection) -> Steps:
        if self.id in conn.rooms:
            spectator = conn.rooms[self.id] is None
            yield from self._drop(conn)
            if spectator:
                self._announce_spectators()
            else:
                self._announce()

    def _drop(self, conn: Connection) -> Steps:
        index = conn.rooms.pop(self.id, None)
        self.spectators.discard(conn)
        if index is None:
            return
        seat = self.seats[index]
        self.log.info("seat_left", seat=index, conn=conn.session, state=self.state.value)
        if seat.conn is conn:
            if self.state is RoomState.OPEN:
                seat.release()
                yield StoreSeats(self.meta(), required=False)
            else:
                seat.conn = None
                if self.state is RoomState.PLAYING:
                    self._await_takeover(index)

    # Stand-ins (server.takeover) --------------------------------------------------------------

    def _await_takeover(self, index: int) -> None:
        """Seat ``index`` has no connection now: start its grace period."""
        due = self.standins.gone(index)
        if due is not None:  # (cancelled if the room closes first)
            self._later(self.standins.grace, due)

    def _takeover_due(self, due: TakeoverDue) -> None:
        playing = self.state is RoomState.PLAYING
        bot = self.standins.take_over(due, self.seats[due.seat], playing)
        if bot is None:
            return
        self._bots[due.seat] = bot
        self.log.info("seat_taken_over", seat=due.seat, kind=STANDIN_KIND)
        self._announce()
        self._bot_next()

    # Clocks (server.timekeeping) --------------------------------------------------------------

    def _clock_parts(self) -> dict[str, Any] | None:
        return self.timekeeper.parts(self.match.to_move)

    def _clock_turn(self, seat: int | None, *, undo: bool = False, at: float | None = None) -> None:
        """A revision was applied (by ``seat`` at ``at``, default now; None: started or
        restored): the clocks turn."""
        to_move = self.match.to_move if self.state is RoomState.PLAYING else None
        self.timekeeper.turn(seat, to_move, self.now if at is None else at, undo=undo)

    def _clock_arm(self) -> None:
        """Set the timer of the running clock (after the revision went out)."""
        if self.paused:
            return
        left = self.timekeeper.due_in(self.now)
        if left is not None:
            self._later(left, ClockDue(self.rev))

    def _clock_pause(self, paused: bool) -> None:
        self.timekeeper.pause(paused, self.now)
        if not paused:
            self._clock_arm()

    def _clock_due(self, due: ClockDue) -> Steps:
        if due.rev != self.rev or self.paused or self.state is not RoomState.PLAYING:
            return
        decision = self.match.decision
        deciding = None if decision is None else decision.seat
        expired = self.timekeeper.at_zero(deciding, self.now)
        if expired is None:
            return
        if not expired:
            self._clock_arm()
            return
        assert deciding is not None
        seat = self.seats[deciding]
        if self.timekeeper.forfeits_at_zero(seat):
            seat.forfeited = True
            seat.bot_kind = "random"
            seat.standin = False
            self._bots[deciding] = RandomPlayer(self._seed, deciding)
            self.log.info("seat_forfeited", seat=deciding, rev=self.rev)
            self._announce()
        bot = self._bots.get(deciding) or make_bot(
            STANDIN_KIND, self.settings.game, self._seed, deciding
        )
        view = {"shared": self.views.shared, "own": self.views.own[deciding]}
        choice = bot.choose(view, self.rev)
        self.log.info("clock_timeout", seat=deciding, rev=self.rev, policy=self.timekeeper.policy)
        yield from self._commit(deciding, self.match.resolve(deciding, choice))

    # Playing ----------------------------------------------------------------------------------

    def _start(self, conn: Connection, req: m.Start) -> Steps:
        if self.id not in conn.rooms and conn.session != self.settings.host:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join room {self.id} to start it")
        if self.state is not RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"room {self.id} is {self.state.value}")
        free = [seat for seat in self.seats if not seat.taken]
        if free:
            if not req.bots:
                raise RequestError(ErrorCode.NOT_ALLOWED, f"{len(free)} seats are still free")
            if conn.session != self.settings.host:
                raise RequestError(ErrorCode.NOT_ALLOWED, "only the host may start with bots")
        bots_only = all(seat.bot or not seat.taken for seat in self.seats)
        counted = bots_only and self.quotas is not None
        if counted:
            # A match nobody plays in is the costliest thing a client can ask for: counted.
            assert self.quotas is not None
            self.holdings.take(self.quotas.bot_matches, conn.ip)
        try:
            yield from self._begin(free)
        except BaseException:
            if counted:
                assert self.quotas is not None
                self.holdings.give_back(self.quotas.bot_matches, conn.ip)
            raise
        self._reply(conn, f.Ack(req.id, self.id, self.rev))

    def _begin(self, bots: list[Seat] | None = None) -> Steps:
        """Seat the bots and start, once the store has the room as it will play."""
        for seat in bots or ():
            seat.bot, seat.name, seat.bot_kind = True, f"bot {seat.index + 1}", self.settings.bot
        meta = replace(self.meta(), state=RoomState.PLAYING.value)
        try:
            yield StoreSeats(meta, required=True)
        except RequestError:
            for seat in bots or ():
                seat.release()
            raise
        for seat in self.seats:
            if seat.bot:
                self._bots[seat.index] = make_bot(
                    seat.bot_kind, self.settings.game, self._seed, seat.index
                )
        self._transition(RoomEvent.START)
        self._clock_turn(None)
        self._clock_arm()
        self.log.info("match_started", bots=sorted(self._bots))
        self._announce()
        self._bot_next()

    def _act(self, conn: Connection, req: m.Act) -> Steps:
        seat = self.seating.seat_of(conn, conn in self.spectators)
        self.timekeeper.check_forfeit(seat)
        if req.seat is not None and req.seat != seat.index:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"you hold seat {seat.index}, not seat {req.seat}"
            )
        yield from self._ready_to_play(req.rev)
        legal = self.match.resolve(seat.index, req.choice)
        yield from self._commit(seat.index, legal, (conn, req.id))

    def _undo(self, conn: Connection, req: m.Undo) -> Steps:
        """Take back the seat's last step (SPEC section 24): an entry of the log like a choice,
        stored before it is applied and acknowledged; refused with ``not_allowed`` and the
        match's reason where the barrier stands (:meth:`Match.why_no_undo`)."""
        seat = self.seating.seat_of(conn, conn in self.spectators)
        self.timekeeper.check_forfeit(seat)
        yield from self._ready_to_play(req.rev)
        why = self.match.why_no_undo(seat.index)
        if why is not None:
            raise RequestError(ErrorCode.NOT_ALLOWED, why)
        yield from self._commit(seat.index, UNDO, (conn, req.id))

    def _ready_to_play(self, rev: int) -> Steps:
        """The checks every move passes: started, not over, not paused, what landed adopted,
        ``rev`` the room's."""
        if self.state is RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, "the match has not started")
        for check in range(2):  # the choices that landed (if any) may end the match
            if self.state is RoomState.FINISHED:
                raise RequestError(ErrorCode.GAME_OVER, "the match is over")
            if self.keeper.lost:
                raise self.keeper.lost_error(self.rev)
            if self.paused:
                raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; the room is paused")
            if not check:
                yield from self._catch_up()
        if rev != self.rev:
            raise RequestError(
                ErrorCode.STALE_REV, f"you saw rev {rev}; the room is at rev {self.rev}"
            )

    def _catch_up(self) -> Steps:
        """Apply the choices an append with an unknown outcome did store (see the keeper)."""
        if not self.keeper.unsure:
            return
        landed: list[Action] = yield Landed(self.rev)
        for action in landed:
            if action.rev != self.rev + 1:
                self.log.error("landed_out_of_order", rev=action.rev, at=self.rev)
                break
            self._advance(action.seat, action.choice, self.now)  # (its clocks went with it)
            yield from self._settle()

    def _commit(
        self,
        seat: int,
        legal: dict[str, Any],
        asker: tuple[Connection, m.RequestId] | None = None,
    ) -> Steps:
        """Store, apply, fan out, acknowledge (to ``asker``, if a member asked), then what is
        stored after the acknowledgement: the one path of every accepted choice (and undo:
        ``legal`` is then :data:`~server.store.UNDO`).

        The acknowledgement waits for the append alone: the choice is durable once the log has
        it (:mod:`server.keeper`), with a clock room's clocks as the choice leaves them (one
        round trip); a due snapshot is written after the acknowledgement. The clocks are charged
        at ``at``, the time the choice was committed (the store's round trip is nobody's)."""
        at = self.now
        try:
            yield Append(Action(self.rev + 1, seat, legal), self._stored_with(seat, legal, at))
        except RequestError:
            if self.keeper.lost:
                self._storage_lost()
            raise
        self._advance(seat, legal, at)
        if asker is not None:
            self._reply(asker[0], f.Ack(asker[1], self.id, self.rev))
        yield from self._settle()

    def _stored_with(self, seat: int, legal: dict[str, Any], at: float) -> dict[str, Any] | None:
        """The metadata stored with a choice: in a clock room its clocks after it (the archive's
        meta then holds the clocks of the final view) and the seats (forfeits on time)."""
        clocks = self.timekeeper.stored_after(seat, at, undo=is_undo(legal))
        if clocks is None:
            return None
        return {"clock_state": clocks, "seats": self.seating.to_json()}

    def _advance(self, seat: int, legal: dict[str, Any], at: float) -> None:
        """Apply a stored choice (or undo) and fan the revision out (``at``: the time it was
        decided)."""
        self.views.ensure()  # the diff starts from the views before the choice
        # Resolved (or the undo allowed) once, before it was stored.
        undo = is_undo(legal)
        events = self.match.undo(seat) if undo else self.match.push(seat, legal)
        self.rev += 1
        if self.match.over:
            self._transition(RoomEvent.FINISH)
        self._clock_turn(seat, undo=undo, at=at)
        revision = self.views.advance(self.rev, events, self._clock_parts())
        self.buffer.append(revision)
        out = self._out
        for index, holder in enumerate(self.seats):
            if holder.conn is not None:
                out.append(Send((holder.conn,), revision.seat_frames[index]))
        out.append(Watch(revision.spectator_frame, revision))
        out.append(Publish(b"p", revision.spectator_frame))
        out.append(Revised(len(revision.spectator_frame)))
        if self.match.over:
            self.log.info("match_finished", rev=self.rev)
            self._announce()
            if self._empty_since is not None:  # nobody watches: go soon (finished_room_ttl)
                self._later(self._reap_after(), Reap())
        elif self.timekeeper.clocks is not None:
            self._clock_arm()

    def _settle(self) -> Steps:
        """After a revision went out: the snapshot or archive (:meth:`Keeper.keep`), the
        bots."""
        yield Keep(self.rev, self.timekeeper.forfeits())
        self._bot_next()

    def _storage_lost(self) -> None:
        """The store lost this room: pause for good and say so (see "Lost storage")."""
        self.keeper.lost = True
        if self._told_lost:
            return
        self._told_lost = True
        if not self.paused:
            self.paused = True
            self._clock_pause(True)
        self.log.error("room_paused_storage_lost", rev=self.rev, state=self.state.value)
        data = f.encode_frame(f.Pause(self.id, True, "storage lost", self.rev))
        self._send(self._members(), data)

    def _store_ready(self, ready: bool) -> Steps:
        """Pause while the store is down; on its return adopt what landed, then resume."""
        if self.keeper.lost:
            return  # paused for good
        if ready:
            try:
                yield from self._catch_up()
            except RequestError:
                return  # down again already: the next notification resumes us
            yield Retry()
        if ready != self.paused:
            return
        self.paused = not ready
        self._clock_pause(self.paused)
        self.log.warning("room_paused" if self.paused else "room_resumed", rev=self.rev)
        reason = "storage unavailable" if self.paused else "storage available"
        data = f.encode_frame(f.Pause(self.id, self.paused, reason, self.rev))
        self._send(self._members(), data)
        self._bot_next()

    def _bot_next(self) -> None:
        to_move = self.match.to_move
        if self.state is not RoomState.PLAYING or to_move is None or self.paused:
            return
        if self._script or to_move in self._bots:
            delay = self.settings.replay_interval if self._script else self._bot_delay
            if delay > 0:
                self._later(delay, BotTurn(self.rev))
            else:
                self._out.append(Post(BotTurn(self.rev)))

    def _bot_turn(self, turn: BotTurn) -> Steps:
        if self.paused or self.state is not RoomState.PLAYING:
            return
        yield from self._catch_up()
        decision = self.match.decision
        if turn.rev != self.rev or self.state is not RoomState.PLAYING or decision is None:
            return
        # A bot-only stretch must not monopolise the loop: let other rooms run between moves.
        yield Breathe()
        if self._script:
            action = self._script.popleft()
            if action.undo:
                why = self.match.why_no_undo(action.seat)
                if why is not None:
                    raise RequestError(ErrorCode.NOT_ALLOWED, why)
                yield from self._commit(action.seat, UNDO)
            else:
                legal = self.match.resolve(action.seat, action.choice)
                yield from self._commit(action.seat, legal)
            return
        bot = self._bots.get(decision.seat)
        if bot is None:
            return
        view = {"shared": self.views.shared, "own": self.views.own[decision.seat]}
        index = bot.choose(view, self.rev)
        try:
            yield from self._commit(decision.seat, self.match.resolve(decision.seat, index))
        except RequestError:
            if not self.paused:  # refused without a pause (a rev the log is ahead of): retry
                self._later(BOT_RETRY_SECONDS, BotTurn(self.rev))
            raise

    # Chat -------------------------------------------------------------------------------------

    def _chat(self, conn: Connection, req: m.Chat) -> Steps:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and not self.settings.spectator_chat:
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
        self.chat.check_rate(conn.session, self.quotas)
        name = self.seats[seat].name if seat is not None else f"spectator {conn.session[:6]}"
        try:
            yield from self._say(seat, name, req.text)
        except StoreError:
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None
        self._reply(conn, f.Ack(req.id, self.id))

    def _relayed_chat(self, command: RelayedChat) -> Steps:
        """A line of a spectator another node relays this room to, forwarded by that node
        (:mod:`server.relay`, which answered the spectator): the same rules as here, then said
        as a spectator's. A refusal has nobody to answer to: it is logged."""
        try:
            if not self.settings.spectator_chat:
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
            self.chat.check_rate(command.session, self.quotas)
            yield from self._say(None, f"spectator {command.session[:6]}", command.text)
        except (RequestError, StoreError) as exc:
            self.log.info("relayed_chat_refused", session=command.session[:6], error=str(exc))

    def _say(self, seat: int | None, name: str, text: str) -> Steps:
        """Store a chat line, then send it to the seats, the spectators and the relays (a
        spectator's line is not delayed); :class:`StoreError`: it was not said."""
        line = f.ChatLine(self.id, seat, name, text, self.rev, self._wall()).to_wire()
        yield AppendChat(line)
        self.chat.add(line)
        data = encode(line)
        self._send(self.seating.connected(), data)
        if seat is None:
            self._send(list(self.spectators), data)
        else:
            self._out.append(Watch(data, None))
        self._out.append(Publish(b"c", data))
