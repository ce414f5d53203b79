"""The lobby across nodes (:mod:`server.cluster`): ``list_rooms`` and ``quick`` over Redis's
index of live rooms, without reading every room's meta.

``list_rooms`` pages through the index (by creation time), reading the listed fields of at most
:data:`~server.listing.MAX_SCAN` other nodes' rooms per page (:meth:`Directory.page`; this
node's own rooms are read from memory), each room's ``spectators`` counted over every node
(:func:`server.relay.spectator_counts`); ``quick`` looks at the oldest :data:`QUICK_SCAN` live
rooms the same way (:meth:`Directory.quick`), and a quick match in another node's room is a
``redirect`` there. The same cursors as the one-node lobby's (:mod:`server.listing`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol import messages as m
from server.connection import Connection
from server.lease import Holder, Leases
from server.listing import MAX_SCAN, Filters, Key, cursor, page_size, parse_cursor
from server.relay import spectator_counts
from server.store import CorruptRecordError, RoomMeta, StoreError, keys, records
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.lobby import Lobby
    from server.relay import Relay

QUICK_SCAN = 2000
"""Live rooms (oldest first) a ``quick`` looks at for another node's waiting room; past them it
opens a room here."""
QUICK_FIELDS = ("quick", "public", "game", "players", "state", "seats")
QUICK_CHUNK = 200
QUICK_CANDIDATES = 8
"""Waiting rooms a ``quick`` stops scanning at (the oldest first) before asking who holds them."""


class Directory:
    """Every node's rooms as the lobby lists and matches them, read from Redis a chunk at a
    time; ``relay``: the node's relay when it has one (its spectator counts)."""

    def __init__(
        self,
        store: RedisStore,
        lobby: Lobby,
        leases: Leases,
        list_page: int,
        relay: Callable[[], Relay | None],
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.leases = leases
        self.list_page = list_page
        self.relay = relay

    @property
    def node(self) -> str:
        return self.leases.node

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
        remote = [room for _, room in found if room not in self.lobby.rooms]

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
            if room in self.lobby.rooms:
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
        relay = self.relay()
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
        lobby = self.lobby
        after = None if req.after is None else parse_cursor(req.after)
        filters = Filters.of(req)
        size = page_size(req, self.list_page)
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
            here = self.lobby.rooms.get(room)
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
        if self.lobby.open_quick(req) is not None:
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
