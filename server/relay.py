"""Spectators served by any node: the owner publishes each room's spectator feed on Redis pub/sub,
and a node with spectators of a room it does not own relays that feed to them.

**Interest.** A room's feed costs Redis work (a write of the whole spectator view, a publish)
at every revision, so an owner publishes only the rooms some node relays. A relay node announces
on the one channel ``P:relay:interest`` (every node listens, one pub/sub connection each):
``open|<node>|<room>`` when it gets a room's first spectator, ``keep|<node>|<room>`` every
:data:`CHECK_EVERY` seconds while it has any, ``bye|<node>|<room>`` after the last one left.
Every node keeps what it hears in memory (room -> relay node -> until when, :data:`INTEREST_TTL`
seconds after the last announcement), for every room, not only its own: a room that moves here
(failover, hand-off) is published from its first revision here. The owner answers ``open`` (and
the first ``keep`` of a room it did not write yet: it just took the room over) by writing the
room's state key at once, then a ``state`` notice on the room's channel; the relay waits
:data:`OPEN_WAIT` seconds for that notice (else its spectator is redirected to the owner, as
without a relay). When a room's last relay node said ``bye`` or stopped announcing, its owner
publishes nothing more of it and deletes its state key. What a revision of a room nobody
relays costs: one dict lookup.

**Owner side** (:class:`Publisher`). Every revision of a relayed room served here is
published, as the very spectator ``patch`` frame the room encoded once (rev, ops, hash,
events), on the room's channel ``P:{room}:spectate``; so are the ``room`` frames (info) and
the chat lines of seats. Before each patch, the room's *spectator state* key
``P:{room}:spectate:state`` (a hash: rev, hash, view, info) is set to the live spectator view
at that revision, built from the bytes the views already keep (no encode of the view): a
relay that sees a patch of rev ``r`` can always read a state at ``r`` or later. Frames are
queued without awaiting and written by one task per node, a pipeline per batch, so a room
never waits on the relay.

**Relay side** (:class:`Relay`). A ``spectate`` for a room another node holds (a live lease) is
served here: the node subscribes to the room's channel while it has spectators of it (one
pub/sub connection per node), announces ``open``, reads the state key once the owner's
``state`` notice arrived, and from then on writes each frame it
receives, as received (one encoded frame per revision per node, the same bytes to every
socket), to its local spectators; it keeps the spectator view up to date by applying each
patch's ops, for newcomers, ``sync`` and resyncs. The room's ``spectator_delay`` applies here:
frames (and the first state) wait in a queue released by a timer, as on the owner.

**Gaps.** A patch whose rev is not the next one (a message lost, a Redis reconnect, the owner
changed) makes the relay read the state key again and send ``state`` to its spectators before
any later patch: a spectator never gets a patch that does not fit its view. The same read runs
when the pub/sub connection re-subscribes after a reconnect, on a ``state`` notice ahead of
the relay's rev and, every :data:`CHECK_EVERY` seconds, for each relayed room (a lost *last*
patch is found that way). An owner change
(failover, hand-off) is seamless when the new owner's revisions follow on, a resync otherwise.

**Limits.** Relay spectators count in the node's ``spectators_per_node`` tally and a relayed
room takes at most ``spectators_per_room`` of them on this node (:mod:`server.quotas`). Every
:data:`CHECK_EVERY` seconds the node writes how many spectators it serves of each room in
``P:{room}:spectators`` (node -> count, valid :data:`COUNT_TTL` seconds), so does every node
for the spectators of its own rooms; ``list_rooms`` shows each room's ``spectators`` as this
node's live count plus the other nodes' last written ones (:func:`spectator_counts`).

**Chat.** A relay spectator's ``chat`` is checked here (the room's ``spectator_chat`` from its
info, the owners' chat rates per speaker and per room) and forwarded to the owner on the one
channel ``P:relay:chat`` (msgpack ``[room, session, text]``, every node listens with its
interest connection); the spectator gets ``ack`` once it is forwarded. The owner checks the
same rules again and says the line as a spectator's (stored, sent to its members, published
to the relays: the speaker sees it come back), or logs why not (storage unavailable, a rate
raced): the ``ack`` means "forwarded", not "said". Spectators' lines are not delayed, on the
owner or on a relay.

Not relayed: rooms whose ``spectator_delay`` is above :data:`MAX_RELAYED_DELAY` (redirected).
Redis Cluster: the asyncio cluster client of redis-py has no pub/sub, so with
``OASIS_REDIS_CLUSTER`` there is no relay and spectators are redirected as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol import messages as m
from protocol.codec import canonical_map, pack, unpack
from protocol.errors import ErrorCode, RequestError
from protocol.patch import PatchError, apply
from server import logging as oasis_logging
from server.chat import ChatLog
from server.connection import Connection
from server.fanout import Fanout
from server.quotas import Quotas
from server.room_state import RelayedChat
from server.spectators import NODE
from server.store import StoreError, keys
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.room import Room

PATCH = b"p"
INFO = b"i"
CHAT = b"c"
STATE = b"s"
_HEAD = struct.Struct(">cq")
"""A message: its kind (patch, info, chat; state: the state key was just written at that rev,
no frame), the room's rev, then the frame's bytes."""
OPEN = b"open"
KEEP = b"keep"
BYE = b"bye"
"""A relay node's announcements on the interest channel: ``<op>|<node>|<room>``."""

