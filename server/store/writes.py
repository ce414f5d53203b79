"""A room's writes, from its creation to its archive: each one script, through the group commit.

Group commit. A room's creation (:data:`~server.store.scripts.CREATE`), its seat updates, appends
and snapshots, and its archive (:data:`~server.store.scripts.ARCHIVE`), each one EVALSHA, go
through :class:`~server.store.commit.GroupCommit` (a lone call at once; what arrives meanwhile goes
together next), whose sender :class:`Writes` is: a batch (a lone call too) is its EVALSHAs written
at once on the group commit's own connection (:meth:`.Client.commit`; each packed here as it is
made, :class:`~.client.Call`, not by redis-py's pipeline), each reply mapped on its own (a wrong
rev fails that room only; a batch that fails as a whole fails each of its calls, an unknown outcome
like any lost reply). A room has one write in flight at a time and a batch keeps the order of its
calls, so nothing about order or acknowledgement changes: a room is created before its first seat
update is sent, its last choice is stored before its archive is sent. What they share is the
per-call path (issue 21: with matches ending and starting all the time, their creations, seat
updates and archives were as many lone round trips as their choices' appends, and a creation and an
archive each went through redis-py's pipeline). On a Redis Cluster each call keeps its own round
trip (and the global indexes are written apart: :mod:`server.store.redis`).

Failures are those of :meth:`.Client.run` (here :meth:`.Client.commit`): a dropped connection
is retried once (every script is idempotent: a resent append, creation or archive stores
nothing twice), a Redis that lost its scripts gets them loaded and those calls sent again, a
Redis away raises :class:`~server.store.StoreError` and marks the store not ready.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

from redis.typing import EncodableT

from server.store import keys, scripts
from server.store.client import Call, Client, bulk, evalsha_append, evalsha_head, script_call
from server.store.commit import GroupCommit, Pending
from server.store.errors import NotOwnerError, StoreError
from server.store.keys import KEY_CACHE_SIZE
from server.store.records import Action, archive_head, pack, snapshot_blob

__all__ = ["Call", "Writes", "put_fields"]

_APPEND_KEYS: Final = 4
"""How many keys an append names (:meth:`Writes._append_keys`: meta, log, choices, lease)."""


class Writes:
    """The scripts of one Redis store, the group commit that sends them, and the script calls
    of a room's writes, made here (compiled) for :class:`~server.store.redis.RedisStore`."""

    def __init__(
        self, client: Client, names: keys.KeyCache, *, cluster: bool, token: str, lease_ms: int
    ) -> None:
        self._client = client
        self._keys = names
        self._rooms_key = keys.rooms(names.prefix)
        self._cluster = cluster
        self._token = token
        """This node's lease token (:mod:`.fence`); empty: no leases, nothing is fenced."""
        self._token_bulk = bulk(token)
        """The token as the last argument of a fenced command (:func:`.client.evalsha_append`)."""
        self._lease_ms = lease_ms
        """The lease's ttl in milliseconds, given to a room created here (0: no leases)."""
        redis = client.redis
        self.append = redis.register_script(scripts.APPEND)
        self.snapshot = redis.register_script(scripts.SNAPSHOT)
        self.update = redis.register_script(scripts.UPDATE)
        self.chat = redis.register_script(scripts.CHAT)
        self.create = redis.register_script(scripts.CREATE)
        self.archive = redis.register_script(scripts.ARCHIVE)
        self._commit: GroupCommit[Call] = GroupCommit(self._send)
        self._append_heads: dict[str, bytes] = {}
        """Each live room's append command from its name through its four keys
        (:func:`.client.evalsha_head`), packed at its first append, not at every one (about
        5,000 instructions each); forgotten with its key names (:meth:`forget`)."""
        self.on_not_owner: Callable[[str], None] | None = None
        """Called with a room whose write was refused because this node lost its lease."""

    @property
    def token(self) -> str:
        return self._token

    # A room's writes (RedisStore's, which documents them) ---------------------------------------

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        """:meth:`.RedisStore.create_room`: one script, :data:`.scripts.CREATE`; on a Redis
        Cluster the index entry written first, apart."""
        k = self._keys.get(room)
        now = time.time()
        args: list[EncodableT] = [self._token, self._lease_ms, room, repr(now)]
        put_fields(args, meta)
        names = [*k.live(), k.lease]
        what = f"create room {room}"
        if self._cluster:
            redis, rooms = self._client.redis, self._rooms_key
            await self._client.run(what, lambda: redis.zadd(rooms, {room: now}))
        else:
            names.append(self._rooms_key)
        await self.call(what, self.create, names, args)

    def append_action(
        self, room: str, action: Action, meta: dict[str, Any] | None = None
    ) -> Coroutine[Any, Any, Any]:
        """:meth:`.RedisStore.append`: the choice and ``meta``'s fields, one script call, its
        command packed here (without ``meta``, in one piece: :func:`.client.evalsha_append`)."""
        blob = pack([action.seat, action.choice])
        what = f"append rev {action.rev} to room {room}"
        if self._cluster:  # (each call its own round trip: no command packed here)
            args: list[EncodableT] = [action.rev, blob]
            if meta:
                put_fields(args, meta)
            args.append(self._token)
            return self._alone(room, what, self.append, self._append_keys(room), args)
        head = self._append_heads.get(room)
        if head is None:
            if len(self._append_heads) >= KEY_CACHE_SIZE:  # (bounded as the key names are)
                self._append_heads.clear()
            head = self._append_heads[room] = evalsha_head(self.append, self._append_keys(room))
        if meta:
            args = [action.rev, blob]
            put_fields(args, meta)
            args.append(self._token)
            call = script_call(self.append, self._append_keys(room), args, head, room)
        else:
            command = evalsha_append(head, _APPEND_KEYS, action.rev, blob, self._token_bulk)
            call = Call(self.append, command, room)
        return self._commit.submit(what, call)

    def _append_keys(self, room: str) -> list[str]:
        """An append's keys (:data:`.scripts.APPEND`'s order)."""
        k = self._keys.get(room)
        return [k.meta, k.log, k.choices, k.lease]

    def update_room(self, room: str, meta: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """:meth:`.RedisStore.update_room`: ``meta``'s fields, one script call (none: none)."""
        k = self._keys.get(room)
        if not meta:
            return _nothing()
        args: list[EncodableT] = []
        put_fields(args, meta)
        args.append(self._token)
        return self.fenced(room, f"update room {room}", self.update, [k.meta, k.lease], args)

    def snapshot_state(
        self, room: str, rev: int, state: dict[str, Any]
    ) -> Coroutine[Any, Any, Any]:
        """:meth:`.RedisStore.snapshot`: ``state`` encoded now, one script call."""
        k = self._keys.get(room)
        blob = snapshot_blob(rev, state)
        names = [k.meta, k.log, k.choices, k.snap, k.lease]
        what = f"snapshot rev {rev} of room {room}"
        return self.fenced(room, what, self.snapshot, names, [rev, blob, self._token])

    async def archive_room(self, room: str, result: dict[str, Any], index: str, ttl: float) -> None:
        """:meth:`.Archives.archive`: one script, :data:`.scripts.ARCHIVE` (on a Redis Cluster the
        indexes written apart, after the room); then the room's key names are forgotten."""
        k = self._keys.get(room)
        finished = time.time()
        expiry = max(1, round(ttl)) if ttl > 0 else 0
        bound = f"({finished - ttl}" if expiry else ""  # the index forgets expired archives too
        args: list[EncodableT] = [
            archive_head(room),
            pack(result),
            pack(finished),
            repr(finished),
            expiry,
            bound,
            room,
        ]
        names = [k.meta, k.choices, k.chat, k.archive, k.log, k.snap]
        what = f"archive room {room}"
        if not self._cluster:
            await self.call(what, self.archive, [*names, self._rooms_key, index], args)
        elif await self.call(what, self.archive, names, args):  # (else archived before)
            await self._client.run(what, lambda: self._index(room, finished, index, bound))
        self.forget(room)

    def forget(self, room: str) -> None:
        """A room archived or deleted: drop what was kept of it (its key names, its append's
        head)."""
        self._keys.forget(room)
        self._append_heads.pop(room, None)

    async def _index(self, room: str, finished: float, index: str, bound: str) -> None:
        """A room archived on a Redis Cluster: out of the live rooms' index, into the archives'
        (whose expired entries go), in their own slots."""
        pipe = self._client.redis.pipeline(transaction=False)
        pipe.zrem(self._rooms_key, room)
        pipe.zadd(index, {room: finished})
        if bound:
            pipe.zremrangebyscore(index, "-inf", bound)
        await pipe.execute()

    # The script calls -------------------------------------------------------------------------

    def fenced(
        self,
        room: str,
        what: str,
        script: Any,
        names: list[str],
        args: list[EncodableT],
    ) -> Coroutine[Any, Any, Any]:
        """One fenced script call of ``room`` (``args`` end with this node's lease token),
        through the group commit (:meth:`call`); a lost lease is told to ``on_not_owner``.

        The group commit's own coroutine, not one of this method around it: the batch's sender
        tells ``on_not_owner`` (:meth:`_send`), so a room's write is one coroutine less to
        make and to resume at every step (with the copy of its arguments that added the
        token). On a Redis Cluster, :meth:`_alone`."""
        if self._cluster:
            return self._alone(room, what, script, names, args)
        return self._commit.submit(what, script_call(script, names, args, room=room))

    async def _alone(
        self, room: str, what: str, script: Any, names: list[str], args: list[EncodableT]
    ) -> Any:
        """:meth:`fenced` on a Redis Cluster: the call alone, a lost lease told here."""
        try:
            return await self._client.run(what, lambda: script(keys=names, args=args))
        except NotOwnerError:
            if self.on_not_owner is not None:
                self.on_not_owner(room)
            raise

    async def call(self, what: str, script: Any, names: list[str], args: list[EncodableT]) -> Any:
        """One script call through the group commit (on a cluster: alone, with its reply)."""
        if self._cluster:
            return await self._client.run(what, lambda: script(keys=names, args=args))
        await self._commit.submit(what, script_call(script, names, args))
        return None

    @property
    def batches(self) -> int:
        """How many round trips carried the group commit's calls."""
        return self._commit.batches

    @property
    def items(self) -> int:
        return self._commit.items

    def close(self) -> None:
        self._commit.close()

    async def drain(self) -> None:
        await self._commit.drain()

    async def _send(self, batch: Sequence[Pending[Call]]) -> list[StoreError | None]:
        """One round trip for a batch of script calls, each reply mapped on its own; the
        :class:`GroupCommit`'s sender."""
        what = batch[0].what if len(batch) == 1 else f"{len(batch)} writes"
        replies = await self._client.commit(what, [i.payload for i in batch])
        outcomes: list[StoreError | None] = []
        for i in range(min(len(batch), len(replies))):  # (GroupCommit checks the lengths)
            reply = replies[i]
            if not isinstance(reply, Exception):
                outcomes.append(None)
                continue
            outcome = self._client.outcome(batch[i].what, reply)
            room = batch[i].payload.room
            if isinstance(outcome, NotOwnerError) and room and self.on_not_owner is not None:
                self.on_not_owner(room)  # (before its submitter hears of it, as it did)
            outcomes.append(outcome)
        return outcomes


def put_fields(args: list[EncodableT], meta: dict[str, Any]) -> None:
    """Add ``meta``'s fields to a script's arguments: name, packed value, ..."""
    for name, value in meta.items():
        args.append(name)
        args.append(pack(value))


async def _nothing() -> None:
    """A write with nothing to write (:meth:`Writes.update_room` of no field)."""
