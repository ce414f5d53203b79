"""One room: an actor (one asyncio task, one inbox) that is the single authority over a match.

Its lifecycle table and commands are in :mod:`server.room_state`; what it stores when, and
what each store failure means, in :mod:`server.keeper`.

Everything that changes the room goes through the inbox and is applied in arrival order by the
room's task, so no lock is needed. An accepted choice is, in this order: checked at the boundary
(member, seat, turn, legal, rev seen), appended to the store (``Store.append``; a failure refuses
it with ``unavailable`` and changes nothing), applied (one revision), fanned out (one frame per
audience, see :mod:`server.views`), acknowledged to its sender. Frames are written without
awaiting (:mod:`server.limits`), so the task only ever waits on its inbox and on the store.

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

Bots (:mod:`server.bots`) see only their seat's view document; stand-ins for players who are
gone are :mod:`server.takeover`'s, clocks :mod:`server.timekeeping`'s.
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
from server.bots import Bot, make_bot
from server.chat import ChatLog
from server.clock import ClockDue, Clocks
from server.connection import Connection
from server.errors import wire_error
from server.keeper import Keeper
from server.membership import Membership
from server.metrics import Metrics
from server.quotas import Holdings, Quotas
from server.room_state import (
    TRANSITIONS,
    BotTurn,
    Command,
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
from server.takeover import Takeover, TakeoverDue
from server.timekeeping import Timekeeping
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


class _Timer:
    """One pending timer of a room (see :meth:`Room._later`)."""

    __slots__ = ("command", "handle")

    def __init__(self, command: Internal) -> None:
        self.command = command
        self.handle: asyncio.TimerHandle | None = None


class Room(Membership, Takeover, Timekeeping):
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
        self.rev = 0
        self.created = time.time()
        self.seats = [Seat(i) for i in range(settings.players)]
        self.clocks = None if settings.clock is None else Clocks(settings.clock, settings.players)
        self.views = Views(room_id, match, settings.players, self._clock_parts(), lazy=True)
        self.buffer: deque[Revision] = deque(maxlen=max(1, patch_buffer))
        self.quotas = quotas
        self.holdings = Holdings()
        """What this room holds of its creator's quotas, given back when it finishes or goes."""
        self.chat = ChatLog(chat_per_minute, chat_log, room_chat_per_minute)
        self._bot_delay = bot_delay
        self._bots: dict[int, Bot] = {}
        self._takeover_grace = takeover_grace
        self._epochs = [0] * settings.players
        self._seed = seed
        self._idle_ttl = idle_ttl
        self._slow = 0
        self._slow_logged = float("-inf")
        self.paused = not store.ready()
        self._script: deque[Action] = deque()
        """A replay room's remaining archived choices."""
        self._on_close = on_close
        self._inbox: asyncio.Queue[tuple[Connection | None, Command | Internal, float]] = (
            asyncio.Queue(inbox_size)
        )
        self.spectators = self._feed()
        self.publish: Callable[[Room, bytes, bytes], None] | None = None
        """The relay's publisher (:mod:`server.relay`): the spectator frames for other nodes."""
        self._task: asyncio.Task[None] | None = None
        self._announce_timer: asyncio.TimerHandle | None = None
        self._empty_since: float | None = None
        self._timers: set[_Timer] = set()
        self._finished_ttl = idle_ttl if finished_ttl is None else finished_ttl
        self._told_lost = False
        self.log = oasis_logging.get(room=room_id, game=settings.game)
        self.keeper = Keeper(store, room_id, snapshot_every, self.log)

    # The outside: submit and run --------------------------------------------------------------

    def start_task(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"room-{self.id}")
        self._schedule_reap()
        if self.state is RoomState.PLAYING and self.settings.replay_of is None:
            for seat in self.seats:  # restored: every player is gone (see server.takeover)
                if not seat.bot and not seat.forfeited:
                    self._await_takeover(seat.index)
            if self.clocks is not None:
                self._clock_turn(None)
                self._clock_arm()
        self._bot_next()

    def post(self, command: Internal) -> None:
        """Queue an internal command from outside the room (the lobby's store listener)."""
        self._post_internal(command)

    def submit(self, conn: Connection | None, command: Command | Internal) -> None:
        """Queue a command; a full inbox refuses it with ``unavailable`` (the room is flooded)."""
        if self.state is RoomState.CLOSED:
            raise RequestError(ErrorCode.NOT_FOUND, f"room {self.id} is closed")
        try:
            self._inbox.put_nowait((conn, command, time.perf_counter()))
        except asyncio.QueueFull:
            raise RequestError(ErrorCode.UNAVAILABLE, f"room {self.id} is busy") from None

    async def stop(self) -> None:
        """Let the task finish the commands queued before now, then end it."""
        task = self._task
        if task is None or task.done():
            return
        try:
            self._inbox.put_nowait((None, Stop(), 0.0))
        except asyncio.QueueFull:  # a flooded inbox is not worth finishing
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _run(self) -> None:
        try:
            await self._serve()
        finally:
            self._cancel_timers()

    async def _serve(self) -> None:
        while True:
            conn, command, t0 = await self._inbox.get()
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
        if isinstance(command, Refinish):
            if self.keeper.finish_pending is None:
                result = self.match.result()
                done = {} if result is None else result.to_json()
                await self.keeper.finish({**done, **self._forfeits()})
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
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"cannot {event.value} a room that is {self.state.value}"
            )
        self.metrics.rooms.labels(self.state.value).dec()
        self.metrics.rooms.labels(new.value).inc()
        self.state = new
        if new in (RoomState.FINISHED, RoomState.CLOSED):
            self.holdings.release()

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
            "seats": [seat.to_json() for seat in self.seats],
            "spectators": len(self.spectators),
            "spectator_delay": s.spectator_delay,
            "spectator_chat": s.spectator_chat,
            "paused": self.paused,
            **({"replay_of": s.replay_of} if s.replay_of is not None else {}),
            **({"clock": s.clock.to_json()} if s.clock is not None else {}),
        }

    def _members(self) -> list[Connection]:
        out = [seat.conn for seat in self.seats if seat.conn is not None]
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
        self._later(self._reap_after(), Reap())

    def _reap_after(self) -> float:
        """How long the room may stay empty: ``room_idle_ttl``, or once its match is over the
        shorter ``finished_room_ttl`` (its archive keeps the match; an all-bot match that
        nobody watches must not hold its memory for ten minutes)."""
        if self.state is RoomState.FINISHED:
            return min(self._finished_ttl, self._idle_ttl)
        return self._idle_ttl

    def _later(self, delay: float, command: Internal) -> None:
        """Post ``command`` to the room's own inbox after ``delay`` seconds.

        Every such timer is cancelled when the room's task ends (:meth:`_cancel_timers`): a
        pending takeover grace (60 s), a clock, a bot's delay or the reap must not keep a closed
        room and its match in memory (a cancelled handle drops its callback at once). No
        reference cycle is made (a fired timer forgets its handle), so a closed room is freed
        by reference counting, not at the next full collection of the garbage collector."""
        timer = _Timer(command)
        timer.handle = asyncio.get_running_loop().call_later(delay, self._fire, timer)
        self._timers.add(timer)

    def _fire(self, timer: _Timer) -> None:
        self._timers.discard(timer)
        timer.handle = None
        self._post_internal(timer.command)

    def _cancel_timers(self) -> None:
        for timer in self._timers:
            if timer.handle is not None:
                timer.handle.cancel()
                timer.handle = None
        self._timers.clear()

    def _post_internal(self, command: Internal) -> None:
        if self.state is not RoomState.CLOSED:
            try:
                self._inbox.put_nowait((None, command, time.perf_counter()))
            except asyncio.QueueFull:
                self.log.warning("inbox_full_internal", command=type(command).__name__)

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
            self._later(left, Reap())
            return
        if self.settings.replay_of is None:
            if self.state is RoomState.FINISHED:
                await self.keeper.retry()
            elif not await self.keeper.retire(self.state is RoomState.PLAYING, self.rev):
                self._later(RETIRE_RETRY_SECONDS, Reap())  # the store is struggling: stay
                return
        self._transition(RoomEvent.CLOSE)
        self.spectators.closed = True
        self.metrics.rooms.labels(RoomState.CLOSED.value).dec()
        if self._on_close is not None:
            self._on_close(self)

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
        info["tokens"] = [seat.token_digest.hex() for seat in self.seats]
        info["quick"] = self.settings.quick
        info["host"] = self.settings.host
        info["bot"] = self.settings.bot
        if self.clocks is not None:
            info["clock_state"] = self.clocks.part(None)
        return info

    def adopt(self, rev: int, meta: dict[str, Any], chat: list[dict[str, Any]]) -> None:
        """Take over a room rebuilt from the store (the match is already at ``rev``).

        Seats come back with their names, bots and token digests, so players resume with
        their tokens; the patch buffer starts empty, so they get the full view. A match that
        is over is archived again (its archive may not have been written before the crash).
        """
        self.rev = rev
        seats = meta.get("seats") or []
        tokens = meta.get("tokens") or []
        for seat, saved, token in zip(self.seats, seats, tokens, strict=False):
            seat.name = str(saved.get("name", ""))
            seat.bot = bool(saved.get("bot", False))
            seat.token_digest = bytes.fromhex(token) if token else b""
            seat.forfeited = bool(saved.get("forfeited", False))
            if seat.bot or seat.forfeited:
                seat.bot_kind = str(saved.get("bot_kind") or "random")
                bot = make_bot(seat.bot_kind, self.settings.game, self._seed, seat.index)
                self._bots[seat.index] = bot
        for line in chat:
            self.chat.add(line)
        state = RoomState(meta.get("state", "open"))
        if self.match.over:
            state = RoomState.FINISHED
            self._post_internal(Refinish())
        self.state = state  # (before the lobby counts the room in its metrics)
        if self.clocks is not None:
            self.clocks.restore(meta.get("clock_state"))
            self.views.set_parts(self._clock_parts() or {})
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
        self.state = RoomState.PLAYING

    async def _act(self, conn: Connection, req: m.Act, t0: float) -> None:
        seat = self._seat_of(conn)
        self._check_forfeit(seat)
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
        seat = self._seat_of(conn)
        self._check_forfeit(seat)
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
                self._later(self._reap_after(), Reap())
        if self.clocks is not None:
            if not self.match.over:
                self._clock_arm()
            # The clocks (best effort), before the archive copies the meta: the final ones too.
            await self.keeper.seats(self.meta(), required=False)
        await self.keeper.keep(self.rev, self.match, self._forfeits())
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
                self._later(delay, BotTurn(self.rev))
            else:
                self._post_internal(BotTurn(self.rev))

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
                self._later(0.2, BotTurn(self.rev))
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
