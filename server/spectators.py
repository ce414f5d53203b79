"""The spectators of one room, live or delayed by ``spectator_delay`` seconds: state, no I/O.

A part of the room core (:mod:`server.core`): :class:`Spectators` holds who watches and, with a
delay, the queue of frames not yet released, as data. It never writes a socket nor arms a timer:
it puts effects in the room's outbox (:class:`~server.effects.Outbox`), which the actor
(:mod:`server.room`) carries out: a :class:`~server.effects.Watch` (one encoded frame, written
to every spectator by the actor's :class:`~server.fanout.Fanout`: framed once, the same bytes to
every socket, a large audience in turns) and an :class:`~server.effects.Arm` of
:class:`ReleaseDue`, whose firing comes back to the core as a command at its time ``now``.

With a delay, every spectator frame (patches, and chat said by seats) waits in the queue with
its release time, ``now + delay`` at the command that made it; the delayed spectator view is
kept up to date by applying the released ops, so a newcomer, a ``sync`` or a resume gets the
view as of the latest revision that is at least the delay old, never a newer one. One timer is
armed at a time: when the queue becomes non-empty, then again by :meth:`Spectators.release_due`
while frames remain (a :class:`ReleaseDue` that is not the one armed last releases what is due
and arms nothing; the room's inbox never drops a timer's command, :mod:`server.inbox`).
Frames with no delay (the ``room`` frame, a spectator's chat line) are written at once, ahead
of the queue.

Quotas: a room takes at most ``spectators_per_room`` spectators and the node
``spectators_per_node`` (:mod:`server.quotas`); the feed counts its members in the node's
tally as they come and go, and gives back the ones left when the room goes (:meth:`release`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from protocol.patch import apply
from server.effects import Outbox, Watch
from server.quotas import Quotas

if TYPE_CHECKING:
    from server.member import Member
    from server.views import Revision

NODE: Final = ""
"""The one key of the node-wide spectator tally."""
MIN_WAIT: Final = 0.001
"""The shortest wait the release timer is armed for (seconds)."""


@dataclass(frozen=True, slots=True)
class ReleaseDue:
    """The delayed spectators' timer fired (armed for ``due``)."""

    due: float


@dataclass(frozen=True, slots=True)
class _Delayed:
    due: float
    frame: bytes
    revision: Revision | None


class Spectators:
    """The room's spectators; with a delay, the frames waiting and the delayed view.

    ``view``, ``rev``, ``view_hash``: the spectators' view now (kept only with a delay; the
    room passes an empty one without, so that no view is computed for it). The set
    :attr:`members` lives as long as the room (the actor's fan-out writes to it)."""

    def __init__(
        self,
        delay: float,
        out: Outbox,
        quotas: Quotas | None = None,
    ) -> None:
        self.delay = delay
        self.quotas = quotas
        self.members: set[Member] = set()
        self._out = out
        self._pending: deque[_Delayed] = deque()
        self._armed: float | None = None
        """The due time of the release timer armed last (None: none is pending)."""
        self._doc: dict[str, Any] = {}
        self._rev = 0
        self._hash = ""
        self.closed = False

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[Member]:
        return iter(self.members)

    def __contains__(self, conn: object) -> bool:
        return conn in self.members

    def restart(self, view: dict[str, Any], view_hash: str, rev: int) -> None:
        """The delayed view starts at ``rev`` (a new room, a restored one); nothing queued."""
        self._doc, self._hash, self._rev = view, view_hash, rev
        self._pending.clear()
        self._armed = None

    def add(self, conn: Member) -> None:
        """A new spectator, or ``quota_exceeded`` (``spectators_per_room`` or ``_per_node``)."""
        if conn in self.members:
            return
        q = self.quotas
        if q is not None:
            if len(self.members) >= q.spectators_per_room:
                raise q.refuse(
                    "spectators_per_room", f"at most {q.spectators_per_room} spectators per room"
                )
            q.spectators.acquire(NODE)
        self.members.add(conn)

    def discard(self, conn: Member) -> None:
        if conn in self.members:
            self.members.discard(conn)
            if self.quotas is not None:
                self.quotas.spectators.release(NODE)

    def release(self) -> None:
        """The room goes: its spectators leave the node's tally (idempotent)."""
        for conn in list(self.members):
            self.discard(conn)

    @property
    def delayed(self) -> bool:
        return self.delay > 0

    def delayed_view(self) -> tuple[dict[str, Any], int, str]:
        """The delayed spectator view, its revision and its hash."""
        return self._doc, self._rev, self._hash

    def now(self, frame: bytes) -> None:
        """Send ``frame`` to every spectator at once (no delay)."""
        self._out.add(Watch(frame))

    def send(self, frame: bytes, revision: Revision | None) -> None:
        """Send ``frame`` to every spectator now, or after the delay (``revision``: the patch's
        data, for the delayed view)."""
        if self.delay <= 0:
            self._out.add(Watch(frame))
            return
        now = self._out.now
        pending = self._pending
        pending.append(_Delayed(now + self.delay, frame, revision))
        if self._armed is None:
            self._arm(max(pending[0].due, now + MIN_WAIT))

    def release_due(self, fired: ReleaseDue) -> None:
        """The release timer fired at the outbox's ``now``: the frames due go out, in order."""
        now = self._out.now
        pending = self._pending
        while pending and pending[0].due <= now:
            item = pending.popleft()
            if item.revision is not None:
                self._doc = apply(self._doc, item.revision.ops())
                self._rev = item.revision.rev
                self._hash = item.revision.spectator_hash
            self._out.add(Watch(item.frame))
        if fired.due != self._armed:
            return  # (not the timer armed last)
        self._armed = None
        if pending and not self.closed:
            self._arm(max(pending[0].due, now + MIN_WAIT))

    def _arm(self, due: float) -> None:
        self._armed = due
        self._out.later(due - self._out.now, ReleaseDue(due))
