"""The owner's side of the relay (:mod:`server.relay`, "Owner side" and "Interest"): the
spectator feed of this node's rooms that some node relays, and what the relay nodes say.

A room calls its :class:`Publisher` with each spectator frame it encoded; the frame is queued
without awaiting (with the room's spectator state, :func:`.wire.state_fields`) and one task per
node writes the queue to Redis, a pipeline per batch, so a room never waits on the relay.
Another task listens to the interest channel (which rooms are relayed, kept for every room of
the cluster; ``open`` answered with the state key and a ``state`` notice) and to the chat
channel (a relay spectator's line is said in its room if the room is served here, its rules
checked again there: :class:`~server.room_state.RelayedChat`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from server import logging as oasis_logging
from server.relay.wire import (
    BYE,
    CHAT,
    INFO,
    INTEREST_TTL,
    OPEN,
    STATE,
    STATE_TTL_MS,
    message,
    parse_announcement,
    parse_chat_line,
    state_fields,
)
from server.room_state import RelayedChat
from server.store import StoreError, keys
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.room import Room

BATCH = 256
"""Queued frames per pipeline."""


class Publisher:
    """The owner side: queue the spectator frames of the rooms some node relays; one task writes
    them to Redis. Another task listens to the relays' interest (see the module)."""

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
            state = state_fields(room, kind == INFO)
            self._written.add(room.id)
        self._put(room.id, message(kind, room.rev, data), state)

    def _put(self, room: str, data: bytes | None, state: dict[str, bytes] | None) -> None:
        self._queue.append((room, data, state))
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
            self._put(room_id, message(STATE, room.rev), state_fields(room, True))

    def relayed_chat(self, data: bytes) -> None:
        """A relay spectator's chat line (msgpack ``[room, session, text]``): said in the room if
        it is served here (its rules checked again there)."""
        line = parse_chat_line(data)
        if line is None:
            return
        room_id, session, text = line
        room = self.rooms.get(room_id)
        if room is not None and room.publish is not None:
            room.post(RelayedChat(session, text))

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
                got = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
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
                got = None
            if got is not None and got.get("type") == "message":
                name = got.get("channel")
                name = name.decode() if isinstance(name, bytes) else str(name)
                if name == chat:
                    self.relayed_chat(bytes(got["data"]))
                else:
                    self.hello(*parse_announcement(bytes(got["data"])))
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
            for room, data, state in batch:
                if state is not None:
                    key = keys.spectate_state(prefix, room)
                    if state:
                        pipe.hset(key, mapping=state)
                        pipe.pexpire(key, STATE_TTL_MS)
                    else:
                        pipe.delete(key)
                if data is not None:
                    pipe.publish(keys.spectate(prefix, room), data)
            await pipe.execute()

        await self.store.call(f"publish {len(batch)} spectator frames", op)
        self.published += len(batch)

    async def close(self) -> None:
        for task in (self._task, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
