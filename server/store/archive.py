"""Archives: a finished match kept whole in Redis for replays, and the index of them.

Trim and archive decision. A snapshot (:meth:`~server.store.redis.RedisStore.snapshot`, one
EVALSHA) stores the state and XTRIMs the stream to the entries after it, so recovery reads
exactly the tail it must replay (``XRANGE`` of the whole stream). The archive needs every
choice, so the full choice list is kept beside the stream in the same script (``choices``: one
compact blob per choice, about the size of the choice itself) rather than archiving from an
untrimmed stream; it is what :meth:`Archives.archive` copies into the archive, after which
every live key of the room is deleted (one script). The cost is that a live room holds each
choice twice until its snapshot trims the stream, and once afterwards; a match is a few hundred
choices, so this is kilobytes per room.

The archive is one msgpack string (:func:`server.store.records.archive_blob`, read back by
:func:`server.store.records.archive`) in the room's slot, ``P:{room}:archive``, listed in the
``P:archived`` index by finish time (:mod:`server.store.keys`).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from server.store import keys, records
from server.store.client import Client
from server.store.records import ArchiveRecord
from server.store.writes import Writes

__all__ = ["Archives"]


class Archives:
    """The archives of one Redis store (its client and key cache)."""

    def __init__(
        self,
        client: Client,
        writes: Writes,
        names: keys.KeyCache,
        index: str,
        *,
        ttl: float,
    ) -> None:
        self._client = client
        self._writes = writes
        self._redis = client.redis
        self._run = client.run
        self._keys = names
        self._index = index
        self._archive_ttl = ttl
        """Seconds an archive is kept (0: for ever); see :meth:`archive`."""

    def keys(self, room: str) -> keys.RoomKeys:
        return self._keys.get(room)

    def archive(self, room: str, result: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Write the archive (meta, seed, options, every choice, chat, result) and delete the
        room's live keys: one script (:data:`~server.store.scripts.ARCHIVE`), through the group
        commit (:meth:`.Writes.archive_room` makes the call, compiled), then forget the room's
        cached key names. Finishing twice is harmless.

        The script packs the archive in Redis from the stored blobs, byte for byte what
        :func:`~server.store.records.archive_blob` packs from their decoded values: the archive
        costs this process neither the room's read (every choice decoded, then packed again) nor
        a second round trip. Their bytes are checked when the archive is read back
        (:func:`~server.store.records.archive`), not before it is written.

        The archive expires after ``archive_ttl`` seconds (``OASIS_ARCHIVE_TTL_DAYS``): storage
        stays bounded by the matches of that period, and live rooms never compete with old
        archives for memory (the deploy Redis has ``maxmemory`` with ``noeviction``)."""
        return self._writes.archive_room(room, result, self._index, self._archive_ttl)

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
