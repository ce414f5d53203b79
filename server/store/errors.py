"""The store's errors: one hierarchy, so a caller catches exactly what it can act on.

::

    StoreError               nothing was recorded, or the outcome is unknown: acknowledge nothing
    ├── RevisionError        an append whose rev is not the next one (a duplicate, a gap, older)
    ├── CorruptRecordError   a room's stored bytes cannot be read back (names the room and key)
    └── RoomGoneError        the room is not live in the store (never created, finished, lost)
        └── NotOwnerError    this node does not hold the room's lease: it must not write to it

A plain :class:`StoreError` from the Redis store means Redis did not answer (or refused to
write): the store is then not ready. The subclasses are logical refusals: Redis did answer.
"""

from __future__ import annotations


class StoreError(Exception):
    """The store could not record something; the caller must not acknowledge it."""


class RevisionError(StoreError):
    """An append whose rev is not the next one (a duplicate, a gap or an older rev)."""


class RoomGoneError(StoreError):
    """The room is not live in the store (never created, finished or deleted)."""


class NotOwnerError(RoomGoneError):
    """This node does not hold the room's lease (:mod:`server.lease`): it must not write to it."""


class CorruptRecordError(StoreError):
    """A room's stored data cannot be read back; the message names the room and the key."""

    def __init__(self, room: str, detail: str) -> None:
        super().__init__(f"room {room}: {detail}")
        self.room = room
