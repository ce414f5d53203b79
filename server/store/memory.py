"""The in-memory store: everything in dicts, for one process.

Unit tests use it, and the server when no Redis can be had (with a loud warning: nothing
survives the process). It never fails unless told to (``fail``), which the tests use to prove
the append-before-ack order and the pause while the store is down.

Compiled (``scripts/build_compiled.py``) as an ordinary Python class (mypyc's
``native_class=False``): its calls are compiled coroutines, not interpreted ones (about 1,500
instructions fewer per append, one per choice in a memory-store server), and tests may still
replace a method of one store or subclass it. Such a class cannot have a property with a
setter, hence ``fail`` made of the two functions below.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

try:  # (read by mypyc at build time; a no-op where mypy_extensions is not installed)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda x: x


from server.store.errors import CorruptRecordError, StoreError
from server.store.meta import replay_fields
from server.store.records import Action, ArchiveRecord, RoomRecord, Snapshot


def _failing(store: MemoryStore) -> bool:
    return store._fail


def _set_failing(store: MemoryStore, fail: bool) -> None:
    changed = fail != store._fail
    store._fail = fail
    if changed:
        for listener in list(store._listeners):
            listener(not fail)


def _check(store: MemoryStore) -> None:
    """(A function: a method of this class is looked up at every call, compiled or not.)"""
    if store._fail:
        raise StoreError("the store is unavailable")


@mypyc_attr(native_class=False)
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

    fail = property(_failing, _set_failing)
    """Every call fails while True (set: the ready listeners are told of a change)."""

    async def start(self) -> None:
        return None

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        _check(self)
        self.rooms[room] = dict(meta)
        self.logs[room] = []

    async def update_room(self, room: str, meta: dict[str, Any]) -> None:
        _check(self)
        self.rooms[room] = {**self.rooms.get(room, {}), **meta}

    async def append(self, room: str, action: Action, meta: dict[str, Any] | None = None) -> None:
        _check(self)
        self.logs.setdefault(room, []).append(action)
        if meta:
            self.rooms[room] = {**self.rooms.get(room, {}), **meta}

    async def actions_after(self, room: str, rev: int) -> list[Action]:
        _check(self)
        return [a for a in self.logs.get(room, []) if a.rev > rev]

    async def append_chat(self, room: str, line: dict[str, Any]) -> None:
        _check(self)
        self.chats.setdefault(room, []).append(line)

    async def snapshot(self, room: str, rev: int, state: dict[str, Any]) -> None:
        _check(self)
        self.snapshots[room] = (rev, state)

    async def finish(self, room: str, result: dict[str, Any]) -> None:
        """Keep the result and an archive record, so replays work on this store too."""
        _check(self)
        self.results[room] = result
        meta = self.rooms.get(room, {})
        game, players, options, seed = replay_fields(meta)  # (not the whole meta parsed)
        self.archives[room] = ArchiveRecord(
            room=room,
            game=game or "",
            players=players or 0,
            options=dict(options or {}),
            seed=seed or 0,
            actions=list(self.logs.get(room, [])),
            result=dict(result),
            chat=list(self.chats.get(room, [])),
            meta=dict(meta),
            finished=time.time(),
        )

    async def delete(self, room: str) -> None:
        _check(self)
        for table in (self.rooms, self.logs, self.chats, self.snapshots, self.archives):
            table.pop(room, None)

    async def load_archive(self, room: str) -> ArchiveRecord | None:
        _check(self)
        return self.archives.get(room)

    async def close(self) -> None:
        return None

    async def missing(self, rooms: Sequence[str]) -> list[str]:
        _check(self)
        return [room for room in rooms if room not in self.rooms]

    async def load_rooms(
        self, rooms: Sequence[str]
    ) -> dict[str, RoomRecord | CorruptRecordError | None]:
        """What a live room is rebuilt from: its meta, its latest snapshot and the choices after
        it (None: finished, deleted or never stored), as the Redis store reads it."""
        _check(self)
        out: dict[str, RoomRecord | CorruptRecordError | None] = {}
        for room in rooms:
            meta = self.rooms.get(room)
            if meta is None or room in self.results:
                out[room] = None
                continue
            saved = self.snapshots.get(room)
            snapshot = Snapshot(saved[0], saved[1]) if saved is not None else None
            after = snapshot.rev if snapshot is not None else 0
            out[room] = RoomRecord(
                room=room,
                meta=dict(meta),
                snapshot=snapshot,
                actions=[a for a in self.logs.get(room, []) if a.rev > after],
                chat=list(self.chats.get(room, [])),
            )
        return out

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
