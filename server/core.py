"""The room core: the rules of one room as commands and the time in, effects out, no I/O.

The sans-I/O half of a room (websockets' ``Protocol`` is the model; :mod:`server.room` is the
thin actor that runs it). :meth:`RoomCore.handle` takes one command (a request of a member, an
internal command of the room's own, or the answer to a store effect) and the time, and returns
the effects (:mod:`server.effects`) the actor carries out in order. Nothing here awaits, reads a
clock, arms a timer or writes to a socket, so the room's behaviour is tested in process, at
chosen times (tests/server/core/). A command that needs the store is a generator
(:data:`~server.effects.Steps`), resumed by the store's answer; at most one is pending.

The core is small: it builds the room's components, dispatches each command to the one that
owns it, and makes, restores and closes the room through its lifecycle. The components, each
given what it needs when the core builds them (the room's :class:`~server.room_state.Status`, its
:class:`~server.effects.Outbox`, each other, callables of the core's; none holds the core):

- :class:`~server.description.Description`: what the room is (its ``info``, its stored meta);
- :class:`~server.steps.Driver`: runs the command being handled through its store effects,
  learns from the store's answers, and answers every failure, in one place, with its ``error``
  frame;
- :class:`~server.room_state.Lifecycle`: the one place the state changes, by the table of
  :mod:`server.room_state` (the ``rooms`` gauge, the quotas given back);

- :class:`~server.membership.Membership`: join, resume, spectate, sync, leave, gone, stand-ins,
  a rematch's members moving in and out;
- :class:`~server.play.Play`: start, choices, undo (the order of a choice's effects is the
  room's rules made visible: stored, applied, fanned out, acknowledged, then snapshotted), with
  its :class:`~server.autoplay.Autoplay`: bots, a replay's script, timeouts;
- :class:`~server.timekeeping.Timekeeper`: the clocks, their timer, their pause;
- :class:`~server.chat.Chat`: chat lines, a member's and a relayed spectator's;
- :class:`~server.upkeep.Upkeep`: the pause while the store is down, a lost room, closing a
  room nobody is in;
- :class:`~server.spectators.Spectators`: who watches, and a delayed room's frames held until
  they are due (shared by play, chat and membership).

What the core reads of the world is given to it: the time (``now``, the event loop's monotonic
clock; ``epoch``, the wall-clock time at ``now == 0``, for chat lines), what the store taught it
(in the answers: an append's unknown outcome, a lost room, an archive not written), the logger
and the metrics (counters in memory). It holds no store and no keeper, and no part of it does
I/O: the spectators (:mod:`server.spectators`) are who watches and a delayed room's queue as
data; the actor writes their frames (:class:`~server.effects.Watch`) and arms the release timer
(:class:`~server.effects.Arm` of :class:`~server.spectators.ReleaseDue`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from games.base import Match
from protocol import messages as m
from protocol.codec import map_header, pack
from server.chat import Chat
from server.clock import ClockDue
from server.description import Description
from server.effects import (
    Answer,
    Done,
    Effect,
    Failed,
    Handling,
    Outbox,
    Post,
    Publish,
)
from server.membership import Membership
from server.metrics import Metrics
from server.play import Play
from server.quotas import Holdings, Quotas
from server.room_state import (
    Admit,
    Announce,
    BotTurn,
    Command,
    Evict,
    Gone,
    Internal,
    Lifecycle,
    Moved,
    Reap,
    Refinish,
    RelayedChat,
    Resync,
    RoomEvent,
    RoomSettings,
    RoomState,
    Status,
    StorageLost,
    StoreReady,
    Tuning,
)
from server.seats import Seating
from server.spectators import ReleaseDue, Spectators
from server.steps import Driver
from server.store.meta import RoomMeta
from server.store.records import Action
from server.takeover import TakeoverDue
from server.timekeeping import Timekeeper
from server.upkeep import Upkeep

if TYPE_CHECKING:
    from server.member import Member


_PLAYING: Final = RoomState.PLAYING
_FINISHED: Final = RoomState.FINISHED
_CLOSED: Final = RoomState.CLOSED
"""(Final names, as :mod:`server.play`'s: compiled code reads them as constants, not the class
among the module's globals and then its member.)"""

_ROOM_HEAD: Final = map_header(3) + pack("type") + pack("room") + pack("room")
_INFO_KEY: Final = pack("info")
"""The fixed parts of a ``room`` frame (:class:`protocol.frames.RoomInfo`: ``type``, ``room``,
``info``, in ``to_wire``'s order), spliced by :meth:`RoomCore._announce`."""


class RoomCore:
    """One room's rules and state (see the module doc); ``handle`` is its one entry point."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        match: Match[Any],
        tuning: Tuning,
        *,
        seed: int,
        metrics: Metrics,
        log: Any,
        paused: bool,
        epoch: float,
        quotas: Quotas | None = None,
    ) -> None:
        self.id = room_id
        self.settings = settings
        self.metrics = metrics
        self.log = log
        self.status = Status(paused=paused)
        """The lifecycle state (changed only by :attr:`lifecycle`), the pause, the store's
        facts: read by every component."""
        self.out = Outbox()
        self.quotas = quotas
        self.holdings = Holdings()
        """What this room holds of its creator's quotas, given back when it finishes or goes."""
        self.lifecycle = Lifecycle(self.status, metrics, self.holdings)

        status, out = self.status, self.out
        self.seating = Seating(room_id, settings.players)
        self.spectators = Spectators(settings.spectator_delay, out, quotas)
        self.timekeeper = Timekeeper(
            settings.clock, settings.players, match=match, status=status, out=out
        )
        self.description = Description(
            room_id,
            settings,
            status=status,
            seating=self.seating,
            spectators=self.spectators,
            timekeeper=self.timekeeper,
            rev=lambda: self.play.rev,
        )
        describe = self.description
        self.play = Play(
            room_id,
            settings,
            match,
            tuning,
            status=status,
            out=out,
            seating=self.seating,
            spectators=self.spectators,
            timekeeper=self.timekeeper,
            transition=self.lifecycle.transition,
            announce=self._announce,
            finished=self._finished,
            meta=describe.meta,
            holdings=self.holdings,
            quotas=quotas,
            log=log,
            seed=seed,
        )
        self.chat = Chat(
            room_id,
            settings,
            tuning,
            seating=self.seating,
            spectators=self.spectators,
            out=out,
            quotas=quotas,
            epoch=epoch,
            logger=log,
        )
        self.membership = Membership(
            room_id,
            settings,
            tuning,
            seating=self.seating,
            spectators=self.spectators,
            play=self.play,
            timekeeper=self.timekeeper,
            chat=self.chat.log,
            status=status,
            out=out,
            announce=self._announce,
            info=describe.info,
            meta=describe.meta,
            wall=self.chat.wall,
            log=log,
            seed=seed,
        )
        self.upkeep = Upkeep(
            room_id,
            settings,
            tuning,
            status=status,
            out=out,
            play=self.play,
            membership=self.membership,
            timekeeper=self.timekeeper,
            close=self._close,
            log=log,
        )
        self.relayed = False
        """A relay's publisher takes the room's spectator frames (:class:`Publish`; the actor
        sets it with its publisher): announcements go out even when nobody is in the room."""
        self.driver = Driver(
            room_id,
            status=status,
            out=out,
            metrics=metrics,
            log=log,
            storage_lost=self.upkeep.storage_lost,
        )

    # What the node reads of the room ----------------------------------------------------------

    @property
    def state(self) -> RoomState:
        return self.status.state

    @property
    def rev(self) -> int:
        return self.play.rev

    def closed(self) -> bool:
        """Whether the room is closed (its inbox takes nothing more): a compiled call the inbox
        can make at each command, where an interpreted closure reading :attr:`state` ran a
        Python frame and looked the state's class up among its globals."""
        return self.status.state is _CLOSED

    def info(self) -> dict[str, Any]:
        """What the lobby lists and members are told when it changes."""
        return self.description.info()

    def meta(self, *, state: str | None = None, seed: int | None = None) -> RoomMeta:
        """The room's record for the store (:meth:`Description.meta`)."""
        return self.description.meta(state=state, seed=seed)

    def free_seats(self) -> int:
        return self.seating.free()

    def hold(self, holdings: Holdings) -> None:
        """Places in its creator's quotas the room holds from now on (given back with the
        room's own, :attr:`holdings`)."""
        self.holdings.held.extend(holdings.held)
        holdings.held = []

    # The one entry point ----------------------------------------------------------------------

    def handle(
        self, command: Command | Internal | Answer, now: float, conn: Member | None = None
    ) -> list[Effect]:
        """Handle ``command`` (from ``conn``, a member, or None) at time ``now``: the effects.

        An answer (:class:`Done`, :class:`Failed`) resumes the command that waits for it; any
        other command may come only when none waits."""
        self.out.start(now)
        # (the classes written out: compiled, two inline checks of native classes; a tuple
        # held in a name is checked by Python's own ``isinstance``, about 300 instructions)
        if isinstance(command, (Done, Failed)):
            return self.driver.resume(command)
        return self.driver.run(self._dispatch(conn, command), conn, command)

    def _dispatch(self, conn: Member | None, command: Command | Internal) -> Handling:
        """The steps of ``command``, then None (the driver's sign that it is done without a
        ``StopIteration``: :mod:`server.steps`)."""
        play, membership = self.play, self.membership
        if isinstance(command, m.Act):  # (the command of nearly every revision, looked up first)
            assert conn is not None
            yield from play.act(conn, command, conn in self.spectators)
        elif isinstance(command, BotTurn):
            yield from play.auto.turn(command)
        elif isinstance(command, Reap):
            yield from self.upkeep.reap()
        elif isinstance(command, StoreReady):
            yield from self.upkeep.store_ready(command.ready)
        elif isinstance(command, StorageLost):
            self.upkeep.storage_lost()
        elif isinstance(command, ClockDue):
            yield from play.auto.timeout(command)
        elif isinstance(command, ReleaseDue):
            self.spectators.release_due(command)
        elif isinstance(command, TakeoverDue):
            membership.takeover_due(command)
        elif isinstance(command, Announce):
            membership.announced()
        elif isinstance(command, Evict):
            self._close()
        elif isinstance(command, RelayedChat):
            yield from self.chat.relayed(command, play.rev)
        elif isinstance(command, Refinish):
            if self.status.finish_pending is None:
                yield from self.upkeep.archive(play.result())
        elif isinstance(command, Moved):
            membership.moved(command)
        else:
            assert conn is not None, type(command).__name__
            watching = conn in self.spectators
            if isinstance(command, m.Undo):
                yield from play.undo(conn, command, watching)
            elif isinstance(command, m.Join):
                yield from membership.join(conn, command)
            elif isinstance(command, m.Spectate):
                membership.spectate(conn, command)
            elif isinstance(command, m.Sync):
                membership.sync(conn, command.id)
            elif isinstance(command, Resync):
                membership.sync(conn, None)
            elif isinstance(command, m.Leave):
                yield from membership.leave(conn, command)
            elif isinstance(command, m.Start):
                yield from play.start(conn, command)
            elif isinstance(command, m.Chat):
                yield from self.chat.chat(conn, command, play.rev)
            elif isinstance(command, Gone):
                yield from membership.gone(conn)
            elif isinstance(command, Admit):
                yield from membership.admit(conn, command)
                self.upkeep.present(membership.here())
            elif isinstance(command, m.Rematch):
                membership.again(conn, command)
        yield None

    # Lifecycle --------------------------------------------------------------------------------

    def open(self, now: float) -> list[Effect]:
        """The room's task starts: it counts in the gauge; timers of a restored room."""
        self.out.start(now)
        self.lifecycle.count()
        self.upkeep.schedule()
        if self.status.state is _PLAYING and self.settings.replay_of is None:
            for seat in self.seating.seats:  # restored: every player is gone (see server.takeover)
                if not seat.bot and not seat.forfeited:
                    self.membership.await_takeover(seat.index)
            self.timekeeper.turned(None)
            self.timekeeper.arm(self.play.rev)
        self.play.auto.next()
        return self.out.take()

    def adopt(self, rev: int, meta: RoomMeta, chat: list[dict[str, Any]]) -> list[Effect]:
        """Take over a room rebuilt from the store (the match is already at ``rev``), before
        its task starts (the lobby's :meth:`~server.lobby.Lobby.restore`).

        Seats come back with their names, bots and token digests, so players resume with
        their tokens; the patch buffer starts empty, so they get the full view. The room
        reaches its stored state through the lifecycle table (:data:`RESTORED`: the events it
        went through). A match that is over is archived again (its archive may not have been
        written before the crash).
        """
        play = self.play
        play.rev = rev
        for seat in self.seating.restore(meta.seats, meta.tokens):
            play.auto.bots[seat.index] = play.auto.bot(seat.bot_kind, seat.index)
        for line in chat:
            self.chat.log.add(line)
        state = _FINISHED if play.match.over else RoomState(meta.state)
        self.lifecycle.restore(state)
        self.timekeeper.restore(meta.clock_state)
        parts = self.timekeeper.current_parts()
        if parts is not None:
            play.views.set_parts(parts)
        self.membership.restart_feed()
        self.log.debug("room_restored", rev=rev, state=state.value)
        return [Post(Refinish())] if play.match.over else []

    def replay(self, actions: list[Action]) -> None:
        """Make this a replay room: it plays ``actions`` by itself, seats held by nobody."""
        self.play.auto.script.extend(actions)
        self.lifecycle.transition(RoomEvent.START)

    def _close(self) -> None:
        self.lifecycle.transition(RoomEvent.CLOSE)
        self.spectators.closed = True

    def close(self) -> None:
        """Close a room whose task is gone (evicted while flooded)."""
        if self.status.state is not _CLOSED:
            self._close()

    def detach(self) -> None:
        """The room is closed and its task over: its parts let go of each other where they
        form reference cycles (their callbacks into this core, the bots' reference to the
        play), so that the room is freed by reference counting once nothing outside refers to
        it. The server runs with the collector's automatic collections off
        (:mod:`server.collector`): a room left in a cycle would stay in memory until the next
        full collection, and with matches ending all the time those come to thousands of
        rooms. Its state, info, rev and members can still be read."""
        self.description.detach(self.play.rev)
        self.play.detach()
        self.membership.detach()
        self.upkeep.detach()

    # Who is told what -------------------------------------------------------------------------

    def _announce(self, info: dict[str, Any] | None = None) -> None:
        """Tell everyone in the room (and the relays) what the room is now (``info``: the
        room's info if the caller just made it, for a frame of the same command).

        A room nobody is in and no relay reads (a finished room its members left for a
        rematch) is told nothing: its frame would go to no one. The ``room`` frame is spliced
        from its fixed parts and the encoded id and info: the same bytes as
        ``encode_frame(RoomInfo(...))`` without the interpreted frozen dataclass."""
        connected = self.seating.connected()
        here = bool(connected) or len(self.spectators) > 0
        if here or self.relayed:
            data = b"".join(
                (_ROOM_HEAD, pack(self.id), _INFO_KEY, pack(self.info() if info is None else info))
            )
            out = self.out
            out.send(connected, data)
            self.spectators.now(data)
            out.add(Publish(b"i", data))
        self.upkeep.present(here)

    def _finished(self) -> None:
        """The match ended (its last revision went out)."""
        self._announce()
        self.upkeep.finished()


__all__ = ["RoomCore"]
