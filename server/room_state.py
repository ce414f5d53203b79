"""A room's vocabulary: its lifecycle table, its settings, and the commands its inbox carries.

Lifecycle (a table; anything else is ``not_allowed`` naming the state)::

    open --start--> playing --finish--> finished
    open / playing / finished --close--> closed

Every change of state is one of these transitions (:meth:`Lifecycle.transition`), also where a
room is not created but restored (:data:`RESTORED`), made a replay (``start``) or evicted to
another node (``close``, asked for through the lobby with :class:`Evict`).

Orthogonal to it, a room is *paused* while its store cannot record anything (see
:mod:`server.keeper`); pausing is not a lifecycle state because every state can be paused and
nothing but ``act`` (and what else needs the store) changes meaning while it is. A room whose
stored data is gone (:class:`StorageLost`) stays paused for good: ``act`` answers
``storage_lost`` until it is closed like any room nobody is in.

Compiled with the room core (``scripts/build_compiled.py``): :class:`Status`, the settings and
the commands are native classes, whose fields the core reads at every command directly rather
than as attributes of Python objects; the tables are ``Final``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Final

from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server.clock import ClockDue, ClockSettings
from server.metrics import Metrics
from server.quotas import Holdings
from server.spectators import ReleaseDue
from server.takeover import TakeoverDue

if TYPE_CHECKING:
    from server.member import Member


class RoomState(Enum):
    OPEN = "open"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


class RoomEvent(Enum):
    START = "start"
    FINISH = "finish"
    CLOSE = "close"


TRANSITIONS: Final[dict[tuple[RoomState, RoomEvent], RoomState]] = {
    (RoomState.OPEN, RoomEvent.START): RoomState.PLAYING,
    (RoomState.PLAYING, RoomEvent.FINISH): RoomState.FINISHED,
    (RoomState.OPEN, RoomEvent.CLOSE): RoomState.CLOSED,
    (RoomState.PLAYING, RoomEvent.CLOSE): RoomState.CLOSED,
    (RoomState.FINISHED, RoomEvent.CLOSE): RoomState.CLOSED,
}

RESTORED: Final[dict[RoomState, tuple[RoomEvent, ...]]] = {
    RoomState.OPEN: (),
    RoomState.PLAYING: (RoomEvent.START,),
    RoomState.FINISHED: (RoomEvent.START, RoomEvent.FINISH),
}
"""The events a stored room went through to reach the state it was stored in: a restored room
reaches it through the table (:meth:`Lifecycle.restore`), like the room it was."""

_STEPS: Final[tuple[tuple[RoomState, RoomEvent, RoomState, str, str], ...]] = tuple(
    (state, event, new, state.value, new.value) for (state, event), new in TRANSITIONS.items()
)
""":data:`TRANSITIONS` as rows (state, event, new state, and the two states' gauge labels), that
:meth:`Lifecycle.transition` scans by identity: a lookup in the table hashes two enum members
(``Enum.__hash__`` is interpreted: about 2,000 instructions a lookup), and ``.value`` of a
member is an interpreted property."""
_LABELS: Final[tuple[tuple[RoomState, str], ...]] = tuple((s, s.value) for s in RoomState)
"""Each state and its gauge label, scanned by identity as :data:`_STEPS`."""
_PLAYING: Final = RoomState.PLAYING
_FINISHED: Final = RoomState.FINISHED
_CLOSED: Final = RoomState.CLOSED
"""(Final names: compiled code reads them as constants, not the class among the module's
globals and then its member.)"""


@dataclass(slots=True, init=False)
class Status:
    """What every part of a room reads of it: its lifecycle state (changed only by
    :meth:`Lifecycle.transition`), whether it is paused, and the facts the store
    taught it through the answers to its store effects (:mod:`server.effects`).

    Its own ``__init__`` (one per room): compiled, the one ``dataclass`` writes runs as an
    interpreted function (about 2,500 instructions)."""

    state: RoomState = RoomState.OPEN
    paused: bool = False
    lost: bool = False
    """The store no longer holds this room (see "Lost storage" in :mod:`server.keeper`)."""
    unsure: bool = False
    """An append failed and may have been stored anyway: read back before the next one."""
    finish_pending: dict[str, Any] | None = None
    """The result of a match whose archive could not be written yet."""
    rematch: str | None = None
    """A finished room's rematch, once made (SPEC section 9): the new room's id, in ``info``."""
    everyone_moved: bool = False
    """Every player of this finished room moved to its rematch: none is left to come back."""

    def __init__(
        self,
        state: RoomState = RoomState.OPEN,
        paused: bool = False,
        lost: bool = False,
        unsure: bool = False,
        finish_pending: dict[str, Any] | None = None,
        rematch: str | None = None,
        everyone_moved: bool = False,
    ) -> None:
        self.state, self.paused, self.lost, self.unsure = state, paused, lost, unsure
        self.finish_pending, self.rematch = finish_pending, rematch
        self.everyone_moved = everyone_moved


class Lifecycle:
    """One room's state through the table: :meth:`transition` is the one place it changes.

    The room counts in the ``rooms`` gauge under its state from :meth:`count` on (its task
    runs; a closed room no longer counts), and gives back what it holds of its creator's
    quotas (``holdings``) when it finishes or closes."""

    def __init__(self, status: Status, metrics: Metrics, holdings: Holdings) -> None:
        self._status = status
        self._metrics = metrics
        self._holdings = holdings
        self.counted = False

    def count(self) -> None:
        """The room's task starts: it counts in the gauge."""
        state = self._status.state
        for known, label in _LABELS:
            if known is state:
                self._metrics.rooms.labels(label).inc()
        self.counted = True

    def transition(self, event: RoomEvent) -> None:
        """Change the state by the table, or ``not_allowed`` naming the state."""
        status = self._status
        state = status.state
        step = None
        for row in _STEPS:
            if row[0] is state and row[1] is event:
                step = row
                break
        if step is None:
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"cannot {event.value} a room that is {state.value}"
            )
        _, _, new, label, new_label = step
        if self.counted:  # (a closed room is no longer counted)
            rooms = self._metrics.rooms
            rooms.labels(label).dec()
            if new is not _CLOSED:
                rooms.labels(new_label).inc()
        status.state = new
        if (new is _FINISHED or new is _CLOSED) and self._holdings.held:
            self._holdings.release()  # (an interpreted call, made only when it gives back)

    def restore(self, state: RoomState) -> None:
        """A stored room reaches ``state`` through the table (:data:`RESTORED`), or ValueError."""
        events = RESTORED.get(state)
        if events is None:
            raise ValueError(f"a stored room is never {state.value}")
        for event in events:
            self.transition(event)


