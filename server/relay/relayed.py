"""One room relayed on this node (:mod:`server.relay`): the view its spectators here follow, kept
from the owner's messages, with the gaps found and repaired and the room's delay applied.

A :class:`Relayed` takes the messages of its room's channel in the order they arrive
(:meth:`Relayed.message`) and keeps the spectator view up to date by applying each patch's ops,
for newcomers, ``sync`` and resyncs. A patch whose rev is not the next one (a message lost, a
Redis reconnect, the owner changed) makes it read the state key again (:meth:`Relayed.fetch`)
and send ``state`` to its spectators before any later patch: a spectator never gets a patch
that does not fit its view. A patch that does not fit (the view is dropped) makes it read the
state too, adopted even at the rev already received. While a read is under way, what arrives
waits behind it. An owner change is seamless when the new owner's revisions follow on, a
resync otherwise.

The room's ``spectator_delay`` applies here: frames (and the first state) wait in a queue
released by a timer, as on the owner; info frames and spectators' chat lines are not delayed.

What it needs of the node (the store's reads, tasks, the node's quota when a spectator turns out
gone) is the small :class:`Host` interface, which :class:`~server.relay.spectators.Relay`
provides.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

from protocol import frames as f
from protocol import messages as m
from protocol.codec import unpack
from protocol.patch import PatchError, apply
from server.chat import ChatLog
from server.connection import Connection
from server.fanout import Fanout
from server.relay.wire import CHAT, INFO, PATCH, STATE, State
from server.store import StoreError

CHAT_KEPT = 20
"""Chat lines a relayed room keeps for its spectators' ``joined``."""


class Host(Protocol):
    """What a relayed room uses of the node that relays it."""

    log: Any
    resyncs: int
    """Resyncs of every relayed room of the node."""
    chat_rates: tuple[int, int]
    """The owners' ``chat_per_minute`` and ``room_chat_per_minute``."""

    def spawn(self, coro: Any) -> None: ...

    async def read_state(self, room: str) -> State | None: ...

    async def read_rev(self, room: str) -> int | None: ...

    def discard(self, relayed: Relayed, conn: Connection) -> None: ...


def _said_by_a_spectator(data: bytes) -> bool:
    line = unpack(data)
    return isinstance(line, dict) and (line.get("from") or {}).get("seat") is None


@dataclass(frozen=True, slots=True)
class _Item:
    due: float
    kind: bytes
    rev: int
    data: bytes
    state: tuple[dict[str, Any], str] | None = None
    """A full view to adopt (view, hash) instead of a frame to forward."""


