"""Where rooms keep what must survive them: the action log, room metadata and chat.

The room calls :meth:`Store.append` *before* it applies, acknowledges or broadcasts a choice
(issue 6: nothing acknowledged may be lost); if the append fails the choice is refused with
``unavailable`` and the state is unchanged. :class:`MemoryStore` is the in-process
implementation used until the Redis store lands; it keeps everything in dicts and never fails
unless told to (``fail``), which the tests use to prove the append-before-ack order.

The room also calls :meth:`Store.snapshot` every ``snapshot_every`` revisions and at the end,
then :meth:`Store.finish`; those come after the acknowledgement, so their failures are logged
only (the log already holds every choice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class StoreError(Exception):
    """The store could not record something; the caller must not acknowledge it."""


@dataclass(frozen=True, slots=True)
class Action:
    rev: int
    seat: int
    choice: dict[str, Any]


class Store(Protocol):
    async def create_room(self, room: str, meta: dict[str, Any]) -> None: ...
    async def update_room(self, room: str, meta: dict[str, Any]) -> None: ...
    async def append(self, room: str, action: Action) -> None: ...
    async def append_chat(self, room: str, line: dict[str, Any]) -> None: ...
    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None: ...
    async def finish(self, room: str, result: dict[str, Any]) -> None: ...
    async def close(self) -> None: ...
    def ready(self) -> bool: ...


@dataclass
class MemoryStore:
    rooms: dict[str, dict[str, Any]] = field(default_factory=dict)
    logs: dict[str, list[Action]] = field(default_factory=dict)
    chats: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    snapshots: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    fail: bool = False

    def _check(self) -> None:
        if self.fail:
            raise StoreError("the store is unavailable")

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        self._check()
        self.rooms[room] = dict(meta)
        self.logs[room] = []

    async def update_room(self, room: str, meta: dict[str, Any]) -> None:
        self._check()
        self.rooms[room] = dict(meta)

    async def append(self, room: str, action: Action) -> None:
        self._check()
        self.logs.setdefault(room, []).append(action)

    async def append_chat(self, room: str, line: dict[str, Any]) -> None:
        self._check()
        self.chats.setdefault(room, []).append(line)

    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None:
        self._check()
        self.snapshots[room] = (rev, state)

    async def finish(self, room: str, result: dict[str, Any]) -> None:
        self._check()
        self.results[room] = result

    async def close(self) -> None:
        return None

    def ready(self) -> bool:
        return not self.fail
