"""The asyncio + websockets shell: accept, decode, hand to the lobby or a room, encode, send.

This layer only moves data (STYLE 2). Per frame: rate check, :func:`protocol.codec.decode`
(a :class:`~protocol.errors.FrameError` closes with the code of ``CLOSE_CODES``),
:func:`protocol.messages.parse`, the connection's lifecycle table, then one handler. Every
exception of a request becomes one ``error`` frame through :func:`server.errors.wire_error`,
the only place that maps errors to the wire.

HTTP on the same port (``process_request``): ``/healthz`` (the process answers), ``/readyz``
(accepting and the store is usable and durable: 503 while shutting down, while Redis cannot be
written, and while it does not persist, see :mod:`server.store.redis` "Durability"),
``/metrics`` (Prometheus) and the game data, ``/games`` and ``/games/<name>``
(:mod:`server.gamedata`), and the browser client's pages and files (:mod:`server.web`) for
requests that are not a WebSocket handshake.

Resource control (STYLE 11, :mod:`server.quotas`, :mod:`server.gate`): TCP connections are
counted from accept (per node, and half-open per address) and a refused one is aborted; the
costly requests (``list_rooms``, ``create``, ``start`` with bots, ``replay``, a ``quick`` that
opens a room) spend per-connection and per-address budgets before any work. Fairness: each
connection's frames wait in its own receive queue (``max_queue`` frames; beyond it the socket is
not read, so TCP pushes back on the sender) and are handled one at a time; after each frame
that has another behind it the connection yields to the loop, so a connection with a full queue
takes its turn like the others instead of running its whole queue at once (after its last one
the wait for the next frame yields anyway). A probe measures the loop's lag
(``oasis_loop_lag_seconds``), the figure every flood is judged by.

Graceful stop (SIGTERM in :mod:`server.main`): not ready, stop accepting, let each room finish
what is in its inbox, send ``bye`` to everyone, close every socket with 1001, close the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import secrets
import time
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from games import registry
from games.base import Game
from protocol import PROTOCOL_MINOR, PROTOCOL_VERSION
from protocol import frames as f
from protocol import messages as m
from protocol.codec import Limits, decode
from protocol.errors import ErrorCode, FrameError, RequestError
from server import gamedata, trim
from server import logging as oasis_logging
from server.config import Config
from server.connection import Connection, ConnEvent
from server.errors import Closing, close_code, wire_error
from server.forwarded import client_address, joined, parse_networks
from server.gate import Gate, GatedConnection
from server.limits import IpCounter, SendBuffer, TokenBucket
from server.lobby import Lobby
from server.metrics import LAG_PROBE_SECONDS, Metrics
from server.quotas import Quotas
from server.room_state import Gone, Resync
from server.store import MemoryStore, Store, StoreError
from server.web import WebFiles, to_response, wants_websocket

if TYPE_CHECKING:
    from server.cluster import Cluster
    from server.relay import Publisher, Relay

SERVER_NAME = "oasis/0.1"
LISTEN_BACKLOG = 1024
"""The listening socket's accept queue (the kernel caps it at ``net.core.somaxconn``)."""


WARM_CHOICES = 3
"""Choices each engine plays per player count at start-up (:func:`load_engines`)."""


def load_engines() -> None:
    """Import every game engine this server hosts and build what it caches, before it listens.

    Otherwise the first room of each game imports its engine inside a request: 40 to 60 ms of CPU
    (Yspahan, Ishtar) during which the event loop serves no other room. Each engine then sets up
    a match of every player count with its default options and plays a few choices, its views
    and a snapshot round trip included, so that what it builds once and keeps (Ishtar's edition,
    the terrain, grid and names of each preset layout) is made now, in the arenas of start-up,
    and not by the first room of a burst: a long-lived block made among thousands of short-lived
    rooms keeps the allocator's arena of those rooms resident after they are gone
    (``bench/memory.py``, BENCHMARKS.md). A few ms. An engine that fails to import raises here
    (a server must not start without a game it hosts); one whose play fails is a bug that its
    rooms will meet as ``internal`` errors: the warm-up of that game stops with a warning."""
    for name in registry.names():
        game = registry.get(name)
        try:
            _warm(game)
        except Exception as exc:
            oasis_logging.get().warning("engine_warmup_failed", game=name, error=repr(exc))