@dataclass(slots=True, init=False)
class RoomSettings:
    """How a room was asked for: its game, seats, audience and host (one per new match).

    Never changed once made (a rematch by its host shares the finished room's:
    :func:`server.lobby._rematch_settings`); not a frozen dataclass, whose generated
    ``__init__`` runs interpreted and sets each field through ``object.__setattr__`` (about
    30,000 instructions a new match, compiled or not): its own ``__init__``, compiled, as
    :mod:`server.effects`' effects."""

    game: str
    players: int
    options: dict[str, Any]
    public: bool
    spectator_delay: int | float
    """(A restored room's as its meta stored it: compiled, ``float`` would make an int one.)"""
    spectator_chat: bool
    quick: bool
    host: str
    replay_of: str | None = None
    """The archived room this room replays (a replay room stores nothing and takes no seats)."""
    replay_interval: float = 0.0
    bot: str = "random"
    """The kind of bot that takes the seats filled at creation or by ``start {bots}``."""
    clock: ClockSettings | None = None

    def __init__(
        self,
        game: str,
        players: int,
        options: dict[str, Any],
        public: bool,
        spectator_delay: int | float,
        spectator_chat: bool,
        quick: bool,
        host: str,
        replay_of: str | None = None,
        replay_interval: float = 0.0,
        bot: str = "random",
        clock: ClockSettings | None = None,
    ) -> None:
        self.game, self.players, self.options, self.public = game, players, options, public
        self.spectator_delay, self.spectator_chat = spectator_delay, spectator_chat
        self.quick, self.host, self.replay_of = quick, host, replay_of
        self.replay_interval, self.bot, self.clock = replay_interval, bot, clock


