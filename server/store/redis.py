"""The Redis store: every accepted choice on disk before it is acknowledged, rooms that survive.

The keys (:mod:`server.store.keys` has their layout) and their records
(:mod:`server.store.records`: the types, their decoding from untrusted bytes, the
``schema_version`` migrations) live apart; this module is the I/O.

Everything a room does while it plays (append, snapshot, chat, meta updates) touches only its own
slot. The two global indexes are written in the same MULTI as the room's keys when a room is
created, archived or deleted, which a single Redis allows. On a **Redis Cluster** (``cluster=True``,
``OASIS_REDIS_CLUSTER``) a MULTI must stay in one slot, so those three calls write the index
apart: on create the index entry first (a crash in between leaves an entry without a room, which
recovery skips, never a room nobody lists), on archive and delete the room's keys first (a crash
leaves an index entry for a room that is gone, skipped the same way); recovery reads each room in
its own MULTI.

Write path. :meth:`RedisStore.append` is one EVALSHA (one round trip): a Lua script checks that
the rev is exactly the next one (the ``choices`` length + 1) and that the room is live, then
XADDs the log entry with id ``<rev>-0`` and RPUSHes the same blob to ``choices``. Every check
runs before the first write, so a refused append writes nothing (Redis scripts do not roll
back). The same rev with the same blob again is accepted without a second entry, so resending
an append whose reply was lost is safe (redis-py retries once on a dropped connection for that
reason); any other duplicate, gap or older rev raises :class:`RevisionError`. Redis also refuses
a stream id not above the last one, even after trims: a second guard.

Group commit. Appends, seat updates (:meth:`RedisStore.update_room`) and snapshots, the
writes a room makes while it is set up and plays, each one script call, go through
:class:`~server.store.commit.GroupCommit` (a lone call goes at once; what arrives while
batches are in flight goes together at the next loop turn), whose sender this store is: a batch
is its EVALSHAs written at once on the group commit's own pipelined connection
(:meth:`.Client.commit_scripts`, :mod:`server.store.lane`: packed there, not by redis-py's
pipeline), each reply mapped on its own (a wrong rev fails that room only; a batch
that fails as a whole fails each of its calls, an unknown outcome like any lost reply).
A room has one write in flight at a time and a batch keeps the order of its calls, so nothing
about order changes; what they share is the per-call path (issue 21: with matches ending
and starting all the time, the seat updates of their set-ups were as many lone round trips as
their choices' appends). On a Redis Cluster each call keeps its own round trip.

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

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from redis.typing import EncodableT, FieldT

from server import logging as oasis_logging
from server.store import keys, records, scripts
from server.store.archive import Archives
from server.store.client import Client
from server.store.commit import GroupCommit, Pending
from server.store.errors import CorruptRecordError, NotOwnerError, StoreError
from server.store.fence import Fence
from server.store.records import Action, ArchiveRecord, RoomRecord, pack

__all__ = ["RedisStore"]


@dataclass(frozen=True, slots=True)
class _Call:
    """One script call of the group commit (a :class:`GroupCommit` payload): an append, a seat
    update or a snapshot."""

    script: Any
    keys: list[str]
    args: list[EncodableT]


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
        self._batch = batch
        self._append = self._redis.register_script(scripts.APPEND)
        self._snapshot = self._redis.register_script(scripts.SNAPSHOT)
        self._update = self._redis.register_script(scripts.UPDATE)
        self._chat = self._redis.register_script(scripts.CHAT)
        self._keys = keys.KeyCache(prefix)
        self._commit: GroupCommit[_Call] = GroupCommit(self._send_calls)
        """The group commit of appends, seat updates and snapshots (see "Group commit")."""
        self._fence = fence
        self._token = "" if fence is None else fence.token
        """This node's lease token (:mod:`.fence`); empty: no leases, nothing is fenced."""
        self.on_not_owner: Callable[[str], None] | None = None
        """Called with a room whose write was refused because this node lost its lease."""
        self._archives = Archives(
            self._client, self._keys, keys.archived(prefix), cluster=cluster, ttl=archive_ttl
        )

    # Keys --------------------------------------------------------------------------------------

    def keys(self, room: str) -> keys.RoomKeys:
        """The keys of ``room`` (cached while it lives); its id may not contain braces."""
        return self._keys.get(room)

    def _forget(self, room: str) -> None:
        """A room archived or deleted: drop its cached key names (:class:`keys.KeyCache`)."""
        self._keys.forget(room)

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

    async def _fenced(self, room: str, what: str, op: Callable[[], Awaitable[Any]]) -> Any:
        """:meth:`_run` for a fenced script: a lost lease is told to ``on_not_owner``."""
        try:
            return await self._run(what, op)
        except NotOwnerError:
            if self.on_not_owner is not None:
                self.on_not_owner(room)
            raise

    # The Store protocol ------------------------------------------------------------------------

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        """Store a new room's meta and list it as live (one MULTI; leftovers of the id go)."""
        k = self.keys(room)

        async def op() -> None:
            if self._cluster:
                await self._redis.zadd(self._rooms_key, {room: time.time()})
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(*k.live())
            pipe.hset(k.meta, mapping=_pack_fields(meta))
            if self._fence is not None:  # the creating node owns the room from its first write
                pipe.set(k.lease, self._fence.token, px=self._fence.ms)
            if not self._cluster:
                pipe.zadd(self._rooms_key, {room: time.time()})
            await pipe.execute()

        await self._run(f"create room {room}", op)

    async def update_room(self, room: str, meta: dict[str, Any]) -> None:
        """Merge ``meta``'s top-level fields into the stored meta (the seed given at creation
        stays even though the room's later meta omits it). Refused for a room that is not live."""
        k = self.keys(room)
        args: list[EncodableT] = []
        for name, value in _pack_fields(meta).items():
            args += [name, value]
        if not args:
            return
        await self._script(room, f"update room {room}", self._update, [k.meta, k.lease], args)

    async def append(self, room: str, action: Action, meta: dict[str, Any] | None = None) -> None:
        """Store ``action`` before it is acknowledged: one round trip, raise StoreError if not.

        ``meta``: fields merged into the room's metadata by the same script, with the choice
        (a clock room's clocks as they are after it), so they cost no second round trip."""
        k = self.keys(room)
        blob = pack([action.seat, action.choice])
        names = [k.meta, k.log, k.choices, k.lease]
        fields: list[EncodableT] = []
        for name, value in _pack_fields(meta or {}).items():
            fields += [name, value]
        what = f"append rev {action.rev} to room {room}"
        await self._script(room, what, self._append, names, [action.rev, blob, *fields])

    async def _script(
        self, room: str, what: str, script: Any, names: list[str], args: list[EncodableT]
    ) -> None:
        """One fenced script call of ``room`` (this node's lease token goes last), through the
        group commit; a lost lease is told to ``on_not_owner``."""
        args = [*args, self._token]
        if self._cluster:
            await self._fenced(room, what, lambda: script(keys=names, args=args))
            return
        try:
            await self._commit.submit(what, _Call(script, names, args))
        except NotOwnerError:
            if self.on_not_owner is not None:
                self.on_not_owner(room)
            raise

    @property
    def append_batches(self) -> int:
        """How many round trips carried the group commit's calls (appends, seat updates and
        snapshots; with ``appends_batched``: the batching)."""
        return self._commit.batches

    @property
    def appends_batched(self) -> int:
        return self._commit.items

    async def _send_calls(self, batch: Sequence[Pending[_Call]]) -> list[StoreError | None]:
        """One round trip for a batch of script calls (a lone one is one call, more a
        pipeline), each reply mapped on its own; the :class:`GroupCommit`'s sender."""
        calls = [(i.payload.script, i.payload.keys, i.payload.args) for i in batch]
        what = batch[0].what if len(batch) == 1 else f"{len(batch)} writes"
        replies = await self._run(what, partial(self._client.commit_scripts, calls))
        outcome = self._client.outcome
        return [outcome(i.what, reply) for i, reply in zip(batch, replies, strict=True)]

    async def append_chat(self, room: str, line: dict[str, Any]) -> None:
        """Keep a chat line with the match (the last ``chat_keep``); ignored once it is over."""
        k = self.keys(room)
        blob = pack(line)
        await self._fenced(
            room,
            f"chat in room {room}",
            lambda: self._chat(
                keys=[k.meta, k.chat, k.lease], args=[blob, self._chat_keep, self._token]
            ),
        )

    async def finish(self, room: str, result: dict[str, Any]) -> None:
        """Archive the finished match and drop its live keys (see :meth:`archive`)."""
        await self.archive(room, result)

    async def close(self) -> None:
        self._commit.close()
        await self._health.close()
        await self._commit.drain()  # appends on their way: let them land and answer their rooms
        await self._client.close()

    # Snapshots and recovery --------------------------------------------------------------------

    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None:
        """Store the full state after ``rev`` (``game.dump``, generator included) and trim the
        log up to it (one round trip). An older snapshot than the stored one is ignored; one
        beyond the log is refused. ``state`` is encoded as soon as the call starts; the room
        awaits it, or hands a task a fresh ``game.dump`` that nothing else mutates."""
        k = self.keys(room)
        blob = records.snapshot_blob(rev, state)
        names = [k.meta, k.log, k.choices, k.snap, k.lease]
        await self._script(
            room, f"snapshot rev {rev} of room {room}", self._snapshot, names, [rev, blob]
        )

    async def unfinished_rooms(self) -> list[str]:
        """Every live room, oldest first."""
        raw: list[bytes] = await self._run(
            "list rooms", lambda: self._redis.zrange(self._rooms_key, 0, -1)
        )
        return [r.decode() for r in raw]

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
        """Load many rooms, ``batch`` per round trip; a corrupt room is reported in its entry and
        does not stop the others."""
        out: dict[str, RoomRecord | CorruptRecordError | None] = {}
        for start in range(0, len(rooms), self._batch):
            chunk = rooms[start : start + self._batch]
            raw: list[Any] = await self._run(f"load {len(chunk)} rooms", partial(self._read, chunk))
            for room, parts in zip(chunk, records.groups(raw, 5), strict=True):
                try:
                    out[room] = records.record(room, *parts)
                except CorruptRecordError as exc:
                    out[room] = exc
        return out

    async def _read(self, rooms: Sequence[str]) -> list[Any]:
        if self._cluster:  # one MULTI per room: a transaction stays in one slot
            out: list[Any] = []
            for room in rooms:
                out += await self._multi_read([room])
            return out
        return await self._multi_read(rooms)

    async def _multi_read(self, rooms: Sequence[str]) -> list[Any]:
        pipe = self._redis.pipeline(transaction=True)
        for room in rooms:
            k = self.keys(room)
            pipe.hgetall(k.meta)
            pipe.hgetall(k.snap)
            pipe.xrange(k.log)
            pipe.llen(k.choices)
            pipe.lrange(k.chat, 0, -1)
        return list(await pipe.execute())

    async def actions_after(self, room: str, rev: int) -> list[Action]:
        """Every stored action after ``rev`` (from the full list): a room whose append failed
        with an unknown outcome asks this before it goes on, to adopt a choice that did land."""
        k = self.keys(room)
        raw: list[bytes] = await self._run(
            f"read actions of room {room}", lambda: self._redis.lrange(k.choices, rev, -1)
        )
        return [records.action(room, rev + 1 + i, blob) for i, blob in enumerate(raw)]

    # Archives ----------------------------------------------------------------------------------

    async def archive(self, room: str, result: dict[str, Any]) -> None:
        """Archive the match and drop the room's live keys (:meth:`Archives.archive`)."""
        await self._archives.archive(room, result)
        self._forget(room)

    async def load_archive(self, room: str) -> ArchiveRecord | None:
        """The archive of a finished match, or None."""
        return await self._archives.load(room)

    async def missing(self, rooms: Sequence[str]) -> list[str]:
        """Those of ``rooms`` whose live keys are gone from Redis (one pipeline)."""
        if not rooms:
            return []

        async def op() -> list[Any]:
            pipe = self._redis.pipeline(transaction=False)
            for room in rooms:
                pipe.exists(self.keys(room).meta)
            return list(await pipe.execute())

        found = await self._run(f"check {len(rooms)} rooms", op)
        return [room for room, there in zip(rooms, found, strict=True) if not there]

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


# Helpers ------------------------------------------------------------------------------------


def _pack_fields(meta: dict[str, Any]) -> dict[FieldT, EncodableT]:
    return {name: pack(value) for name, value in meta.items()}
