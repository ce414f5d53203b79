"""Several nodes over one Redis: which rooms this node serves, and where clients of others go.

One :class:`Cluster` per node (when the store is Redis), beside the :class:`~server.app.App`:

- **Start-up** (:meth:`Cluster.start`, before the server listens): list the node, then take and
  restore every live room whose lease is free or held by a dead process of this node id
  (:mod:`server.lease`); rooms other nodes hold stay theirs.
- **The loop**, every third of ``lease_ttl``: heartbeat, renew the leases of the rooms served here
  (a room whose lease another node took is *evicted*: its task stops, its members are told where
  it went; a lease that merely lapsed is taken back),
  free the leases of rooms that closed here, and take over orphans: live rooms whose lease expired
  because their node died. A dead node's rooms therefore come back on the others within a ttl and
  a third after its last renewal.
- **Routing** (:meth:`Cluster.route`): a request for a room this node does not serve is answered
  with a ``redirect`` frame naming the owner's public address; a room with no owner is taken
  over here on the spot (so a client of a dead or stopping node's room is served as soon as the
  lease is free, without waiting for the loop).
- **Lobby across nodes**: ``list_rooms`` pages through Redis's index of live rooms (by creation
  time), reading the listed fields of at most :data:`~server.listing.MAX_SCAN` other nodes'
  rooms per page (:meth:`Cluster.page`); ``quick`` looks at the oldest :data:`QUICK_SCAN` live
  rooms the same way (:meth:`Cluster.quick`); a quick match in another node's room is a
  ``redirect`` there. Neither reads every room's meta.
- **Stopping** (:meth:`Cluster.hand_off`, on SIGTERM after the rooms finished their inboxes):
  snapshot each room (where no step is open to an undo), release its lease, leave the
  registry and name a live peer, which the
  ``bye`` frame passes on to the clients; that peer (or any) takes the rooms over at once when
  their clients arrive.
- **Fencing**: the store refuses any write of a room whose lease this node does not hold
  (:class:`~server.store.NotOwnerError`); the store calls :meth:`Cluster.not_owner`, which
  takes a lapsed lease back if no node holds it (the room stays, members and all), and
  otherwise evicts the room at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.config import Config
from server.connection import Connection
from server.lease import Holder, Leases, node_id
from server.listing import MAX_SCAN, Filters, Key, cursor, page_size, parse_cursor
from server.recovery import RecoveryError, rebuild
from server.relay import spectator_counts
from server.room import Room
from server.room_state import RoomState
from server.store import CorruptRecordError, RoomMeta, RoomRecord, StoreError, keys, records
from server.store.fence import Fence
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.app import App

QUICK_SCAN = 2000
"""Live rooms (oldest first) a ``quick`` looks at for another node's waiting room; past them it
opens a room here."""
QUICK_FIELDS = ("quick", "public", "game", "players", "state", "seats")
QUICK_CHUNK = 200
QUICK_CANDIDATES = 8
"""Waiting rooms a ``quick`` stops scanning at (the oldest first) before asking who holds them."""


def default_url(config: Config, port: int) -> str:
    """``ws://<host>:<port>/``; listening on every interface, the host's full name stands for the
    host (a pod's DNS name under a headless Service; set ``OASIS_PUBLIC_URL`` wherever clients
    reach nodes by another name)."""
    host = config.host if config.host not in ("", "0.0.0.0", "::") else socket.getfqdn()
    return f"ws://{host}:{port}/"


def fence_of(config: Config) -> Fence:
    """This process's lease token, for the store the cluster runs on (:mod:`server.store.fence`):
    the node id (:func:`server.lease.node_id`), the public url and the lease ttl of ``config``."""
    url = config.public_url or default_url(config, config.port)
    return Fence.new(node_id(config.node_id, config.port), url, config.lease_ttl)


class Cluster:
    def __init__(self, app: App, store: RedisStore, config: Config) -> None:
        self.app = app
        self.store = store
        self.config = config
        self.leases = Leases(store)  # (the store was built with this node's fence_of(config))
        store.on_not_owner = self.not_owner
        self.stopping = False
        self._held: set[str] = set()
        self._claims: dict[str, asyncio.Future[bool]] = {}
        self._evicting: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self.log = oasis_logging.get(component="cluster", node=self.leases.node)

    @property
    def node(self) -> str:
        return self.leases.node

    @property
    def closing(self) -> bool:
        """The node is stopping: it takes no room over any more."""
        return self.stopping or self.app.stopping

    def local(self) -> list[str]:
        """The stored rooms this node serves (replay rooms store nothing)."""
        return [r.id for r in self.app.lobby.rooms.values() if r.settings.replay_of is None]

    # Start-up and the loop ---------------------------------------------------------------------

    async def start(self, stop: asyncio.Event | None = None, *, retry: float = 1.0) -> None:
        """List the node and take its share of rooms; wait for Redis (until ``stop``)."""
        while True:
            try:
                await self.leases.heartbeat()
                claimed, failed = await self.claim_orphans()
                break
            except StoreError as exc:
                self.log.error("restore_waiting_for_redis", error=str(exc))
                if stop is not None and stop.is_set():
                    return
                await asyncio.sleep(retry)
        self.log.info("rooms_restored", restored=claimed, failed=failed)
        self._loop_task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        period = max(0.05, self.leases.ttl / 3)
        while not self.stopping:
            await asyncio.sleep(period)
            try:
                await self.tick()
            except StoreError as exc:
                self.log.warning("lease_round_failed", error=str(exc))
            except Exception:
                self.log.exception("lease_round_crashed")

    async def tick(self) -> None:
        """One round: heartbeat, renew, free what closed, take orphans."""
        await self.leases.heartbeat()
        local = self.local()
        lost = await self.leases.renew(local)
        for room in lost:
            self.not_owner(room)
        closed = sorted(self._held - set(local))
        await self.leases.release(closed)
        self._held = set(local) - set(lost)
        if not self.closing:
            await self.claim_orphans()

    async def claim_orphans(self, batch: int = 100) -> tuple[int, int]:
        """Take over every live room nobody holds (or a dead process of this node held), a batch
        of leases and reads per round trip; (rooms restored, rooms that could not be)."""
        lobby = self.app.lobby
        rooms = [
            r
            for r in await self.store.unfinished_rooms()
            if not lobby.serves(r) and r not in self._claims
        ]
        holders = await self.leases.holders(rooms)
        free = [r for r, h in holders.items() if h is None or h.node == self.node]
        random.shuffle(free)  # nodes racing for a dead node's rooms share them out
        claimed = failed = 0
        for start in range(0, len(free), batch):
            if self.closing:
                break
            chunk = [r for r in free[start : start + batch] if r not in self._claims]
            futures = self._begin_claims(chunk)
            results: dict[str, bool] = {}
            try:
                got = await self.leases.acquire_many(chunk)
                loaded = await self.store.load_rooms(got)
                for room in got:
                    results[room] = await self._restore(room, loaded[room])
            finally:
                self._end_claims(futures, results)
            claimed += sum(results.values())
            failed += sum(1 for ok in results.values() if not ok)
            taken = sorted(room for room, ok in results.items() if ok)
            if taken:  # one line per batch (a restart restores thousands of rooms)
                self.log.info("rooms_taken_over", count=len(taken), rooms=taken[:20])
        return claimed, failed

    async def claim(self, room: str) -> bool:
        """Take ``room``'s lease and restore it here; False if another node has it or it is not
        live. Concurrent claims of one room share one attempt."""
        if self.app.lobby.serves(room):
            return True
        pending = self._claims.get(room)
        if pending is not None:
            return await asyncio.shield(pending)
        futures = self._begin_claims([room])
        results: dict[str, bool] = {}
        try:
            if not self.closing and await self.leases.acquire(room):
                loaded = await self.store.load_rooms([room])
                results[room] = await self._restore(room, loaded[room])
        finally:
            self._end_claims(futures, results)
        return results.get(room, False)

    def _begin_claims(self, rooms: list[str]) -> dict[str, asyncio.Future[bool]]:
        loop = asyncio.get_running_loop()
        futures = {room: loop.create_future() for room in rooms}
        self._claims.update(futures)
        return futures

    def _end_claims(
        self, futures: dict[str, asyncio.Future[bool]], results: dict[str, bool]
    ) -> None:
        for room, future in futures.items():
            self._claims.pop(room, None)
            if not future.done():
                future.set_result(results.get(room, False))

    async def _restore(self, room: str, found: RoomRecord | CorruptRecordError | None) -> bool:
        """Serve a room whose lease this node holds now, from its stored record."""
        if self.app.lobby.serves(room):
            # Created or restored here while the lease and record were read (a record read
            # then is stale: restoring it would replace the live room, bench found seats lost).
            self._held.add(room)
            return True
        if found is None:  # finished or deleted meanwhile
            await self._release_quietly(room)
            return False
        try:
            if isinstance(found, CorruptRecordError):
                raise RecoveryError(room, str(found).removeprefix(f"room {room}: "))
            match = rebuild(found)
        except Exception as exc:  # a recovery error, or an engine refusing stored data
            self.log.error("room_not_restored", room=room, error=f"{type(exc).__name__}: {exc}")
            await self._release_quietly(room)
            return False
        self.app.lobby.restore(found.room, found.info, match, found.rev, found.chat)
        self._held.add(room)
        self.log.debug("room_taken_over", room=room, rev=found.rev)
        return True

    async def _release_quietly(self, room: str) -> None:
        with contextlib.suppress(StoreError):
            await self.leases.release([room])

    # Losing a room -----------------------------------------------------------------------------

    def not_owner(self, room: str) -> None:
        """This node lost ``room``'s lease (a refused write or renewal): evict it now."""
        if room in self._evicting or room not in self.app.lobby.rooms:
            return
        self._evicting.add(room)
        self._spawn(self._evict(room))

    async def _evict(self, room_id: str) -> None:
        try:
            room = self.app.lobby.rooms.get(room_id)
            if room is None:
                return
            if await self._regain(room_id):
                self.log.warning("lease_regained", room=room_id, rev=room.rev)
                return
            self.log.warning("lease_lost", room=room_id, rev=room.rev)
            members = _members(room)  # (before the lobby lets its spectators go)
            self._held.discard(room_id)
            await self.app.lobby.evict(room_id)
            url = ""
            with contextlib.suppress(StoreError):
                holder = await self.leases.holder(room_id)
                if holder is not None:  # (this node again, if it took the orphan back already)
                    url = holder.url
            for conn in members:
                conn.rooms.pop(room_id, None)
                conn.send(f.Redirect(None, room_id, url, "the room moved to another node"))
        finally:
            self._evicting.discard(room_id)

    async def _regain(self, room_id: str) -> bool:
        """Take back a lease that lapsed while nobody else took it (renewals that failed while
        Redis was slow or down): the room stays here with its members attached.

        Evicting it instead would have this node restore it again on its clients' next request,
        as a new room none of them is a member of (every choice ``not_allowed``, as one bench
        run saw after a store outage). Safe because every write stays fenced and rev-checked:
        if another node held the room meanwhile and stored choices, the next append is refused
        with a rev error and the room adopts what landed (:class:`~server.keeper.Keeper`)."""
        if self.closing:
            return False
        try:
            regained = await self.leases.acquire(room_id)
        except StoreError:
            return False
        if regained:
            self._held.add(room_id)
        return regained

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # Routing -----------------------------------------------------------------------------------

    async def route(self, conn: Connection, room: str, rid: m.RequestId) -> bool:
        """For a request about ``room``: True if it was answered with a ``redirect`` (another node
        owns the room); False if the lobby should handle it (the room is, or now is, served here,
        or does not exist). Redis trouble is ``unavailable``."""
        try:
            return await self._route(conn, room, rid)
        except StoreError as exc:
            raise _unavailable(exc) from None

    async def _route(self, conn: Connection, room: str, rid: m.RequestId) -> bool:
        if room in self.app.lobby.rooms or self.closing or "{" in room or "}" in room:
            return False
        holder = await self.leases.holder(room)
        if holder is None and not await self._live(room):
            return False  # no such room: the lobby says not_found
        if holder is None or holder.node == self.node:
            if await self.claim(room):
                return False
            holder = await self.leases.holder(room)
            if holder is None or holder.node == self.node:
                return False
        conn.send(f.Redirect(rid, room, holder.url, f"room {room} is served by another node"))
        return True

    async def _live(self, room: str) -> bool:
        key = keys.rooms(self.store.prefix)
        score = await self.store.call(f"is {room} live", lambda: self.store.redis.zscore(key, room))
        return score is not None

    # The lobby across nodes --------------------------------------------------------------------

    async def _scan(
        self, after: Key | None, count: int, fields: tuple[str, ...]
    ) -> tuple[list[tuple[Key, dict[str, Any] | None]], bool]:
        """Up to ``count`` live rooms after ``after`` in Redis's index of live rooms (by the time
        they were created), each with ``fields`` of its stored meta (None for this node's own
        rooms, which are read from memory instead), and whether the index has no more after
        them. One ZRANGEBYSCORE and one pipelined HMGET: the work is bounded by ``count``,
        never by the number of rooms. A room whose meta is gone is left out."""
        key = keys.rooms(self.store.prefix)
        low: float | str = "-inf" if after is None else after[0]
        redis = self.store.redis
        # Rooms with the same score as ``after`` come back again: ask for that many more.
        extra = 0 if after is None else 8

        async def scan() -> list[Any]:
            return list(
                await redis.zrangebyscore(
                    key, low, "+inf", start=0, num=count + extra, withscores=True
                )
            )

        members = await self.store.call("list live rooms", scan)
        found: list[tuple[Key, str]] = []
        for member, score in members:
            room = member.decode() if isinstance(member, bytes) else str(member)
            k = (float(score), room)
            if after is None or k > after:
                found.append((k, room))
        exhausted = len(members) < count + extra and len(found) <= count
        found = found[:count]
        remote = [room for _, room in found if room not in self.app.lobby.rooms]

        async def read() -> list[Any]:
            pipe = redis.pipeline(transaction=False)
            for room in remote:
                pipe.hmget(self.store.keys(room).meta, list(fields))
            return list(await pipe.execute())

        raw = await self.store.call(f"read {len(remote)} metas", read) if remote else []
        metas: dict[str, dict[str, Any] | None] = {}
        for room, values in zip(remote, raw, strict=True):
            packed = {n.encode(): v for n, v in zip(fields, values, strict=True) if v is not None}
            try:
                metas[room] = records.unpack_fields(room, packed) if packed else None
            except CorruptRecordError:
                metas[room] = None
        out: list[tuple[Key, dict[str, Any] | None]] = []
        for k, room in found:
            if room in self.app.lobby.rooms:
                out.append((k, None))
            elif metas.get(room) is not None:
                out.append((k, metas[room]))
        return out, exhausted or not found

    async def _walk(
        self, after: Key | None, fields: tuple[str, ...], chunk: int, limit: int
    ) -> AsyncIterator[tuple[Key, dict[str, Any] | None, bool]]:
        """The live rooms after ``after`` in chunks of ``chunk``, at most ``limit`` of them,
        each with its meta (as :meth:`_scan`) and whether more may follow it."""
        seen = 0
        while seen < limit:
            batch, exhausted = await self._scan(after, min(chunk, limit - seen), fields)
            if not batch:
                return
            for i, (k, meta) in enumerate(batch):
                seen += 1
                yield k, meta, not (exhausted and i == len(batch) - 1)
            if exhausted:
                return
            after = batch[-1][0]

    async def page(self, req: m.ListRooms) -> tuple[list[dict[str, Any]], str | None]:
        """:meth:`_page`, each room's ``spectators`` counted over every node: this node's now,
        the others' as they last wrote them (:mod:`server.relay`; one more round trip per
        page; if it fails, the counts of the room's own node as listed)."""
        out, after = await self._page(req)
        relay = self.app.relay
        if out and relay is not None:
            with contextlib.suppress(StoreError):
                rooms = [str(i["room"]) for i in out]
                others = await spectator_counts(self.store, rooms, self.node)
                here = relay.here()
                for info, room in zip(out, rooms, strict=True):
                    info["spectators"] = here.get(room, 0) + others.get(room, 0)
        return out, after

    async def _page(self, req: m.ListRooms) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the public rooms of every node, oldest first: this node's as they are
        now, the others' as their meta was last stored (seats and state; ``rev`` may lag).
        Read from Redis a chunk at a time (twice the page), at most
        :data:`~server.listing.MAX_SCAN` rooms per page. Without Redis: this node's only."""
        lobby = self.app.lobby
        after = None if req.after is None else parse_cursor(req.after)
        filters = Filters.of(req)
        size = page_size(req, self.app.config.list_page)
        out: list[dict[str, Any]] = []
        scanned = 0
        local = lobby.picker(filters)
        try:
            async for k, meta, more in self._walk(after, LISTED_FIELDS, 2 * size, MAX_SCAN):
                scanned += 1
                info = self._listed(k[1], meta, req.game, filters, local)
                if info is not None:
                    out.append(info())
                if not more:
                    return out, None
                if len(out) >= size or scanned >= MAX_SCAN:
                    return out, cursor(k)
        except StoreError:
            return lobby.page(req)
        return out, None

    def _listed(
        self,
        room: str,
        meta: dict[str, Any] | None,
        game: str | None,
        filters: Filters,
        local: Callable[[str], Callable[[], dict[str, Any]] | None],
    ) -> Callable[[], dict[str, Any]] | None:
        """A listed room's ``info`` getter (None: not listed): this node's from memory."""
        if meta is None:
            here = self.app.lobby.rooms.get(room)
            if here is None or not here.settings.public or here.settings.replay_of:
                return None
            if game is not None and here.settings.game != game:
                return None
            return local(room)
        stored = RoomMeta.from_json(meta, room)
        if not stored.public or (game is not None and stored.game != game):
            return None
        if not filters.accept(stored.state, stored.free_seats):
            return None
        return lambda: _info(room, meta)

    async def quick(self, conn: Connection, req: m.Quick) -> bool:
        """True if the quick match was sent to another node's open quick room (``redirect``).
        Without Redis: False (the lobby then fails to create a room, with ``unavailable``)."""
        try:
            return await self._quick(conn, req)
        except StoreError:
            return False

    async def _quick(self, conn: Connection, req: m.Quick) -> bool:
        for here in self.app.lobby.rooms.values():
            s = here.settings
            if (
                s.quick
                and s.public
                and s.game == req.game
                and s.players == req.players
                and here.state is RoomState.OPEN
                and here.free_seats() > 0
            ):
                return False  # the lobby finds it
        candidates: list[str] = []
        async for k, meta, more in self._walk(None, QUICK_FIELDS, QUICK_CHUNK, QUICK_SCAN):
            stored = None if meta is None else RoomMeta.from_json(meta, k[1])
            if (
                stored is not None
                and stored.quick
                and stored.public
                and stored.game == req.game
                and stored.players == req.players
                and stored.state == "open"
                and stored.free_seats > 0
            ):
                candidates.append(k[1])
            if candidates and (not more or len(candidates) >= QUICK_CANDIDATES):
                break
        if not candidates:
            return False
        holders = await self.leases.holders(candidates)
        for room in candidates:
            holder: Holder | None = holders[room]
            if holder is not None and holder.node != self.node:
                conn.send(f.Redirect(req.id, room, holder.url, "a quick match waits there"))
                return True
        return False

    # Stopping ----------------------------------------------------------------------------------

    async def hand_off(self) -> str:
        """After the rooms stopped: snapshot and release every room, leave; a peer's url or "".

        A room with a step open to an undo is not snapshotted (:attr:`Match.settled`): its last
        settled snapshot and the log's tail give the peer the steps the undo needs."""
        self.stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop_task
        rooms = [self.app.lobby.rooms[r] for r in self.local() if r in self.app.lobby.rooms]
        for room in rooms:
            if room.state is RoomState.PLAYING and room.rev > 0 and room.match.settled:
                with contextlib.suppress(StoreError):
                    await self.store.snapshot(
                        room.id, room.rev, room.match.game.dump(room.match.state)
                    )
        peer = ""
        try:
            await self.leases.release([r.id for r in rooms])
            await self.leases.leave()
            peers = await self.leases.peers()
            if peers:
                peer = random.choice(sorted(peers.values()))
        except StoreError as exc:
            self.log.warning("hand_off_incomplete", error=str(exc))
        self.log.info("handed_off", rooms=len(rooms), peer=peer)
        return peer


def _unavailable(exc: StoreError) -> RequestError:
    return RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable; try again ({exc})")


def _members(room: Room) -> list[Connection]:
    out = [seat.conn for seat in room.seats if seat.conn is not None]
    out.extend(room.spectators)
    return out


_INFO_KEYS = frozenset(
    {
        "room",
        "game",
        "players",
        "options",
        "public",
        "state",
        "rev",
        "seats",
        "spectators",
        "spectator_delay",
        "spectator_chat",
        "paused",
        "replay_of",
        "clock",
    }
)
"""What ``info`` holds (SPEC section 8): a stored room's meta also keeps what clients are not
shown (token digests, the host, the seed, the bots' kind, the clock state)."""

LISTED_FIELDS = tuple(sorted(_INFO_KEYS - {"room"}))
"""The meta fields a page of ``list_rooms`` reads of another node's room."""


def _info(room: str, meta: dict[str, Any]) -> dict[str, Any]:
    info = {k: v for k, v in meta.items() if k in _INFO_KEYS}
    info["room"] = room
    return info
