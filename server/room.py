"""One room: an actor (one asyncio task, one inbox) that is the single authority over a match.

The actor is thin: its task (:func:`server.effector.serve_room`, compiled) runs the inbox
(:mod:`server.inbox`) and, through its :class:`~server.effector.Effector` (compiled:
:meth:`~server.effector.Effector.handle`), hands each command and the time to the room's
core (:class:`server.core.RoomCore`, which decides everything and does no I/O) and carries
out the effects the core returns, in order (:mod:`server.effects`): frames to sockets (written
without awaiting, :mod:`server.limits`; one write per socket per list of effects), timers to
the inbox, store calls through the keeper (:mod:`server.keeper`: what it stores when, and what
each store failure means), whose answer it hands back to the core (but a revision's snapshot,
which the core does not wait for: :class:`~server.effects.Keep`). So the task only ever waits
on its inbox and on the store.

The core owns the room's parts as components (:mod:`server.core` names them): membership
(:mod:`server.membership`: seats, spectators, stand-ins), play (:mod:`server.play`: choices, undo,
the views of :mod:`server.views`; bots: :mod:`server.autoplay`), the clocks
(:mod:`server.timekeeping`), chat (:mod:`server.chat`) and upkeep (:mod:`server.upkeep`: pause,
loss, reaping). Its lifecycle table and commands are in :mod:`server.room_state`; the state changes
only by a transition of the table, also when a room is restored (:meth:`Room.adopt`), made a replay
(:meth:`Room.replay`) or evicted (:meth:`Room.evict`, asked for by the lobby).

The actor gives the core what the core may not read itself: the time of each command (the
event loop's clock, :meth:`Room._now`), the wall-clock time at that clock's zero (``epoch``,
for chat lines), and what the store's answers teach (through the keeper, :mod:`server.keeper`:
an append whose outcome is unknown, a room the store lost, an archive not written).

Everything that changes the room goes through the inbox and is applied in arrival order by the
room's task, so no lock is needed. An accepted choice is, in this order: checked at the
boundary, appended to the store (a failure refuses it with ``unavailable`` and changes
nothing), applied (one revision), fanned out (one frame per audience), acknowledged to its
sender (:mod:`server.core`; the ``ack`` in the same socket write as the sender's patch).

Paused rooms. While the store is unusable (``Store.on_ready_change``) the room is paused: it
tells every member with a ``pause`` frame (``paused: true``), refuses ``act`` with
``unavailable`` and lets no bot move; when the store is back it first adopts any choice whose
append had an unknown outcome, then sends ``pause`` with ``paused: false`` and play goes on.
Joining a seat, starting and chat also need the store and fail with ``unavailable`` meanwhile;
``sync``, resume and spectating need nothing stored and keep working.

Lost storage. A room whose data the store no longer has (Redis came back empty: the lobby
hears it from the store and sends :class:`~server.room_state.StorageLost`; or an append finds the
room's keys gone) pauses for good: ``pause`` with ``reason: "storage lost"``, ``act`` answers
``storage_lost`` naming the last acknowledged rev, bots stop; ``sync`` and spectating still work,
and the room closes like any room nobody is in (it has nothing left to archive).

Replay rooms (``replay`` frame) are rooms whose seats are driven by an archived match's
choices, one every ``replay_interval`` seconds, on a throwaway in-memory store; only
spectators can be in them.

An engine bug raised while applying a choice (after it was stored) is answered ``internal`` and
logged; the room goes on, but its state is whatever the engine left (the contract's ``apply``
must not fail on a legal choice, and the random-playout harness is what guards that). A bug
anywhere else in the task (the core, an effect, the store's use) ends the task: ``room_failed``
in the log at once, ``internal`` to the command it was on and to those queued, the room closed
and rebuilt by its lobby from the store (:meth:`Room._failed`, :meth:`server.lobby.Lobby.recover`),
its members told to resume it (an unasked ``redirect``, SPEC section 18).

Spectators get their frames through the actor's :class:`~server.fanout.Fanout` (one frame
framed once, the same bytes to each, a large audience in turns), over the set of spectators the
core keeps (:class:`~server.spectators.Spectators`); in rooms with ``spectator_delay`` the core
holds their frames and arms the timer that releases them (a
:class:`~server.spectators.ReleaseDue` posted to the inbox like any timer's command).

Bots (:mod:`server.bots`) see only their seat's view document.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, cast

from games.base import Match
from protocol import frames as f
from protocol.errors import ErrorCode
from server.connection import Connection
from server.core import RoomCore
from server.effector import Effector, serve_room
from server.effects import Effect
from server.fanout import Fanout
from server.inbox import Inbox
from server.keeper import Keeper
from server.metrics import Metrics
from server.quotas import Holdings
from server.room_state import (
    Command,
    Evict,
    Internal,
    RoomState,
    Stop,
)
from server.seats import Seat
from server.spectators import Spectators
from server.store import Action, RoomMeta, Store
from server.timekeeping import Timekeeper
from server.views import Views

SLOW_LOG_EVERY = 10.0
"""A slow command (:data:`server.effector.SLOW_COMMAND_SECONDS`) is logged as ``slow_command``
at most once per room every this many seconds, counting the slow commands since the last."""


class Room:
    """One room's actor: its task, inbox and store calls around its core (see the module doc)."""

    def __init__(
        self,
        core: RoomCore,
        *,
        store: Store,
        metrics: Metrics,
        inbox_size: int,
        created: float,
        loop: asyncio.AbstractEventLoop | None,
        snapshot_every: int = 50,
        on_close: Any = None,
        on_fail: Callable[[Room, list[Connection]], None] | None = None,
        forward: Callable[[str, Internal], None] | None = None,
        publish: Callable[[Room, bytes, bytes], None] | None = None,
    ) -> None:
        """The actor around ``core``, which the lobby made (:meth:`server.lobby.Lobby._room`:
        compiled, a native call, where this interpreted ``__init__`` made it through the
        core's keywords parsed anew, about 6,000 instructions a new match), with the room's
        logger (``core.log``), at wall-clock time ``created`` in ``loop`` (see :meth:`_now`);
        ``forward`` and ``publish``: see :attr:`forward` and :attr:`publish` (given here, not
        set through a property by the lobby: an interpreted call each)."""
        self.id = core.id
        self.settings = core.settings
        self.store = store
        self.metrics = metrics
        self.created = created
        self._loop = loop
        """The loop the task runs in (see :meth:`_now`): the one the room is made in (None
        outside one, in tests: then the one :meth:`start_task` runs in)."""
        self.log = core.log
        self.keeper = Keeper(store, self.id, snapshot_every, self.log)
        self.core = core
        # (the core's compiled ``closed``, asked at every command queued: not a closure)
        self.inbox: Inbox[Command | Internal] = Inbox(self.id, inbox_size, core.closed)
        # (the core names its members by the structural server.member.Member; this shell submits
        # only its Connections, so every one of them is a Connection)
        self.fanout = Fanout(cast("set[Connection]", self.core.spectators.members))
        """Writes the spectators' frames (:class:`~server.effects.Watch`)."""
        self.effector = Effector(
            self,
            self.core,
            fanout=self.fanout,
            inbox=self.inbox,
            keeper=self.keeper,
            metrics=metrics,
            log=self.log,
            on_close=on_close,
        )
        """Carries out the core's effects (:mod:`server.effector`)."""
        self.effector.forward = forward
        self.effector.publish = publish
        core.relayed = publish is not None
        self.seats: list[Seat] = core.seating.seats
        """The core's seats (a list it never replaces: an attribute, which the lobby reads at
        every rematch, not a property, an interpreted call)."""
        self.spectators: Spectators = core.spectators
        """The core's spectators (the same object for the room's life, as :attr:`seats`)."""
        self._on_fail = on_fail
        self._task: asyncio.Task[None] | None = None
        self._slow = 0
        self._slow_logged = float("-inf")
        self.rematch: str | None = None
        """A rematch of this finished room (SPEC section 9): the new room's id once made (the
        lobby's :meth:`~server.lobby.Lobby.rematch`; the room's ``info.rematch`` says it once
        the members moved)."""

    @property
    def publish(self) -> Callable[[Room, bytes, bytes], None] | None:
        """The relay's publisher (:mod:`server.relay`): the spectator frames for other nodes."""
        return self.effector.publish

    @property
    def forward(self) -> Callable[[str, Internal], None] | None:
        """Posts a command to another room of the node (the lobby's; a rematch's new room tells
        the finished one who moved out)."""
        return self.effector.forward

    # What the node reads of the room (its core's) ---------------------------------------------

    @property
    def state(self) -> RoomState:
        return self.core.state

    @property
    def rev(self) -> int:
        return self.core.rev

    @property
    def match(self) -> Match[Any]:
        return self.core.play.match

    @property
    def views(self) -> Views:
        return self.core.play.views

    @property
    def timekeeper(self) -> Timekeeper:
        return self.core.timekeeper

    @property
    def paused(self) -> bool:
        return self.core.status.paused

    def info(self) -> dict[str, Any]:
        return self.core.info()

    def meta(self, *, state: str | None = None, seed: int | None = None) -> RoomMeta:
        return self.core.meta(state=state, seed=seed)

    def members(self) -> list[Connection]:
        """The connections in the room: its seats' and its spectators'."""
        out = [cast(Connection, seat.conn) for seat in self.seats if seat.conn is not None]
        out.extend(cast("set[Connection]", self.spectators.members))
        return out

    def free_seats(self) -> int:
        return self.core.free_seats()

    def hold(self, holdings: Holdings) -> None:
        """What this room holds of its creator's quotas (given back when it finishes or goes)."""
        self.core.hold(holdings)

    # Before the task: how the lobby makes the room --------------------------------------------

    def adopt(self, rev: int, meta: RoomMeta, chat: list[dict[str, Any]]) -> None:
        """A room rebuilt from the store (:meth:`server.core.RoomCore.adopt`)."""
        self._now_effects(self.core.adopt(rev, meta, chat))

    def replay(self, actions: list[Action]) -> None:
        """Make this a replay room: it plays ``actions`` by itself, seats held by nobody."""
        self.core.replay(actions)

    # The outside: submit and run --------------------------------------------------------------

    def start_task(self) -> None:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        self._task = loop.create_task(serve_room(self), name=f"room-{self.id}")
        self._now_effects(self.core.open(self._now()))

    def detach(self) -> None:
        """The task is ending (closed, stopped, evicted, failed; :func:`serve_room` calls this
        last): the room handles no command again, and its parts let go of each other (the
        reference cycles between them, :meth:`server.core.RoomCore.detach`), so that
        reference counting frees it once the lobby lets go of it. Nothing else frees a cycle
        while the server serves: the collector's automatic collections are off
        (:mod:`server.collector`)."""
        self.core.detach()
        if isinstance(self.effector, Effector):  # (not a test's stand-in)
            self.effector.detach()

    def post(self, command: Internal) -> None:
        """Queue an internal command from outside the room (the lobby's store listener)."""
        self.inbox.post(command)

    def submit(self, conn: Connection | None, command: Command | Internal) -> None:
        """Queue a command; a full inbox refuses it with ``unavailable`` (the room is flooded)."""
        self.inbox.submit(conn, command)

    async def stop(self) -> None:
        """Let the task finish the commands queued before now, then end it."""
        await self._end(Stop())

    async def evict(self) -> None:
        """The room goes elsewhere (its lease moved, :mod:`server.cluster`, through the lobby):
        the task finishes the commands queued before now, then the room closes (``close`` in
        the table) without retiring anything in the store, which the new owner keeps using."""
        await self._end(Evict())
        self.core.close()  # (if the task was gone, or flooded and cancelled)

    def release(self) -> None:
        """The room leaves its lobby (closed, evicted): every quota it holds is given back."""
        self.core.holdings.release()
        self.core.spectators.release()

    async def _end(self, last: Stop | Evict) -> None:
        task = self._task
        if task is None or task.done():
            return
        if not self.inbox.put_nowait(last):  # a flooded inbox is not worth finishing
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    def _now(self) -> float:
        """The time the core is given: the event loop's monotonic time (``time.monotonic``
        outside a loop: a room is only made outside one in tests).

        The loop is kept from the room's making on rather than asked for at every command:
        ``asyncio.get_running_loop`` makes a ``getpid()`` system call each time on Python
        3.11 (it checks the loop was not inherited by a forked process)."""
        loop = self._loop
        if loop is not None:
            return loop.time()
        return time.monotonic()

    def _failed(self, conn: Connection | None, command: object) -> None:
        """The task dies of a bug (in the core, an effect, the store's use): said at once in the
        room's log (a task's exception shows only when collected); the command it was on and
        every one queued are answered ``internal``; the room closes, and its lobby brings it
        back from the store and tells the members to resume there (``on_fail``,
        :meth:`server.lobby.Lobby.recover`)."""
        self.log.exception("room_failed", rev=self.rev, command=type(command).__name__)
        members = self.members()
        self.core.close()  # (its inbox takes nothing more)
        for who, what in [(conn, command), *self.inbox.take()]:
            rid = getattr(what, "id", None)
            if who is not None and rid is not None:
                message = f"room {self.id} failed (a server bug)"
                who.send(f.ErrorFrame.of(rid, ErrorCode.INTERNAL, message, self.id))
        if self._on_fail is not None:
            self._on_fail(self, members)

    def _slow_command(self, command: object, started: float, took: float, t0: float) -> None:
        self._slow += 1
        if started - self._slow_logged >= SLOW_LOG_EVERY:
            self._slow_logged = started
            self.log.warning(
                "slow_command",
                command=type(command).__name__,
                ms=round(took * 1000, 1),
                queued_ms=round((started - t0) * 1000, 1),
                rev=self.rev,
                slow_since_last_line=self._slow,
            )
            self._slow = 0

    def _now_effects(self, effects: list[Effect]) -> None:
        """Carry out effects that wait for nothing (outside the task: no store effect)."""
        for effect in effects:
            assert self.effector.now(effect), f"{type(effect).__name__} outside the task"