def _warm(game: Game[Any]) -> None:
    for players in range(game.min_players, game.max_players + 1):
        state = game.setup(players, game.check_options(players, {}), seed=players)
        for _ in range(WARM_CHOICES):
            game.shared_view(state)
            for seat in range(players):
                game.own_view(state, seat)
            decision = game.decision(state)
            if decision is None or not decision.choices:
                break
            game.describe(state, decision)
            game.apply(state, decision.choices[0])
        game.load(game.dump(state))


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
        self._probe = asyncio.get_running_loop().create_task(self._lag_probe())
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

    # HTTP ----------------------------------------------------------------------------------

    def _http(self, ws: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return ws.respond(http.HTTPStatus.OK, "ok\n")
        if path == "/readyz":
            if self.stopping or not self.store.ready():
                return ws.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, "not ready\n")
            problem = self.store.problem()
            if problem:  # (logged by the store when it finds it)
                return ws.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, f"not ready: {problem}\n")
            return ws.respond(http.HTTPStatus.OK, "ready\n")
        if path == "/metrics":
            body, content_type = self.metrics.render()
            response = ws.respond(http.HTTPStatus.OK, body.decode())
            del response.headers["Content-Type"]
            response.headers["Content-Type"] = content_type
            return response
        if not wants_websocket(request.headers.get("Upgrade")):
            data = gamedata.answer(path, request.headers.get("If-None-Match"))
            if data is not None:
                return to_response(data)
            page = self.web.answer(request.path, request.headers.get("If-None-Match"))
            return to_response(page)
        if self.ips.full(self._ip(ws, request)):
            self.metrics.rejected.labels("per_ip").inc()
            return ws.respond(http.HTTPStatus.TOO_MANY_REQUESTS, "too many connections\n")
        return None

    # WebSocket -----------------------------------------------------------------------------

    async def _serve(self, ws: ServerConnection) -> None:
        if isinstance(ws, GatedConnection):
            ws.upgraded()
        ip = self._ip(ws, ws.request)
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
            await self._loop(conn, log)
        except Closing as closing:
            log.info("closing", code=closing.code, reason=closing.reason)
            await ws.close(closing.code, closing.reason)
        except ConnectionClosed:
            pass
        except Exception:  # a bug in the shell itself: log it, tell the client nothing more
            log.exception("connection_failed")
            await ws.close(1011, "internal error")
        finally:
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

    async def _loop(self, conn: Connection, log: Any) -> None:
        """Read frames until the socket closes. The hello and idle timeouts are one timer per
        connection that re-arms itself when it fires early (:meth:`_idle_check`), not a timeout
        per frame: a frame only records the time."""
        loop = asyncio.get_running_loop()
        conn.last_frame = loop.time()
        conn.idle_timer = loop.call_at(
            conn.last_frame + self._waiting(conn), self._idle_check, conn, log
        )
        try:
            while True:
                data = await conn.ws.recv()
                conn.last_frame = loop.time()
                await self._frame(conn, data, log)
                if conn.frames_waiting():  # fairness: the others' frames go next (module doc)
                    await asyncio.sleep(0)  # (else the next recv waits, which yields anyway)
                now = conn.last_frame = loop.time()  # time spent on the frame does not count
                deadline = now + self._waiting(conn)
                timer = conn.idle_timer
                if timer is not None and timer.when() > deadline:
                    timer.cancel()  # the allowed silence got shorter (hello, then idle)
                    conn.idle_timer = loop.call_at(deadline, self._idle_check, conn, log)
        finally:
            if conn.idle_timer is not None:
                conn.idle_timer.cancel()

    def _waiting(self, conn: Connection) -> float:
        """How long ``conn`` may stay silent: the hello timeout until it has said hello and
        joined nothing, then the idle timeout (checked again, not enforced, while it is in a
        room: :meth:`_idle_check`)."""
        c = self.config
        return c.hello_timeout if conn.client == "" and not conn.rooms else c.idle_timeout

    def _idle_check(self, conn: Connection, log: Any) -> None:
        if conn.closed:
            return
        loop = asyncio.get_running_loop()
        deadline = conn.last_frame + self._waiting(conn)
        if loop.time() < deadline:
            conn.idle_timer = loop.call_at(deadline, self._idle_check, conn, log)
            return
        if conn.rooms:
            # A seat or spectator may only listen (a stream overlay): never idle while its
            # transport answers the WebSocket keepalive, which closes a dead one (SPEC 6).
            conn.idle_timer = loop.call_at(
                loop.time() + self._waiting(conn), self._idle_check, conn, log
            )
            return
        conn.idle_timer = None
        log.info("closing", code=1000, reason="idle")
        conn.send(f.Bye("idle"))
        conn.close_soon(1000, "idle")

    async def _frame(self, conn: Connection, data: str | bytes, log: Any) -> None:
        if not conn.bucket.take():
            self._error(conn, None, ErrorCode.RATE_LIMITED, "too many frames", None)
            raise Closing(close_code(ErrorCode.RATE_LIMITED) or 1008, "rate limited")
        try:
            # A text frame reaches decode as str, which it refuses with text_frame.
            frame = decode(data, self.limits)
        except FrameError as exc:
            self._error(conn, None, exc.code, exc.message, None)
            raise Closing(exc.close_code or 1002, exc.code.value) from None
        rid = m.request_id(frame)
        kind = frame["type"]
        known = kind if kind in m.CLIENT_TYPES else "unknown"
        self.metrics.frames_in.labels(known).inc()
        room = frame.get("room") if isinstance(frame.get("room"), str) else None
        started = time.perf_counter()
        try:
            request = m.parse(frame)
            conn.handle(ConnEvent.HELLO if isinstance(request, m.Hello) else ConnEvent.REQUEST)
            await self._dispatch(conn, request)
        except Exception as exc:
            code, message, expected = wire_error(exc)
            if not expected:
                log.exception("request_failed", type=kind)
            limit = exc.limit if isinstance(exc, RequestError) else None
            self._error(conn, rid, code, message, room, limit)
            closing = close_code(code)
            if closing is not None:
                raise Closing(closing, code.value) from None
        finally:
            self.metrics.request_seconds.labels(known).observe(time.perf_counter() - started)

    def _error(
        self,
        conn: Connection,
        rid: m.RequestId,
        code: ErrorCode,
        message: str,
        room: str | None,
        limit: str | None = None,
    ) -> None:
        self.metrics.errors.labels(code.value).inc()
        conn.send(f.ErrorFrame.of(rid, code, message, room, limit))

    async def _dispatch(self, conn: Connection, req: m.Request) -> None:
        if self.stopping and not isinstance(req, m.Ping):
            raise RequestError(ErrorCode.UNAVAILABLE, "the server is shutting down")
        if isinstance(req, m.Hello):
            if req.version != PROTOCOL_VERSION:
                raise RequestError(
                    ErrorCode.UNSUPPORTED_VERSION,
                    f"this server speaks protocol version {PROTOCOL_VERSION}, not {req.version}",
                )
            conn.client = req.client or "unnamed"
            conn.send(
                f.Welcome(
                    req.id,
                    conn.session,
                    PROTOCOL_VERSION,
                    SERVER_NAME,
                    {**self.limits.to_json(), **self.config.limits()},
                    registry.names(),
                    PROTOCOL_MINOR,
                )
            )
        elif isinstance(req, m.Ping):
            conn.send(f.Pong(req.id, time.time()))
        elif isinstance(req, m.ListRooms):
            self.quotas.spend("list", conn.session, conn.ip)
            if self.cluster is not None:
                listing, after = await self.cluster.page(req)
            else:
                listing, after = self.lobby.page(req)
            conn.send(f.Rooms(req.id, listing, after))
        elif isinstance(req, m.Create):
            self.quotas.spend("create", conn.session, conn.ip)
            room = await self.lobby.create(req, conn.session, conn=conn)
            conn.send(f.Ack(req.id, room.id, 0, room.info()))
        elif isinstance(req, m.Replay):
            self.quotas.spend("replay", conn.session, conn.ip)
            await self.lobby.replay(req, conn)
        elif isinstance(req, m.Quick):
            # The game first: a quick match nobody can play reads nothing from the store. A
            # quick searches the lobby (across nodes, Redis's index): it spends a listing.
            registry.get(req.game).check_options(req.players, {})
            self.quotas.spend("list", conn.session, conn.ip)
            if self.cluster is not None and await self.cluster.quick(conn, req):
                return
            room = await self.lobby.quick(req, conn.session, conn)
            room.submit(conn, m.Join(req.id, room.id, None, req.name, None, None))
        else:
            if isinstance(req, m.Start) and req.bots:
                self.quotas.spend("create", conn.session, conn.ip)
            if self.relay is not None and await self._relayed(conn, req):
                return
            if self.cluster is not None and await self.cluster.route(conn, req.room, req.id):
                return
            self.lobby.get(req.room).submit(conn, req)

    async def _relayed(self, conn: Connection, req: m.RoomRequest) -> bool:
        """A relay spectator's request, or a ``spectate`` of a room another node holds: served
        here by the relay (:mod:`server.relay`), not redirected."""
        relay, cluster = self.relay, self.cluster
        assert relay is not None
        if relay.serves(conn, req.room):
            return await relay.handle(conn, req, None)
        if not isinstance(req, m.Spectate) or cluster is None or req.room in self.lobby.rooms:
            return False
        if "{" in req.room or "}" in req.room:
            return False
        try:
            holder = await cluster.leases.holder(req.room)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable ({exc})") from None
        if holder is None or holder.node == cluster.node:
            return False
        return await relay.handle(conn, req, holder.node)

    def _ip(self, ws: ServerConnection, request: Request | None) -> str:
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
