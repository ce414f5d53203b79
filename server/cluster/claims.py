"""Taking rooms over (:mod:`server.cluster`): the leases this node holds and the rooms it
restores under them.

:class:`Claims` takes a room's lease and restores the room from its stored record
(:mod:`server.recovery`): every live room nobody holds at start-up and in each round of the
lease loop (:meth:`Claims.orphans`, a batch of leases and reads per round trip), and one room on
the spot when a client asks for it (:meth:`Claims.claim`). Concurrent claims of one room share
one attempt. A lease that lapsed while nobody else took it is taken back
(:meth:`Claims.regain`), the room staying here with its members (:mod:`.eviction` asks).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from server.lease import Leases
from server.recovery import RecoveryError, rebuild
from server.store import CorruptRecordError, RoomRecord, StoreError
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.lobby import Lobby


class Claims:
    """The rooms whose lease this node holds (:attr:`held`) and the claims under way."""

    def __init__(
        self,
        lobby: Lobby,
        store: RedisStore,
        leases: Leases,
        closing: Callable[[], bool],
        log: Any,
    ) -> None:
        self.lobby = lobby
        self.store = store
        self.leases = leases
        self.closing = closing
        """The node is stopping: it takes no room over any more."""
        self.log = log
        self.held: set[str] = set()
        """The rooms served here under this node's lease (the lease loop frees those that
        closed)."""
        self._claims: dict[str, asyncio.Future[bool]] = {}

    @property
    def node(self) -> str:
        return self.leases.node

    async def orphans(self, batch: int = 100) -> tuple[int, int]:
        """Take over every live room nobody holds (or a dead process of this node held), a batch
        of leases and reads per round trip; (rooms restored, rooms that could not be)."""
        rooms = [
            r
            for r in await self.store.unfinished_rooms()
            if not self.lobby.serves(r) and r not in self._claims
        ]
        holders = await self.leases.holders(rooms)
        free = [r for r, h in holders.items() if h is None or h.node == self.node]
        random.shuffle(free)  # nodes racing for a dead node's rooms share them out
        claimed = failed = 0
        for start in range(0, len(free), batch):
            if self.closing():
                break
            chunk = [r for r in free[start : start + batch] if r not in self._claims]
            futures = self._begin_claims(chunk)
            results: dict[str, bool] = {}
            try:
                got = await self.leases.acquire_many(chunk)
                loaded = await self.store.load_rooms(got)
                for room in got:
                    results[room] = await self._restore(room, loaded[room])
            finally:
                self._end_claims(futures, results)
            claimed += sum(results.values())
            failed += sum(1 for ok in results.values() if not ok)
            taken = sorted(room for room, ok in results.items() if ok)
            if taken:  # one line per batch (a restart restores thousands of rooms)
                self.log.info("rooms_taken_over", count=len(taken), rooms=taken[:20])
        return claimed, failed

    async def claim(self, room: str) -> bool:
        """Take ``room``'s lease and restore it here; False if another node has it or it is not
        live. Concurrent claims of one room share one attempt."""
        if self.lobby.serves(room):
            return True
        pending = self._claims.get(room)
        if pending is not None:
            return await asyncio.shield(pending)
        futures = self._begin_claims([room])
        results: dict[str, bool] = {}
        try:
            if not self.closing() and await self.leases.acquire(room):
                loaded = await self.store.load_rooms([room])
                results[room] = await self._restore(room, loaded[room])
        finally:
            self._end_claims(futures, results)
        return results.get(room, False)

    def _begin_claims(self, rooms: list[str]) -> dict[str, asyncio.Future[bool]]:
        loop = asyncio.get_running_loop()
        futures = {room: loop.create_future() for room in rooms}
        self._claims.update(futures)
        return futures

    def _end_claims(
        self, futures: dict[str, asyncio.Future[bool]], results: dict[str, bool]
    ) -> None:
        for room, future in futures.items():
            self._claims.pop(room, None)
            if not future.done():
                future.set_result(results.get(room, False))

    async def _restore(self, room: str, found: RoomRecord | CorruptRecordError | None) -> bool:
        """Serve a room whose lease this node holds now, from its stored record."""
        if self.lobby.serves(room):
            # Created or restored here while the lease and record were read (a record read
            # then is stale: restoring it would replace the live room, bench found seats lost).
            self.held.add(room)
            return True
        if found is None:  # finished or deleted meanwhile
            await self.release_quietly(room)
            return False
        try:
            if isinstance(found, CorruptRecordError):
                raise RecoveryError(room, str(found).removeprefix(f"room {room}: "))
            match = rebuild(found)
        except Exception as exc:  # a recovery error, or an engine refusing stored data
            self.log.error("room_not_restored", room=room, error=f"{type(exc).__name__}: {exc}")
            await self.release_quietly(room)
            return False
        self.lobby.restore(found.room, found.info, match, found.rev, found.chat)
        self.held.add(room)
        self.log.debug("room_taken_over", room=room, rev=found.rev)
        return True

    async def release_quietly(self, room: str) -> None:
        with contextlib.suppress(StoreError):
            await self.leases.release([room])

    async def regain(self, room_id: str) -> bool:
        """Take back a lease that lapsed while nobody else took it (renewals that failed while
        Redis was slow or down): the room stays here with its members attached.

        Evicting it instead would have this node restore it again on its clients' next request,
        as a new room none of them is a member of (every choice ``not_allowed``, as one bench
        run saw after a store outage). Safe because every write stays fenced and rev-checked:
        if another node held the room meanwhile and stored choices, the next append is refused
        with a rev error and the room adopts what landed (:class:`~server.keeper.Keeper`)."""
        if self.closing():
            return False
        try:
            regained = await self.leases.acquire(room_id)
        except StoreError:
            return False
        if regained:
            self.held.add(room_id)
        return regained
