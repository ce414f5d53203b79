"""What a room core asks its actor to do (effects), and what the actor tells it back (answers).

:meth:`server.core.RoomCore.handle` returns a list of effects, to be carried out in order. Most
are done at once and answered by nothing (frames to send, timers to arm, commands to post). A
*store* effect (:data:`StoreEffect`) is always the last of its list (but a snapshot nobody waits
for: :class:`Keep` with ``waits`` False): the core waits for it, and
the actor, once the store has answered, tells the core with :class:`Done` (the call's value)
or :class:`Failed` (the exception it raised), which returns the next effects. So the order of the
effects is the order of the room's rules: a choice's :class:`Append` comes before the frames of
its revision, the acknowledgement after both (in the :class:`Send` of the sender's patch, as
its ``then``: one write for both).

A command whose handling needs the store is a generator (:data:`Steps`): it yields each store
effect and gets the store's answer back where it yielded it (websockets' parser is written the
same way); :meth:`~server.core.RoomCore.handle` runs it up to its next store effect, and the
next call (with :class:`Done` or :class:`Failed`) resumes it (:class:`server.steps.Driver`).
The actor handles one command at a time, so at most one is pending.

What the store taught the room comes back in the answers too, never through a shared object:
:class:`Failed` says whether an append's outcome is unknown (``unsure``), an error coded
``storage_lost`` that the store lost the room, and :class:`Done` carries whether an archive was
written (:class:`Keep`, :class:`Finish`) or the room was found lost (:class:`StoreSeats`).

:class:`Outbox` is where the core's components put their effects while one command is handled
(each component is given the room's one outbox; the core hands its effects to the actor).

Effects and answers are never changed once made; they are plain slotted dataclasses, not frozen
ones, because a frozen dataclass is built through ``object.__setattr__`` field by field, four
times the cost of a plain one, and a revision makes a dozen of them. Those a revision makes
(:class:`Send`, :class:`Watch`, :class:`Publish`, :class:`Revised`, :class:`Append`,
:class:`Keep`, :class:`Done`) write their own ``__init__`` (``init=False``): compiled, the one a
dataclass generates still runs as interpreted Python (about 1,900 instructions a call).
"""

from __future__ import annotations

import builtins
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.frames import ServerFrame, encode_frame
from server.store.meta import RoomMeta
from server.store.records import Action

if TYPE_CHECKING:
    from server.member import Member
    from server.room_state import Internal


@dataclass(slots=True, init=False)
class Send:
    """Write ``data`` (one encoded frame) to each of ``to``, then ``then`` (another, if any)
    in the same write: the acting seat's patch and its ``ack``."""

    to: Sequence[Member]
    data: bytes
    then: bytes | None

    def __init__(self, to: Sequence[Member], data: bytes, then: bytes | None = None) -> None:
        self.to, self.data, self.then = to, data, then


@dataclass(slots=True, init=False)
class Watch:
    """Write ``data`` (one encoded frame) to every spectator of the room, now: framed once, the
    same bytes to each (the core's :class:`~server.spectators.Spectators` decides when, and
    holds a delayed room's frames until they are due)."""

    data: bytes

    def __init__(self, data: bytes) -> None:
        self.data = data


@dataclass(slots=True, init=False)
class Publish:
    """Hand a spectator frame to the relay (``kind``: ``p`` patch, ``i`` info, ``c`` chat)."""

    kind: bytes
    data: bytes

    def __init__(self, kind: bytes, data: bytes) -> None:
        self.kind, self.data = kind, data


@dataclass(slots=True)
class Arm:
    """Post ``command`` to the room's inbox after ``delay`` seconds."""

    delay: float
    command: Internal


@dataclass(slots=True)
class Post:
    """Post ``command`` to the room's inbox now (after what is queued)."""

    command: Internal


@dataclass(slots=True)
class Forward:
    """Post ``command`` to another room of this node, ``room`` (a rematch's new room tells the
    finished one who moved out: :class:`~server.room_state.Moved`); nothing if it is gone."""

    room: str
    command: Internal


@dataclass(slots=True, init=False)
class Revised:
    """A revision went out (for the metrics: its spectator frame's size)."""

    size: int

    def __init__(self, size: int) -> None:
        self.size = size


@dataclass(slots=True)
class Closed:
    """The room closed for want of members: its lobby forgets it."""