STATE_TTL_MS = 3600 * 1000
"""How long a room's spectator state key outlives its last write (the owner also deletes it
when the room's interest lapses)."""
CHECK_EVERY = 2.0
"""Seconds between the relay's checks of each relayed room's state key (a lost last patch),
and between its ``keep`` announcements."""
INTEREST_TTL = 3 * CHECK_EVERY
"""Seconds an owner goes on publishing a room after a relay node's last announcement."""
OPEN_WAIT = 5.0
"""Seconds a relay waits for the owner's answer to ``open`` (then the spectator is redirected)."""
COUNT_TTL = 3 * CHECK_EVERY
"""Seconds a node's count of a room's relayed spectators stays valid unless written again."""
MAX_RELAYED_DELAY = 10.0
"""Rooms with a longer ``spectator_delay`` are not relayed (their spectators are redirected
to the owner): a relay starts its delay from the first view it reads, so the first spectator
of such a room on a node would wait the whole delay for the answer to ``spectate``."""
CHAT_KEPT = 20
BATCH = 256


async def spectator_counts(store: RedisStore, rooms: list[str], node: str) -> dict[str, int]:
    """How many spectators the nodes other than ``node`` have of each of ``rooms``, as they last
    wrote them (one pipelined round trip; a node that stopped writing is not counted after
    :data:`COUNT_TTL`)."""
    prefix, redis = store.prefix, store.redis

    async def op() -> list[Any]:
        pipe = redis.pipeline(transaction=False)
        for room in rooms:
            pipe.hgetall(keys.spectators(prefix, room))
        return list(await pipe.execute())

    values = await store.call(f"read {len(rooms)} relayed spectator counts", op)
    now = time.time()
    out: dict[str, int] = {}
    for room, found in zip(rooms, values, strict=True):
        total = 0
        for who, value in (found or {}).items():
            if (who.decode() if isinstance(who, bytes) else str(who)) == node:
                continue
            text = value.decode() if isinstance(value, bytes) else str(value)
            count, _, until = text.partition("|")
            with contextlib.suppress(ValueError):
                if float(until) >= now:
                    total += int(count)
        if total:
            out[room] = total
    return out


def _none() -> bytes:
    return pack(None)


_NONE = _none()


def spectator_state(room: Room) -> tuple[int, str, bytes]:
    """The live spectator view of ``room``: its rev, hash and encoded document."""
    views = room.views
    views.ensure()
    doc = canonical_map({**views.parts_enc, "shared": views.shared_enc, "own": _NONE})
    return room.rev, views.hash_for(None), doc