@dataclass(frozen=True, slots=True)
class Tuning:
    """The node's numbers for its rooms (from its config; the defaults are the tests')."""

    patch_buffer: int = 64
    """Revisions kept for a resume to catch up from."""
    chat_per_minute: int = 60
    chat_log: int = 20
    """Chat lines kept in memory."""
    room_chat_per_minute: int = 0
    """Lines a minute of the whole room (0: no limit)."""
    bot_delay: float = 0.0
    idle_ttl: float = 600.0
    """Seconds a room may stay empty."""
    finished_ttl: float | None = None
    """Seconds a room whose match is over may stay empty (None: ``idle_ttl``)."""
    moved_ttl: float | None = None
    """Seconds a finished room may stay empty once every player moved to its rematch (None:
    as any finished room)."""
    takeover_grace: float = -1.0
    """Seconds before a stand-in plays for a gone player (< 0: never)."""


@dataclass(frozen=True, slots=True)
class Gone:
    """The connection closed."""


@dataclass(frozen=True, slots=True)
class Resync:
    """The connection lagged and drained: send it the full view."""


@dataclass(frozen=True, slots=True)
class BotTurn:
    rev: int


@dataclass(frozen=True, slots=True)
class Announce:
    """Tell the members who is here now (the batched announcement of many spectators)."""


@dataclass(frozen=True, slots=True)
class Reap:
    """Close the room if it is still empty."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Server shutdown: finish what came before, then end the task."""


@dataclass(frozen=True, slots=True)
class Evict:
    """The room's lease moved to another node: finish what came before, then close (the store
    keeps the room for its new owner)."""


@dataclass(frozen=True, slots=True)
class StoreReady:
    """The store became usable (True) or unusable (False): resume or pause the room."""

    ready: bool


@dataclass(frozen=True, slots=True)
class StorageLost:
    """The store no longer has this room's data (Redis came back empty): pause for good."""


@dataclass(frozen=True, slots=True)
class Refinish:
    """A restored room whose match is over: archive it again (the last try may have failed)."""


@dataclass(frozen=True, slots=True)
class RelayedChat:
    """A chat line said by a spectator another node relays the room to (:mod:`server.relay`)."""

    session: str
    text: str


@dataclass(slots=True, init=False)
class Admit:
    """A rematch (SPEC section 9), in the new room: the members of the finished room ``source``
    move in, each player to the seat of the same number under the same name, each spectator a
    spectator; the requester (the command's connection) gets ``ack`` with request id ``id``.
    A member no longer in ``source`` as it was is left out.

    Never changed once made; its own ``__init__`` (compiled) as :class:`RoomSettings`'s, not a
    frozen dataclass's (about 7,600 instructions a rematch)."""

    id: m.RequestId
    source: str
    seats: tuple[tuple[Member, int, str], ...]
    spectators: tuple[Member, ...]

    def __init__(
        self,
        id: m.RequestId,
        source: str,
        seats: tuple[tuple[Member, int, str], ...],
        spectators: tuple[Member, ...],
    ) -> None:
        self.id, self.source, self.seats, self.spectators = id, source, seats, spectators


@dataclass(slots=True, init=False)
class Moved:
    """A rematch, in the finished room: ``members`` moved into room ``to`` and leave this one,
    told nothing more by it. (Never changed once made: its own ``__init__``, as :class:`Admit`.)"""

    to: str
    members: tuple[Member, ...]

    def __init__(self, to: str, members: tuple[Member, ...]) -> None:
        self.to, self.members = to, members


Command = (
    m.Join
    | m.Spectate
    | m.Leave
    | m.Start
    | m.Act
    | m.Undo
    | m.Sync
    | m.Chat
    | Gone
    | Resync
    | Admit
    | m.Rematch
)
Internal = (
    BotTurn
    | Announce
    | Reap
    | Stop
    | Evict
    | StoreReady
    | StorageLost
    | Refinish
    | ClockDue
    | TakeoverDue
    | RelayedChat
    | ReleaseDue
    | Moved
)


def detached(*_: object, **__: object) -> None:
    """What a closed room's components call instead of its core's methods once the core let go
    of them (:meth:`server.core.RoomCore.detach`): nothing."""


def lost_error(room: str, rev: int) -> RequestError:
    """What a choice is answered in a room whose storage is lost (``rev``: its last
    acknowledged revision)."""
    return RequestError(
        ErrorCode.STORAGE_LOST,
        f"the storage lost room {room} (its last acknowledged rev was {rev}); "
        "the match cannot go on",
    )