@dataclass(slots=True, init=False)
class Append:
    """Store a choice (or undo) before it is applied: answered None, or the refusal.
    ``meta``: fields of the room's metadata stored with it, in the same round trip."""

    action: Action
    meta: dict[str, Any] | None

    def __init__(self, action: Action, meta: dict[str, Any] | None = None) -> None:
        self.action, self.meta = action, meta


@dataclass(slots=True)
class StoreSeats:
    """Store the room's metadata (``required``: a failure is the answer, else only logged);
    answered True when the store no longer has the room (not required: only logged)."""

    meta: RoomMeta
    required: bool


@dataclass(slots=True, init=False)
class Keep:
    """Snapshot when one is due, archive at the end (:meth:`server.keeper.Keeper.keep`):
    answered None, or at the end whether the archive was written.

    ``waits``: False for a revision that does not end the match, the one store effect the core
    does not wait for (it is then not always the last of its list): the actor stores it and
    goes on with the list and the inbox, and answers nothing (the core queued the bots' next
    turn before it, and nothing else of the room's rules follows a snapshot); a failure the
    keeper does not handle is logged. That spares every choice a round through the core."""

    rev: int
    extra: dict[str, Any]
    waits: bool

    def __init__(self, rev: int, extra: dict[str, Any], waits: bool = True) -> None:
        self.rev, self.extra, self.waits = rev, extra, waits


@dataclass(slots=True)
class Finish:
    """Archive the match with this result: answered whether the archive was written."""

    result: dict[str, Any]


@dataclass(slots=True)
class Retire:
    """Forget or archive a room nobody is in: answered True once the store recorded it."""

    started: bool
    rev: int


@dataclass(slots=True)
class Landed:
    """Read back the choices stored after ``rev`` (asked after an append whose outcome was
    unknown, :attr:`Failed.unsure`)."""

    rev: int


@dataclass(slots=True)
class AppendChat:
    """Store a chat line (answered None, or the store's error)."""

    line: dict[str, Any]


@dataclass(slots=True)
class Breathe:
    """Let the other rooms run before this one goes on (a bot-only stretch)."""


@dataclass(slots=True, init=False)
class Done:
    """The answer to a store effect: the value of the call."""

    value: Any

    def __init__(self, value: Any = None) -> None:
        self.value = value


@dataclass(slots=True)
class Failed:
    """The answer to a store effect: the exception it raised (``unsure``: an append that may
    have been stored anyway; read back with :class:`Landed` before the next)."""

    error: builtins.Exception
    """(spelled ``builtins.Exception``: a compiled dataclass looks a bare builtin name up among
    the module's globals, where it is not)"""
    unsure: bool = False


StoreEffect = Append | StoreSeats | Keep | Finish | Retire | Landed | AppendChat | Breathe
"""Effects the core waits for (always the last of a list; answered with Done or Failed), but a
:class:`Keep` that does not wait (``waits`` False)."""
Effect = Send | Watch | Publish | Arm | Post | Forward | Revised | Closed | StoreEffect
Answer = Done | Failed
Steps = Generator[Effect, Any, None]
"""A command being handled: yields the store effects it waits for, gets their answers."""
Handling = Generator[Effect | None, Any, None]
"""A command's steps as the core's driver runs them (:class:`server.steps.Driver`): its store
effects, then None once it is done (it never returns: see the driver)."""


class Outbox:
    """The effects of the command being handled, in order, and its time (``now``)."""

    __slots__ = ("effects", "now")

    def __init__(self) -> None:
        self.effects: list[Effect] = []
        self.now = 0.0

    def start(self, now: float) -> None:
        """A command comes at ``now``: an empty list."""
        self.now = now
        self.effects = []

    def take(self) -> list[Effect]:
        """The effects so far (the list is emptied)."""
        out, self.effects = self.effects, []
        return out

    def add(self, effect: Effect) -> None:
        self.effects.append(effect)

    def reply(self, conn: Member, frame: ServerFrame) -> None:
        self.effects.append(Send((conn,), encode_frame(frame)))

    def send(self, to: Sequence[Member], data: bytes) -> None:
        if to:
            self.effects.append(Send(to, data))

    def later(self, delay: float, command: Internal) -> None:
        self.effects.append(Arm(delay, command))

    def post(self, command: Internal) -> None:
        self.effects.append(Post(command))
