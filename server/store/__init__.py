"""Where rooms keep what must survive them: the action log, room metadata, snapshots, chat.

A package of one concept per module, from the bottom up:

- :mod:`.errors`: the error hierarchy (:class:`StoreError` and its logical refusals);
- :mod:`.meta`: :class:`RoomMeta`, a room's metadata as one typed record with its codec;
- :mod:`.records`: the typed records (:class:`Action`, :class:`Snapshot`, :class:`RoomRecord`,
  :class:`ArchiveRecord`) and their one codec each, with the ``schema_version`` migrations;
- :mod:`.base`: the :class:`Store` protocol a room writes through;
- :mod:`.memory`: :class:`MemoryStore`, everything in dicts;
- :mod:`.redis`: :class:`~server.store.redis.RedisStore`, the durable one (imported apart, so
  a server on the memory store never loads redis-py's client).

Callers import the names below from ``server.store``; the modules are the store's own.
"""

from server.store.base import Store
from server.store.errors import (
    CorruptRecordError,
    NotOwnerError,
    RevisionError,
    RoomGoneError,
    StoreError,
)
from server.store.memory import MemoryStore
from server.store.meta import RoomMeta, SeatMeta
from server.store.records import (
    SCHEMA_VERSION,
    UNDO,
    Action,
    ArchiveRecord,
    RoomRecord,
    Snapshot,
    is_undo,
)

__all__ = [
    "SCHEMA_VERSION",
    "UNDO",
    "Action",
    "ArchiveRecord",
    "CorruptRecordError",
    "MemoryStore",
    "NotOwnerError",
    "RevisionError",
    "RoomGoneError",
    "RoomMeta",
    "RoomRecord",
    "SeatMeta",
    "Snapshot",
    "Store",
    "StoreError",
    "is_undo",
]
