"""Room leases: which node owns a room, in Redis, set if absent with an expiry, renewed.

A room is owned by exactly one node through its lease ``P:{room}:lease`` (in the room's slot,
so the scripts below and the room's own scripts stay single-slot on a Redis Cluster). Its value
is the owner's **token**, ``<node id>|<nonce>|<public url>``: the nonce is new for every process,
so a node that restarts is a new owner; the url is where ``redirect`` frames send clients.

- **Acquire** (:meth:`Leases.acquire`): set the token with an expiry of ``lease_ttl`` if the key is
  absent, or if it holds a token of this node id (a previous process of this node, which is dead:
  two running nodes never share an id), so a node restarted with its id takes its rooms back at
  once instead of waiting for the expiry. A room created here gets its lease in the same MULTI as
  its meta (:meth:`server.store.redis.RedisStore.create_room`).
- **Renew** (:meth:`Leases.renew`): every third of the ttl, each lease is extended if and only if
  it still holds this node's token (compare and PEXPIRE in one script); a lease that does not is
  *lost*.
- **Release** (:meth:`Leases.release`): compare and delete, so a node never frees a lease it lost.
- **Fencing**: every script that changes a live room (append, snapshot, seats, chat) also checks
  that the lease holds this node's token before it writes (``FENCE`` in
  :mod:`server.store.scripts`). The token is the store's from its construction
  (:class:`~server.store.fence.Fence`): the leases use the store's, they never set it.
  A node that lost its lease, or was paused past its expiry (a SIGSTOP, a long GC, a partition),
  therefore cannot store one more choice of that room, even before its renewal notices: the
  append is refused with :class:`~server.store.NotOwnerError` and nothing is acknowledged.

The node registry ``P:nodes`` (a hash: node id -> ``<url>|<expiry>``, refreshed with the leases)
names the live nodes, so a node that stops can tell its clients where to go.

On a single Redis the lease scripts (acquire, renew, release) go through the store's own
pipelined connection (:meth:`.RedisStore.scripts`: EVALSHA packed by compiled code, the
scripts loaded again where Redis lost them), not redis-py's pipeline, whose every command cost
about 120,000 instructions: a lease is released at every match's end and renewed three times per
ttl for every room. A Redis Cluster keeps redis-py's pipeline (of EVAL, each command in its slot).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any

from server.store import keys, scripts
from server.store.client import script_call
from server.store.redis import RedisStore


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease: a node id and the address its clients are sent to."""

    node: str
    url: str


def parse_token(value: bytes | str | None) -> Holder | None:
    """The holder named by a lease value, or None (no lease, or not a token)."""
    if value is None:
        return None
    text = value.decode(errors="replace") if isinstance(value, bytes) else value
    parts = text.split("|", 2)
    if len(parts) != 3 or not parts[0]:
        return None
    return Holder(parts[0], parts[2])


def node_id(configured: str, port: int) -> str:
    """The configured id, else ``<host name>:<port>`` (on Kubernetes the pod's name and port):
    stable across restarts of one server, distinct for two servers on one machine."""
    name = configured or f"{socket.gethostname()}:{port}"
    if not name or "|" in name:
        raise ValueError(f"node id {name!r} must be non-empty and must not contain '|'")
    return name


