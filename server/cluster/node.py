"""This node in the cluster (:mod:`server.cluster`): :class:`Cluster`, the one object the app
and the store talk to, and the node's identity (:func:`fence_of`).

:class:`Cluster` runs the start-up claim and the lease loop, routes a request for a room served
elsewhere (a ``redirect``, or the room taken over on the spot) and hands the rooms off when the
node stops. It composes the parts that hold the state: :class:`~.claims.Claims` (the leases held,
the rooms taken over), :class:`~.eviction.Eviction` (the rooms lost) and
:class:`~.directory.Directory` (the lobby across nodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server import logging as oasis_logging
from server.cluster.claims import Claims
from server.cluster.directory import Directory
from server.cluster.eviction import Eviction
from server.config import Config
from server.connection import Connection
from server.lease import Leases, node_id
from server.room_state import RoomState
from server.store import StoreError, keys
from server.store.fence import Fence
from server.store.redis import RedisStore

if TYPE_CHECKING:
    from server.app import App


def default_url(config: Config, port: int) -> str:
    """``ws://<host>:<port>/``; listening on every interface, the host's full name stands for the
    host (a pod's DNS name under a headless Service; set ``OASIS_PUBLIC_URL`` wherever clients
    reach nodes by another name)."""
    host = config.host if config.host not in ("", "0.0.0.0", "::") else socket.getfqdn()
    return f"ws://{host}:{port}/"


def fence_of(config: Config) -> Fence:
    """This process's lease token, for the store the cluster runs on (:mod:`server.store.fence`):
    the node id (:func:`server.lease.node_id`), the public url and the lease ttl of ``config``."""
    url = config.public_url or default_url(config, config.port)
    return Fence.new(node_id(config.node_id, config.port), url, config.lease_ttl)


class Cluster:
    """This node's share of the rooms over one Redis (see :mod:`server.cluster`)."""

    def __init__(self, app: App, store: RedisStore, config: Config) -> None:
        self.app = app
        self.store = store
        self.config = config
        self.leases = Leases(store)  # (the store was built with this node's fence_of(config))
        store.on_not_owner = self.not_owner
        self.stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self.log = oasis_logging.get(component="cluster", node=self.leases.node)
        self.claims = Claims(app.lobby, store, self.leases, lambda: self.closing, self.log)
        self.eviction = Eviction(app.lobby, self.leases, self.claims, self._spawn, self.log)
        self.directory = Directory(
            store, app.lobby, self.leases, app.config.list_page, lambda: app.relay
        )

    @property
    def node(self) -> str:
        return self.leases.node

    @property
    def closing(self) -> bool:
        """The node is stopping: it takes no room over any more."""
        return self.stopping or self.app.stopping

    def local(self) -> list[str]:
        """The stored rooms this node serves (replay rooms store nothing)."""
        return [r.id for r in self.app.lobby.rooms.values() if r.settings.replay_of is None]

    # Start-up and the loop ---------------------------------------------------------------------

    async def start(self, stop: asyncio.Event | None = None, *, retry: float = 1.0) -> None:
        """List the node and take its share of rooms; wait for Redis (until ``stop``)."""
        while True:
            try:
                await self.leases.heartbeat()
                claimed, failed = await self.claim_orphans()
                break
            except StoreError as exc:
                self.log.error("restore_waiting_for_redis", error=str(exc))
                if stop is not None and stop.is_set():
                    return
                await asyncio.sleep(retry)
        self.log.info("rooms_restored", restored=claimed, failed=failed)
        self._loop_task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        period = max(0.05, self.leases.ttl / 3)
        while not self.stopping:
            await asyncio.sleep(period)
            try:
                await self.tick()
            except StoreError as exc:
                self.log.warning("lease_round_failed", error=str(exc))
            except Exception:
                self.log.exception("lease_round_crashed")

    async def tick(self) -> None:
        """One round: heartbeat, renew, free what closed, take orphans."""
        await self.leases.heartbeat()
        local = self.local()
        lost = await self.leases.renew(local)
        for room in lost:
            self.not_owner(room)
        closed = sorted(self.claims.held - set(local))
        await self.leases.release(closed)
        self.claims.held = set(local) - set(lost)
        if not self.closing:
            await self.claim_orphans()

    async def claim_orphans(self, batch: int = 100) -> tuple[int, int]:
        """:meth:`Claims.orphans <.claims.Claims.orphans>`: (rooms restored, rooms that could
        not be)."""
        return await self.claims.orphans(batch)

    async def claim(self, room: str) -> bool:
        """:meth:`Claims.claim <.claims.Claims.claim>`: ``room`` served here now?"""
        return await self.claims.claim(room)

    def not_owner(self, room: str) -> None:
        """This node lost ``room``'s lease (a refused write or renewal): evict it now
        (:class:`~.eviction.Eviction`)."""
        self.eviction.not_owner(room)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # Routing -----------------------------------------------------------------------------------

    async def route(self, conn: Connection, room: str, rid: m.RequestId) -> bool:
        """For a request about ``room``: True if it was answered with a ``redirect`` (another node
        owns the room); False if the lobby should handle it (the room is, or now is, served here,
        or does not exist). Redis trouble is ``unavailable``."""
        try:
            return await self._route(conn, room, rid)
        except StoreError as exc:
            raise _unavailable(exc) from None

    async def _route(self, conn: Connection, room: str, rid: m.RequestId) -> bool:
        if room in self.app.lobby.rooms or self.closing or "{" in room or "}" in room:
            return False
        holder = await self.leases.holder(room)
        if holder is None and not await self._live(room):
            return False  # no such room: the lobby says not_found
        if holder is None or holder.node == self.node:
            if await self.claim(room):
                return False
            holder = await self.leases.holder(room)
            if holder is None or holder.node == self.node:
                return False
        conn.send(f.Redirect(rid, room, holder.url, f"room {room} is served by another node"))
        return True

    async def _live(self, room: str) -> bool:
        key = keys.rooms(self.store.prefix)
        score = await self.store.call(f"is {room} live", lambda: self.store.redis.zscore(key, room))
        return score is not None

    # The lobby across nodes --------------------------------------------------------------------

    async def page(self, req: m.ListRooms) -> tuple[list[dict[str, Any]], str | None]:
        """One page of ``list_rooms`` over every node (:meth:`.directory.Directory.page`)."""
        return await self.directory.page(req)

    async def quick(self, conn: Connection, req: m.Quick) -> bool:
        """True if the quick match was sent to another node's open quick room (``redirect``;
        :meth:`.directory.Directory.quick`)."""
        return await self.directory.quick(conn, req)

    # Stopping ----------------------------------------------------------------------------------

    async def hand_off(self) -> str:
        """After the rooms stopped: snapshot and release every room, leave; a peer's url or "".

        A room with a step open to an undo is not snapshotted (:attr:`Match.settled`): its last
        settled snapshot and the log's tail give the peer the steps the undo needs."""
        self.stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop_task
        rooms = [self.app.lobby.rooms[r] for r in self.local() if r in self.app.lobby.rooms]
        for room in rooms:
            if room.state is RoomState.PLAYING and room.rev > 0 and room.match.settled:
                with contextlib.suppress(StoreError):
                    await self.store.snapshot(
                        room.id, room.rev, room.match.game.dump(room.match.state)
                    )
        peer = ""
        try:
            await self.leases.release([r.id for r in rooms])
            await self.leases.leave()
            peers = await self.leases.peers()
            if peers:
                peer = random.choice(sorted(peers.values()))
        except StoreError as exc:
            self.log.warning("hand_off_incomplete", error=str(exc))
        self.log.info("handed_off", rooms=len(rooms), peer=peer)
        return peer


def _unavailable(exc: StoreError) -> RequestError:
    return RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable; try again ({exc})")