class Publisher:
    """The owner side: queue the spectator frames of the rooms some node relays; one task writes
    them to Redis. Another task listens to the relays' interest (see "Interest" in the module)."""

    def __init__(self, store: RedisStore, rooms: Mapping[str, Room] | None = None) -> None:
        self.store = store
        self.rooms: Mapping[str, Room] = rooms if rooms is not None else {}
        """This node's rooms (the lobby's), to answer a relay's ``open`` with a room's state."""
        self.interest: dict[str, dict[str, float]] = {}
        """Room -> relay node -> until when (monotonic) it relays the room: the rooms published.
        Kept for every room of the cluster (a room that comes here later is published at once)."""
        self._written: set[str] = set()
        """Rooms of this node whose state key this node wrote since their interest began."""
        self._queue: list[tuple[str, bytes | None, dict[str, bytes] | None]] = []
        """(room, message to publish, state to write): a state of ``{}`` deletes the key."""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self.published = 0
        self.failed = 0
        self.log = oasis_logging.get(component="relay")

    def start(self) -> None:
        """Listen to the relays' interest from now on (one pub/sub connection)."""
        self._listener = asyncio.get_running_loop().create_task(self._listen())

    def __call__(self, room: Room, kind: bytes, data: bytes) -> None:
        """Publish one spectator frame of ``room`` if some node relays it (called by the room,
        never awaits; one dict lookup when nobody relays it)."""
        if room.id not in self.interest:
            return
        state: dict[str, bytes] | None = None
        if kind != CHAT:
            state = _state_fields(room, kind == INFO)
            self._written.add(room.id)
        self._put(room.id, _HEAD.pack(kind, room.rev) + data, state)

    def _put(self, room: str, message: bytes | None, state: dict[str, bytes] | None) -> None:
        self._queue.append((room, message, state))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    # Interest ---------------------------------------------------------------------------------

    def hello(self, op: bytes, node: str, room_id: str) -> None:
        """A relay node's announcement (``open``, ``keep`` or ``bye``) about ``room_id``."""
        nodes = self.interest.get(room_id)
        if op == BYE:
            if nodes is not None:
                nodes.pop(node, None)
                if not nodes:
                    self._lapse(room_id)
            return
        if nodes is None:
            nodes = self.interest[room_id] = {}
        nodes[node] = time.monotonic() + INTEREST_TTL
        room = self.rooms.get(room_id)
        if room is None or room.publish is None:
            return
        if op == OPEN or room_id not in self._written:
            # The relay waits for this (or, on keep, this node just took the room over): the
            # state key at the current rev, then the notice that it is written.
            self._written.add(room_id)
            self._put(room_id, _HEAD.pack(STATE, room.rev), _state_fields(room, True))

    def relayed_chat(self, data: bytes) -> None:
        """A relay spectator's chat line (msgpack ``[room, session, text]``): said in the room if
        it is served here (its rules checked again there)."""
        try:
            room_id, session, text = unpack(data)
        except (ValueError, TypeError):
            return
        room = self.rooms.get(str(room_id))
        if room is not None and room.publish is not None:
            room.post(RelayedChat(str(session), str(text)))

    def _lapse(self, room_id: str) -> None:
        """No node relays ``room_id`` any more: publish nothing of it, drop its state key."""
        self.interest.pop(room_id, None)
        if room_id in self._written:
            self._written.discard(room_id)
            self._put(room_id, None, {})
            self.log.info("relay_interest_lapsed", room=room_id)

    def prune(self) -> None:
        """Forget the relay nodes that stopped announcing their interest (a dead relay)."""
        now = time.monotonic()
        for room_id, nodes in list(self.interest.items()):
            for node, until in list(nodes.items()):
                if until < now:
                    del nodes[node]
            if not nodes:
                self._lapse(room_id)
        self._written.intersection_update(self.rooms.keys())  # (rooms that left this node)

    async def _listen(self) -> None:
        interest = keys.relay_interest(self.store.prefix)
        chat = keys.relay_chat(self.store.prefix)
        pubsub: Any = None
        pruned = time.monotonic()
        while True:
            try:
                if pubsub is None:
                    pubsub = self.store.redis.pubsub()
                    await pubsub.subscribe(interest, chat)
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except asyncio.CancelledError:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()
                raise
            except Exception as exc:  # Redis unreachable: subscribe again (relays repeat keep)
                self.log.warning("relay_interest_unheard", error=str(exc))
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()
                pubsub = None
                await asyncio.sleep(0.5)
                message = None
            if message is not None and message.get("type") == "message":
                name = message.get("channel")
                name = name.decode() if isinstance(name, bytes) else str(name)
                if name == chat:
                    self.relayed_chat(bytes(message["data"]))
                else:
                    op, _, rest = bytes(message["data"]).partition(b"|")
                    node, _, room_id = rest.partition(b"|")
                    self.hello(op, node.decode(errors="replace"), room_id.decode(errors="replace"))
            if time.monotonic() - pruned >= 1.0:
                pruned = time.monotonic()
                self.prune()

    # Writing ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._flush()

    async def _flush(self) -> None:
        """Write out the queue, a batch at a time.

        A method of its own so that the last batch dies with this frame: a local of ``_run`` kept
        it (views of rooms long closed) referenced for as long as the task then waited."""
        while self._queue:
            batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
            try:
                await self._write(batch)
            except StoreError as exc:
                self.failed += len(batch)
                self.log.warning("relay_publish_failed", frames=len(batch), error=str(exc))

    async def _write(self, batch: list[tuple[str, bytes | None, dict[str, bytes] | None]]) -> None:
        prefix = self.store.prefix
        redis = self.store.redis

        async def op() -> None:
            pipe = redis.pipeline(transaction=False)
            for room, message, state in batch:
                if state is not None:
                    key = keys.spectate_state(prefix, room)
                    if state:
                        pipe.hset(key, mapping=state)
                        pipe.pexpire(key, STATE_TTL_MS)
                    else:
                        pipe.delete(key)
                if message is not None:
                    pipe.publish(keys.spectate(prefix, room), message)
            await pipe.execute()

        await self.store.call(f"publish {len(batch)} spectator frames", op)
        self.published += len(batch)

    async def close(self) -> None:
        for task in (self._task, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def _state_fields(room: Room, with_info: bool) -> dict[str, bytes]:
    rev, digest, doc = spectator_state(room)
    state = {"rev": str(rev).encode(), "hash": digest.encode(), "view": doc}
    if with_info:
        state["info"] = pack(room.info())
    return state


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

    def __init__(self, relay: Relay, room: str, delay: float) -> None:
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
            if rev > self.live:
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
        if rev is not None and rev > self.live and not self.fetching:
            await asyncio.sleep(0.2)  # a patch on its way: let it arrive first
            if rev > self.live:
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


class Relay:
    """The node's relayed rooms and its one pub/sub connection."""

    def __init__(
        self,
        store: RedisStore,
        quotas: Quotas,
        node: str,
        drop_every: int = 0,
        local: Callable[[], dict[str, int]] = dict,
        chat_rates: tuple[int, int] = (20, 60),
    ) -> None:
        self.store = store
        self.chat_rates = chat_rates
        """The owners' ``chat_per_minute`` and ``room_chat_per_minute``, checked here too."""
        self.local = local
        """This node's own rooms' spectator counts (room -> spectators; rooms with none left
        out)."""
        self._reporter: asyncio.Task[None] | None = None
        self.quotas = quotas
        self.node = node
        self.rooms: dict[str, Relayed] = {}
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._checker: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.resyncs = 0
        self.dropped = 0
        self.drop_every = drop_every
        """Fault injection (``relay_drop_every``): drop every Nth patch received."""
        self._received = 0
        self.log = oasis_logging.get(component="relay", node=node)

    def __len__(self) -> int:
        return sum(len(r) for r in self.rooms.values())

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def serves(self, conn: Connection, room: str) -> bool:
        relayed = self.rooms.get(room)
        return relayed is not None and (conn in relayed.members or conn in relayed.waiting)

    # Redis ------------------------------------------------------------------------------------

    async def read_state(self, room: str) -> tuple[int, dict[str, Any], str, dict[str, Any]] | None:
        key = keys.spectate_state(self.store.prefix, room)
        raw = await self.store.call(
            f"read {room}'s spectator state", lambda: self.store.redis.hgetall(key)
        )
        if not raw or b"view" not in raw or b"rev" not in raw:
            return None
        info = unpack(raw[b"info"]) if b"info" in raw else {}
        return int(raw[b"rev"]), unpack(raw[b"view"]), raw[b"hash"].decode(), dict(info)

    async def read_rev(self, room: str) -> int | None:
        key = keys.spectate_state(self.store.prefix, room)
        raw = await self.store.call(
            f"read {room}'s spectator rev", lambda: self.store.redis.hget(key, "rev")
        )
        return None if raw is None else int(raw)

    async def _subscribe(self, room: str) -> None:
        if self._pubsub is None:
            self._pubsub = self.store.redis.pubsub()
        name = keys.spectate(self.store.prefix, room)
        await self.store.call(f"subscribe to {room}", lambda: self._pubsub.subscribe(name))
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        if self._checker is None or self._checker.done():
            self._checker = asyncio.get_running_loop().create_task(self._check())

    async def _unsubscribe(self, room: str) -> None:
        if room in self.rooms:  # (a spectator came back meanwhile: relayed again)
            return
        if self._pubsub is not None:
            name = keys.spectate(self.store.prefix, room)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(name)

    async def _read(self) -> None:
        pubsub = self._pubsub
        while self.rooms:
            try:
                message = await pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a Redis connection lost: redis-py reconnects
                self.log.warning("relay_connection_lost", error=str(exc))
                await asyncio.sleep(0.2)
                continue
            if message is None:
                continue
            kind = message.get("type")
            name = message.get("channel")
            name = name.decode() if isinstance(name, bytes) else str(name)
            room = name.split("{", 1)[-1].split("}", 1)[0]
            relayed = self.rooms.get(room)
            if relayed is None:
                continue
            if kind == "subscribe":
                if relayed.live >= 0:  # re-subscribed after a reconnect: messages may be lost
                    self.spawn(relayed.fetch("re-subscribed"))
                continue
            if kind != "message":
                continue
            data = message["data"]
            head, rev = _HEAD.unpack_from(data)
            if head == PATCH and self.drop_every > 0:
                self._received += 1
                if self._received % self.drop_every == 0:
                    self.dropped += 1
                    continue
            relayed.message(head, rev, data[_HEAD.size :])

    async def _check(self) -> None:
        while self.rooms:
            await asyncio.sleep(CHECK_EVERY)
            self.spawn(self._announce(KEEP, list(self.rooms), quiet=True))
            for relayed in list(self.rooms.values()):
                self.spawn(relayed.check())

    async def _announce(self, op: bytes, rooms: list[str], quiet: bool = False) -> None:
        """Tell the owners (every node listens) that this node relays ``rooms`` (``open``,
        ``keep``) or stopped (``bye``): one pipelined round trip. ``quiet``: a failure is
        logged, not raised (the next ``keep`` says it again)."""
        if op == BYE:
            rooms = [room for room in rooms if room not in self.rooms]  # (relayed again)
        if not rooms:
            return
        name = keys.relay_interest(self.store.prefix)
        head = op + b"|" + self.node.encode() + b"|"
        redis = self.store.redis

        async def send() -> None:
            pipe = redis.pipeline(transaction=False)
            for room in rooms:
                pipe.publish(name, head + room.encode())
            await pipe.execute()

        try:
            await self.store.call(f"announce {op.decode()} of {len(rooms)} relayed rooms", send)
        except StoreError as exc:
            if not quiet:
                raise
            self.log.warning("relay_interest_not_announced", error=str(exc))

    def start(self) -> None:
        """Report this node's spectator counts every :data:`CHECK_EVERY` seconds from now."""
        self._reporter = asyncio.get_running_loop().create_task(self._report_loop())

    async def _report_loop(self) -> None:
        while True:
            await asyncio.sleep(CHECK_EVERY)
            try:
                await self._report()
            except StoreError as exc:
                self.log.warning("spectator_counts_not_written", error=str(exc))
            except Exception:
                self.log.exception("spectator_counts_crashed")

    def here(self) -> dict[str, int]:
        """This node's spectators of each room: of the rooms it serves, and relayed."""
        counts = dict(self.local())
        for relayed in self.rooms.values():
            counts[relayed.room] = counts.get(relayed.room, 0) + len(relayed)
        return counts

    async def _report(self) -> None:
        """Write how many spectators this node has of each room (for the lobby's listings)."""
        rooms = [(room, n) for room, n in self.here().items() if n > 0]
        if not rooms:
            return
        prefix, redis = self.store.prefix, self.store.redis
        value_until = f"{time.time() + COUNT_TTL:.3f}"

        async def op() -> None:
            pipe = redis.pipeline(transaction=False)
            for room, count in rooms:
                key = keys.spectators(prefix, room)
                pipe.hset(key, self.node, f"{count}|{value_until}")
                pipe.pexpire(key, int(COUNT_TTL * 2000))
            await pipe.execute()

        await self.store.call(f"write {len(rooms)} relayed spectator counts", op)

    async def _forget_count(self, room: str) -> None:
        key = keys.spectators(self.store.prefix, room)
        with contextlib.suppress(StoreError):
            await self.store.call(
                "forget a relayed spectator count", lambda: self.store.redis.hdel(key, self.node)
            )

    # Requests ---------------------------------------------------------------------------------

    async def handle(self, conn: Connection, req: m.Request, owner: str | None) -> bool:
        """Serve ``req`` here if it is a relay spectator's (True), else leave it (False).

        ``owner``: for a ``spectate`` of a room this node does not serve, the node holding its
        lease (None: nobody, or this node)."""
        room = getattr(req, "room", None)
        if not isinstance(room, str):
            return False
        relayed = self.rooms.get(room)
        if relayed is not None and self.serves(conn, room):
            if isinstance(req, m.Sync):
                frame = relayed.state_frame(req.id)
                if frame is None:
                    raise RequestError(ErrorCode.UNAVAILABLE, "the view is on its way; try again")
                conn.send(frame)
            elif isinstance(req, m.Leave):
                self.discard(relayed, conn)
                conn.send(f.Ack(req.id, room))
            elif isinstance(req, m.Spectate):
                raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {room}")
            elif isinstance(req, m.Act):
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators never act")
            elif isinstance(req, m.Chat):
                await self.chat(conn, relayed, req)
            else:
                return False  # join, start: the room's node (a redirect)
            return True
        if isinstance(req, m.Spectate) and owner is not None and owner != self.node:
            return await self.spectate(conn, req)
        return False

    async def chat(self, conn: Connection, relayed: Relayed, req: m.Chat) -> None:
        """Forward a relay spectator's line to the room's owner (which says it to everyone, this
        node's spectators included, or logs why not); ``ack``: forwarded. The room's rules are
        checked here first, from its info and with the owner's rates, so that the owner's own
        check refuses nothing but a race."""
        if not relayed.info.get("spectator_chat", True):
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
        relayed.talk.check_rate(conn.session, time.monotonic(), self.quotas)
        message = pack([relayed.room, conn.session, req.text])
        name = keys.relay_chat(self.store.prefix)
        try:
            await self.store.call(
                "forward a spectator's chat line", lambda: self.store.redis.publish(name, message)
            )
        except StoreError:
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None
        conn.send(f.Ack(req.id, relayed.room))

    async def spectate(self, conn: Connection, req: m.Spectate) -> bool:
        """Relay the room to ``conn``; False if the owner does not answer ``open`` within
        :data:`OPEN_WAIT` seconds or the room is not relayed (the spectator is redirected)."""
        if req.room in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {req.room}")
        relayed = self.rooms.get(req.room)
        q = self.quotas
        if relayed is not None and len(relayed) >= q.spectators_per_room:
            raise q.refuse(
                "spectators_per_room", f"at most {q.spectators_per_room} spectators per room"
            )
        q.spectators.acquire(NODE)
        try:
            if relayed is None:
                relayed = Relayed(self, req.room, 0.0)
                self.rooms[req.room] = relayed
                await self._open(relayed)
            opened = await asyncio.shield(relayed.opened)
        except BaseException:
            q.spectators.release(NODE)
            raise
        if not opened or relayed.closed:
            q.spectators.release(NODE)
            return False
        conn.rooms[req.room] = None
        if relayed.doc is None:
            relayed.waiting[conn] = (req.id, req.rev)
            return True
        relayed.members.add(conn)
        conn.send(relayed.joined(req.id, req.rev))
        return True

    async def _open(self, relayed: Relayed) -> None:
        """Subscribe, announce ``open`` and wait for the owner's answer; read the first view.
        Settles ``relayed.opened`` (raises ``unavailable`` if Redis fails meanwhile)."""
        room = relayed.room
        relayed.fetching = True  # frames that arrive before the state wait behind it
        ok = False
        try:
            try:
                await self._subscribe(room)
                await self._announce(OPEN, [room])
                async with asyncio.timeout(OPEN_WAIT):
                    await relayed.answered.wait()
                got = await self.read_state(room)
            except TimeoutError:
                self.log.warning("relay_not_answered", room=room)
                return
            except StoreError as exc:
                raise RequestError(
                    ErrorCode.UNAVAILABLE, f"cannot follow room {room} ({exc})"
                ) from None
            if got is None or "spectator_delay" not in got[3]:
                return
            delay = float(got[3]["spectator_delay"] or 0.0)
            if delay > MAX_RELAYED_DELAY:
                return  # its first spectator here would wait that long for an answer
            relayed.delay = delay
            relayed.fetching = False
            self.log.info("relay_opened", room=room)
            await relayed.fetch("opened")
            ok = not relayed.closed
        finally:
            if not ok and not relayed.closed:
                relayed.closed = True
                self._close(relayed)
            if not relayed.opened.done():
                relayed.opened.set_result(ok)

    def discard(self, relayed: Relayed, conn: Connection) -> None:
        if conn in relayed.members or conn in relayed.waiting:
            relayed.members.discard(conn)
            relayed.waiting.pop(conn, None)
            self.quotas.spectators.release(NODE)
        conn.rooms.pop(relayed.room, None)
        if (
            not relayed.members
            and not relayed.waiting
            and not relayed.closed
            and relayed.opened.done()
        ):
            relayed.closed = True
            self._close(relayed)
            self.log.info("relay_closed", room=relayed.room)

    def _close(self, relayed: Relayed) -> None:
        """Stop relaying ``relayed``: unsubscribe, tell the owner (``bye``), forget the count."""
        if self.rooms.get(relayed.room) is relayed:
            del self.rooms[relayed.room]
        self.spawn(self._unsubscribe(relayed.room))
        self.spawn(self._announce(BYE, [relayed.room], quiet=True))
        self.spawn(self._forget_count(relayed.room))

    def gone(self, conn: Connection, room: str) -> bool:
        """The socket closed: True if it was a relay spectator of ``room``."""
        relayed = self.rooms.get(room)
        if relayed is None or not self.serves(conn, room):
            return False
        self.discard(relayed, conn)
        return True

    def resync(self, conn: Connection, room: str) -> bool:
        """A lagging spectator drained: the relayed view in full (True if it was ours)."""
        relayed = self.rooms.get(room)
        if relayed is None or conn not in relayed.members:
            return False
        frame = relayed.state_frame(None)
        if frame is not None:
            conn.send(frame)
        return True

    async def close(self) -> None:
        for task in (self._reader, self._checker, self._reporter, *self._tasks):
            if task is not None:
                task.cancel()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
