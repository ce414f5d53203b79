"""How many spectators each node has of each room, across nodes (:mod:`server.relay`), for the
lobby's listings.

Every :data:`~server.relay.wire.CHECK_EVERY` seconds a node writes how many spectators it serves
of each room (of its own rooms and relayed) in ``P:{room}:spectators`` (node -> count, valid
:data:`~server.relay.wire.COUNT_TTL` seconds: :class:`Census`); ``list_rooms`` shows each room's
``spectators`` as this node's live count plus the other nodes' last written ones
(:func:`spectator_counts`).

On a single Redis a node's counts go in one script call per :data:`COUNTS_PER_CALL` rooms
(:data:`server.store.scripts.COUNTS`), packed by the store's compiled client and sent on its
own connection (:meth:`.RedisStore.scripts`): through redis-py's pipeline each HSET and PEXPIRE
cost about 120,000 instructions, two per room every two seconds. A Redis Cluster keeps the
pipeline (the rooms' keys are in many slots).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from server import logging as oasis_logging
from server.relay.wire import CHECK_EVERY, COUNT_TTL, count_value, live_count
from server.store import StoreError, keys, scripts
from server.store.client import script_call
from server.store.redis import RedisStore

COUNTS_PER_CALL = 256
"""Rooms per script call of :meth:`Census.report` (Redis runs a script without serving anyone
else meanwhile: a few hundred rooms' writes is well under a millisecond)."""


async def spectator_counts(store: RedisStore, rooms: list[str], node: str) -> dict[str, int]:
    """How many spectators the nodes other than ``node`` have of each of ``rooms``, as they last
    wrote them (one pipelined round trip; a node that stopped writing is not counted after
    :data:`~server.relay.wire.COUNT_TTL`)."""
    prefix, redis = store.prefix, store.redis

    async def op() -> list[Any]:
        pipe = redis.pipeline(transaction=False)
        for room in rooms:
            pipe.hgetall(keys.spectators(prefix, room))
        return list(await pipe.execute())

    values = await store.call(f"read {len(rooms)} relayed spectator counts", op)
    now = time.time()
    out: dict[str, int] = {}
    for room, found in zip(rooms, values, strict=True):
        total = 0
        for who, value in (found or {}).items():
            if (who.decode() if isinstance(who, bytes) else str(who)) == node:
                continue
            total += live_count(value, now)
        if total:
            out[room] = total
    return out


class Census:
    """Writes ``node``'s spectator counts (``here()``: room -> spectators) every
    :data:`~server.relay.wire.CHECK_EVERY` seconds once started."""

    def __init__(self, store: RedisStore, node: str, here: Callable[[], dict[str, int]]) -> None:
        self.store = store
        self.node = node
        self.here = here
        self._reporter: asyncio.Task[None] | None = None
        self._counts = store.redis.register_script(scripts.COUNTS)
        self.log = oasis_logging.get(component="relay", node=node)

    def start(self) -> None:
        self._reporter = asyncio.get_running_loop().create_task(self._report_loop())

    def stop(self) -> None:
        if self._reporter is not None:
            self._reporter.cancel()

    async def _report_loop(self) -> None:
        while True:
            await asyncio.sleep(CHECK_EVERY)
            try:
                await self.report()
            except StoreError as exc:
                self.log.warning("spectator_counts_not_written", error=str(exc))
            except Exception:
                self.log.exception("spectator_counts_crashed")

    async def report(self) -> None:
        """Write how many spectators this node has of each room (for the lobby's listings)."""
        rooms = [(room, n) for room, n in self.here().items() if n > 0]
        if not rooms:
            return
        prefix, redis = self.store.prefix, self.store.redis
        until = time.time() + COUNT_TTL  # (one expiry for the whole round)
        what = f"write {len(rooms)} relayed spectator counts"
        if self.store.pipelined:
            ttl = int(COUNT_TTL * 2000)
            calls = []
            for start in range(0, len(rooms), COUNTS_PER_CALL):
                chunk = rooms[start : start + COUNTS_PER_CALL]
                names = [keys.spectators(prefix, room) for room, _ in chunk]
                values = [count_value(count, until) for _, count in chunk]
                calls.append(script_call(self._counts, names, [self.node, ttl, *values]))
            await self.store.scripts(what, calls)
            return

        async def op() -> None:
            pipe = redis.pipeline(transaction=False)
            for room, count in rooms:
                key = keys.spectators(prefix, room)
                pipe.hset(key, self.node, count_value(count, until))
                pipe.pexpire(key, int(COUNT_TTL * 2000))
            await pipe.execute()

        await self.store.call(what, op)

    async def forget(self, room: str) -> None:
        """Delete this node's count of ``room`` (it relays the room no more)."""
        key = keys.spectators(self.store.prefix, room)
        with contextlib.suppress(StoreError):
            await self.store.call(
                "forget a relayed spectator count", lambda: self.store.redis.hdel(key, self.node)
            )
