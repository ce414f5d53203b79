"""Where rooms keep what must survive them: the action log, room metadata and chat.

The room calls :meth:`Store.append` *before* it applies, acknowledges or broadcasts a choice
(issue 6: nothing acknowledged may be lost); if the append fails the choice is refused with
``unavailable`` and the state is unchanged. :class:`MemoryStore` is the in-process
implementation (unit tests, and the server when no Redis can be had); it keeps everything in
dicts and never fails unless told to (``fail``), which the tests use to prove the
append-before-ack order and the pause while the store is down.

An append that fails may still have been stored (a timeout after Redis wrote it): the room then
reads :meth:`Store.actions_after` before its next commit and adopts what landed.

The room also calls :meth:`Store.snapshot` every ``snapshot_every`` revisions and at the end,
then :meth:`Store.finish`; those come after the acknowledgement, so their failures are logged
only (the log already holds every choice).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from server.records import ArchiveRecord


class StoreError(Exception):
    """The store could not record something; the caller must not acknowledge it."""


UNDO: dict[str, Any] = {"undo": True}
"""The choice of a log entry that is an undo (``undo`` request, SPEC section 24): a map with no
``kind``, which no legal choice is, so the log stays ``[seat, choice]`` pairs."""


@dataclass(frozen=True, slots=True)
class Action:
    """One log entry: ``seat`` chose ``choice`` at ``rev``, or took back its last step
    (:attr:`undo`: ``choice`` is :data:`UNDO`)."""

    rev: int
    seat: int
    choice: dict[str, Any]

    @property
    def undo(self) -> bool:
        return is_undo(self.choice)


def is_undo(choice: dict[str, Any]) -> bool:
    """Whether a logged choice is :data:`UNDO`."""
    return "kind" not in choice and choice.get("undo") is True


class Store(Protocol):
    async def start(self) -> None: ...
    async def create_room(self, room: str, meta: dict[str, Any]) -> None: ...
    async def update_room(self, room: str, meta: dict[str, Any]) -> None: ...
    async def append(self, room: str, action: Action) -> None: ...
    async def actions_after(self, room: str, rev: int) -> list[Action]: ...
    async def append_chat(self, room: str, line: dict[str, Any]) -> None: ...
    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None: ...
    async def finish(self, room: str, result: dict[str, Any]) -> None: ...
    async def delete(self, room: str) -> None: ...
    async def load_archive(self, room: str) -> ArchiveRecord | None: ...
    async def close(self) -> None: ...
    async def missing(self, rooms: Sequence[str]) -> list[str]: ...
    def ready(self) -> bool: ...
    def problem(self) -> str: ...
    def on_ready_change(self, listener: Callable[[bool], None]) -> None: ...
    def on_lost(self, listener: Callable[[str], Awaitable[None]]) -> None: ...


class MemoryStore:
    """Everything in dicts, for one process; ``fail = True`` makes every call fail (and tells
    the ready listeners, as the Redis store does when Redis goes away)."""

    def __init__(self) -> None:
        self.rooms: dict[str, dict[str, Any]] = {}
        self.logs: dict[str, list[Action]] = {}
        self.chats: dict[str, list[dict[str, Any]]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.snapshots: dict[str, tuple[int, dict[str, Any]]] = {}
        self.archives: dict[str, ArchiveRecord] = {}
        self._fail = False
        self._listeners: list[Callable[[bool], None]] = []
        self._lost: list[Callable[[str], Awaitable[None]]] = []

    @property
    def fail(self) -> bool:
        return self._fail

    @fail.setter
    def fail(self, fail: bool) -> None:
        changed = fail != self._fail
        self._fail = fail
        if changed:
            for listener in list(self._listeners):
                listener(not fail)

    def _check(self) -> None:
        if self._fail:
            raise StoreError("the store is unavailable")

    async def start(self) -> None:
        return None

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        self._check()
        self.rooms[room] = dict(meta)
        self.logs[room] = []

    async def update_room(self, room: str, meta: dict[str, Any]) -> None:
        self._check()
        self.rooms[room] = {**self.rooms.get(room, {}), **meta}

    async def append(self, room: str, action: Action) -> None:
        self._check()
        self.logs.setdefault(room, []).append(action)

    async def actions_after(self, room: str, rev: int) -> list[Action]:
        self._check()
        return [a for a in self.logs.get(room, []) if a.rev > rev]

    async def append_chat(self, room: str, line: dict[str, Any]) -> None:
        self._check()
        self.chats.setdefault(room, []).append(line)

    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None:
        self._check()
        self.snapshots[room] = (rev, state)

    async def finish(self, room: str, result: dict[str, Any]) -> None:
        """Keep the result and an archive record, so replays work on this store too."""
        from server.records import ArchiveRecord

        self._check()
        self.results[room] = result
        meta = self.rooms.get(room, {})
        self.archives[room] = ArchiveRecord(
            room=room,
            game=str(meta.get("game", "")),
            players=int(meta.get("players", 0)),
            options=dict(meta.get("options") or {}),
            seed=int(meta.get("seed") or 0),
            actions=list(self.logs.get(room, [])),
            result=dict(result),
            chat=list(self.chats.get(room, [])),
            meta=dict(meta),
            finished=time.time(),
        )

    async def delete(self, room: str) -> None:
        self._check()
        for table in (self.rooms, self.logs, self.chats, self.snapshots, self.archives):
            table.pop(room, None)

    async def load_archive(self, room: str) -> ArchiveRecord | None:
        self._check()
        return self.archives.get(room)

    async def close(self) -> None:
        return None

    async def missing(self, rooms: Sequence[str]) -> list[str]:
        self._check()
        return [room for room in rooms if room not in self.rooms]

    async def lose(self, detail: str = "the memory store was emptied") -> None:
        """Forget everything and tell the listeners, as a Redis that came back empty does."""
        for table in (self.rooms, self.logs, self.chats, self.snapshots):
            table.clear()
        for listener in list(self._lost):
            await listener(detail)

    def ready(self) -> bool:
        return not self._fail

    def problem(self) -> str:
        """Never a problem: the memory store is asked for on purpose (and warned about)."""
        return ""

    def on_ready_change(self, listener: Callable[[bool], None]) -> None:
        self._listeners.append(listener)

    def on_lost(self, listener: Callable[[str], Awaitable[None]]) -> None:
        self._lost.append(listener)
