"""A room core driven in process: commands at chosen times in, decoded frames out.

The twin plays the actor's part (server.room) without an event loop, sockets or sleeps: it hands
:meth:`RoomCore.handle` each command and the twin's clock, carries the effects out in order
(frames to each member's list, timers to a list of due times, store effects answered at once,
or with a chosen failure), and moves time only when a test says so (:meth:`Twin.advance`).
Every effect is recorded in ``effects``, so a test can assert on their order.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Any, cast

from protocol import messages as m
from protocol.codec import decode
from protocol.hashing import view_hash
from protocol.patch import apply
from server import logging as oasis_logging
from server.clock import parse_clock
from server.core import RoomCore
from server.effects import (
    Answer,
    Append,
    AppendChat,
    Arm,
    Breathe,
    Done,
    Effect,
    Finish,
    Keep,
    Landed,
    Post,
    Retire,
    Send,
    StoreSeats,
    Watch,
)
from server.member import Member as CoreMember
from server.metrics import Metrics
from server.room_state import Command, Internal, RoomSettings, Tuning
from server.store import MemoryStore

ROOM = "r1"
EPOCH = 1_700_000_000.0
"""The wall-clock time at the twin's time 0 (chat lines' ``ts``)."""
STORE_EFFECTS = (Append, StoreSeats, Keep, Finish, Retire, Landed, AppendChat, Breathe)


class Member:
    """What the core reads of a connection (its session, address and rooms), and the frames it
    was sent, decoded, with its view of the room kept by applying the patches."""

    def __init__(self, session: str, hash_rule: int = 1) -> None:
        self.session = session
        self.ip = "10.0.0.1"
        self.rooms: dict[str, int | None] = {}
        self.hash_rule = hash_rule
        self.frames: list[dict[str, Any]] = []
        self.view: Any = None
        self.rev = -1

    def take(self) -> list[dict[str, Any]]:
        """The frames since the last call."""
        out, self.frames = self.frames, []
        return out

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [frame for frame in self.frames if frame["type"] == kind]

    def receive(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        if frame["type"] in ("joined", "state") and frame.get("view") is not None:
            self.view, self.rev = frame["view"], frame["rev"]
        elif frame["type"] == "joined":
            self.rev = frame["rev"]
        elif frame["type"] == "patch":
            assert frame["rev"] == self.rev + 1, (frame["rev"], self.rev)
            self.view, self.rev = apply(self.view, frame["ops"]), frame["rev"]
        if frame.get("hash") is not None and self.view is not None:
            # Every hash the member gets follows the rule it asked for (SPEC section 4).
            assert view_hash(self.view, self.hash_rule) == frame["hash"], frame["type"]

    @property
    def conn(self) -> CoreMember:
        """This member as the core names it (itself: it has what :class:`server.member.Member`
        asks of a connection)."""
        return self


class Twin:
    """One room core and its world: members, timers, a store that answers as told."""

    def __init__(
        self,
        players: int = 2,
        *,
        game: str = "tiny",
        seed: int = 3,
        clock: dict[str, Any] | None = None,
        grace: float = -1.0,
        bot_delay: float = 0.0,
        idle_ttl: float = 600.0,
        patch_buffer: int = 64,
        host: str = "ann",
        spectator_chat: bool = True,
        spectator_delay: float = 0.0,
    ) -> None:
        from games import registry
        from games.base import Match

        engine = registry.get(game)
        settings = RoomSettings(
            game=game,
            players=players,
            options={},
            public=True,
            spectator_delay=spectator_delay,
            spectator_chat=spectator_chat,
            quick=False,
            host=host,
            clock=parse_clock(clock),
        )
        self.store = MemoryStore()
        log = oasis_logging.get(room=ROOM, game=game)
        self.core = RoomCore(
            ROOM,
            settings,
            Match(engine, engine.setup(players, {}, seed)),
            Tuning(
                patch_buffer=patch_buffer,
                bot_delay=bot_delay,
                idle_ttl=idle_ttl,
                takeover_grace=grace,
            ),
            seed=seed,
            metrics=Metrics(),
            log=log,
            paused=False,
            epoch=EPOCH,
        )
        self.now = 0.0
        self.effects: list[Effect] = []
        self.fail: dict[type, Answer] = {}
        """Store effects of these types are answered with this (a failure; once each)."""
        self.archives = True
        """The store writes archives (False: the keeper answers that it could not)."""
        self._timers: list[tuple[float, int, Internal]] = []
        self._seq = 0
        self._posted: deque[Internal] = deque()
        self._next_id = 0
        self.handed: list[object] = []
        """Every command and answer handed to the core, in order (its rounds)."""

    # Driving --------------------------------------------------------------------------------

    def open(self) -> None:
        self._carry(self.core.open(self.now))
        self._drain()

    def request(self, member: Member, frame: dict[str, Any]) -> dict[str, Any]:
        """Send a request (a client's map, parsed at the boundary as the app does); the answer
        (the ack or error that echoes its id)."""
        self._next_id += 1
        rid = self._next_id
        request = m.parse({"id": rid, "room": ROOM, **frame})
        self.handle(cast(Command, request), member)
        answers = [f for f in member.frames if f.get("id") == rid]
        assert len(answers) <= 2, answers
        return answers[-1] if answers else {}

    def handle(self, command: Command | Internal, member: Member | None = None) -> None:
        self.handed.append(command)
        effects = self.core.handle(command, self.now, None if member is None else member.conn)
        self._carry(effects)
        self._drain()

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, firing every timer due meanwhile, in order."""
        end = self.now + seconds
        while self._timers and self._timers[0][0] <= end:
            due, _, command = heapq.heappop(self._timers)
            self.now = max(self.now, due)
            self.handle(command)
        self.now = end

    def timers(self) -> list[tuple[float, str]]:
        """The pending timers: when each is due and its command's name."""
        return sorted((due, type(c).__name__) for due, _, c in self._timers)

    # The actor's part -----------------------------------------------------------------------

    def _carry(self, effects: list[Effect]) -> None:
        while effects:
            answer: Answer | None = None
            for effect in effects:
                self.effects.append(effect)
                answer = self._effect(effect)
            if answer is None:
                return
            self.handed.append(answer)
            effects = self.core.handle(answer, self.now)

    def _effect(self, effect: Effect) -> Answer | None:
        if isinstance(effect, Send):
            for conn in effect.to:
                cast(Member, conn).receive(decode(effect.data))
                if effect.then is not None:
                    cast(Member, conn).receive(decode(effect.then))
        elif isinstance(effect, Watch):
            for conn in self.core.spectators:
                cast(Member, conn).receive(decode(effect.data))
        elif isinstance(effect, Arm):
            self._seq += 1
            heapq.heappush(self._timers, (self.now + effect.delay, self._seq, effect.command))
        elif isinstance(effect, Post):
            self._posted.append(effect.command)
        elif isinstance(effect, STORE_EFFECTS):
            failed = self.fail.pop(type(effect), None)
            if failed is not None:
                return failed
            if isinstance(effect, Append):
                self.store.logs.setdefault(ROOM, []).append(effect.action)
            if isinstance(effect, Landed):
                return Done([a for a in self.store.logs.get(ROOM, []) if a.rev > effect.rev])
            if isinstance(effect, Retire):
                return Done(True)
            if isinstance(effect, Finish):
                return Done(self.archives)
            if isinstance(effect, Keep):
                if not effect.waits:
                    return None  # (answered to nobody: the actor goes on)
                return Done(self.archives if self.core.play.match.over else None)
            if isinstance(effect, StoreSeats):
                return Done(False)
            return Done(None)
        return None

    def _drain(self) -> None:
        while self._posted:
            self.handle(self._posted.popleft())

    # Reading --------------------------------------------------------------------------------

    def kinds(self) -> list[str]:
        """The names of the effects so far, in order."""
        return [type(e).__name__ for e in self.effects]


def seated(twin: Twin, *names: str, rules: tuple[int, ...] = ()) -> list[Member]:
    """Members who joined seats 0, 1, ... in order (``rules``: their view hash rules; 1)."""
    members = []
    for index, name in enumerate(names):
        member = Member(name, rules[index] if index < len(rules) else 1)
        answer = twin.request(member, {"type": "join", "seat": index, "name": name})
        assert answer == {} or answer["type"] != "error", answer
        members.append(member)
    return members


def token_of(member: Member) -> str:
    """The seat token ``member`` was given when it joined."""
    return str(next(f for f in member.frames if f["type"] == "joined")["token"])


def started(twin: Twin, *names: str, rules: tuple[int, ...] = ()) -> list[Member]:
    """A room whose seats ``names`` hold, started by the first."""
    twin.open()
    members = seated(twin, *names, rules=rules)
    assert twin.request(members[0], {"type": "start"})["type"] == "ack"
    return members


def to_move(twin: Twin) -> int:
    seat = twin.core.play.match.to_move
    assert seat is not None
    return seat
