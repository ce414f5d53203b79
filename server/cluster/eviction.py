"""Losing a room (:mod:`server.cluster`): what this node does when another node took the lease of
a room served here.

The store refuses any write of a room whose lease this node does not hold
(:class:`~server.store.NotOwnerError`) and tells :meth:`Eviction.not_owner`, as does the lease
loop for a renewal refused. A lease that merely lapsed (no node holds it) is taken back and the
room stays, members and all (:meth:`~.claims.Claims.regain`); otherwise the room is *evicted*:
out of the lobby (its task stops, :meth:`~server.lobby.Lobby.evict`), and each of its members
and spectators gets a ``redirect`` to the node that holds it now.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from server.cluster.claims import Claims
from server.lease import Leases
from server.store import StoreError

if TYPE_CHECKING:
    from server.lobby import Lobby


class Eviction:
    """The evictions under way (one per room at a time), each a task of ``spawn``."""

    def __init__(
        self,
        lobby: Lobby,
        leases: Leases,
        claims: Claims,
        spawn: Callable[[Any], None],
        log: Any,
    ) -> None:
        self.lobby = lobby
        self.leases = leases
        self.claims = claims
        self.spawn = spawn
        self.log = log
        self._evicting: set[str] = set()

    def not_owner(self, room: str) -> None:
        """This node lost ``room``'s lease (a refused write or renewal): evict it now."""
        if room in self._evicting or room not in self.lobby.rooms:
            return
        self._evicting.add(room)
        self.spawn(self._evict(room))

    async def _evict(self, room_id: str) -> None:
        try:
            room = self.lobby.rooms.get(room_id)
            if room is None:
                return
            if await self.claims.regain(room_id):
                self.log.warning("lease_regained", room=room_id, rev=room.rev)
                return
            self.log.warning("lease_lost", room=room_id, rev=room.rev)
            members = room.members()  # (before the lobby lets its spectators go)
            self.claims.held.discard(room_id)
            await self.lobby.evict(room_id)
            url = ""
            with contextlib.suppress(StoreError):
                holder = await self.leases.holder(room_id)
                if holder is not None:  # (this node again, if it took the orphan back already)
                    url = holder.url
            for conn in members:
                conn.rooms.pop(room_id, None)
                conn.send(f.Redirect(None, room_id, url, "the room moved to another node"))
        finally:
            self._evicting.discard(room_id)
