"""The lobby: the rooms of this server, by id. Creating, listing, finding, quick match.

Owned by the :class:`~server.app.App` (no module-global registry of rooms, STYLE "Not to
copy"). Everything here is synchronous except the store call on create; what happens inside a
room is the room's business, reached through its inbox.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from games import registry
from games.base import Match
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server.bots import BOT_KINDS
from server.clock import parse_clock
from server.config import Config
from server.connection import Connection
from server.metrics import Metrics
from server.records import ArchiveRecord
from server.room import Room
from server.room_state import RoomSettings, StoreReady
from server.store import MemoryStore, Store, StoreError


class Lobby:
    def __init__(self, config: Config, store: Store, metrics: Metrics) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.rooms: dict[str, Room] = {}
        self._resume: asyncio.TimerHandle | None = None
        """The pending resume of the paused rooms (see :meth:`_store_ready`)."""
        self.creating: set[str] = set()
        """Rooms whose ``create_room`` is in flight: already in the store, not yet in ``rooms``."""
        store.on_ready_change(self._store_ready)

    def _store_ready(self, ready: bool) -> None:
        """Every room pauses at once, and resumes once the store stayed usable a while.

        Debounced on purpose: a store that flaps (a saturated Redis whose calls time out one
        moment and answer the next) would otherwise make every room send ``pause`` and log at
        every transition. Pausing is never delayed, and a room already paused ignores another
        pause (no frame, no log line); resuming waits until the store has been ready for
        ``resume_after`` seconds without a break. Delaying the resume costs only refused
        choices: nothing is acknowledged before it is stored, paused or not."""
        if not ready:
            if self._resume is not None:
                self._resume.cancel()
                self._resume = None
            self._post(StoreReady(False))
        elif self.config.resume_after <= 0:
            self._post(StoreReady(True))
        elif self._resume is None:
            loop = asyncio.get_running_loop()
            self._resume = loop.call_later(self.config.resume_after, self._settled)

    def _settled(self) -> None:
        self._resume = None
        if self.store.ready():
            self._post(StoreReady(True))

    def _post(self, command: StoreReady) -> None:
        """Every stored room gets ``command`` through its inbox, in order with its requests."""
        for room in list(self.rooms.values()):
            if room.settings.replay_of is None:
                room.post(command)

    def serves(self, room_id: str) -> bool:
        """This lobby has the room, or is creating it (another claim must not restore it)."""
        return room_id in self.rooms or room_id in self.creating

    def get(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            raise RequestError(ErrorCode.NOT_FOUND, f"no room {room_id!r}")
        return room

    def listing(self, game: str | None) -> list[dict[str, Any]]:
        """Public rooms, oldest first (optionally of one game)."""
        return [
            room.info()
            for room in self.rooms.values()
            if room.settings.public and (game is None or room.settings.game == game)
        ]

    async def create(self, req: m.Create, host: str, *, quick: bool = False) -> Room:
        if len(self.rooms) >= self.config.max_rooms:
            raise RequestError(ErrorCode.UNAVAILABLE, "this server holds all the rooms it can")
        game = registry.get(req.game)
        options = game.check_options(req.players, req.options)
        if req.seed is not None and not self.config.allow_seed:
            raise RequestError(ErrorCode.NOT_ALLOWED, "this server does not accept seeds")
        if req.bot not in BOT_KINDS:
            raise RequestError(
                ErrorCode.BAD_REQUEST, f"create: 'bot' must be one of {', '.join(BOT_KINDS)}"
            )
        if req.bots > req.players:
            raise RequestError(ErrorCode.BAD_REQUEST, "create: more 'bots' than players")
        clock = parse_clock(req.clock)
        seed = req.seed if req.seed is not None else secrets.randbits(63)
        match = Match(game, game.setup(req.players, options, seed))
        settings = RoomSettings(
            game=game.name,
            players=req.players,
            options=options,
            public=req.public,
            spectator_delay=req.spectator_delay,
            spectator_chat=req.spectator_chat,
            quick=quick,
            host=host,
            bot=req.bot,
            clock=clock,
        )
        room = self._room(secrets.token_hex(5), settings, match, seed)
        for seat in room.seats[req.players - req.bots :]:
            seat.bot, seat.name, seat.bot_kind = True, f"bot {seat.index + 1}", req.bot
        meta = room.meta()
        meta["seed"] = seed
        # While the store writes the room, it is live there but not in ``rooms`` yet: the
        # cluster's orphan scan must not take it for a dead node's room (server.cluster).
        self.creating.add(room.id)
        try:
            await self.store.create_room(room.id, meta)
        finally:
            self.creating.discard(room.id)
        self._add(room)
        return room

    def restore(
        self,
        room_id: str,
        meta: dict[str, Any],
        match: Match[Any],
        rev: int,
        chat: list[dict[str, Any]] | None = None,
    ) -> Room:
        """Bring back a room rebuilt from the store (:func:`server.recovery.restore_all`).

        Never over a room this lobby serves: that room's members and seats would stay with the
        old object while requests reach the new one."""
        if self.serves(room_id):
            raise RuntimeError(f"room {room_id} is served here already")
        settings = RoomSettings(
            game=str(meta["game"]),
            players=int(meta["players"]),
            options=dict(meta.get("options") or {}),
            public=bool(meta.get("public", True)),
            spectator_delay=float(meta.get("spectator_delay") or 0.0),
            spectator_chat=bool(meta.get("spectator_chat", True)),
            quick=bool(meta.get("quick", False)),
            host=str(meta.get("host") or ""),
            bot=str(meta.get("bot") or "random"),
            clock=parse_clock(meta.get("clock")),
        )
        room = self._room(room_id, settings, match, int(meta.get("seed") or 0))
        room.adopt(rev, meta, chat or [])
        self._add(room)
        return room

    async def replay(self, req: m.Replay, conn: Connection) -> Room:
        """A new replay room of an archived match, with ``conn`` as its first spectator.

        The room plays the archive's choices by itself on a throwaway in-memory store (nothing
        of a replay is stored); it starts only after the spectator is in, so the first patch
        it sees is rev 1."""
        if len(self.rooms) >= self.config.max_rooms:
            raise RequestError(ErrorCode.UNAVAILABLE, "this server holds all the rooms it can")
        try:
            archive = await self.store.load_archive(req.room)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, f"cannot read the archive ({exc})") from None
        if archive is None:
            raise RequestError(ErrorCode.NOT_FOUND, f"no finished match {req.room!r}")
        match = self._replayed(archive)
        settings = RoomSettings(
            game=archive.game,
            players=archive.players,
            options=archive.options,
            public=False,
            spectator_delay=0.0,
            spectator_chat=False,
            quick=False,
            host=conn.session,
            replay_of=archive.room,
            replay_interval=req.interval,
        )
        room = self._room(
            "replay-" + secrets.token_hex(5), settings, match, archive.seed, MemoryStore()
        )
        room.replay(archive.actions)
        room.submit(conn, m.Spectate(req.id, room.id, None))
        self._add(room)
        return room

    @staticmethod
    def _replayed(archive: ArchiveRecord) -> Match[Any]:
        try:
            game = registry.get(archive.game)
            return Match.new(game, archive.players, archive.options, archive.seed)
        except Exception as exc:  # a game that is gone or options it refuses now
            raise RequestError(
                ErrorCode.UNAVAILABLE, f"cannot replay {archive.room}: {type(exc).__name__}"
            ) from None

    def _room(
        self,
        room_id: str,
        settings: RoomSettings,
        match: Match[Any],
        seed: int,
        store: Store | None = None,
    ) -> Room:
        c = self.config
        return Room(
            room_id,
            settings,
            match,
            store=self.store if store is None else store,
            metrics=self.metrics,
            patch_buffer=c.patch_buffer,
            inbox_size=c.inbox_size,
            chat_per_minute=c.chat_per_minute,
            chat_log=c.chat_log,
            bot_delay=c.bot_delay,
            idle_ttl=c.room_idle_ttl,
            seed=seed,
            snapshot_every=c.snapshot_every,
            on_close=self._closed,
            takeover_grace=c.takeover_grace,
        )

    def _add(self, room: Room) -> None:
        self.rooms[room.id] = room
        self.metrics.rooms.labels(room.state.value).inc()
        room.start_task()

    async def quick(self, req: m.Quick, host: str) -> Room:
        """The oldest open public quick room of this game and size with a free seat, or a new."""
        for room in self.rooms.values():
            s = room.settings
            if (
                s.quick
                and s.public
                and s.game == req.game
                and s.players == req.players
                and room.state.value == "open"
                and room.free_seats() > 0
            ):
                return room
        create = m.Create(req.id, req.game, req.players)
        return await self.create(create, host, quick=True)

    def _closed(self, room: Room) -> None:
        self.rooms.pop(room.id, None)

    async def stop(self) -> None:
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        for room in list(self.rooms.values()):
            await room.stop()
