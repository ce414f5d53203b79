"""The relay node's one pub/sub connection to the owners (:mod:`server.relay`): the channels of
the rooms relayed here, the announcements of its interest, the reads of a room's state key.

A room's channel is subscribed to while the node has spectators of it; each message received
goes to its :class:`~server.relay.relayed.Relayed`, as received. A re-subscription after a
reconnect (messages may be lost meanwhile) makes the room read its state again, and so does,
every :data:`~server.relay.wire.CHECK_EVERY` seconds, a stored rev ahead of the room's (a lost
*last* patch is found that way); at the same pace the node says ``keep`` of every room it
relays, so that the owners go on publishing them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from server import logging as oasis_logging
from server.relay.relayed import Relayed
from server.relay.wire import (
    BYE,
    CHECK_EVERY,
    KEEP,
    PATCH,
    State,
    announcement,
    parse_message,
    parse_state,
    room_of,
)
from server.store import StoreError, keys
from server.store.redis import RedisStore


class Subscriber:
    """The channels of ``rooms`` (the node's relayed rooms, a live dict it shares with the
    :class:`~server.relay.spectators.Relay`), read by one task, checked by another."""

    def __init__(
        self,
        store: RedisStore,
        node: str,
        rooms: dict[str, Relayed],
        spawn: Callable[[Any], None],
        drop_every: int = 0,
    ) -> None:
        self.store = store
        self.node = node
        self.rooms = rooms
        self.spawn = spawn
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._checker: asyncio.Task[None] | None = None
        self.dropped = 0
        self.drop_every = drop_every
        """Fault injection (``relay_drop_every``): drop every Nth patch received."""
        self._received = 0
        self.log = oasis_logging.get(component="relay", node=node)

    # Redis ------------------------------------------------------------------------------------

    async def read_state(self, room: str) -> State | None:
        key = keys.spectate_state(self.store.prefix, room)
        raw = await self.store.call(
            f"read {room}'s spectator state", lambda: self.store.redis.hgetall(key)
        )
        return parse_state(raw)

    async def read_rev(self, room: str) -> int | None:
        key = keys.spectate_state(self.store.prefix, room)
        raw = await self.store.call(
            f"read {room}'s spectator rev", lambda: self.store.redis.hget(key, "rev")
        )
        return None if raw is None else int(raw)

    async def subscribe(self, room: str) -> None:
        if self._pubsub is None:
            self._pubsub = self.store.redis.pubsub()
        name = keys.spectate(self.store.prefix, room)
        await self.store.call(f"subscribe to {room}", lambda: self._pubsub.subscribe(name))
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read())
        if self._checker is None or self._checker.done():
            self._checker = asyncio.get_running_loop().create_task(self._check())

    async def unsubscribe(self, room: str) -> None:
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
            relayed = self.rooms.get(room_of(name))
            if relayed is None:
                continue
            if kind == "subscribe":
                if relayed.live >= 0:  # re-subscribed after a reconnect: messages may be lost
                    self.spawn(relayed.fetch("re-subscribed"))
                continue
            if kind != "message":
                continue
            head, rev, frame = parse_message(message["data"])
            if head == PATCH and self.drop_every > 0:
                self._received += 1
                if self._received % self.drop_every == 0:
                    self.dropped += 1
                    continue
            relayed.message(head, rev, frame)

    async def _check(self) -> None:
        while self.rooms:
            await asyncio.sleep(CHECK_EVERY)
            self.spawn(self.announce(KEEP, list(self.rooms), quiet=True))
            for relayed in list(self.rooms.values()):
                self.spawn(relayed.check())

    async def announce(self, op: bytes, rooms: list[str], quiet: bool = False) -> None:
        """Tell the owners (every node listens) that this node relays ``rooms`` (``open``,
        ``keep``) or stopped (``bye``): one pipelined round trip. ``quiet``: a failure is
        logged, not raised (the next ``keep`` says it again)."""
        if op == BYE:
            rooms = [room for room in rooms if room not in self.rooms]  # (relayed again)
        if not rooms:
            return
        name = keys.relay_interest(self.store.prefix)
        redis = self.store.redis

        async def send() -> None:
            pipe = redis.pipeline(transaction=False)
            for room in rooms:
                pipe.publish(name, announcement(op, self.node, room))
            await pipe.execute()

        try:
            await self.store.call(f"announce {op.decode()} of {len(rooms)} relayed rooms", send)
        except StoreError as exc:
            if not quiet:
                raise
            self.log.warning("relay_interest_not_announced", error=str(exc))

    def stop(self) -> None:
        """Cancel the reading and checking tasks (:meth:`close` then closes the connection)."""
        for task in (self._reader, self._checker):
            if task is not None:
                task.cancel()

    async def close(self) -> None:
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
