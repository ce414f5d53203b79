"""The relay node's side (:mod:`server.relay`, "Relay side", "Limits" and "Chat"): spectators of
rooms other nodes own, served here, and their requests.

:class:`Relay` is what the app calls: ``spectate`` of another node's room (subscribe, announce
``open``, wait :data:`OPEN_WAIT` seconds for the owner's answer, read the first view; else the
spectator is redirected), then ``sync``, ``leave``, ``chat`` (checked here, forwarded to the
owner: the ``ack`` means "forwarded", not "said") and the sockets that close or lag. It holds
the node's relayed rooms (:class:`~.relayed.Relayed`), and composes the pub/sub connection
(:class:`~.subscriber.Subscriber`) and the spectator counts (:class:`~.counts.Census`); it is
the :class:`~.relayed.Host` each relayed room uses. After a room's last spectator here left it
unsubscribes, says ``bye`` and forgets its count.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.connection import Connection
from server.quotas import Quotas
from server.relay.counts import Census
from server.relay.relayed import Relayed
from server.relay.subscriber import Subscriber
from server.relay.wire import BYE, OPEN, State, chat_line
from server.spectators import NODE
from server.store import StoreError, keys
from server.store.redis import RedisStore

OPEN_WAIT = 5.0
"""Seconds a relay waits for the owner's answer to ``open`` (then the spectator is redirected)."""
MAX_RELAYED_DELAY = 10.0
"""Rooms with a longer ``spectator_delay`` are not relayed (their spectators are redirected
to the owner): a relay starts its delay from the first view it reads, so the first spectator
of such a room on a node would wait the whole delay for the answer to ``spectate``."""


class Relay:
    """The node's relayed rooms, their spectators' requests, its pub/sub connection
    (:class:`~.subscriber.Subscriber`) and its spectator counts (:class:`~.counts.Census`)."""

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
        self.quotas = quotas
        self.node = node
        self.rooms: dict[str, Relayed] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.subscriber = Subscriber(store, node, self.rooms, self.spawn, drop_every)
        self.census = Census(store, node, self.here)
        self.resyncs = 0
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

    async def read_state(self, room: str) -> State | None:
        return await self.subscriber.read_state(room)

    async def read_rev(self, room: str) -> int | None:
        return await self.subscriber.read_rev(room)

    def start(self) -> None:
        """Report this node's spectator counts every :data:`~.wire.CHECK_EVERY` seconds from
        now."""
        self.census.start()

    def here(self) -> dict[str, int]:
        """This node's spectators of each room: of the rooms it serves, and relayed."""
        counts = dict(self.local())
        for relayed in self.rooms.values():
            counts[relayed.room] = counts.get(relayed.room, 0) + len(relayed)
        return counts

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
        message = chat_line(relayed.room, conn.session, req.text)
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
                await self.subscriber.subscribe(room)
                await self.subscriber.announce(OPEN, [room])
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
        self.spawn(self.subscriber.unsubscribe(relayed.room))
        self.spawn(self.subscriber.announce(BYE, [relayed.room], quiet=True))
        self.spawn(self.census.forget(relayed.room))

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
        self.subscriber.stop()
        self.census.stop()
        for task in self._tasks:
            task.cancel()
        await self.subscriber.close()
