"""Every Redis key Oasis writes, named in one place; callers use these functions, never strings.

Key layout (``P`` is the prefix, ``oasis`` by default; ``{room}`` is a Redis Cluster hash tag, so
every key of one room lives in one slot and a room's scripts and transactions stay legal there)::

    P:{room}:meta     hash    top-level meta fields -> msgpack value (game, players, options, seed,
                              seats with token digests, state...); update_room merges fields
    P:{room}:log      stream  the recovery log: entry id ``<rev>-0``, field ``a`` = msgpack
                              ``[seat, choice]``; trimmed up to the latest snapshot
    P:{room}:choices  list    the same ``[seat, choice]`` blobs, every one of the match (index
                              ``rev - 1``); never trimmed while the room lives
    P:{room}:snap     hash    ``rev`` (decimal) and ``state`` = msgpack ``{"schema_version", "rev",
                              "state": game.dump(...)}`` (generator included)
    P:{room}:chat     list    msgpack chat lines, the last ``chat_keep`` of them
    P:{room}:archive  string  msgpack archive of a finished match (see
                              :class:`~server.store.records.ArchiveRecord`), expiring
                              ``archive_ttl`` seconds after the finish (0: never)
    P:{room}:lease    string  the owning node's lease token, with an expiry (:mod:`server.lease`);
                              append, snapshot, seat updates and chat refuse to write without it
    P:{room}:spectate         pub/sub channel of the owner's spectator frames (:mod:`server.relay`)
    P:{room}:spectate:state   hash: the spectators' view at the last published rev, for relays
    P:{room}:spectators       hash: node id -> ``<spectators relayed there>|<valid until>``
    P:relay:interest          pub/sub channel: relay nodes' ``open|keep|bye|<node>|<room>``
    P:relay:chat              pub/sub channel: relay spectators' chat, msgpack [room, session, text]
    P:rooms           zset    live (unfinished) rooms, score = creation time
    P:archived        zset    archived rooms, score = finish time (entries older than
                              ``archive_ttl`` are dropped whenever another room is archived)
    P:marker          string  a random token written once (:mod:`server.store.readiness`)
    P:probe           string  the probe's tiny write while Redis is away (expires in a minute)
    P:nodes           hash    live nodes: node id -> ``<public url>|<expiry>`` (:mod:`server.lease`)

A room's keys in the first block are cached per room by :class:`KeyCache` (every append needs
four of them); the others are built when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from server.store.errors import StoreError

__all__ = [
    "KEY_CACHE_SIZE",
    "KeyCache",
    "RoomKeys",
    "archived",
    "lease",
    "marker",
    "nodes",
    "probe",
    "relay_chat",
    "relay_interest",
    "room_keys",
    "rooms",
    "spectate",
    "spectate_state",
    "spectators",
]

KEY_CACHE_SIZE: Final = 16_384
"""Rooms whose key names a :class:`KeyCache` keeps (cleared whole when full)."""


@dataclass(frozen=True, slots=True)
class RoomKeys:
    """The stored keys of one room (its slot)."""

    meta: str
    log: str
    choices: str
    snap: str
    chat: str
    archive: str
    lease: str

    def live(self) -> tuple[str, str, str, str, str]:
        """What a room holds while it plays (deleted when it is archived or deleted)."""
        return (self.meta, self.log, self.choices, self.snap, self.chat)


def room_keys(prefix: str, room: str) -> RoomKeys:
    """The keys of ``room``; its id becomes the hash tag, so it may not contain braces."""
    if not room or "{" in room or "}" in room:
        raise StoreError(f"room id {room!r} cannot be a hash tag")
    base = f"{prefix}:{{{room}}}:"
    return RoomKeys(
        base + "meta",
        base + "log",
        base + "choices",
        base + "snap",
        base + "chat",
        base + "archive",
        base + "lease",
    )


def lease(prefix: str, room: str) -> str:
    """The room's lease (:mod:`server.lease`), in the room's slot."""
    return f"{prefix}:{{{room}}}:lease"


def spectate(prefix: str, room: str) -> str:
    """The pub/sub channel of the room's spectator frames."""
    return f"{prefix}:{{{room}}}:spectate"


def spectate_state(prefix: str, room: str) -> str:
    """The spectators' view at the last published rev (a hash, for relays that start)."""
    return f"{prefix}:{{{room}}}:spectate:state"


def spectators(prefix: str, room: str) -> str:
    """A hash: node id -> ``"<spectators relayed there>|<valid until (unix time)>"``."""
    return f"{prefix}:{{{room}}}:spectators"


def relay_interest(prefix: str) -> str:
    """The channel on which relay nodes announce the rooms they relay (every node listens)."""
    return f"{prefix}:relay:interest"


def relay_chat(prefix: str) -> str:
    """The channel on which relay nodes forward their spectators' chat to the owners."""
    return f"{prefix}:relay:chat"


def rooms(prefix: str) -> str:
    """The index of live rooms (a sorted set by creation time)."""
    return f"{prefix}:rooms"


def archived(prefix: str) -> str:
    """The index of archived rooms (a sorted set by finish time)."""
    return f"{prefix}:archived"


def marker(prefix: str) -> str:
    """The marker token that tells a Redis that came back empty."""
    return f"{prefix}:marker"


def probe(prefix: str) -> str:
    """The key the readiness probe writes."""
    return f"{prefix}:probe"


def nodes(prefix: str) -> str:
    """The registry of live nodes."""
    return f"{prefix}:nodes"


class KeyCache:
    """:func:`room_keys` of the rooms in play, so an append builds no string.

    A room archived or deleted is forgotten at once (:meth:`forget`): a cache that outlives
    the rooms (the ``lru_cache`` of 8,192 entries this replaced) kept seven small objects of
    every closed room, scattered through the allocator's arenas, and those pinned the arenas:
    the RSS of 2,000 abandoned rooms never came back (bench/memory.py)."""

    def __init__(self, prefix: str, size: int = KEY_CACHE_SIZE) -> None:
        self.prefix = prefix
        self._size = size
        self._keys: dict[str, RoomKeys] = {}

    def get(self, room: str) -> RoomKeys:
        keys = self._keys.get(room)
        if keys is None:
            if len(self._keys) >= self._size:
                self._keys.clear()
            keys = self._keys[room] = room_keys(self.prefix, room)
        return keys

    def forget(self, room: str) -> None:
        self._keys.pop(room, None)
