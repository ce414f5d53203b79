"""The lobby: the rooms of this server, by id. Creating, listing, finding, quick match.

Owned by the :class:`~server.app.App` (no module-global registry of rooms, STYLE "Not to
copy"). Everything here is synchronous except the store call on create; what happens inside a
room is the room's business, reached through its inbox.

Resource control (:mod:`server.quotas`): ``max_rooms`` counts the rooms being created as well
as the ones served, checked and reserved before the first ``await``, so concurrent creates never
pass it; each room created holds a place in its creator's ``rooms_per_connection`` and
``rooms_per_address`` (and a replay room in ``replays_per_connection``) until it finishes or
closes. The public rooms are also kept in a :class:`~server.listing.RoomIndex` for
``list_rooms``, updated as rooms are added and closed. What the store's health means for the
rooms (pause, resume, storage lost) is :class:`~server.store_watch.StoreWatch`'s.

A room whose task failed (a bug: :meth:`Room._failed <server.room.Room._failed>`) is brought back
from the store (:meth:`Lobby.recover`): the durable log is the truth, so the new room is at the
last stored choice, and its members are sent an unasked ``redirect`` with no ``url`` (reconnect
and resume, SPEC section 18). A room that cannot be rebuilt is closed, and so is one that failed
:data:`MAX_RECOVERIES` times already on this node (a bug that its own timers or bots set off
again would otherwise rebuild it for ever). On a cluster such a room is still live in Redis:
its lease is given up and the orphan scan takes it over again a lease round later (on any node),
so there the cap slows a failing room down to one rebuild per round rather than closing it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from games import registry
from games.base import Match
from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.bots import BOT_KINDS
from server.clock import parse_clock
from server.config import Config
from server.connection import Connection
from server.core import RoomCore
from server.listing import Filters, Key, RoomIndex, cut, page_size, parse_cursor
from server.metrics import Metrics
from server.quotas import Holdings, Quotas
from server.recovery import rebuild
from server.room import Room
from server.room_state import Admit, Internal, RoomSettings, RoomState, Tuning
from server.store import (
    ArchiveRecord,
    CorruptRecordError,
    MemoryStore,
    RoomMeta,
    Store,
    StoreError,
)
from server.store_watch import StoreWatch
from server.trim import Trimmer

try:  # (read by mypyc at build time; a no-op where mypy_extensions is not installed)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda x: x


MAX_RECOVERIES: Final = 3
"""Times one room is rebuilt after its task failed, per node (:meth:`Lobby.recover`)."""


def _rematch_settings(old: RoomSettings, host: str) -> RoomSettings:
    """A rematch's settings: the finished room's, not a quick match, hosted by ``host``.

    Written out, not ``dataclasses.replace``, which reads the class's fields anew at every call
    (about 38,000 instructions a rematch: more than making the settings);
    tests/server/test_new_match.py holds it to ``replace``'s result, field by field.
    The finished room's own settings when they already say so (never changed once made): the
    same player asking again for a rematch of a rematch, with nothing new to make."""
    if not old.quick and old.host == host:
        return old
    return RoomSettings(
        game=old.game,
        players=old.players,
        options=old.options,
        public=old.public,
        spectator_delay=old.spectator_delay,
        spectator_chat=old.spectator_chat,
        quick=False,
        host=host,
        replay_of=old.replay_of,
        replay_interval=old.replay_interval,
        bot=old.bot,
        clock=old.clock,
    )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one (a room made in a test: its task's loop
    is then the one it starts in, :meth:`Room.start_task <server.room.Room.start_task>`)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _pick(
    rooms: dict[str, Room], state: str | None, free: bool, room_id: str
) -> Callable[[], dict[str, Any]] | None:
    """:meth:`Lobby.picker`'s: room ``room_id``'s ``info`` if it is served and passes the
    filters (``state``: its state's value, or None for any; ``free``: open with a free seat)."""
    room = rooms.get(room_id)
    if room is None:
        return None
    if state is not None and room.state.value != state:
        return None
    if free and (room.state is not RoomState.OPEN or room.free_seats() <= 0):
        return None
    return room.info


@mypyc_attr(native_class=False)  # (compiled methods; an instance's may be replaced, as tests do)
class Lobby:
    def __init__(self, config: Config, store: Store, metrics: Metrics, quotas: Quotas) -> None:
        self.config = config
        self.store = store
        self.metrics = metrics
        self.quotas = quotas
        self.rooms: dict[str, Room] = {}
        self.index = RoomIndex()
        """The public rooms, for :meth:`page`."""
        self._keys: dict[str, tuple[Key, str]] = {}
        """Room id -> its key in the index and its game."""
        # (no lambda or nested function in a method: mypyc's classes of native_class=False
        # cannot compile one)
        self.trimmer = Trimmer(self.rooms.__len__)
        """Gives the memory of closed rooms back to the system (:mod:`server.trim`)."""
        self.creating: set[str] = set()
        """Rooms whose ``create_room`` is in flight: already in the store, not yet in ``rooms``."""
        self._rematches: dict[str, asyncio.Future[None]] = {}
        """Finished rooms whose rematch is being made (its room stored), each to a future done
        then: a second ``rematch`` of one waits for it."""
        self.publish: Callable[[Room, bytes, bytes], None] | None = None
        """The relay's publisher (:mod:`server.relay`), given to every stored room."""
        self.log = oasis_logging.get(component="lobby")
        c = config
        self._tuning = Tuning(
            patch_buffer=c.patch_buffer,
            chat_per_minute=c.chat_per_minute,
            chat_log=c.chat_log,
            room_chat_per_minute=c.room_chat_per_minute,
            bot_delay=c.bot_delay,
            idle_ttl=c.room_idle_ttl,
            finished_ttl=c.finished_room_ttl,
            moved_ttl=c.moved_room_ttl,
            takeover_grace=c.takeover_grace,
        )
        """The node's numbers for its rooms, made once (the config does not change)."""
        self._replay_tuning = dataclasses.replace(self._tuning, idle_ttl=0.0)
        """A replay room's: it closes as soon as its last spectator leaves."""
        self._recoveries: set[asyncio.Task[Room | None]] = set()
        """Failed rooms being brought back (:meth:`recover`)."""
        self._failures: dict[str, int] = {}
        """Room id -> how many times its task failed here."""
        self.store_watch = StoreWatch(store, self.rooms, config.resume_after, self.log)
        """Tells the rooms when the store goes down, comes back or lost them."""

    def serves(self, room_id: str) -> bool:
        """This lobby has the room, or is creating it (another claim must not restore it)."""
        return room_id in self.rooms or room_id in self.creating

    def get(self, room_id: str) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            raise RequestError(ErrorCode.NOT_FOUND, f"no room {room_id!r}")
        return room

    def page(self, req: m.ListRooms) -> tuple[list[dict[str, Any]], str | None]:
        """One page of this node's public rooms, oldest first, and the cursor of the next."""
        after = None if req.after is None else parse_cursor(req.after)
        keys = self.index.after(req.game, after)
        return cut(keys, self.picker(Filters.of(req)), page_size(req, self.config.list_page))

    def picker(self, filters: Filters) -> Callable[[str], Callable[[], dict[str, Any]] | None]:
        """For :func:`~server.listing.cut`: a served room passing ``filters``, by id."""
        return functools.partial(_pick, self.rooms, filters.state, filters.free)

    def _reserve(self) -> None:
        """Refuse a new room when the rooms served and being created reach ``max_rooms``."""
        if len(self.rooms) + len(self.creating) >= self.config.max_rooms:
            self.metrics.refused.labels("max_rooms").inc()
            raise RequestError(
                ErrorCode.UNAVAILABLE, "this server holds all the rooms it can", "max_rooms"
            )

    def _holdings(self, conn: Connection | None) -> Holdings:
        """A new room's places in its creator's room quotas (refused: nothing is held)."""
        held = Holdings()
        if conn is None:
            return held
        q = self.quotas
        q.rooms_per_connection.check(conn.session)
        q.rooms_per_address.check(conn.ip)
        held.take(q.rooms_per_connection, conn.session)
        held.take(q.rooms_per_address, conn.ip)
        return held

    async def create(
        self,
        req: m.Create,
        host: str,
        *,
        quick: bool = False,
        conn: Connection | None = None,
    ) -> Room:
        """A new room (``conn``: its creator, whose quotas it counts in; None for tests)."""
        self._reserve()
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
            clock=parse_clock(req.clock),
        )
        bots = range(req.players - req.bots, req.players)
        return await self._make(settings, req.seed, bots, conn)

    async def _make(
        self,
        settings: RoomSettings,
        seed: int | None,
        bots: Sequence[int],
        conn: Connection | None,
    ) -> Room:
        """A new room of ``settings`` (``seed`` None: a random one), server bots in the seats
        ``bots``, stored, then served here (counted in ``conn``'s quotas, if any)."""
        game = registry.get(settings.game)
        seed = seed if seed is not None else secrets.randbits(63)
        match = Match(game, game.setup(settings.players, settings.options, seed))
        room = self._room(secrets.token_hex(5), settings, match, seed)
        for index in bots:
            seat = room.seats[index]
            seat.bot, seat.name, seat.bot_kind = True, f"bot {seat.index + 1}", settings.bot
        meta = room.meta(seed=seed)
        held = self._holdings(conn)
        # While the store writes the room, it is live there but not in ``rooms`` yet: the
        # cluster's orphan scan must not take it for a dead node's room (server.cluster).
        # Counted by _reserve too, from here on: no await came between the check and this.
        self.creating.add(room.id)
        try:
            await self.store.create_room(room.id, meta.to_json())
        except BaseException:
            held.release()
            raise
        finally:
            self.creating.discard(room.id)
        room.hold(held)
        self._add(room)
        return room

    async def rematch(self, req: m.Rematch, conn: Connection) -> None:
        """``rematch`` (SPEC section 9): a new room with the finished room's settings (a new
        seed; not a quick match; its host the requester), the same seats held by server bots,
        and every member of the finished room moved into it by the new room's task
        (:class:`~server.room_state.Admit`, which answers the requester), which then tells the
        finished room who moved out (:class:`~server.room_state.Moved`). A room with a
        ``spectator_delay`` keeps its spectators: their feed has not shown the end yet, and
        ``info.rematch`` tells them where the players went.

        A finished room has one rematch: asked for again (a second player at the same time, a
        retry), the request waits for the rematch being made and goes to its room, which
        answers it behind the move (:meth:`~server.membership.Membership.again`)."""
        old = self.get(req.room)
        making = self._rematches.get(old.id)
        if making is not None:
            await asyncio.shield(making)
        if old.rematch is not None:
            room = self.rooms.get(old.rematch)
            if room is None:
                raise RequestError(
                    ErrorCode.NOT_ALLOWED,
                    f"room {old.id} has had its rematch, room {old.rematch}, closed since",
                )
            room.submit(conn, req)
            return
        if old.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {old.id}")
        if conn.rooms[old.id] is None:
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators cannot ask for a rematch")
        if old.state is not RoomState.FINISHED:
            raise RequestError(
                ErrorCode.NOT_ALLOWED,
                f"room {old.id} is {old.state.value}: a rematch follows a finished match",
            )
        self._reserve()
        self.quotas.spend("create", conn.session, conn.ip)
        settings = _rematch_settings(old.settings, conn.session)
        bots = [seat.index for seat in old.seats if seat.bot]
        made: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._rematches[old.id] = made
        try:
            room = await self._make(settings, None, bots, conn)
        finally:
            del self._rematches[old.id]
            made.set_result(None)
        old.rematch = room.id
        # Who is in the finished room now (no await since: its members as they are). Each is
        # checked again where it moves (the new room's task): one that left meanwhile stays out.
        seats = tuple(
            (seat.conn, seat.index, seat.name) for seat in old.seats if seat.conn is not None
        )
        delayed = old.settings.spectator_delay > 0
        spectators = () if delayed else tuple(old.spectators.members)
        room.submit(conn, Admit(req.id, old.id, seats, spectators))

    def restore(
        self,
        room_id: str,
        meta: RoomMeta,
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
            game=match.game.name,  # (the game the match was rebuilt with: the meta's)
            players=meta.players if meta.players is not None else len(meta.seats),
            options=dict(meta.options or {}),
            public=meta.public,
            spectator_delay=meta.spectator_delay,
            spectator_chat=meta.spectator_chat,
            quick=meta.quick,
            host=meta.host,
            bot=meta.bot,
            clock=parse_clock(meta.clock),
        )
        room = self._room(room_id, settings, match, meta.seed or 0)
        room.adopt(rev, meta, chat or [])
        self._add(room)
        return room

    async def replay(self, req: m.Replay, conn: Connection) -> Room:
        """A new replay room of an archived match, with ``conn`` as its first spectator.

        The room plays the archive's choices by itself on a throwaway in-memory store (nothing
        of a replay is stored); it starts only after the spectator is in, so the first patch
        it sees is rev 1. The room closes as soon as its last spectator leaves, and holds a
        place in ``replays_per_connection`` until then."""
        self._reserve()
        self.quotas.replays.check(conn.session)
        self.quotas.replays_per_address.check(conn.ip)
        placeholder = "replay-" + secrets.token_hex(5)
        self.creating.add(placeholder)  # counted by _reserve while the archive is read
        try:
            archive = await self.store.load_archive(req.room)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, f"cannot read the archive ({exc})") from None
        finally:
            self.creating.discard(placeholder)
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
        held = Holdings()
        held.take(self.quotas.replays, conn.session)  # (refused here: nothing was made yet)
        try:
            held.take(self.quotas.replays_per_address, conn.ip)
        except RequestError:
            held.release()
            raise
        room = self._room(placeholder, settings, match, archive.seed, MemoryStore())
        room.hold(held)
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
        """A new room's actor (:class:`~server.room.Room`) around its core, the core made here:
        compiled, a native call with its arguments in place, where the interpreted actor's
        ``__init__`` had the core's keywords parsed anew at every new match. The core's time
        is the room's (:meth:`Room._now <server.room.Room._now>`: the loop's clock, or
        ``time.monotonic`` outside a loop, in tests)."""
        store = self.store if store is None else store
        loop = _running_loop()
        created = time.time()
        now = loop.time() if loop is not None else time.monotonic()
        core = RoomCore(
            room_id,
            settings,
            match,
            self._replay_tuning if settings.replay_of is not None else self._tuning,
            seed=seed,
            metrics=self.metrics,
            log=oasis_logging.get(room=room_id, game=settings.game),
            paused=not store.ready(),
            epoch=created - now,
            quotas=self.quotas,
        )
        return Room(
            core,
            store=store,
            metrics=self.metrics,
            inbox_size=self.config.inbox_size,
            created=created,
            loop=loop,
            snapshot_every=self.config.snapshot_every,
            on_close=self._closed,
            on_fail=self._failed,
            forward=self._forward,
            publish=self.publish if settings.replay_of is None else None,
        )

    def _add(self, room: Room) -> None:
        self.rooms[room.id] = room
        if room.settings.public and room.settings.replay_of is None:
            key = (room.created, room.id)
            self._keys[room.id] = (key, room.settings.game)
            self.index.add(key, room.settings.game)
        room.start_task()  # (from here on the room counts itself in ``metrics.rooms``)

    def _forward(self, room_id: str, command: Internal) -> None:
        """A room's command for another room of this node (:class:`~server.effects.Forward`);
        dropped if that room is gone."""
        room = self.rooms.get(room_id)
        if room is not None:
            room.post(command)

    def forget(self, room_id: str) -> Room | None:
        """Take a room out of the lobby (closed, or gone to another node), its quotas freed."""
        room = self.rooms.pop(room_id, None)
        entry = self._keys.pop(room_id, None)
        if entry is not None:
            key, game = entry  # (not ``*entry``: a call through a tuple, not a native one)
            self.index.remove(key, game)
        if room is not None:
            room.release()
        return room

    async def evict(self, room_id: str) -> Room | None:
        """The room's lease moved to another node (:mod:`server.cluster`): out of the lobby
        (quotas and listing too), then closed by its own task (``close`` in its table) once
        the commands queued before now are done. The room, or None if it was not here."""
        room = self.forget(room_id)
        if room is not None:
            await room.evict()
        return room

    def open_quick(self, req: m.Quick) -> Room | None:
        """The oldest open public quick room of this node for ``req``'s game and size with a
        free seat, or None."""
        for room in self.rooms.values():
            s = room.settings
            if (
                s.quick
                and s.public
                and s.game == req.game
                and s.players == req.players
                and room.state is RoomState.OPEN
                and room.free_seats() > 0
            ):
                return room
        return None

    async def quick(self, req: m.Quick, host: str, conn: Connection | None = None) -> Room:
        """The oldest open public quick room of this game and size with a free seat, or a new.

        The game and player count are checked first: a quick match nobody could play costs
        no scan and no storage."""
        game = registry.get(req.game)
        game.check_options(req.players, {})
        room = self.open_quick(req)
        if room is not None:
            return room
        if conn is not None:
            self.quotas.spend("create", conn.session, conn.ip)
        create = m.Create(req.id, req.game, req.players)
        return await self.create(create, host, quick=True, conn=conn)

    def _closed(self, room: Room) -> None:
        self.forget(room.id)
        self.trimmer.room_closed()

    def _failed(self, room: Room, members: list[Connection]) -> None:
        task = asyncio.get_running_loop().create_task(self.recover(room, members))
        self._recoveries.add(task)
        task.add_done_callback(self._recoveries.discard)

    async def recover(self, failed: Room, members: list[Connection]) -> Room | None:
        """Bring back a room whose task failed (the module doc), from what the store holds;
        tell its ``members`` to resume it. The new room, or None (closed: finished, a replay
        room, or not rebuilt).

        The failed room stays in the lobby (refusing everything: it is closed) until its
        successor replaces it in one step, so a cluster's lease loop never finds it gone."""
        room_id = failed.id
        restored: Room | None = None
        failures = self._failures[room_id] = self._failures.get(room_id, 0) + 1
        if failures > MAX_RECOVERIES:
            self.log.error("room_not_restored", room=room_id, error=f"failed {failures} times")
        elif failed.settings.replay_of is None:
            try:
                found = (await self.store.load_rooms([room_id]))[room_id]
                if isinstance(found, CorruptRecordError):
                    raise found  # (logged below, as any other reason it cannot be rebuilt)
                if found is not None and self.rooms.get(room_id) is failed:
                    match = rebuild(found)
                    self.forget(room_id)
                    restored = self.restore(room_id, found.info, match, found.rev, found.chat)
            except Exception as exc:  # the store, a recovery error, an engine refusing its data
                error = f"{type(exc).__name__}: {exc}"
                self.log.error("room_not_restored", room=room_id, error=error)
        if self.rooms.get(room_id) is failed:
            self.forget(room_id)
            self.trimmer.room_closed()
        self.metrics.room_failures.labels("closed" if restored is None else "restored").inc()
        if restored is not None:
            self.log.warning("room_restored", room=room_id, rev=restored.rev)
            reason = "it failed (a server bug) and was rebuilt"
        else:
            reason = "it failed (a server bug) and is closed"
        for conn in members:
            conn.rooms.pop(room_id, None)
            conn.send(f.Redirect(None, room_id, "", reason))
        return restored

    async def stop(self) -> None:
        for task in list(self._recoveries):
            task.cancel()
        self.trimmer.stop()
        self.store_watch.stop()
        for room in list(self.rooms.values()):
            await room.stop()
