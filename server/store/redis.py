"""The Redis store: every accepted choice on disk before it is acknowledged, rooms that survive.

The keys (:mod:`server.store.keys` has their layout) and their records
(:mod:`server.store.records`: the types, their decoding from untrusted bytes, the
``schema_version`` migrations) live apart; this module is the I/O.

Everything a room does while it plays (append, snapshot, chat, meta updates) touches only its own
slot. The two global indexes are written in the same script (or MULTI) as the room's keys when
a room is created, archived or deleted, which a single Redis allows. On a **Redis Cluster**
(``cluster=True``, ``OASIS_REDIS_CLUSTER``) a MULTI or a script must stay in one slot, so those
three calls write the index apart: on create the index entry first (a crash in between leaves
an entry without a room, which recovery skips, never a room nobody lists), on archive and delete
the room's keys first (a crash leaves an index entry for a room that is gone, skipped the same
way); recovery reads each room in its own MULTI.

Create and archive. :meth:`RedisStore.create_room` is one script
(:data:`~server.store.scripts.CREATE`: leftovers of the id dropped, meta, lease, index) and
:meth:`RedisStore.archive` one more (:data:`~server.store.scripts.ARCHIVE`, packing the
archive from the stored blobs in Redis: :mod:`server.store.archive`), both through the group
commit: a match's first and last writes are no round trips of their own, and no longer
redis-py's pipeline (issue 21: three round trips per match, a tiny game's match is ~50
actions).

Write path. :meth:`RedisStore.append` is one EVALSHA (one round trip): a Lua script checks that
the rev is exactly the next one (the ``choices`` length + 1) and that the room is live, then
XADDs the log entry with id ``<rev>-0`` and RPUSHes the same blob to ``choices``. Every check
runs before the first write, so a refused append writes nothing (Redis scripts do not roll
back). The same rev with the same blob again is accepted without a second entry, so resending
an append whose reply was lost is safe (redis-py retries once on a dropped connection for that
reason); any other duplicate, gap or older rev raises :class:`RevisionError`. Redis also refuses
a stream id not above the last one, even after trims: a second guard.

Group commit. Every write of a room's life (its creation, seat updates, appends, snapshots and
its archive), each one script call, goes through the group commit of :mod:`server.store.writes`:
a lone call at once, what arrives while batches are in flight together at the next loop turn,
on a pipelined connection (:mod:`server.store.lane`), in order, each reply mapped on its own.
On a Redis Cluster each call keeps its own round trip.

Recovery reads (:mod:`server.store.recovery`) restore rooms from snapshot + log.

Trim and archive decision (:mod:`server.store.archive`): a snapshot trims the log, the full
list of choices stays beside it for the archive.

Redis trouble and durability. Every call goes through :class:`~server.store.client.Client`
(bounded; any connection error or timeout raises :class:`~server.store.StoreError`, so the room
refuses the choice with ``unavailable`` and acknowledges nothing), which tells
:class:`~server.store.readiness.Readiness`: it marks the store not ready, probes until Redis
stores again, and checks that Redis persists and still holds the same data. Logical refusals
(wrong rev, room gone) raise StoreError subclasses but leave ``ready()`` alone: Redis did answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from server import logging as oasis_logging
from server.store import keys
from server.store.archive import Archives
from server.store.client import Call, Client
from server.store.errors import CorruptRecordError, NotOwnerError
from server.store.fence import Fence
from server.store.records import Action, ArchiveRecord, RoomRecord, pack
from server.store.recovery import Recovery
from server.store.writes import Writes

__all__ = ["RedisStore"]


class RedisStore:
    """The :class:`~server.store.Store` on Redis, plus snapshots, recovery reads and archives.

    One instance serves every room of a server; each room is its only writer (the room task),
    which is what makes the read-then-write of :meth:`finish` safe without WATCH.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "oasis",
        timeout: float = 1.0,
        probe_interval: float = 0.5,
        chat_keep: int = 500,
        batch: int = 100,
        cluster: bool = False,
        pool_size: int = 512,
        allow_volatile: bool = False,
        archive_ttl: float = 0.0,
        watch_interval: float = 5.0,
        fence: Fence | None = None,
    ) -> None:
        self._log = oasis_logging.get(component="redis_store")
        self._client = Client(
            url,
            prefix=prefix,
            timeout=timeout,
            probe_interval=probe_interval,
            cluster=cluster,
            pool_size=pool_size,
            allow_volatile=allow_volatile,
            watch_interval=watch_interval,
            log=self._log,
        )
        self._cluster = cluster
        self._redis: Any = self._client.redis
        self._run = self._client.run
        self._health = self._client.health
        self._prefix = prefix
        self._chat_keep = max(1, chat_keep)
        self._keys = keys.KeyCache(prefix)
        self._fence = fence
        self._writes = Writes(
            self._client,
            self._keys,
            cluster=cluster,
            token="" if fence is None else fence.token,
            lease_ms=0 if fence is None else fence.ms,
        )
        """Every write of a room's life, through the group commit (see "Group commit"), its
        script calls made there (compiled: this module is not)."""
        if type(self).append is RedisStore.append:  # (a subclass's own append is kept)
            # A room's every choice calls the compiled method itself: :meth:`append`, which
            # hands the call on, is an interpreted frame per action (about 2,000 instructions).
            self.append = self._writes.append_action  # type: ignore[method-assign]
        self._archives = Archives(
            self._client, self._writes, self._keys, keys.archived(prefix), ttl=archive_ttl
        )
        self._recovery = Recovery(self._client, self._keys, cluster=cluster, batch=batch)

    @property
    def on_not_owner(self) -> Callable[[str], None] | None:
        """Called with a room whose write was refused because this node lost its lease."""
        return self._writes.on_not_owner

    @on_not_owner.setter
    def on_not_owner(self, listener: Callable[[str], None] | None) -> None:
        self._writes.on_not_owner = listener

    # Keys --------------------------------------------------------------------------------------

    def keys(self, room: str) -> keys.RoomKeys:
        """The keys of ``room`` (cached while it lives); its id may not contain braces."""
        return self._keys.get(room)

    def _forget(self, room: str) -> None:
        """A room archived or deleted: drop its cached key names (:class:`keys.KeyCache`) and
        what its writes keep (:meth:`.Writes.forget`)."""
        self._writes.forget(room)

    def lease_key(self, room: str) -> str:
        """The room's lease (:mod:`server.lease`), in the room's slot."""
        return keys.lease(self._prefix, room)

    @property
    def redis(self) -> Any:
        """The client (for :mod:`server.lease`, which shares the connection pool)."""
        return self._redis

    @property
    def fence(self) -> Fence | None:
        """This node's lease token, given at construction (None: no leases, nothing fenced)."""
        return self._fence

    @property
    def prefix(self) -> str:
        return self._prefix

    async def call(self, what: str, op: Callable[[], Awaitable[Any]]) -> Any:
        """One bounded Redis call of another module (leases, the directory), with this store's
        timeouts, error mapping and readiness tracking."""
        return await self._run(what, op)

    @property
    def pipelined(self) -> bool:
        """Whether :meth:`scripts` may be used: a single Redis, not a Redis Cluster (whose
        calls go through redis-py, each in its own slot)."""
        return not self._cluster

    def scripts(self, what: str, calls: list[Call]) -> Coroutine[Any, Any, list[Any]]:
        """Script calls of another module (the leases, the relay's counts) in one round trip on
        the group commit's connection, under this store's deadline, error mapping and readiness
        tracking (:meth:`.Client.scripts`); only where :attr:`pipelined`."""
        return self._client.scripts(what, calls)

    @property
    def _rooms_key(self) -> str:
        return keys.rooms(self._prefix)

    @property
    def _archived_key(self) -> str:
        return keys.archived(self._prefix)

    # Health ------------------------------------------------------------------------------------

    def ready(self) -> bool:
        """Whether Redis answered the last call (or the probe); see :mod:`.readiness`."""
        return self._health.ready()

    async def start(self) -> None:
        """Open the pool's lasting connections (:meth:`.Client.open_pool`), then probe and
        verify once so ``ready()`` is known at start-up, and keep watching. In this order: each
        new connection asks the watch to verify again once it has started, and a verify running
        while the pool is being opened would take a 33rd connection, made outside the lasting
        set."""
        await self._client.open_pool()
        await self._health.start()

    def problem(self) -> str:
        """Why this Redis is not trusted with acknowledged choices ("": it persists them, or
        ``allow_volatile`` accepts that it does not); ``/readyz`` answers 503 while it is set."""
        return self._health.problem()

    def on_ready_change(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(ready)`` on every transition (from the event loop)."""
        self._health.on_ready_change(listener)

    def on_lost(self, listener: Callable[[str], Awaitable[None]]) -> None:
        """Await ``listener(detail)`` when Redis is found emptied (:mod:`.readiness`)."""
        self._health.on_lost(listener)

    async def verify(self) -> None:
        """Check persistence and the marker now; raises what Redis raises."""
        await self._health.verify()

    @property
    def losses(self) -> int:
        """How many times Redis was found emptied under this store."""
        return self._health.losses

    # The Store protocol ------------------------------------------------------------------------

    def create_room(self, room: str, meta: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """Store a new room's meta and list it as live (one script, :data:`.scripts.CREATE`;
        leftovers of the id go). On a Redis Cluster the index entry is written first, apart.

        Not a coroutine of its own, as :meth:`append` (:meth:`.Writes.create_room`)."""
        return self._writes.create_room(room, meta)

    def update_room(self, room: str, meta: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """Merge ``meta``'s top-level fields into the stored meta (the seed given at creation
        stays even though the room's later meta omits it). Refused for a room that is not live.

        Not a coroutine of its own, as :meth:`append` (:meth:`.Writes.update_room`)."""
        return self._writes.update_room(room, meta)

    def append(
        self, room: str, action: Action, meta: dict[str, Any] | None = None
    ) -> Coroutine[Any, Any, Any]:
        """Store ``action`` before it is acknowledged: one round trip, raise StoreError if not.

        ``meta``: fields merged into the room's metadata by the same script, with the choice
        (a clock room's clocks as they are after it), so they cost no second round trip.

        Not a coroutine of its own: the script call is made by compiled code
        (:meth:`.Writes.append_action`), which hands back the group commit's coroutine for the
        room to await. As a coroutine of this interpreted module it would be one more frame
        that every step of the write resumes (issue 21: 35,000 instructions per tiny action
        with the Redis log, 5 %). Nor is this method called: the constructor puts
        :meth:`.Writes.append_action` in its place on the instance (unless a subclass has its
        own), so that the call is not an interpreted frame either."""
        return self._writes.append_action(room, action, meta)

    @property
    def append_batches(self) -> int:
        """How many round trips carried the group commit's calls (every write of a room's life
        but its chat; with ``appends_batched``: the batching)."""
        return self._writes.batches

    @property
    def appends_batched(self) -> int:
        return self._writes.items

    async def append_chat(self, room: str, line: dict[str, Any]) -> None:
        """Keep a chat line with the match (the last ``chat_keep``); ignored once it is over.
        Alone, not through the group commit: a chat line is acknowledged by nothing."""
        k = self.keys(room)
        blob = pack(line)
        names = [k.meta, k.chat, k.lease]
        what = f"chat in room {room}"
        writes = self._writes
        chat = writes.chat
        args = [blob, self._chat_keep, writes.token]
        try:
            await self._run(what, lambda: chat(keys=names, args=args))
        except NotOwnerError:
            if writes.on_not_owner is not None:
                writes.on_not_owner(room)
            raise

    def finish(self, room: str, result: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Archive the finished match and drop its live keys (see :meth:`archive`). Not a
        coroutine of its own, as :meth:`append`."""
        return self.archive(room, result)

    async def close(self) -> None:
        self._writes.close()
        await self._health.close()
        await self._writes.drain()  # appends on their way: let them land and answer their rooms
        await self._client.close()

    # Snapshots and recovery --------------------------------------------------------------------

    def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """Store the full state after ``rev`` (``game.dump``, generator included) and trim the
        log up to it (one round trip). An older snapshot than the stored one is ignored; one
        beyond the log is refused. ``state`` is encoded as soon as the call starts; the room
        awaits it, or hands a task a fresh ``game.dump`` that nothing else mutates. Not a
        coroutine of its own, as :meth:`append` (:meth:`.Writes.snapshot_state`)."""
        return self._writes.snapshot_state(room, rev, state)

    async def unfinished_rooms(self) -> list[str]:
        """Every live room, oldest first."""
        return await self._recovery.unfinished_rooms()

    async def load_room(self, room: str) -> RoomRecord | None:
        """Meta, latest snapshot and the actions after it, read in one MULTI (a consistent view).

        None if the room is not live; :class:`CorruptRecordError` if its data cannot be read.
        """
        found = (await self.load_rooms([room]))[room]
        if isinstance(found, CorruptRecordError):
            raise found
        return found

    async def load_rooms(
        self, rooms: Sequence[str]
    ) -> dict[str, RoomRecord | CorruptRecordError | None]:
        """Load many rooms (:meth:`.Recovery.load_rooms`)."""
        return await self._recovery.load_rooms(rooms)

    async def actions_after(self, room: str, rev: int) -> list[Action]:
        """Every stored action after ``rev`` (:meth:`.Recovery.actions_after`)."""
        return await self._recovery.actions_after(room, rev)

    # Archives ----------------------------------------------------------------------------------

    def archive(self, room: str, result: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Archive the match and drop the room's live keys (:meth:`Archives.archive`; its
        cached key names go too). Not a coroutine of its own, as :meth:`append`."""
        return self._archives.archive(room, result)

    async def load_archive(self, room: str) -> ArchiveRecord | None:
        """The archive of a finished match, or None."""
        return await self._archives.load(room)

    async def missing(self, rooms: Sequence[str]) -> list[str]:
        """Those of ``rooms`` whose live keys are gone from Redis (:meth:`.Recovery.missing`)."""
        return await self._recovery.missing(rooms)

    async def archived_rooms(self) -> list[str]:
        """Every archived room, oldest first."""
        return await self._archives.rooms()

    async def delete(self, room: str) -> None:
        """Forget ``room`` entirely, archive included (a room closed before it ever started)."""
        k = self.keys(room)

        async def op() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(*k.live(), k.archive)
            if self._cluster:
                await pipe.execute()
                await self._redis.zrem(self._rooms_key, room)
                await self._redis.zrem(self._archived_key, room)
                return
            pipe.zrem(self._rooms_key, room)
            pipe.zrem(self._archived_key, room)
            await pipe.execute()

        await self._run(f"delete room {room}", op)
        self._forget(room)
