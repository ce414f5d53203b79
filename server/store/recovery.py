"""Recovery reads: what a node reads back from Redis to restore rooms (none on the play path).

After a crash or a restart, and when a node takes over another's rooms, a room comes back from
its meta, its latest snapshot and the log after it (:meth:`Recovery.load_rooms`, a consistent
view: one MULTI per room on a Redis Cluster, whose transactions stay in one slot, else one
MULTI for ``batch`` rooms). A room whose append failed with an unknown outcome asks
:meth:`Recovery.actions_after` before it goes on; the store's watch asks :meth:`Recovery.missing`
which rooms Redis lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from server.store import keys, records
from server.store.client import Client
from server.store.errors import CorruptRecordError
from server.store.records import Action, RoomRecord

__all__ = ["Recovery"]


class Recovery:
    """The recovery reads of one Redis store (its client and key cache)."""

    def __init__(self, client: Client, names: keys.KeyCache, *, cluster: bool, batch: int) -> None:
        self._redis = client.redis
        self._run = client.run
        self._keys = names
        self._rooms_key = keys.rooms(names.prefix)
        self._cluster = cluster
        self._batch = batch

    async def unfinished_rooms(self) -> list[str]:
        """Every live room, oldest first."""
        raw: list[bytes] = await self._run(
            "list rooms", lambda: self._redis.zrange(self._rooms_key, 0, -1)
        )
        return [r.decode() for r in raw]

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
            k = self._keys.get(room)
            pipe.hgetall(k.meta)
            pipe.hgetall(k.snap)
            pipe.xrange(k.log)
            pipe.llen(k.choices)
            pipe.lrange(k.chat, 0, -1)
        return list(await pipe.execute())

    async def actions_after(self, room: str, rev: int) -> list[Action]:
        """Every stored action after ``rev`` (from the full list): a room whose append failed
        with an unknown outcome asks this before it goes on, to adopt a choice that did land."""
        k = self._keys.get(room)
        raw: list[bytes] = await self._run(
            f"read actions of room {room}", lambda: self._redis.lrange(k.choices, rev, -1)
        )
        return [records.action(room, rev + 1 + i, blob) for i, blob in enumerate(raw)]

    async def missing(self, rooms: Sequence[str]) -> list[str]:
        """Those of ``rooms`` whose live keys are gone from Redis (one pipeline)."""
        if not rooms:
            return []

        async def op() -> list[Any]:
            pipe = self._redis.pipeline(transaction=False)
            for room in rooms:
                pipe.exists(self._keys.get(room).meta)
            return list(await pipe.execute())

        found = await self._run(f"check {len(rooms)} rooms", op)
        return [room for room, there in zip(rooms, found, strict=True) if not there]
