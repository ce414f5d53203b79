"""What a room is, as the node reads it: its ``info`` (listed, announced) and its stored meta.

:class:`Description` is part of the room core (:mod:`server.core`), built over the parts it
reads (the settings, the lifecycle's :class:`~server.room_state.Status`, the seats, the
spectators, the clocks, the revision): :meth:`Description.info` is what the lobby lists and
members are told in ``room`` frames when it changes; :meth:`Description.meta` the room's record
for the store, token digests only, never tokens. Both are read, never kept: each call describes
the room as it is now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from server.room_state import RoomSettings, RoomState, Status
from server.seats import Seating
from server.spectators import Spectators
from server.store.meta import RoomMeta
from server.timekeeping import Timekeeper

_STATES: Final = tuple(RoomState)
_NAMES: Final = tuple(state.value for state in _STATES)
"""Each state's name (its ``value``), by its place in :data:`_STATES`."""


def _name(state: RoomState) -> str:
    """``state.value``, found among the few states by identity: an enum's ``value`` is a
    Python property, which ran interpreted (about 1,500 instructions) at each ``info`` and
    ``meta`` of the room."""
    for i in range(len(_STATES)):
        if _STATES[i] is state:
            return _NAMES[i]
    return state.value  # (not reached: every state is one of them)


class Description:
    """One room's info and stored meta (see the module doc)."""

    __slots__ = ("_clocks", "_rev", "_room", "_seating", "_settings", "_spectators", "_status")

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        *,
        status: Status,
        seating: Seating,
        spectators: Spectators,
        timekeeper: Timekeeper,
        rev: Callable[[], int],
    ) -> None:
        self._room = room_id
        self._settings = settings
        self._status = status
        self._seating = seating
        self._spectators = spectators
        self._clocks = timekeeper
        self._rev = rev

    def detach(self, rev: int) -> None:
        """The room closed at ``rev``: let go of the core's closure that read it
        (:meth:`server.core.RoomCore.detach`)."""
        self._rev = lambda: rev

    def info(self) -> dict[str, Any]:
        """What the lobby lists and members are told when it changes."""
        s = self._settings
        return {
            "room": self._room,
            "game": s.game,
            "players": s.players,
            "options": s.options,
            "public": s.public,
            "state": _name(self._status.state),
            "rev": self._rev(),
            "seats": self._seating.to_json(),
            "spectators": len(self._spectators),
            "spectator_delay": s.spectator_delay,
            "spectator_chat": s.spectator_chat,
            "paused": self._status.paused,
            **({"replay_of": s.replay_of} if s.replay_of is not None else {}),
            **({"clock": s.clock.to_json()} if s.clock is not None else {}),
            **({"rematch": self._status.rematch} if self._status.rematch is not None else {}),
        }

    def meta(self, *, state: str | None = None, seed: int | None = None) -> RoomMeta:
        """Room metadata for the store (token digests only, never tokens): :meth:`info` and
        what only a restore needs, built as the record itself (the same as
        ``RoomMeta.from_json`` of that map, which tests/server/core/test_meta.py checks, without
        making the map and parsing it back on every join and at every creation).

        ``state``: the state it is stored with instead of the room's (a match about to start
        is stored as playing before it starts); ``seed``: the match's, stored at creation."""
        s, status = self._settings, self._status
        seating = self._seating
        return RoomMeta(
            room=self._room,
            game=s.game,
            players=s.players,
            options=dict(s.options),
            public=s.public,
            state=_name(status.state) if state is None else state,
            rev=self._rev(),
            seats=seating.metas(),
            spectators=len(self._spectators),
            spectator_delay=s.spectator_delay,
            spectator_chat=s.spectator_chat,
            paused=status.paused,
            replay_of=s.replay_of,
            clock=s.clock.to_json() if s.clock is not None else None,
            tokens=tuple(seating.digests()),
            quick=s.quick,
            host=s.host,
            bot=s.bot or "random",
            clock_state=self._clocks.stored(None),
            seed=seed,
        )
