"""The room actor's hands: it carries out the effects of the room's core, in order.

:class:`Effector` is part of the actor (:mod:`server.room`): given one list of effects that
:meth:`server.core.RoomCore.handle` returned, it writes the frames to the sockets (the
spectators' through the room's :class:`~server.fanout.Fanout`), hands spectator frames to the
relay, arms and posts the room's own commands on its inbox (:mod:`server.inbox`) and forwards
those for another room of the node to the lobby (a rematch's), counts the
revisions in the metrics, tells the lobby a room closed, and makes the store calls through the
keeper (:meth:`server.keeper.Keeper.carry_out`), whose answer goes back to the core. The
actor's loop hands it each command whole (:meth:`Effector.handle`: the command to the core,
its effects carried out, the store's answers back to the core), so that the round runs
compiled (the actor, :mod:`server.room`, is not: about 6,000 instructions a choice), as does
the actor's loop itself (:func:`serve_room`).

Frames are gathered per socket while a list is carried out and written together, one
``transport.write`` (one system call) per socket (:meth:`Connection.send_all`): before the task
awaits the store, and at the end of the list; a spectator's before the fan-out writes to it,
so every socket gets its frames in the order of the effects. So the acting seat's patch and its
``ack``, a ``joined`` and the ``room`` frame announcing the new member, the last patch of a
match and the ``room`` frame of its end, each go in one write. Sending never awaits
(:mod:`server.limits`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

from server.connection import Connection
from server.core import RoomCore
from server.effects import (
    Answer,
    Arm,
    Breathe,
    Closed,
    Done,
    Effect,
    Failed,
    Forward,
    Keep,
    Post,
    Publish,
    Revised,
    Send,
    Watch,
)
from server.fanout import Fanout
from server.inbox import Inbox
from server.keeper import Keeper
from server.metrics import Metrics
from server.room_state import Command, Internal, RoomState, Stop

if TYPE_CHECKING:
    from server.room import Room


_CLOSED: Final = RoomState.CLOSED
_STOP: Final = Stop
"""(Final names: compiled code reads them as constants, not among the module's globals (and
the state's class, then its member) at every command of :func:`serve_room`.)"""

_perf_counter: Final = time.perf_counter
"""(Called as a constant, not looked up on the ``time`` module at every command.)"""

SLOW_COMMAND_SECONDS: Final = 0.05
"""A command the room task took longer than this to handle (Redis waits included, the time it
queued in the inbox not) is logged as ``slow_command``, with how long it had queued
(:meth:`server.room.Room._slow_command`: at most one line per room every ``SLOW_LOG_EVERY``
seconds)."""


class Effector:
    """Carries out one room's effects (see the module doc)."""

    __deletable__ = ("_room",)

    def __init__(
        self,
        room: Room,
        core: RoomCore,
        *,
        fanout: Fanout,
        inbox: Inbox[Any],
        keeper: Keeper,
        metrics: Metrics,
        log: Any,
        on_close: Callable[[Room], None] | None,
    ) -> None:
        self.publish: Callable[[Room, bytes, bytes], None] | None = None
        """The relay's publisher (:mod:`server.relay`): the spectator frames for other nodes."""
        self.forward: Callable[[str, Internal], None] | None = None
        """Posts a command to another room of the node (:class:`~server.effects.Forward`; the
        lobby's)."""
        self._room = room
        self._core = core
        self._fanout = fanout
        self._inbox = inbox
        self._keeper = keeper
        self._metrics = metrics
        self._actions = metrics.actions.labels(core.settings.game)
        self._log = log
        self._on_close = on_close

    def detach(self) -> None:
        """The room's task is over: let go of the room (a reference cycle, the room holding
        this effector; :meth:`server.room.Room.detach`)."""
        del self._room

    async def handle(
        self,
        conn: Connection | None,
        command: Command | Internal,
        t0: float,
        clock: Callable[[], float],
    ) -> None:
        """Hand ``command`` (from ``conn``, queued at ``t0``) to the core at ``clock()``, carry
        out the effects it returns, and hand each answer of the store back to the core at its
        time, until the core waits for nothing more: one command of the actor's loop
        (:func:`serve_room`), here so that it runs compiled.

        Each list is carried out by :meth:`carry` (no await) and the store effect it ends
        with awaited here, the keeper's coroutine straight from this one: no coroutine of the
        effector's own made and run per list (:meth:`_rest` is one, for the rarer effects
        between)."""
        core = self._core
        effects = core.handle(command, clock(), conn)
        while effects:
            at = self.carry(effects, 0, t0)
            if at < 0:
                return
            effect = cast("list[object]", effects)[at]  # (see :meth:`carry`)
            kind = type(effect)
            if kind is Breathe or kind is Keep:  # (a bot's stretch, a snapshot: rare)
                answer = await self._rest(effects, at, t0)
                if answer is None:
                    return
            else:
                answer = await self._keeper.carry_out(cast(Effect, effect), core.play.match)
            effects = core.handle(answer, clock())

    async def _rest(self, effects: list[Effect], at: int, t0: float) -> Answer | None:
        """The rest of ``effects`` from ``effects[at]``, the effect :meth:`carry` stopped at (-1:
        none left), in order: the store's answer to the last, if it is a store effect the core
        waits for (only the last of a list may be one; a snapshot nobody waits for is stored
        where it stands and answered to nobody, :class:`Done` after a bot's stretch)."""
        while at >= 0:
            effect = cast("list[object]", effects)[at]
            kind = type(effect)
            if kind is Keep and not cast(Keep, effect).waits:
                keep = cast(Keep, effect)
                answer = await self._keeper.carry_out(keep, self._core.play.match)
                if isinstance(answer, Failed):  # (the keeper logs the store's own)
                    error = answer.error
                    self._log.error("snapshot_error", rev=keep.rev, exc_info=error)
                at = self.carry(effects, at + 1, t0)
                continue
            if kind is Breathe:  # (a bot-only stretch lets the other rooms run)
                await asyncio.sleep(0)
                return Done()
            return await self._keeper.carry_out(cast(Effect, effect), self._core.play.match)
        return None

    def carry(self, effects: list[Effect], start: int, t0: float) -> int:
        """Carry out ``effects`` from ``start`` on up to the first that must be awaited (a
        store effect, a snapshot due that nobody waits for, a bot's stretch): its index, or -1
        at the end of the list. Every frame gathered before it is written first (nothing
        awaits with a frame held), and a revision's time (``oasis_action_seconds``) observed
        from ``t0``, when the command came into the inbox, once its frames are written.

        A socket's frames are gathered on its connection (:attr:`Connection.held`), the
        sockets that have some in ``touched``: no dict per list, no lookup per frame. Nothing
        awaits between gathering and writing (each write comes before this returns), so no
        other room's list can find a frame of this one held; if carrying one out raises (a
        write among them), what was gathered and not yet written is dropped. Effects are told
        apart by their exact type (``type(e) is``): a failed ``isinstance`` walks the class's
        bases, and most effects of a list failed several."""
        touched: list[Connection] = []
        revised = False
        at = start
        end = len(effects)
        try:
            # (each read as an object, told apart by its type below: typed as the effects'
            # union, compiled, each was checked against its classes one by one first)
            listed = cast("list[object]", effects)
            while at < end:
                effect = listed[at]
                at += 1
                kind = type(effect)
                if kind is Send:
                    send = cast(Send, effect)
                    data, then = send.data, send.then
                    for conn in cast("Sequence[Connection]", send.to):
                        frames = conn.held
                        if frames is None:
                            conn.held = [data] if then is None else [data, then]
                            touched.append(conn)
                        else:
                            frames.append(data)
                            if then is not None:
                                frames.append(then)
                    continue
                if kind is Watch:
                    if touched:  # (a spectator's frames first: see the module doc)
                        members = self._fanout.members
                        for conn in touched:
                            if conn in members:
                                conn.flush()
                    self._fanout.send(cast(Watch, effect).data)
                    continue
                if kind is Publish:
                    if self.publish is not None:
                        publish = cast(Publish, effect)
                        self.publish(self._room, publish.kind, publish.data)
                    continue
                if kind is Revised:
                    self._revised(cast(Revised, effect))
                    revised = True
                    continue
                if self.now(effect):
                    continue
                if touched:
                    _write(touched)
                    touched = []
                if revised:
                    revised = False
                    self._metrics.action_seconds.observe(_perf_counter() - t0)
                if kind is Keep:
                    keep = cast(Keep, effect)
                    if not keep.waits and not self._keeper.due(keep.rev, self._core.play.match):
                        continue  # (nothing to store: no store call, no answer)
                return at - 1
            if touched:
                _write(touched)
        except BaseException:  # (a frame left held would be written with another list's)
            for conn in touched:
                conn.held = None
            raise
        if revised:
            self._metrics.action_seconds.observe(_perf_counter() - t0)
        return -1

    def now(self, effect: object) -> bool:
        """Carry out one effect (an :data:`~server.effects.Effect`) that waits for nothing, at
        once (its frames written now); False if it is a store effect."""
        kind = type(effect)
        if kind is Send:
            send = cast(Send, effect)
            for conn in cast("Sequence[Connection]", send.to):
                conn.send_bytes(send.data, send.then)
        elif kind is Watch:
            self._fanout.send(cast(Watch, effect).data)
        elif kind is Arm:
            arm = cast(Arm, effect)
            self._inbox.later(arm.delay, arm.command)
        elif kind is Publish:
            if self.publish is not None:
                publish = cast(Publish, effect)
                self.publish(self._room, publish.kind, publish.data)
        elif kind is Post:
            self._inbox.post(cast(Post, effect).command)
        elif kind is Forward:
            if self.forward is not None:
                forward = cast(Forward, effect)
                self.forward(forward.room, forward.command)
        elif kind is Revised:
            self._revised(cast(Revised, effect))
        elif kind is Closed:
            if self._on_close is not None:
                self._on_close(self._room)
        else:
            return False
        return True

    def _revised(self, effect: Revised) -> None:
        """A revision went out: the counters (its time is :meth:`carry`'s)."""
        self._actions.inc()
        self._metrics.patch_bytes.observe(effect.size)


def _write(touched: list[Connection]) -> None:
    """Write the gathered frames, one write per socket (see the module doc)."""
    for conn in touched:
        conn.flush()


class Handles(Protocol):
    """A room's effector as :func:`serve_room` calls it (:class:`server.effector.Effector`;
    typed by what it does, so that compiled code does not check its class: a test swaps in a
    broken one)."""

    def handle(
        self,
        conn: Connection | None,
        command: Command | Internal,
        t0: float,
        clock: Callable[[], float],
    ) -> Awaitable[None]: ...


class Served(Protocol):
    """What :func:`serve_room` reads of a room's actor (:class:`server.room.Room`, which is not
    compiled: a native class cannot be weakly referenced)."""

    core: RoomCore
    inbox: Inbox[Any]
    """(Its commands read as ``Any``: typed as the union of every command, each one taken
    from the queue was checked against its classes one by one, compiled.)"""

    @property
    def effector(self) -> Handles: ...

    def _failed(self, conn: Connection | None, command: object) -> None: ...

    def _slow_command(self, command: object, started: float, took: float, t0: float) -> None: ...

    def detach(self) -> None: ...


async def serve_room(room: Served) -> None:
    """A room's task (:meth:`server.room.Room.start_task`): each command of its inbox, in
    order, to its effector, until a :class:`~server.room_state.Stop`, the room closed or a bug
    (``room._failed``: the room fails, its lobby rebuilds it); then the inbox's timers are
    cancelled and the room's parts let go of each other (``room.detach``), in the task's last
    step: no loop turn between its end and the room's being free to go.

    Here, compiled, rather than in the room: the loop runs once per command, and an
    interpreted coroutine costs its frame at every resume (the actor's loop was 0.5 % of an
    action of the tiny game). The effector is read from the room at each command (the tests
    swap it for a broken one)."""
    core, inbox = room.core, room.inbox
    clock = asyncio.get_running_loop().time
    try:
        while True:
            item = inbox.next()
            if item is None:  # (the future awaited directly: no coroutine per command)
                await inbox.arrival()
                continue
            conn, command, t0 = item
            if type(command) is _STOP:  # (its exact class: one comparison, no subclass made)
                return
            started = _perf_counter()
            try:
                await room.effector.handle(conn, command, t0, clock)
            except Exception:
                room._failed(conn, command)
                return
            took = _perf_counter() - started
            if took > SLOW_COMMAND_SECONDS:
                room._slow_command(command, started, took, t0)
            if core.state is _CLOSED:
                return
    finally:
        inbox.cancel_timers()
        room.detach()  # (its parts' reference cycles cut: freed once the lobby lets go)
