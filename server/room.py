"""One room: an actor (one asyncio task, one inbox) that is the single authority over a match.

Its lifecycle table and commands are in :mod:`server.room_state`; what it stores when, and
what each store failure means, in :mod:`server.keeper`. Its parts are components it owns, each
with a narrow interface and none calling back into the room: ``seating``
(:mod:`server.membership`: the seats, who holds which), ``standins`` (:mod:`server.takeover`:
grace periods and the bots that play for players who are gone), ``timekeeper``
(:mod:`server.timekeeping`: the clocks, given the time by the room), ``keeper``
(:mod:`server.keeper`: the store), ``inbox`` (:mod:`server.inbox`: the queue and the timers),
``views`` (:mod:`server.views`) and ``spectators`` (:mod:`server.spectators`).

Everything that changes the room goes through the inbox and is applied in arrival order by the
room's task, so no lock is needed. The state changes only by a transition of the lifecycle
table (:meth:`Room._transition`), also when a room is restored (:meth:`Room.adopt`), made a
replay (:meth:`Room.replay`) or evicted (:meth:`Room.evict`).

An accepted choice is, in this order: checked at the boundary (member, seat, turn, legal, rev
seen), appended to the store (``Store.append``; a failure refuses it with ``unavailable`` and
changes nothing), applied (one revision), fanned out (one frame per audience, see
:mod:`server.views`), acknowledged to its sender. Frames are written without awaiting
(:mod:`server.limits`), so the task only ever waits on its inbox and on the store.

Paused rooms. While the store is unusable (``Store.on_ready_change``) the room is paused: it
tells every member with a ``pause`` frame (``paused: true``), refuses ``act`` with
``unavailable`` and lets no bot move; when the store is back it first adopts any choice whose
append had an unknown outcome, then sends ``pause`` with ``paused: false`` and play goes on.
Joining a seat, starting and chat also need the store and fail with ``unavailable`` meanwhile;
``sync``, resume and spectating need nothing stored and keep working.

Lost storage. A room whose data the store no longer has (Redis came back empty: the lobby
hears it from the store and sends :class:`~server.room_state.StorageLost`; or an append finds the
room's keys gone) pauses for good: ``pause`` with ``reason: "storage lost"``, ``act`` answers
``storage_lost`` naming the last acknowledged rev, bots stop; ``sync`` and spectating still work,
and the room closes like any room nobody is in (it has nothing left to archive).

Replay rooms (``replay`` frame) are rooms whose seats are driven by an archived match's
choices, one every ``replay_interval`` seconds, on a throwaway in-memory store; only
spectators can be in them.

An engine bug raised while applying a choice (after it was stored) is answered ``internal`` and
logged; the room goes on, but its state is whatever the engine left (the contract's ``apply``
must not fail on a legal choice, and the random-playout harness is what guards that).

Spectators get their frames through a :class:`~server.spectators.SpectatorFeed`, which delays
them in rooms with ``spectator_delay``.

Bots (:mod:`server.bots`) see only their seat's view document.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from games.base import Match
from protocol import frames as f
from protocol import messages as m
from protocol.codec import encode
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.bots import Bot, RandomPlayer, make_bot
from server.chat import ChatLog
from server.clock import ClockDue
from server.connection import Connection
from server.errors import wire_error
from server.inbox import Inbox
from server.keeper import Keeper
from server.membership import Seating, missed
from server.metrics import Metrics
from server.quotas import Holdings, Quotas
from server.room_state import (
    RESTORED,
    TRANSITIONS,
    BotTurn,
    Command,
    Evict,
    Gone,
    Internal,
    Reap,
    Refinish,
    Resync,
    RoomEvent,
    RoomSettings,
    RoomState,
    Stop,
    StorageLost,
    StoreReady,
)
from server.seats import Seat
from server.spectators import SpectatorFeed
from server.store import UNDO, Action, Store, StoreError, is_undo
from server.takeover import STANDIN_KIND, Standins, TakeoverDue
from server.timekeeping import Timekeeper
from server.views import Revision, Views

SPECTATORS_ANNOUNCED_AT_ONCE = 64
"""Up to this many spectators, one coming or going is announced (``room``) at once; past it, at
most once every ``SPECTATOR_ANNOUNCE_EVERY`` seconds: 10,000 spectators arriving one by one
must not cost every member 10,000 frames."""
SPECTATOR_ANNOUNCE_EVERY = 0.5
SLOW_COMMAND_SECONDS = 0.05
"""A command the room task took longer than this to handle (Redis waits included, the time it
queued in the inbox not) is logged as ``slow_command``, with how long it had queued: at most one
line per room every ``SLOW_LOG_EVERY`` seconds, counting the slow commands since the last."""
SLOW_LOG_EVERY = 10.0
RETIRE_RETRY_SECONDS = 5.0
"""A room whose retirement the store could not record tries again this much later (closing it
without would leave it live in the store, and a node would restore it as an orphan)."""


class Room:
    """One room: its match, its members, and the components it owns (see the module doc)."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        match: Match[Any],
        *,
        store: Store,
        metrics: Metrics,
        patch_buffer: int,
        inbox_size: int,
        chat_per_minute: int,
        chat_log: int,
        bot_delay: float,
        idle_ttl: float,
        seed: int,
        snapshot_every: int = 50,
        on_close: Any = None,
        takeover_grace: float = -1.0,
        quotas: Quotas | None = None,
        room_chat_per_minute: int = 0,
        finished_ttl: float | None = None,
    ) -> None:
        self.id = room_id
        self.settings = settings
        self.match = match
        self.store = store
        self.metrics = metrics
        self.state = RoomState.OPEN
        """Changed only by :meth:`_transition` (the lifecycle table)."""
        self.rev = 0
        self.created = time.time()
        self.log = oasis_logging.get(room=room_id, game=settings.game)
        self.seating = Seating(room_id, settings.players)
        self.standins = Standins(settings.players, takeover_grace, settings.game, seed)
        self.timekeeper = Timekeeper(settings.clock, settings.players)
        self.keeper = Keeper(store, room_id, snapshot_every, self.log)
        self.inbox: Inbox[Command | Internal] = Inbox(
            room_id, inbox_size, lambda: self.state is RoomState.CLOSED, self.log
        )
        self.views = Views(room_id, match, settings.players, self._clock_parts(), lazy=True)
        self.buffer: deque[Revision] = deque(maxlen=max(1, patch_buffer))
        self.quotas = quotas
        self.holdings = Holdings()
        """What this room holds of its creator's quotas, given back when it finishes or goes."""
        self.chat = ChatLog(chat_per_minute, chat_log, room_chat_per_minute)
        self._bot_delay = bot_delay
        self._bots: dict[int, Bot] = {}
        """The bots that play seats now: bot seats, stand-ins, seats forfeited on time."""
        self._seed = seed
        self._idle_ttl = idle_ttl
        self._slow = 0
        self._slow_logged = float("-inf")
        self.paused = not store.ready()
        self._script: deque[Action] = deque()
        """A replay room's remaining archived choices."""
        self._on_close = on_close
        self.spectators = self._feed()
        self.publish: Callable[[Room, bytes, bytes], None] | None = None
        """The relay's publisher (:mod:`server.relay`): the spectator frames for other nodes."""
        self._task: asyncio.Task[None] | None = None
        self._counted = False
        """The room is counted in the ``rooms`` gauge (from its task's start)."""
        self._announce_timer: asyncio.TimerHandle | None = None
        self._empty_since: float | None = None
        self._finished_ttl = idle_ttl if finished_ttl is None else finished_ttl
        self._told_lost = False

    @property
    def seats(self) -> list[Seat]:
        """The seats (:attr:`seating`'s)."""
        return self.seating.seats

    @staticmethod
    def _now() -> float:
        """The time the room's clocks read: the event loop's monotonic time."""
        return asyncio.get_running_loop().time()

    # The outside: submit and run --------------------------------------------------------------

    def start_task(self) -> None:
        self.metrics.rooms.labels(self.state.value).inc()
        self._counted = True
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"room-{self.id}")
        self._schedule_reap()
        if self.state is RoomState.PLAYING and self.settings.replay_of is None:
            for seat in self.seats:  # restored: every player is gone (see server.takeover)
                if not seat.bot and not seat.forfeited:
                    self._await_takeover(seat.index)
            self._clock_turn(None)
            self._clock_arm()
        self._bot_next()

    def post(self, command: Internal) -> None:
        """Queue an internal command from outside the room (the lobby's store listener)."""
        self.inbox.post(command)

    def submit(self, conn: Connection | None, command: Command | Internal) -> None:
        """Queue a command; a full inbox refuses it with ``unavailable`` (the room is flooded)."""
        self.inbox.submit(conn, command)

    async def stop(self) -> None:
        """Let the task finish the commands queued before now, then end it."""
        await self._end(Stop())

    async def evict(self) -> None:
        """The room goes elsewhere (its lease moved, :mod:`server.cluster`, through the lobby):
        the task finishes the commands queued before now, then the room closes (``close`` in
        the table) without retiring anything in the store, which the new owner keeps using."""
        await self._end(Evict())
        if self.state is not RoomState.CLOSED:  # the task was gone, or flooded and cancelled
            self._close()

    async def _end(self, last: Stop | Evict) -> None:
        task = self._task
        if task is None or task.done():
            return
        if not self.inbox.put_nowait(last):  # a flooded inbox is not worth finishing
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _run(self) -> None:
        try:
            await self._serve()
        finally:
            self.inbox.cancel_timers()

    async def _serve(self) -> None:
        while True:
            conn, command, t0 = await self.inbox.get()
            if isinstance(command, Stop):
                return
            started = time.perf_counter()
            try:
                await self._dispatch(conn, command, t0)
            except Exception as exc:
                code, message, expected = wire_error(exc)
                if not expected:
                    seat = None if conn is None else conn.rooms.get(self.id)
                    self.log.exception(
                        "room_error",
                        command=type(command).__name__,
                        seat=seat,
                        conn=None if conn is None else conn.session,
                    )
                rid = getattr(command, "id", None)
                if conn is not None:
                    self.metrics.errors.labels(code.value).inc()
                    limit = exc.limit if isinstance(exc, RequestError) else None
                    conn.send(f.ErrorFrame.of(rid, code, message, self.id, limit))
            took = time.perf_counter() - started
            if took > SLOW_COMMAND_SECONDS:
                self._slow += 1
                if started - self._slow_logged >= SLOW_LOG_EVERY:
                    self._slow_logged = started
                    self.log.warning(
                        "slow_command",
                        command=type(command).__name__,
                        ms=round(took * 1000, 1),
                        queued_ms=round((started - t0) * 1000, 1),
                        rev=self.rev,
                        slow_since_last_line=self._slow,
                    )
                    self._slow = 0
            if self.state is RoomState.CLOSED:
                return

    async def _dispatch(
        self, conn: Connection | None, command: Command | Internal, t0: float
    ) -> None:
        if isinstance(command, BotTurn):
            await self._bot_turn(command, t0)
            return
        if isinstance(command, Reap):
            await self._reap()
            return
        if isinstance(command, StoreReady):
            await self._store_ready(command.ready)
            return
        if isinstance(command, StorageLost):
            self._storage_lost()
            return
        if isinstance(command, ClockDue):
            await self._clock_due(command, t0)
            return
        if isinstance(command, TakeoverDue):
            self._takeover_due(command)
            return
        if isinstance(command, Evict):
            self._close()
            return
        if isinstance(command, Refinish):
            if self.keeper.finish_pending is None:
                result = self.match.result()
                done = {} if result is None else result.to_json()
                await self.keeper.finish({**done, **self.timekeeper.forfeits()})
            return
        assert conn is not None
        if isinstance(command, m.Act):
            await self._act(conn, command, t0)
        elif isinstance(command, m.Undo):
            await self._undo(conn, command, t0)
        elif isinstance(command, m.Join):
            await self._join(conn, command)
        elif isinstance(command, m.Spectate):
            self._spectate(conn, command)
        elif isinstance(command, m.Sync):
            self._sync(conn, command.id)
        elif isinstance(command, Resync):
            self._sync(conn, None)
        elif isinstance(command, m.Leave):
            await self._leave(conn, command)
        elif isinstance(command, m.Start):
            await self._start(conn, command)
        elif isinstance(command, m.Chat):
            await self._chat(conn, command)
        elif isinstance(command, Gone):
            await self._gone(conn)

    def _transition(self, event: RoomEvent) -> None:
        """The one place the room's state changes: a lookup in the lifecycle table."""
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"cannot {event.value} a room that is {self.state.value}"
            )
        if self._counted:  # (a closed room is no longer counted)
            self.metrics.rooms.labels(self.state.value).dec()
            if new is not RoomState.CLOSED:
                self.metrics.rooms.labels(new.value).inc()
        self.state = new
        if new in (RoomState.FINISHED, RoomState.CLOSED):
            self.holdings.release()

    def _close(self) -> None:
        self._transition(RoomEvent.CLOSE)
        self.spectators.closed = True

    def release(self) -> None:
        """The room leaves its lobby (closed, evicted): every quota it holds is given back."""
        self.holdings.release()
        self.spectators.release()

    # Who is here ------------------------------------------------------------------------------

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

    def free_seats(self) -> int:
        return self.seating.free()

    def _members(self) -> list[Connection]:
        out = self.seating.connected()
        out.extend(self.spectators)
        return out

    def _announce(self) -> None:
        members = self._members()
        data = f.encode_frame(f.RoomInfo(self.id, self.info()))
        for seat in self.seats:
            if seat.conn is not None:
                seat.conn.send_bytes(data)
        self.spectators.fanout.send(data)
        if self.publish is not None:
            self.publish(self, b"i", data)
        if members:
            self._empty_since = None
        elif self._empty_since is None:
            self._schedule_reap()

    def _announce_spectators(self) -> None:
        """A spectator came or went: announced at once in a small audience, else batched."""
        if len(self.spectators) <= SPECTATORS_ANNOUNCED_AT_ONCE:
            self._announce()
        elif self._announce_timer is None:
            loop = asyncio.get_running_loop()
            self._announce_timer = loop.call_later(SPECTATOR_ANNOUNCE_EVERY, self._announce_later)

    def _announce_later(self) -> None:
        self._announce_timer = None
        if self.state is not RoomState.CLOSED:
            self._announce()

    def _schedule_reap(self) -> None:
        self._empty_since = time.monotonic()
        self.inbox.later(self._reap_after(), Reap())

    def _reap_after(self) -> float:
        """How long the room may stay empty: ``room_idle_ttl``, or once its match is over the
        shorter ``finished_room_ttl`` (its archive keeps the match; an all-bot match that
        nobody watches must not hold its memory for ten minutes)."""
        if self.state is RoomState.FINISHED:
            return min(self._finished_ttl, self._idle_ttl)
        return self._idle_ttl

    async def _reap(self) -> None:
        """Close the room if nobody has been connected for the whole idle time.

        What the store keeps of it is :meth:`Keeper.retire`'s policy; a paused room waits (its
        store could not record the retirement, and a restart would bring it back)."""
        empty_since = self._empty_since
        if self._members() or self.state is RoomState.CLOSED or empty_since is None:
            return
        left = self._reap_after() - (time.monotonic() - empty_since)
        if self.paused and not self.keeper.lost:
            left = max(left, self._idle_ttl)
        if left > 0.001:  # it emptied again after this timer was set: wait for the rest
            self.inbox.later(left, Reap())
            return
        if self.settings.replay_of is None:
            if self.state is RoomState.FINISHED:
                await self.keeper.retry()
            elif not await self.keeper.retire(self.state is RoomState.PLAYING, self.rev):
                self.inbox.later(RETIRE_RETRY_SECONDS, Reap())  # the store is struggling: stay
                return
        self._close()
        if self._on_close is not None:
            self._on_close(self)

    # Joining, resuming, watching, leaving -----------------------------------------------------

    async def _join(self, conn: Connection, req: m.Join) -> None:
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
            await self.keeper.seats(self.meta(), required=True)
        except RequestError:
            seat.release()
            raise
        conn.rooms[self.id] = seat.index
        self.log.info("seat_taken", seat=seat.index, conn=conn.session)
        view, view_hash = self.views.full(seat.index)
        conn.send(self._joined(req.id, seat.index, token, self.rev, view, view_hash))
        self._announce()
        if self.settings.quick and self.free_seats() == 0:
            await self._begin()

    def _resume(self, conn: Connection, req: m.Join, token: str) -> None:
        old = self.seating.resume(conn, token, req.seat)
        if old is not None:
            old.send(
                f.ErrorFrame.of(None, ErrorCode.NOT_ALLOWED, "seat resumed elsewhere", self.id)
            )
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
            conn.send(self._joined(rid, seat, None, upto, view, view_hash))
            return
        assert since is not None
        conn.send(self._joined(rid, seat, None, since, None, None))
        for frame in frames:
            conn.send_bytes(frame)

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
        elapsed = self.timekeeper.elapsed(self._now())
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
            conn.send(f.State(rid, self.id, rev, doc, view_hash))
            return
        view, view_hash = self.views.full(seat)
        elapsed = self.timekeeper.elapsed(self._now())
        conn.send(f.State(rid, self.id, self.rev, view, view_hash, elapsed))

    async def _leave(self, conn: Connection, req: m.Leave) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {self.id}")
        spectator = conn.rooms[self.id] is None
        await self._drop(conn)
        conn.send(f.Ack(req.id, self.id))
        if spectator:
            self._announce_spectators()
        else:
            self._announce()

    async def _gone(self, conn: Connection) -> None:
        if self.id in conn.rooms:
            spectator = conn.rooms[self.id] is None
            await self._drop(conn)
            if spectator:
                self._announce_spectators()
            else:
                self._announce()

    async def _drop(self, conn: Connection) -> None:
        index = conn.rooms.pop(self.id, None)
        self.spectators.discard(conn)
        if index is None:
            return
        seat = self.seats[index]
        self.log.info("seat_left", seat=index, conn=conn.session, state=self.state.value)
        if seat.conn is conn:
            if self.state is RoomState.OPEN:
                seat.release()
                await self.keeper.seats(self.meta(), required=False)
            else:
                seat.conn = None
                if self.state is RoomState.PLAYING:
                    self._await_takeover(index)

    # Stand-ins (server.takeover) --------------------------------------------------------------

    def _await_takeover(self, index: int) -> None:
        """Seat ``index`` has no connection now: start its grace period."""
        due = self.standins.gone(index)
        if due is not None:  # (cancelled if the room closes first)
            self.inbox.later(self.standins.grace, due)

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

    def _clock_turn(self, seat: int | None, *, undo: bool = False) -> None:
        """A revision was applied (by ``seat``; None: started or restored): the clocks turn."""
        to_move = self.match.to_move if self.state is RoomState.PLAYING else None
        self.timekeeper.turn(seat, to_move, self._now(), undo=undo)

    def _clock_arm(self) -> None:
        """Set the timer of the running clock (after the revision went out)."""
        if self.paused:
            return
        left = self.timekeeper.due_in(self._now())
        if left is not None:
            self.inbox.later(left, ClockDue(self.rev))

    def _clock_pause(self, paused: bool) -> None:
        self.timekeeper.pause(paused, self._now())
        if not paused:
            self._clock_arm()

    async def _clock_due(self, due: ClockDue, t0: float) -> None:
        if due.rev != self.rev or self.paused or self.state is not RoomState.PLAYING:
            return
        decision = self.match.decision
        deciding = None if decision is None else decision.seat
        expired = self.timekeeper.at_zero(deciding, self._now())
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
        await self._commit(deciding, self.match.resolve(deciding, choice), t0)

    # Playing ----------------------------------------------------------------------------------

    async def _start(self, conn: Connection, req: m.Start) -> None:
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
            await self._begin(free)
        except BaseException:
            if counted:
                assert self.quotas is not None
                self.holdings.give_back(self.quotas.bot_matches, conn.ip)
            raise
        conn.send(f.Ack(req.id, self.id, self.rev))

    async def _begin(self, bots: list[Seat] | None = None) -> None:
        """Seat the bots and start, once the store has the room as it will play."""
        for seat in bots or ():
            seat.bot, seat.name, seat.bot_kind = True, f"bot {seat.index + 1}", self.settings.bot
        meta = self.meta()
        meta["state"] = RoomState.PLAYING.value
        try:
            await self.keeper.seats(meta, required=True)
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

    def meta(self) -> dict[str, Any]:
        """Room metadata for the store (token digests only, never tokens)."""
        info = self.info()
        info["tokens"] = self.seating.digests()
        info["quick"] = self.settings.quick
        info["host"] = self.settings.host
        info["bot"] = self.settings.bot
        clock_state = self.timekeeper.stored(None)
        if clock_state is not None:
            info["clock_state"] = clock_state
        return info

    def adopt(self, rev: int, meta: dict[str, Any], chat: list[dict[str, Any]]) -> None:
        """Take over a room rebuilt from the store (the match is already at ``rev``), before
        its task starts (the lobby's :meth:`~server.lobby.Lobby.restore`).

        Seats come back with their names, bots and token digests, so players resume with
        their tokens; the patch buffer starts empty, so they get the full view. The room
        reaches its stored state through the lifecycle table (:data:`RESTORED`: the events it
        went through). A match that is over is archived again (its archive may not have been
        written before the crash).
        """
        self.rev = rev
        for seat in self.seating.restore(meta.get("seats") or [], meta.get("tokens") or []):
            bot = make_bot(seat.bot_kind, self.settings.game, self._seed, seat.index)
            self._bots[seat.index] = bot
        for line in chat:
            self.chat.add(line)
        state = RoomState.FINISHED if self.match.over else RoomState(meta.get("state", "open"))
        events = RESTORED.get(state)
        if events is None:
            raise ValueError(f"a stored room is never {state.value}")
        for event in events:
            self._transition(event)
        if self.match.over:
            self.inbox.post(Refinish())
        self.timekeeper.restore(meta.get("clock_state"))
        parts = self._clock_parts()
        if parts is not None:
            self.views.set_parts(parts)
        self.spectators = self._feed()
        self.log.debug("room_restored", rev=rev, state=state.value)

    def _feed(self) -> SpectatorFeed:
        """A spectator feed at the current rev (the view is computed only for a delayed one)."""
        delay = self.settings.spectator_delay
        if delay <= 0:
            return SpectatorFeed(0.0, {}, "", self.rev, self.quotas)
        view, view_hash = self.views.full(None)
        return SpectatorFeed(delay, view, view_hash, self.rev, self.quotas)

    def replay(self, actions: list[Action]) -> None:
        """Make this a replay room: it plays ``actions`` by itself, seats held by nobody."""
        self._script.extend(actions)
        self._transition(RoomEvent.START)

    async def _act(self, conn: Connection, req: m.Act, t0: float) -> None:
        seat = self.seating.seat_of(conn, conn in self.spectators)
        self.timekeeper.check_forfeit(seat)
        if req.seat is not None and req.seat != seat.index:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"you hold seat {seat.index}, not seat {req.seat}"
            )
        await self._ready_to_play(req.rev, t0)
        legal = self.match.resolve(seat.index, req.choice)
        await self._commit(seat.index, legal, t0)
        conn.send(f.Ack(req.id, self.id, self.rev))

    async def _undo(self, conn: Connection, req: m.Undo, t0: float) -> None:
        """Take back the seat's last step (SPEC section 24): an entry of the log like a choice,
        stored before it is applied and acknowledged; refused with ``not_allowed`` and the
        match's reason where the barrier stands (:meth:`Match.why_no_undo`)."""
        seat = self.seating.seat_of(conn, conn in self.spectators)
        self.timekeeper.check_forfeit(seat)
        await self._ready_to_play(req.rev, t0)
        why = self.match.why_no_undo(seat.index)
        if why is not None:
            raise RequestError(ErrorCode.NOT_ALLOWED, why)
        await self._commit(seat.index, UNDO, t0)
        conn.send(f.Ack(req.id, self.id, self.rev))

    async def _ready_to_play(self, rev: int, t0: float) -> None:
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
                await self._catch_up(t0)
        if rev != self.rev:
            raise RequestError(
                ErrorCode.STALE_REV, f"you saw rev {rev}; the room is at rev {self.rev}"
            )

    async def _catch_up(self, t0: float) -> None:
        """Apply the choices an append with an unknown outcome did store (see the keeper)."""
        for action in await self.keeper.landed(self.rev):
            if action.rev != self.rev + 1:
                self.log.error("landed_out_of_order", rev=action.rev, at=self.rev)
                break
            await self._advance(action.seat, action.choice, t0)

    async def _commit(self, seat: int, legal: dict[str, Any], t0: float) -> None:
        """Store, apply, fan out: the one path of every accepted choice (and undo: ``legal``
        is then :data:`~server.store.UNDO`)."""
        try:
            await self.keeper.append(Action(self.rev + 1, seat, legal))
        except RequestError:
            if self.keeper.lost:
                self._storage_lost()
            raise
        await self._advance(seat, legal, t0)

    async def _advance(self, seat: int, legal: dict[str, Any], t0: float) -> None:
        """Apply a stored choice (or undo) and fan the revision out."""
        self.views.ensure()  # the diff starts from the views before the choice
        # Resolved (or the undo allowed) once, before it was stored.
        undo = is_undo(legal)
        events = self.match.undo(seat) if undo else self.match.push(seat, legal)
        self.rev += 1
        if self.match.over:
            self._transition(RoomEvent.FINISH)
        self._clock_turn(seat, undo=undo)
        revision = self.views.advance(self.rev, events, self._clock_parts())
        self.buffer.append(revision)
        for index, holder in enumerate(self.seats):
            if holder.conn is not None:
                holder.conn.send_bytes(revision.seat_frames[index])
        self.spectators.send(revision.spectator_frame, revision)
        if self.publish is not None:
            self.publish(self, b"p", revision.spectator_frame)
        self.metrics.actions.labels(self.settings.game).inc()
        self.metrics.patch_bytes.observe(len(revision.spectator_frame))
        self.metrics.action_seconds.observe(time.perf_counter() - t0)
        if self.match.over:
            self.log.info("match_finished", rev=self.rev)
            self._announce()
            if self._empty_since is not None:  # nobody watches: go soon (finished_room_ttl)
                self.inbox.later(self._reap_after(), Reap())
        if self.timekeeper.clocks is not None:
            if not self.match.over:
                self._clock_arm()
            # The clocks (best effort), before the archive copies the meta: the final ones too.
            await self.keeper.seats(self.meta(), required=False)
        await self.keeper.keep(self.rev, self.match, self.timekeeper.forfeits())
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
        for conn in self._members():
            conn.send_bytes(data)

    async def _store_ready(self, ready: bool) -> None:
        """Pause while the store is down; on its return adopt what landed, then resume."""
        if self.keeper.lost:
            return  # paused for good
        if ready:
            try:
                await self._catch_up(time.perf_counter())
            except RequestError:
                return  # down again already: the next notification resumes us
            await self.keeper.retry()
        if ready != self.paused:
            return
        self.paused = not ready
        self._clock_pause(self.paused)
        self.log.warning("room_paused" if self.paused else "room_resumed", rev=self.rev)
        reason = "storage unavailable" if self.paused else "storage available"
        data = f.encode_frame(f.Pause(self.id, self.paused, reason, self.rev))
        for conn in self._members():
            conn.send_bytes(data)
        self._bot_next()

    def _bot_next(self) -> None:
        to_move = self.match.to_move
        if self.state is not RoomState.PLAYING or to_move is None or self.paused:
            return
        if self._script or to_move in self._bots:
            delay = self.settings.replay_interval if self._script else self._bot_delay
            if delay > 0:
                self.inbox.later(delay, BotTurn(self.rev))
            else:
                self.inbox.post(BotTurn(self.rev))

    async def _bot_turn(self, turn: BotTurn, t0: float) -> None:
        if self.paused or self.state is not RoomState.PLAYING:
            return
        await self._catch_up(t0)
        decision = self.match.decision
        if turn.rev != self.rev or self.state is not RoomState.PLAYING or decision is None:
            return
        # A bot-only stretch must not monopolise the loop: let other rooms run between moves.
        await asyncio.sleep(0)
        if self._script:
            action = self._script.popleft()
            if action.undo:
                why = self.match.why_no_undo(action.seat)
                if why is not None:
                    raise RequestError(ErrorCode.NOT_ALLOWED, why)
                await self._commit(action.seat, UNDO, t0)
            else:
                await self._commit(action.seat, self.match.resolve(action.seat, action.choice), t0)
            return
        bot = self._bots.get(decision.seat)
        if bot is None:
            return
        view = {"shared": self.views.shared, "own": self.views.own[decision.seat]}
        index = bot.choose(view, self.rev)
        try:
            await self._commit(decision.seat, self.match.resolve(decision.seat, index), t0)
        except RequestError:
            if not self.paused:  # refused without a pause (a rev the log is ahead of): retry
                self.inbox.later(0.2, BotTurn(self.rev))
            raise

    # Spectators and chat ----------------------------------------------------------------------

    async def _chat(self, conn: Connection, req: m.Chat) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and not self.settings.spectator_chat:
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
        self.chat.check_rate(conn.session, self.quotas)
        name = self.seats[seat].name if seat is not None else f"spectator {conn.session[:6]}"
        line = f.ChatLine(self.id, seat, name, req.text, self.rev, time.time()).to_wire()
        try:
            await self.store.append_chat(self.id, line)
        except StoreError:
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None
        self.chat.add(line)
        data = encode(line)
        for holder in self.seats:
            if holder.conn is not None:
                holder.conn.send_bytes(data)
        if seat is None:
            for other in self.spectators:
                other.send_bytes(data)
        else:
            self.spectators.send(data, None)
            if self.publish is not None:
                self.publish(self, b"c", data)
        conn.send(f.Ack(req.id, self.id))
