"""The room core's upkeep: its pause while the store is down, a lost room, the archive tried
again, and closing it when nobody has been in it for its idle time.

:class:`Upkeep` decides, the core carries out: it puts frames and timers in the room's outbox
and yields the store effects it waits for (:class:`~server.effects.Retire`,
:class:`~server.effects.Finish`). What it knows of the store it learned from the answers
(the room's :class:`~server.room_state.Status`: ``lost``, ``finish_pending``). The policy of
what the store keeps of a retired room is :meth:`server.keeper.Keeper.retire`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from protocol import frames as f
from protocol.errors import RequestError
from server.effects import Closed, Finish, Outbox, Retire, Steps
from server.membership import Membership
from server.play import Play
from server.room_state import Reap, RoomSettings, RoomState, Status, Tuning, detached
from server.timekeeping import Timekeeper

_PLAYING: Final = RoomState.PLAYING
_FINISHED: Final = RoomState.FINISHED
_CLOSED: Final = RoomState.CLOSED
"""(Final names, as :mod:`server.play`'s: compiled code reads them as constants, not the class
among the module's globals and then its member.)"""

RETIRE_RETRY_SECONDS: Final = 5.0
"""A room whose retirement the store could not record tries again this much later (closing it
without would leave it live in the store, and a node would restore it as an orphan)."""


class Upkeep:
    """One room's pause, loss and reaping (see the module doc)."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        tuning: Tuning,
        *,
        status: Status,
        out: Outbox,
        play: Play,
        membership: Membership,
        timekeeper: Timekeeper,
        close: Callable[[], None],
        log: Any,
    ) -> None:
        self.room = room_id
        self.settings = settings
        self._status = status
        self._out = out
        self._play = play
        self._membership = membership
        self._clocks = timekeeper
        self._close = close
        self._log = log
        self._idle_ttl = tuning.idle_ttl
        finished = tuning.finished_ttl
        self._finished_ttl = tuning.idle_ttl if finished is None else finished
        moved = tuning.moved_ttl
        self._moved_ttl = self._finished_ttl if moved is None else moved
        self._empty_since: float | None = None
        self._told_lost = False

    def detach(self) -> None:
        """The room closed: let go of the core's method (:meth:`server.core.RoomCore.detach`)."""
        self._close = detached

    # The store's health -----------------------------------------------------------------------

    def archive(self, result: dict[str, Any]) -> Steps:
        """Archive the match (again); a result that could not be written is kept for the
        store's return (or the room's reaping)."""
        written = yield Finish(result)
        self._status.finish_pending = None if written else result

    def storage_lost(self) -> None:
        """The store lost this room: pause for good and say so (see "Lost storage")."""
        status = self._status
        status.lost = True
        if self._told_lost:
            return
        self._told_lost = True
        rev = self._play.rev
        if not status.paused:
            status.paused = True
            self._clocks.set_paused(True, rev)
        self._log.error("room_paused_storage_lost", rev=rev, state=status.state.value)
        data = f.encode_frame(f.Pause(self.room, True, "storage lost", rev))
        self._out.send(self._membership.members(), data)

    def store_ready(self, ready: bool) -> Steps:
        """Pause while the store is down; on its return adopt what landed, then resume."""
        status = self._status
        if status.lost:
            return  # paused for good
        if ready:
            try:
                yield from self._play.catch_up()
            except RequestError:
                return  # down again already: the next notification resumes us
            if status.finish_pending is not None:
                yield from self.archive(status.finish_pending)
        if ready != status.paused:
            return
        status.paused = not ready
        rev = self._play.rev
        self._clocks.set_paused(status.paused, rev)
        self._log.warning("room_paused" if status.paused else "room_resumed", rev=rev)
        reason = "storage unavailable" if status.paused else "storage available"
        data = f.encode_frame(f.Pause(self.room, status.paused, reason, rev))
        self._out.send(self._membership.members(), data)
        self._play.auto.next()

    # Closing a room nobody is in --------------------------------------------------------------

    def present(self, here: bool) -> None:
        """Who is here was announced (``here``: anybody): an empty room's idle time starts."""
        if here:
            self._empty_since = None
        elif self._empty_since is None:
            self.schedule()

    def finished(self) -> None:
        """The match ended: a room nobody watches goes soon (``finished_room_ttl``)."""
        if self._empty_since is not None:
            self._out.later(self._reap_after(), Reap())

    def schedule(self) -> None:
        """The room is empty from now on: its reaping timer."""
        self._empty_since = self._out.now
        self._out.later(self._reap_after(), Reap())

    def _reap_after(self) -> float:
        """How long the room may stay empty: ``room_idle_ttl``, or once its match is over the
        shorter ``finished_room_ttl`` (its archive keeps the match; an all-bot match that
        nobody watches must not hold its memory for ten minutes), and once every player moved
        to its rematch the shorter ``moved_room_ttl`` (nobody is left to come back to it; with
        matches ending all the time, finished rooms kept for ``finished_room_ttl`` each would
        come to thousands)."""
        status = self._status
        if status.state is _FINISHED:
            ttl = min(self._finished_ttl, self._idle_ttl)
            return min(ttl, self._moved_ttl) if status.everyone_moved else ttl
        return self._idle_ttl

    def reap(self) -> Steps:
        """Close the room if nobody has been connected for the whole idle time.

        A paused room waits (its store could not record the retirement, and a restart would
        bring it back); a room whose store lost it asks nothing of the store."""
        empty_since = self._empty_since
        status, out = self._status, self._out
        if self._membership.members() or status.state is _CLOSED or empty_since is None:
            return
        left = self._reap_after() - (out.now - empty_since)
        if status.paused and not status.lost:
            left = max(left, self._idle_ttl)
        if left > 0.001:  # it emptied again after this timer was set: wait for the rest
            out.later(left, Reap())
            return
        if self.settings.replay_of is None and not status.lost:
            if status.state is _FINISHED:
                if status.finish_pending is not None:
                    yield from self.archive(status.finish_pending)
            elif not (yield Retire(status.state is _PLAYING, self._play.rev)):
                out.later(RETIRE_RETRY_SECONDS, Reap())  # the store is struggling: stay
                return
        self._close()
        out.add(Closed())
