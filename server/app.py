"""The asyncio + websockets shell: accept, hand each connection's frames to its read path,
stop gracefully. This layer only moves data (STYLE 2).

Its parts: :mod:`server.reader` (a connection's frames, in order, to :mod:`server.dispatch`,
which serves each request: the connection itself, the lobby, a room, the cluster or the relay),
:mod:`server.probes` (HTTP on the same port, ``process_request``: health, readiness, metrics,
the game data and the browser client's files), :mod:`server.warmup` (the engines, before the
server listens), :mod:`server.connection` (the send path).

Resource control (STYLE 11, :mod:`server.quotas`, :mod:`server.gate`): TCP connections are
counted from accept (per node, and half-open per address) and a refused one is aborted; the
costly requests (``list_rooms``, ``create``, ``start`` with bots, ``replay``, a ``quick`` that
opens a room) spend per-connection and per-address budgets before any work. Fairness between
connections is the read path's (:mod:`server.reader`). A probe measures the loop's lag
(``oasis_loop_lag_seconds``), the figure every flood is judged by.

Graceful stop (SIGTERM in :mod:`server.main`): not ready, stop accepting, let each room finish
what is in its inbox, send ``bye`` to everyone, close every socket with 1001, close the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import TYPE_CHECKING

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol import frames as f
from protocol.codec import Limits
from protocol.errors import RequestError
from server import logging as oasis_logging
from server import probes, trim
from server.config import Config
from server.connection import Connection, ConnEvent
from server.dispatch import SERVER_NAME
from server.errors import Closing
from server.forwarded import client_address, joined, parse_networks
from server.gate import Gate, GatedConnection
from server.limits import IpCounter, SendBuffer, TokenBucket
from server.lobby import Lobby
from server.metrics import LAG_PROBE_SECONDS, Metrics
from server.quotas import Quotas
from server.reader import Offer, Reader
from server.room_state import Gone, Resync
from server.store import MemoryStore, Store
from server.warmup import load_engines
from server.web import WebFiles

if TYPE_CHECKING:
    from server.cluster import Cluster
    from server.relay import Publisher, Relay

LISTEN_BACKLOG = 1024
"""The listening socket's accept queue (the kernel caps it at ``net.core.somaxconn``)."""


