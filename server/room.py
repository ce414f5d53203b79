"""One room: an actor (one asyncio task, one inbox) that is the single authority over a match.

Lifecycle (a table; anything else is ``not_allowed`` naming the state)::

    open --start--> playing --finish--> finished
    open / playing / finished --close--> closed

Everything that changes the room goes through the inbox and is applied in arrival order by the
room's task, so no lock is needed. An accepted choice is, in this order: checked at the boundary
(member, seat, turn, legal, rev seen), appended to the store (``Store.append``; a failure refuses
it with ``unavailable`` and changes nothing), applied (one revision), fanned out (one frame per
audience, see :mod:`server.views`), acknowledged to its sender. Frames are written without
awaiting (:mod:`server.limits`), so the task only ever waits on its inbox and on the store.

An engine bug raised while applying a choice (after it was stored) is answered ``internal`` and
logged; the room goes on, but its state is whatever the engine left (the contract's ``apply``
must not fail on a legal choice, and the random-playout harness is what guards that).

Spectators get their frames through a :class:`~server.spectators.SpectatorFeed`, which delays
them in rooms with ``spectator_delay``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

from games.base import Match
from protocol import messages as m
from protocol.codec import encode
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.chat import ChatLog
from server.connection import Connection
from server.errors import wire_error
from server.metrics import Metrics
from server.randombot import RandomBot
from server.seats import Seat, find_by_token
from server.spectators import SpectatorFeed
from server.store import Action, Store, StoreError
from server.views import Revision, Views


class RoomState(Enum):
    OPEN = "open"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


class RoomEvent(Enum):
    START = "start"
    FINISH = "finish"
    CLOSE = "close"


TRANSITIONS: dict[tuple[RoomState, RoomEvent], RoomState] = {
    (RoomState.OPEN, RoomEvent.START): RoomState.PLAYING,
    (RoomState.PLAYING, RoomEvent.FINISH): RoomState.FINISHED,
    (RoomState.OPEN, RoomEvent.CLOSE): RoomState.CLOSED,
    (RoomState.PLAYING, RoomEvent.CLOSE): RoomState.CLOSED,
    (RoomState.FINISHED, RoomEvent.CLOSE): RoomState.CLOSED,
}


@dataclass(frozen=True, slots=True)
class Gone:
    """The connection closed."""


@dataclass(frozen=True, slots=True)
class Resync:
    """The connection lagged and drained: send it the full view."""


@dataclass(frozen=True, slots=True)
class BotTurn:
    rev: int


@dataclass(frozen=True, slots=True)
class Reap:
    """Close the room if it is still empty."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Server shutdown: finish what came before, then end the task."""


Command = m.Join | m.Spectate | m.Leave | m.Start | m.Act | m.Sync | m.Chat | Gone | Resync
Internal = BotTurn | Reap | Stop


@dataclass(frozen=True, slots=True)
class RoomSettings:
    game: str
    players: int
    options: dict[str, Any]
    public: bool
    spectator_delay: float
    spectator_chat: bool
    quick: bool
    host: str


