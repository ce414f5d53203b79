"""What the lobby's rooms are told of the store's health: paused, resumed, storage lost.

The store reports when it becomes unusable or usable again (``Store.on_ready_change``) and when
it came back empty (``Store.on_lost``); :class:`StoreWatch` passes each to every stored room of
the lobby through the room's inbox (:class:`~server.room_state.StoreReady`,
:class:`~server.room_state.StorageLost`), in order with its requests. Replay rooms run on their
own in-memory store and are never told. Split out of :mod:`server.lobby`, which owns one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from server.room import Room
from server.room_state import StorageLost, StoreReady
from server.store import Store, StoreError

LOST_ROOMS_LOGGED = 100
"""Rooms (with their last revision) named in the ``storage_lost`` line; the rest are counted."""


class StoreWatch:
    """The store's health, passed on to the rooms in ``rooms`` (the lobby's, by id)."""

    def __init__(self, store: Store, rooms: dict[str, Room], resume_after: float, log: Any) -> None:
        self.store = store
        self.rooms = rooms
        self.resume_after = resume_after
        self.log = log
        self._resume: asyncio.TimerHandle | None = None
        """The pending resume of the paused rooms (see :meth:`ready_changed`)."""
        store.on_ready_change(self.ready_changed)
        store.on_lost(self.storage_lost)

    async def storage_lost(self, detail: str) -> None:
        """The store came back empty: every stored room whose keys are gone pauses for good
        (``storage_lost``), and one line tells the operator what was lost: the rooms and the last
        revision each had acknowledged (every one of those choices is gone from storage)."""
        stored = self._stored()
        try:
            gone = set(await self.store.missing([r.id for r in stored]))
        except StoreError as exc:  # each room finds out at its next append instead
            self.log.error("storage_lost", detail=detail, rooms="unknown", error=str(exc))
            return
        lost = {r.id: r.rev for r in stored if r.id in gone}
        shown = dict(sorted(lost.items())[:LOST_ROOMS_LOGGED])
        self.log.error(
            "storage_lost",
            detail=detail,
            rooms=len(lost),
            acknowledged_choices=sum(lost.values()),
            last_revs=shown,
            more=len(lost) - len(shown),
            kept=len(stored) - len(lost),
        )
        for room in stored:
            if room.id in gone:
                room.post(StorageLost())

    def ready_changed(self, ready: bool) -> None:
        """Every room pauses at once, and resumes once the store stayed usable a while.

        Debounced on purpose: a store that flaps (a saturated Redis whose calls time out one
        moment and answer the next) would otherwise make every room send ``pause`` and log at
        every transition. Pausing is never delayed, and a room already paused ignores another
        pause (no frame, no log line); resuming waits until the store has been ready for
        ``resume_after`` seconds without a break. Delaying the resume costs only refused
        choices: nothing is acknowledged before it is stored, paused or not."""
        if not ready:
            self.stop()
            self._post(StoreReady(False))
        elif self.resume_after <= 0:
            self._post(StoreReady(True))
        elif self._resume is None:
            loop = asyncio.get_running_loop()
            self._resume = loop.call_later(self.resume_after, self._settled)

    def stop(self) -> None:
        """Drop a pending resume (the lobby stops, or the store went down again)."""
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None

    def _settled(self) -> None:
        self._resume = None
        if self.store.ready():
            self._post(StoreReady(True))

    def _stored(self) -> list[Room]:
        return [room for room in self.rooms.values() if room.settings.replay_of is None]

    def _post(self, command: StoreReady) -> None:
        """Every stored room gets ``command`` through its inbox, in order with its requests."""
        for room in self._stored():
            room.post(command)


__all__ = ["StoreWatch"]