class App:
    def __init__(self, config: Config, store: Store | None = None) -> None:
        self.config = config
        self.store: Store = store if store is not None else MemoryStore()
        self.metrics = Metrics()
        self.quotas = Quotas(config.quota_settings(), self._refused)
        self.lobby = Lobby(config, self.store, self.metrics, self.quotas)
        self.limits = Limits(max_frame_bytes=config.max_frame_bytes)
        self.ips = IpCounter(config.max_connections_per_ip)
        self.proxies = parse_networks(config.trusted_proxies)
        self.gate = Gate(config.max_connections, self.quotas.half_open, self.proxies, self._refused)
        self.metrics.spectators.set_function(lambda: self.quotas.spectators.total())
        self.metrics.half_open.set_function(lambda: self.gate.upgrading)
        self._probe: asyncio.Task[None] | None = None
        self.connections: set[Connection] = set()
        self.server: Server | None = None
        self.stopping = False
        self.cluster: Cluster | None = None
        """Several nodes over Redis (:mod:`server.cluster`): set by :mod:`server.main`."""
        self.relay: Relay | None = None
        self.publisher: Publisher | None = None
        """The relay of other nodes' rooms and this node's feed (:mod:`server.relay`)."""
        self.web = WebFiles()
        self.reader = Reader(self)
        self.log = oasis_logging.get()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        c = self.config
        load_engines()
        self.server = await serve(
            self._serve,
            c.host,
            c.port,
            process_request=self._http,
            max_size=2 * c.max_frame_bytes,
            max_queue=16,
            ping_interval=c.ping_interval,
            ping_timeout=c.ping_timeout,
            close_timeout=c.close_timeout,
            # No permessage-deflate: it compresses every frame once per socket, which would undo
            # "encode once per audience" (and its buffers cost memory per connection).
            compression=None,
            server_header=SERVER_NAME,
            create_connection=self.gate.connection_class(),
            # A long accept queue: a flood of connections (aborted at once by the gate) must
            # not fill it, or a legitimate connect waits for a SYN retry (1 s, then 3 s).
            backlog=LISTEN_BACKLOG,
        )
        loop = self.reader.loop = asyncio.get_running_loop()
        self._probe = loop.create_task(self._lag_probe())
        self.log.info("listening", host=c.host, port=self.port)
        # (which allocator holds the memory: the RSS after a burst of rooms depends on it,
        # deploy/README.md "The server's own memory")
        self.log.info("memory_allocator", **trim.allocator())

    async def _lag_probe(self) -> None:
        """How late the loop wakes a timer: the event-loop lag gauge and histogram."""
        loop = asyncio.get_running_loop()
        while True:
            armed = loop.time()
            await asyncio.sleep(LAG_PROBE_SECONDS)
            lag = max(0.0, loop.time() - armed - LAG_PROBE_SECONDS)
            self.metrics.loop_lag.set(lag)
            self.metrics.loop_lag_seconds.observe(lag)

    def _refused(self, limit: str) -> None:
        self.metrics.refused.labels(limit).inc()

    async def stop(self) -> None:
        """Graceful stop; idempotent."""
        if self.stopping or self.server is None:
            return
        self.stopping = True
        if self._probe is not None:
            self._probe.cancel()
        self.log.info("stopping", connections=len(self.connections))
        self.server.close(close_connections=False)
        await self.lobby.stop()
        peer = await self.cluster.hand_off() if self.cluster is not None else ""
        if self.relay is not None:
            await self.relay.close()
        if self.publisher is not None:
            await self.publisher.close()
        for conn in list(self.connections):
            conn.send(f.Bye("server shutting down", peer))
        closing = [conn.ws.close(1001, "server shutting down") for conn in self.connections]
        if closing:
            await asyncio.wait(
                [asyncio.ensure_future(c) for c in closing], timeout=self.config.shutdown_grace
            )
        try:
            async with asyncio.timeout(self.config.shutdown_grace):
                await self.server.wait_closed()
        except TimeoutError:
            self.log.warning("stop_timeout")
        await self.store.close()
        self.log.info("stopped")

    def _http(self, ws: ServerConnection, request: Request) -> Response | None:
        return probes.answer(self, ws, request)

    # WebSocket -----------------------------------------------------------------------------

    async def _serve(self, ws: ServerConnection) -> None:
        if isinstance(ws, GatedConnection):
            ws.upgraded()
        ip = self.address(ws, ws.request)
        if not self.ips.acquire(ip):
            self.metrics.rejected.labels("per_ip").inc()
            await ws.close(1008, "too many connections")
            return
        c = self.config
        conn = Connection(
            secrets.token_hex(8),
            ws,
            ip,
            TokenBucket(c.rate_per_second, c.rate_burst),
            SendBuffer(c.send_buffer_bytes, c.lag_window),
            self.metrics,
            c.resync_timeout,
            self._resync,
        )
        log = self.log.bind(conn=conn.session, ip=ip)
        self.connections.add(conn)
        self.metrics.connections.inc()
        try:
            if isinstance(ws, GatedConnection):
                ws.fast = Offer(self.reader, conn, log).take
            await self.reader.loop_of(conn, log)
        except Closing as closing:
            log.info("closing", code=closing.code, reason=closing.reason)
            await ws.close(closing.code, closing.reason)
        except ConnectionClosed:
            pass
        except Exception:  # a bug in the shell itself: log it, tell the client nothing more
            log.exception("connection_failed")
            await ws.close(1011, "internal error")
        finally:
            if isinstance(ws, GatedConnection):
                ws.fast = None
            conn.handle(ConnEvent.CLOSE)
            self.connections.discard(conn)
            self.metrics.connections.dec()
            self.ips.release(ip)
            self.quotas.forget(conn.session)
            for room_id in list(conn.rooms):
                if self.relay is not None and self.relay.gone(conn, room_id):
                    continue
                room = self.lobby.rooms.get(room_id)
                if room is not None:
                    try:
                        room.submit(conn, Gone())
                    except RequestError:
                        conn.rooms.pop(room_id, None)

    def address(self, ws: ServerConnection, request: Request | None) -> str:
        """The client's address: the peer's, or behind a trusted proxy, the one it forwards."""
        forwarded = joined(request.headers.get_all("X-Forwarded-For")) if request else None
        return client_address(_peer(ws), forwarded, self.proxies)

    def _resync(self, conn: Connection) -> None:
        """A lagging connection drained: every room it is in sends it the full view."""
        for room_id in list(conn.rooms):
            if self.relay is not None and self.relay.resync(conn, room_id):
                continue
            room = self.lobby.rooms.get(room_id)
            if room is not None:
                with contextlib.suppress(RequestError):
                    room.submit(conn, Resync())


def _peer(ws: ServerConnection) -> str:
    address = ws.remote_address
    if isinstance(address, tuple) and address:
        return str(address[0])
    return "unknown"