class Room:
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
        self.views = Views(room_id, match, settings.players)
        self.buffer: deque[Revision] = deque(maxlen=max(1, patch_buffer))
        self.chat = ChatLog(chat_per_minute, chat_log)
        self._bot_delay = bot_delay
        self._bots: dict[int, RandomBot] = {}
        self._seed = seed
        self._snapshot_every = max(1, snapshot_every)
        self._idle_ttl = idle_ttl
        self._on_close = on_close
        self._inbox: asyncio.Queue[tuple[Connection | None, Command | Internal, float]] = (
            asyncio.Queue(inbox_size)
        )
        self.spectators = SpectatorFeed(
            settings.spectator_delay, self.views.full(None)[0], self.views.hash_for(None)
        )
        self._task: asyncio.Task[None] | None = None
        self._empty_since: float | None = None
        self.log = oasis_logging.get(room=room_id, game=settings.game)

    # The outside: submit and run --------------------------------------------------------------

    def start_task(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"room-{self.id}")
        self._schedule_reap()
        self._bot_next()

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
        while True:
            conn, command, t0 = await self._inbox.get()
            if isinstance(command, Stop):
                return
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
                    conn.send(m.error(rid, code, message, self.id))
            if self.state is RoomState.CLOSED:
                return

    async def _dispatch(
        self, conn: Connection | None, command: Command | Internal, t0: float
    ) -> None:
        if isinstance(command, BotTurn):
            await self._bot_turn(command, t0)
            return
        if isinstance(command, Reap):
            self._reap()
            return
        assert conn is not None
        if isinstance(command, m.Act):
            await self._act(conn, command, t0)
        elif isinstance(command, m.Join):
            await self._join(conn, command)
        elif isinstance(command, m.Spectate):
            self._spectate(conn, command)
        elif isinstance(command, m.Sync):
            self._sync(conn, command.id)
        elif isinstance(command, Resync):
            self._sync(conn, None)
        elif isinstance(command, m.Leave):
            self._leave(conn, command)
        elif isinstance(command, m.Start):
            await self._start(conn, command)
        elif isinstance(command, m.Chat):
            await self._chat(conn, command)
        elif isinstance(command, Gone):
            self._gone(conn)

    def _transition(self, event: RoomEvent) -> None:
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"cannot {event.value} a room that is {self.state.value}"
            )
        self.metrics.rooms.labels(self.state.value).dec()
        self.metrics.rooms.labels(new.value).inc()
        self.state = new

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
        }

    def free_seats(self) -> int:
        return sum(1 for seat in self.seats if not seat.taken)

    def _members(self) -> list[Connection]:
        out = [seat.conn for seat in self.seats if seat.conn is not None]
        out.extend(self.spectators)
        return out

    def _announce(self) -> None:
        members = self._members()
        data = encode(m.room_info(self.info()))
        for conn in members:
            conn.send_bytes(data)
        if members:
            self._empty_since = None
        elif self._empty_since is None:
            self._schedule_reap()

    def _seat_of(self, conn: Connection) -> Seat:
        seat = conn.rooms.get(self.id)
        if seat is None:
            if conn in self.spectators:
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators never act")
            raise RequestError(ErrorCode.NOT_ALLOWED, f"you hold no seat in room {self.id}")
        return self.seats[seat]

    # Joining, resuming, watching --------------------------------------------------------------

    async def _join(self, conn: Connection, req: m.Join) -> None:
        if req.token is not None:
            self._resume(conn, req, req.token)
            return
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        if self.state is not RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"room {self.id} is {self.state.value}")
        if req.seat is not None:
            if req.seat >= len(self.seats):
                raise RequestError(ErrorCode.BAD_REQUEST, f"no seat {req.seat} in {self.id}")
            seat = self.seats[req.seat]
            if seat.taken:
                raise RequestError(ErrorCode.ROOM_FULL, f"seat {req.seat} is taken")
        else:
            free = [s for s in self.seats if not s.taken]
            if not free:
                raise RequestError(ErrorCode.ROOM_FULL, f"room {self.id} is full")
            seat = free[0]
        token = seat.claim(req.name, conn)
        conn.rooms[self.id] = seat.index
        self.log.info("seat_taken", seat=seat.index, conn=conn.session)
        view, view_hash = self.views.full(seat.index)
        conn.send(self._joined(req.id, seat.index, token, self.rev, view, view_hash))
        self._announce()
        if self.settings.quick and self.free_seats() == 0:
            await self._begin()

    def _resume(self, conn: Connection, req: m.Join, token: str) -> None:
        seat = find_by_token(self.seats, token)
        if seat is None or (req.seat is not None and req.seat != seat.index):
            raise RequestError(ErrorCode.BAD_TOKEN, "no seat of this room has that token")
        if conn.rooms.get(self.id, -1) not in (-1, seat.index):
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        old = seat.conn
        if old is not None and old is not conn:
            old.rooms.pop(self.id, None)
            old.send(m.error(None, ErrorCode.NOT_ALLOWED, "seat resumed elsewhere", self.id))
        self.spectators.discard(conn)
        seat.conn = conn
        conn.rooms[self.id] = seat.index
        self.log.info("seat_resumed", seat=seat.index, conn=conn.session, since=req.rev)
        self._send_joined(conn, req.id, seat.index, req.rev, self.rev)
        self._announce()

    def _send_joined(
        self, conn: Connection, rid: m.RequestId, seat: int | None, since: int | None, upto: int
    ) -> None:
        """A ``joined``, then either the full view or the missed patches from the buffer."""
        frames = self._missed(seat, since, upto)
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
    ) -> dict[str, Any]:
        chat = self.chat.recent(self.spectators.delay if seat is None else None)
        return m.joined(rid, self.id, seat, token, rev, view, view_hash, self.info(), chat)

    def _missed(self, seat: int | None, since: int | None, upto: int) -> list[bytes] | None:
        """The frames of revisions ``since+1 .. upto`` if the buffer still holds them all."""
        if since is None or since > upto:
            return None
        if since == upto:
            return []
        if not self.buffer or self.buffer[0].rev > since + 1:
            return None
        return [
            r.spectator_frame if seat is None else r.seat_frames[seat]
            for r in self.buffer
            if since < r.rev <= upto
        ]

    def _spectate(self, conn: Connection, req: m.Spectate) -> None:
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        self.spectators.add(conn)
        conn.rooms[self.id] = None
        upto = self.spectators.delayed_view()[1] if self.spectators.delayed else self.rev
        self._send_joined(conn, req.id, None, req.rev, upto)
        self._announce()

    def _sync(self, conn: Connection, rid: m.RequestId) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and self.settings.spectator_delay > 0:
            doc, rev, view_hash = self.spectators.delayed_view()
            conn.send(m.state(rid, self.id, rev, doc, view_hash))
            return
        view, view_hash = self.views.full(seat)
        conn.send(m.state(rid, self.id, self.rev, view, view_hash))

    def _leave(self, conn: Connection, req: m.Leave) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {self.id}")
        self._drop(conn)
        conn.send(m.ack(req.id, self.id))
        self._announce()

    def _gone(self, conn: Connection) -> None:
        if self.id in conn.rooms:
            self._drop(conn)
            self._announce()

    def _drop(self, conn: Connection) -> None:
        index = conn.rooms.pop(self.id, None)
        self.spectators.discard(conn)
        if index is None:
            return
        seat = self.seats[index]
        self.log.info("seat_left", seat=index, conn=conn.session, state=self.state.value)
        if seat.conn is conn:
            if self.state is RoomState.OPEN:
                seat.release()
            else:
                seat.conn = None

    def _schedule_reap(self) -> None:
        self._empty_since = time.monotonic()
        asyncio.get_running_loop().call_later(self._idle_ttl, self._post_internal, Reap())

    def _post_internal(self, command: Internal) -> None:
        if self.state is not RoomState.CLOSED:
            try:
                self._inbox.put_nowait((None, command, time.perf_counter()))
            except asyncio.QueueFull:
                self.log.warning("inbox_full_internal", command=type(command).__name__)

    def _reap(self) -> None:
        """Close the room if nobody has been connected for the whole idle time."""
        empty_since = self._empty_since
        if self._members() or self.state is RoomState.CLOSED or empty_since is None:
            return
        left = self._idle_ttl - (time.monotonic() - empty_since)
        if left > 0.001:  # it emptied again after this timer was set: wait for the rest
            asyncio.get_running_loop().call_later(left, self._post_internal, Reap())
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
        await self._begin(free)
        conn.send(m.ack(req.id, self.id, self.rev))

    async def _begin(self, bots: list[Seat] | None = None) -> None:
        """Seat the bots and start, once the store has the room as it will play."""
        for seat in bots or ():
            seat.bot, seat.name = True, f"bot {seat.index + 1}"
        meta = self.meta()
        meta["state"] = RoomState.PLAYING.value
        try:
            await self.store.update_room(self.id, meta)
        except StoreError as exc:
            for seat in bots or ():
                seat.release()
            raise RequestError(ErrorCode.UNAVAILABLE, str(exc)) from None
        for seat in bots or ():
            self._bots[seat.index] = RandomBot(self._seed ^ (0xB07 + seat.index))
        self._transition(RoomEvent.START)
        self.log.info("match_started", bots=sorted(self._bots))
        self._announce()
        self._bot_next()

    def meta(self) -> dict[str, Any]:
        """Room metadata for the store (token digests only, never tokens)."""
        info = self.info()
        info["tokens"] = [seat.token_digest.hex() for seat in self.seats]
        info["quick"] = self.settings.quick
        return info

    def adopt(self, rev: int, meta: dict[str, Any]) -> None:
        """Take over a room rebuilt from the store (the match is already at ``rev``).

        Seats come back with their names, bots and token digests, so players resume with
        their tokens; the patch buffer starts empty, so they get the full view.
        """
        self.rev = rev
        seats = meta.get("seats") or []
        tokens = meta.get("tokens") or []
        for seat, saved, token in zip(self.seats, seats, tokens, strict=False):
            seat.name = str(saved.get("name", ""))
            seat.bot = bool(saved.get("bot", False))
            seat.token_digest = bytes.fromhex(token) if token else b""
            if seat.bot:
                self._bots[seat.index] = RandomBot(self._seed ^ (0xB07 + seat.index) ^ rev)
        state = RoomState(meta.get("state", "open"))
        if self.match.over:
            state = RoomState.FINISHED
        self.state = state  # (before the lobby counts the room in its metrics)
        self.log.info("room_restored", rev=rev, state=state.value)

    async def _act(self, conn: Connection, req: m.Act, t0: float) -> None:
        seat = self._seat_of(conn)
        if req.seat is not None and req.seat != seat.index:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"you hold seat {seat.index}, not seat {req.seat}"
            )
        if self.state is RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, "the match has not started")
        if self.state is RoomState.FINISHED:
            raise RequestError(ErrorCode.GAME_OVER, "the match is over")
        if req.rev != self.rev:
            raise RequestError(
                ErrorCode.STALE_REV, f"you saw rev {req.rev}; the room is at rev {self.rev}"
            )
        legal = self.match.resolve(seat.index, req.choice)
        await self._commit(seat.index, legal, t0)
        conn.send(m.ack(req.id, self.id, self.rev))

    async def _commit(self, seat: int, legal: dict[str, Any], t0: float) -> None:
        """Store, apply, fan out: the one path of every accepted choice."""
        rev = self.rev + 1
        try:
            await self.store.append(self.id, Action(rev, seat, legal))
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, str(exc)) from None
        events = self.match.act(seat, legal)
        self.rev = rev
        revision = self.views.advance(rev, events)
        self.buffer.append(revision)
        for index, holder in enumerate(self.seats):
            if holder.conn is not None:
                holder.conn.send_bytes(revision.seat_frames[index])
        self.spectators.send(revision.spectator_frame, revision)
        self.metrics.actions.labels(self.settings.game).inc()
        self.metrics.patch_bytes.observe(len(revision.spectator_frame))
        self.metrics.action_seconds.observe(time.perf_counter() - t0)
        if self.match.over:
            self._transition(RoomEvent.FINISH)
            self.log.info("match_finished", rev=self.rev)
            self._announce()
            await self._keep(final=True)
        else:
            if self.rev % self._snapshot_every == 0:
                await self._keep(final=False)
            self._bot_next()

    async def _keep(self, *, final: bool) -> None:
        """Snapshot (every ``snapshot_every`` revisions and at the end) and archive at the end.

        The choice is already stored and acknowledged by now, so a failure here only costs
        replay time on recovery: it is logged, never reported to the player.
        """
        try:
            await self.store.snapshot(self.id, self.rev, self.match.game.dump(self.match.state))
            if final:
                result = self.match.result()
                await self.store.finish(self.id, {} if result is None else result.to_json())
        except StoreError as exc:
            self.log.warning("store_keep_failed", rev=self.rev, final=final, error=str(exc))

    def _bot_next(self) -> None:
        decision = self.match.decision
        if self.state is RoomState.PLAYING and decision and decision.seat in self._bots:
            if self._bot_delay > 0:
                asyncio.get_running_loop().call_later(
                    self._bot_delay, self._post_internal, BotTurn(self.rev)
                )
            else:
                self._post_internal(BotTurn(self.rev))

    async def _bot_turn(self, turn: BotTurn, t0: float) -> None:
        decision = self.match.decision
        if turn.rev != self.rev or self.state is not RoomState.PLAYING or decision is None:
            return
        bot = self._bots.get(decision.seat)
        if bot is None:
            return
        # A bot-only stretch must not monopolise the loop: let other rooms run between moves.
        await asyncio.sleep(0)
        index = bot.choose(self.views.own[decision.seat])
        await self._commit(decision.seat, self.match.resolve(decision.seat, index), t0)

    # Spectators and chat ----------------------------------------------------------------------

    async def _chat(self, conn: Connection, req: m.Chat) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and not self.settings.spectator_chat:
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
        self.chat.check_rate(conn.session)
        name = self.seats[seat].name if seat is not None else f"spectator {conn.session[:6]}"
        line = m.chat(self.id, seat, name, req.text, self.rev, time.time())
        try:
            await self.store.append_chat(self.id, line)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, str(exc)) from None
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
        conn.send(m.ack(req.id, self.id))
