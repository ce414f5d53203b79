"""Archives: a finished match kept whole in Redis for replays, and the index of them.

Trim and archive decision. A snapshot (:meth:`~server.store.redis.RedisStore.snapshot`, one
EVALSHA) stores the state and XTRIMs the stream to the entries after it, so recovery reads
exactly the tail it must replay (``XRANGE`` of the whole stream). The archive needs every
choice, so the full choice list is kept beside the stream in the same script (``choices``: one
compact blob per choice, about the size of the choice itself) rather than archiving from an
untrimmed stream; it is what :meth:`Archives.archive` copies into the archive, after which
every live key of the room is deleted. The cost is that a live room holds each choice twice
until its snapshot trims the stream, and once afterwards; a match is a few hundred choices, so
this is kilobytes per room.

The archive is one msgpack string (:func:`server.store.records.archive_blob`, read back by
:func:`server.store.records.archive`) in the room's slot, ``P:{room}:archive``, listed in the
``P:archived`` index by finish time (:mod:`server.store.keys`).
"""

from __future__ import annotations

import time
from typing import Any

from server.store import keys, records
from server.store.client import Client
from server.store.errors import RoomGoneError
from server.store.records import ArchiveRecord

__all__ = ["Archives"]


class Archives:
    """The archives of one Redis store (its client and key cache)."""

    def __init__(
        self, client: Client, names: keys.KeyCache, index: str, *, cluster: bool, ttl: float
    ) -> None:
        self._client = client
        self._redis = client.redis
        self._run = client.run
        self._keys = names
        self._rooms_key = keys.rooms(names.prefix)
        self._index = index
        self._cluster = cluster
        self._archive_ttl = ttl
        """Seconds an archive is kept (0: for ever); see :meth:`archive`."""

    def keys(self, room: str) -> keys.RoomKeys:
        return self._keys.get(room)

    async def archive(self, room: str, result: dict[str, Any]) -> None:
        """Write the archive (meta, seed, options, every choice, chat, result) and delete the
        room's live keys: one read MULTI, one write MULTI. Finishing twice is harmless.

        The archive expires after ``archive_ttl`` seconds (``OASIS_ARCHIVE_TTL_DAYS``): storage
        stays bounded by the matches of that period, and live rooms never compete with old
        archives for memory (the deploy Redis has ``maxmemory`` with ``noeviction``)."""
        k = self.keys(room)

        async def read() -> list[Any]:
            pipe = self._redis.pipeline(transaction=True)
            pipe.hgetall(k.meta)
            pipe.lrange(k.choices, 0, -1)
            pipe.lrange(k.chat, 0, -1)
            pipe.exists(k.archive)
            return list(await pipe.execute())

        raw_meta, raw_choices, raw_chat, archived = await self._run(f"read room {room}", read)
        if not raw_meta:
            if archived:
                return
            raise RoomGoneError(f"archive room {room}: the room is not live")
        meta = records.unpack_fields(room, raw_meta)
        finished = time.time()
        actions = [records.decode(room, "choices", b) for b in raw_choices]
        chat = [records.decode(room, "chat", b) for b in raw_chat]
        blob = records.archive_blob(room, meta, actions, result, chat, finished)

        ttl = self._archive_ttl
        expiry = max(1, round(ttl)) if ttl > 0 else None

        async def write() -> None:
            pipe = self._redis.pipeline(transaction=True)
            pipe.set(k.archive, blob, ex=expiry)
            pipe.delete(*k.live())
            if self._cluster:  # the indexes live in other slots: written apart, after the room
                await pipe.execute()
                pipe = self._redis.pipeline(transaction=False)
            pipe.zrem(self._rooms_key, room)
            pipe.zadd(self._index, {room: finished})
            if expiry is not None:  # the index forgets expired archives: it stays bounded too
                pipe.zremrangebyscore(self._index, "-inf", f"({finished - ttl}")
            await pipe.execute()

        await self._run(f"archive room {room}", write)

    async def load(self, room: str) -> ArchiveRecord | None:
        """The archive of a finished match, or None."""
        k = self.keys(room)
        raw: bytes | None = await self._run(
            f"read archive {room}", lambda: self._redis.get(k.archive)
        )
        if raw is None:
            return None
        return records.archive(room, raw)

    async def rooms(self) -> list[str]:
        """Every archived room, oldest first."""
        raw: list[bytes] = await self._run(
            "list archives", lambda: self._redis.zrange(self._index, 0, -1)
        )
        return [r.decode() for r in raw]