class Relayed:
    """One room relayed here: its local spectators, its delayed view and its queue."""

    def __init__(self, relay: Host, room: str, delay: float) -> None:
        self.relay = relay
        self.room = room
        self.delay = delay
        self.members: set[Connection] = set()
        self.fanout = Fanout(self.members)
        self.waiting: dict[Connection, tuple[m.RequestId, int | None]] = {}
        """Spectators who asked before the first view was released (answered with it)."""
        self.doc: dict[str, Any] | None = None
        self.rev = -1
        self.hash = ""
        self.info: dict[str, Any] = {}
        self.chat: deque[dict[str, Any]] = deque(maxlen=CHAT_KEPT)
        per_minute, room_per_minute = relay.chat_rates
        self.talk = ChatLog(per_minute, 1, room_per_minute)
        """The rates of this node's spectators' lines (the owner checks its own too)."""
        self.live = -1
        """The last rev received (or read) from the owner; -1: none yet."""
        self.fetching = False
        self.unfit = False
        """A patch did not fit the view (which is gone): the owner's state is adopted even at
        the rev already received."""
        self.held: list[tuple[bytes, int, bytes]] = []
        self.pending: deque[_Item] = deque()
        self.armed = False
        self.resyncs = 0
        self.closed = False
        self.answered = asyncio.Event()
        """Set by the owner's first ``state`` notice (the answer to ``open``)."""
        self.opened: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        """True once the first view is read, False if the room cannot be relayed."""

    def __len__(self) -> int:
        return len(self.members) + len(self.waiting)

    def gone(self) -> bool:
        return self.closed

    # From the owner ---------------------------------------------------------------------------

    def message(self, kind: bytes, rev: int, data: bytes) -> None:
        if kind == STATE:  # the owner wrote the state key at ``rev``
            self.answered.set()
            if not self.fetching and rev > self.live >= 0:
                self.relay.spawn(self.fetch(f"rev {rev} stored, {self.live} received"))
            return
        if self.fetching:
            self.held.append((kind, rev, data))
            return
        if kind != PATCH:
            if kind == INFO:
                self.info = dict(unpack(data).get("info") or {})
                self._forward(data)  # info is not delayed (as on the owner)
            elif self.delay > 0 and _said_by_a_spectator(data):
                self._release_one(_Item(0.0, kind, rev, data))  # (nor are spectators' lines)
            else:
                self._enqueue(_Item(self._due(), kind, rev, data))
            return
        if rev <= self.live:
            return
        if rev != self.live + 1:
            self.held.append((kind, rev, data))
            self.relay.spawn(self.fetch(f"missed revisions {self.live + 1} to {rev - 1}"))
            return
        self.live = rev
        self._enqueue(_Item(self._due(), PATCH, rev, data))

    async def fetch(self, why: str) -> None:
        """Read the owner's spectator state; queue it as ``state``, then what arrived since."""
        if self.fetching or self.closed:
            return
        self.fetching = True
        try:
            for attempt in range(50):
                try:
                    got = await self.relay.read_state(self.room)
                except StoreError as exc:
                    self.relay.log.warning("relay_state_unreadable", room=self.room, error=str(exc))
                    got = None
                if self.gone():  # (the last spectator left while Redis answered)
                    return
                if got is not None:
                    rev, view, digest, info = got
                    held = sorted((h for h in self.held if h[0] == PATCH), key=lambda h: h[1])
                    first = held[0][1] if held else rev + 1
                    if rev + 1 >= first or not held:
                        break
                await asyncio.sleep(min(1.0, 0.05 * (attempt + 1)))
            else:
                self.relay.log.warning("relay_state_missing", room=self.room, why=why)
                return
            if info:
                self.info = info
            if rev > self.live or (self.unfit and rev >= self.live):
                if self.live >= 0:
                    self.resyncs += 1
                    self.relay.resyncs += 1
                    self.relay.log.info("relay_resync", room=self.room, rev=rev, why=why)
                self.live = rev
                self._enqueue(_Item(self._due(), PATCH, rev, b"", (view, digest)))
        finally:
            self.fetching = False
        held, self.held = self.held, []
        for kind, hrev, data in held:
            self.message(kind, hrev, data)

    async def check(self) -> None:
        """Compare the owner's stored rev with ours: behind (a lost last patch) is a gap."""
        if self.fetching or self.closed or self.live < 0:
            return
        try:
            rev = await self.relay.read_rev(self.room)
        except StoreError:
            return
        if rev is not None and (rev > self.live or self.unfit) and not self.fetching:
            await asyncio.sleep(0.2)  # a patch on its way: let it arrive first
            if rev > self.live or self.unfit:
                await self.fetch(f"rev {rev} stored, {self.live} received")

    # The delay --------------------------------------------------------------------------------

    def _due(self) -> float:
        return time.monotonic() + self.delay

    def _enqueue(self, item: _Item) -> None:
        if self.delay <= 0 and not self.pending:
            self._release_one(item)
            return
        self.pending.append(item)
        if not self.armed:
            self.armed = True
            wait = max(0.0, item.due - time.monotonic())
            asyncio.get_running_loop().call_later(wait, self._release)

    def _release(self) -> None:
        self.armed = False
        now = time.monotonic()
        while self.pending and self.pending[0].due <= now:
            self._release_one(self.pending.popleft())
        if self.pending and not self.closed:
            self.armed = True
            wait = max(0.001, self.pending[0].due - now)
            asyncio.get_running_loop().call_later(wait, self._release)

    def _release_one(self, item: _Item) -> None:
        if item.state is not None:
            self.doc, self.hash = item.state
            self.unfit = False
            self.rev = item.rev
            frame = f.encode_frame(f.State(None, self.room, self.rev, self.doc, self.hash))
            self._forward(frame)
            self._answer_waiting()
            return
        if item.kind == CHAT:
            self.chat.append(unpack(item.data))
            self._forward(item.data)
            return
        if self.doc is None or item.rev <= self.rev:
            return
        if item.rev != self.rev + 1:  # (cannot happen: the queue is in order and gap-free)
            self.relay.spawn(self.fetch(f"queue gap at {self.rev}"))
            return
        patch = unpack(item.data)
        try:
            self.doc = apply(self.doc, patch["ops"])
        except (PatchError, KeyError, TypeError) as exc:
            self.doc = None
            self.unfit = True
            self.relay.spawn(self.fetch(f"patch {item.rev} does not fit ({exc})"))
            return
        self.rev, self.hash = item.rev, str(patch["hash"])
        self._forward(item.data)

    def _forward(self, data: bytes) -> None:
        self.fanout.send(data)

    # Spectators -------------------------------------------------------------------------------

    def joined(self, rid: m.RequestId, since: int | None) -> f.Joined:
        assert self.doc is not None
        if since is not None and since == self.rev:
            return f.Joined(rid, self.room, None, self.rev, None, None, self.info, list(self.chat))
        view = self.doc
        return f.Joined(rid, self.room, None, self.rev, view, self.hash, self.info, list(self.chat))

    def _answer_waiting(self) -> None:
        waiting, self.waiting = self.waiting, {}
        for conn, (rid, since) in waiting.items():
            if conn.closed:
                self.relay.discard(self, conn)
                continue
            self.members.add(conn)
            conn.send(self.joined(rid, since))

    def state_frame(self, rid: m.RequestId) -> f.State | None:
        if self.doc is None:
            return None
        return f.State(rid, self.room, self.rev, self.doc, self.hash)