class Leases:
    """This node's leases on one :class:`RedisStore`, under the token the store was built with
    (:class:`~server.store.fence.Fence`)."""

    def __init__(self, store: RedisStore) -> None:
        fence = store.fence
        if fence is None:
            raise ValueError("leases need a store built with this node's fence")
        self.store = store
        self.node = fence.node
        self.url = fence.url
        self.ttl = fence.ttl
        self.token = fence.token
        self._ms = fence.ms
        redis = store.redis
        self._acquire = redis.register_script(scripts.ACQUIRE)
        self._renew = redis.register_script(scripts.RENEW)
        self._release = redis.register_script(scripts.RELEASE)
        self._pipelined = store.pipelined
        """A single Redis: the scripts go on the store's own connection (:meth:`_calls`)."""

    @property
    def _nodes_key(self) -> str:
        return keys.nodes(self.store.prefix)

    async def _calls(self, what: str, script: Any, rooms: list[str], args: list[Any]) -> list[Any]:
        """``script`` on each room's lease with ``args``, one round trip, one reply per room; an
        error reply raised as its StoreError. On a single Redis through the store's own
        connection (:meth:`.RedisStore.scripts`: packed by compiled code, about 120,000
        instructions less per lease than redis-py's pipeline); not on a Redis Cluster."""
        calls = [script_call(script, [self.store.lease_key(room)], args) for room in rooms]
        return await self.store.scripts(what, calls)

    async def acquire(self, room: str) -> bool:
        """Take ``room``'s lease if it is free (or held by a dead process of this node)."""
        if self._pipelined:
            args = [self.token, self._ms, self.node + "|"]
            return bool(
                (await self._calls(f"acquire lease of {room}", self._acquire, [room], args))[0]
            )
        key = self.store.lease_key(room)
        got = await self.store.call(
            f"acquire lease of {room}",
            lambda: self._acquire(keys=[key], args=[self.token, self._ms, self.node + "|"]),
        )
        return bool(got)

    async def acquire_many(self, rooms: list[str]) -> list[str]:
        """:meth:`acquire` for many rooms in one round trip; the rooms now held."""
        if not rooms:
            return []
        what = f"acquire {len(rooms)} leases"
        if self._pipelined:
            args = [self.token, self._ms, self.node + "|"]
            got = await self._calls(what, self._acquire, rooms, args)
            return [room for room, ok in zip(rooms, got, strict=True) if ok]

        async def op() -> list[Any]:
            pipe = self.store.redis.pipeline(transaction=False)
            for room in rooms:
                key = self.store.lease_key(room)
                pipe.eval(scripts.ACQUIRE, 1, key, self.token, self._ms, self.node + "|")
            return list(await pipe.execute())

        results = await self.store.call(what, op)
        return [room for room, ok in zip(rooms, results, strict=True) if ok]

    async def renew(self, rooms: list[str]) -> list[str]:
        """Extend the leases of ``rooms``; the rooms whose lease this node no longer holds."""
        if not rooms:
            return []
        what = f"renew {len(rooms)} leases"
        if self._pipelined:
            renewed = await self._calls(what, self._renew, rooms, [self.token, self._ms])
            return [room for room, ok in zip(rooms, renewed, strict=True) if not ok]

        async def op() -> list[Any]:
            # EVAL, not EVALSHA: a pipeline cannot load a script Redis does not know yet.
            pipe = self.store.redis.pipeline(transaction=False)
            for room in rooms:
                pipe.eval(scripts.RENEW, 1, self.store.lease_key(room), self.token, self._ms)
            return list(await pipe.execute())

        results = await self.store.call(what, op)
        return [room for room, ok in zip(rooms, results, strict=True) if not ok]

    async def release(self, rooms: list[str]) -> None:
        """Free the leases of ``rooms`` that this node still holds."""
        if not rooms:
            return
        what = f"release {len(rooms)} leases"
        if self._pipelined:
            await self._calls(what, self._release, rooms, [self.token])
            return

        async def op() -> None:
            pipe = self.store.redis.pipeline(transaction=False)
            for room in rooms:
                pipe.eval(scripts.RELEASE, 1, self.store.lease_key(room), self.token)
            await pipe.execute()

        await self.store.call(what, op)

    async def holders(self, rooms: list[str]) -> dict[str, Holder | None]:
        """Who holds each of ``rooms`` (None: nobody)."""
        if not rooms:
            return {}

        async def op() -> list[Any]:
            pipe = self.store.redis.pipeline(transaction=False)
            for room in rooms:
                pipe.get(self.store.lease_key(room))
            return list(await pipe.execute())

        values = await self.store.call(f"read {len(rooms)} leases", op)
        return {room: parse_token(v) for room, v in zip(rooms, values, strict=True)}

    async def holder(self, room: str) -> Holder | None:
        return (await self.holders([room]))[room]

    def mine(self, holder: Holder | None) -> bool:
        return holder is not None and holder.node == self.node

    # The node registry ---------------------------------------------------------------------

    async def heartbeat(self) -> None:
        """List this node as live until one ttl from now."""
        value = f"{self.url}|{time.time() + self.ttl:.3f}"
        await self.store.call(
            "node heartbeat", lambda: self.store.redis.hset(self._nodes_key, self.node, value)
        )

    async def leave(self) -> None:
        await self.store.call(
            "node leaves", lambda: self.store.redis.hdel(self._nodes_key, self.node)
        )

    async def peers(self) -> dict[str, str]:
        """Other live nodes: id -> public url."""
        raw: dict[bytes, bytes] = await self.store.call(
            "list nodes", lambda: self.store.redis.hgetall(self._nodes_key)
        )
        now = time.time()
        out: dict[str, str] = {}
        for name, value in raw.items():
            url, _, until = value.decode(errors="replace").rpartition("|")
            try:
                alive = float(until) > now
            except ValueError:
                alive = False
            if alive and name.decode(errors="replace") != self.node:
                out[name.decode(errors="replace")] = url
        return out
