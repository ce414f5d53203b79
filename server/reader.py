"""A connection's read path: its frames, one at a time and in order, to :mod:`server.dispatch`.

Per frame: rate check (:class:`~server.limits.TokenBucket`), :func:`protocol.codec.decode` (a
:class:`~protocol.errors.FrameError` closes with the code of ``CLOSE_CODES``),
:func:`protocol.messages.parse`, the connection's lifecycle table, then one handler. Every
exception of a request becomes one ``error`` frame through :func:`server.errors.wire_error`,
the only place that maps errors to the wire; a code of ``CLOSE_CODES`` then closes (``Closing``).

Two ways in, the same outcome:

- **The task** (:meth:`Reader.loop`): the connection's handler task ``recv()``s each message
  from websockets' receive queue (``max_queue`` frames; beyond it the socket is not read, so TCP
  pushes back on the sender) and handles it, awaiting what must be awaited (the store, the
  cluster). Fairness: after each frame that has another behind it the task yields to the loop,
  so a connection with a full queue takes its turn like the others instead of running its whole
  queue at once (after its last one the wait for the next frame yields anyway).
- **The fast path** (:meth:`Reader.now`, through the connection's :class:`Offer`): the
  socket's ``data_received`` calls it for a whole binary message
  (:class:`server.gate.GatedConnection`: taken from the read's bytes when they start with its
  frame, else from the frame websockets parsed) when the task waits in ``recv()`` with
  nothing queued before it, so nothing of that connection is in flight or in
  order before the frame: it is handled there, without waking the task, if it needs no await
  and can neither fail the rate check, the decoding, the parsing nor the lifecycle table, nor
  close the connection (:func:`server.dispatch.handle_now`). Anything else (and every frame
  after the first of one socket read) goes to the receive queue and the task, as before; what
  the fast path looked at before it gave up has no effect. So the order of one connection's
  frames, the rate limit, the timers and every close stay as the task makes them.

The hello and idle timeouts are one timer per connection that re-arms itself when it fires
early (:meth:`Reader._idle_check`), not a timeout per frame: a frame only records the time.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Final

from protocol import frames as f
from protocol import messages as m
from protocol.codec import decode
from protocol.errors import ErrorCode, FrameError, RequestError
from server import dispatch
from server.connection import TRANSITIONS, Connection, ConnEvent, ConnState
from server.errors import Closing, close_code, wire_error

if TYPE_CHECKING:
    from server.app import App

_perf_counter: Final = time.perf_counter
"""(A final name: compiled code calls it as a constant, not the ``time`` module's attribute
looked up at every request.)"""


class Offer:
    """One connection's fast path as its socket reads call it
    (:attr:`server.gate.GatedConnection.fast` is :meth:`take`, a bound method of this compiled
    class: an interpreted closure around :meth:`Reader.now` ran its own Python frame at every
    socket read)."""

    def __init__(self, reader: Reader, conn: Connection, log: Any) -> None:
        self.reader = reader
        self.conn = conn
        self.log = log

    def take(self, data: bytes) -> bool:
        """:meth:`Reader.now` of this connection."""
        return self.reader.now(self.conn, data, self.log)


class Reader:
    """The read path of every connection of one :class:`~server.app.App`."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.loop: asyncio.AbstractEventLoop
        """The app's event loop (set when it starts), kept: ``asyncio.get_running_loop()``
        costs a ``getpid()`` system call per call on Python 3.11."""

    async def loop_of(self, conn: Connection, log: Any) -> None:
        """Read frames until the socket closes (the task's path)."""
        loop = self.loop
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
                self._handled(conn, log)
        finally:
            if conn.idle_timer is not None:
                conn.idle_timer.cancel()

    def _handled(self, conn: Connection, log: Any) -> None:
        now = conn.last_frame = self.loop.time()  # time spent on the frame does not count
        deadline = now + self._waiting(conn)
        timer = conn.idle_timer
        if timer is not None and timer.when() > deadline:
            timer.cancel()  # the allowed silence got shorter (hello, then idle)
            conn.idle_timer = self.loop.call_at(deadline, self._idle_check, conn, log)

    def now(self, conn: Connection, data: bytes, log: Any) -> bool:
        """The fast path (module doc): True if ``data`` was handled here, False (nothing done)
        if it goes to the receive queue and the task."""
        app = self.app
        try:
            frame = decode(data, app.limits)
            req = m.parse(frame)
        except Exception:  # (the task finds the same error and answers it)
            return False
        state = conn.state
        if (
            isinstance(req, m.Hello)  # (a wrong version closes)
            or state is ConnState.CLOSED
            or (state, ConnEvent.REQUEST) not in TRANSITIONS
            or dispatch.awaits(app, conn, req)
            or not conn.bucket.take()  # (a refusal changes nothing: the task's take refuses too)
        ):
            return False
        try:
            self._now(conn, frame, req, state, log)
        except Closing as closing:  # (no request of the fast path closes: not reached)
            log.info("closing", code=closing.code, reason=closing.reason)
            conn.close_soon(closing.code, closing.reason)
        except Exception:  # a bug in the shell itself, as in the task's path
            log.exception("connection_failed")
            conn.close_soon(1011, "internal error")
        return True

    def _now(
        self, conn: Connection, frame: dict[str, Any], req: m.Request, state: ConnState, log: Any
    ) -> None:
        kind = frame["type"]  # (the frame's time is recorded once it is handled: _handled)
        metrics = self.app.metrics
        metrics.frames_in.labels(kind).inc()
        started = _perf_counter()
        try:
            conn.state = TRANSITIONS[state, ConnEvent.REQUEST]
            dispatch.handle_now(self.app, conn, req)
        except Exception as exc:
            room = frame.get("room") if isinstance(frame.get("room"), str) else None
            self._failed(conn, exc, kind, m.request_id(frame), room, log)
        finally:
            metrics.request_seconds.labels(kind).observe(_perf_counter() - started)
        self._handled(conn, log)

    async def _frame(self, conn: Connection, data: str | bytes, log: Any) -> None:
        if not conn.bucket.take():
            self._error(conn, None, ErrorCode.RATE_LIMITED, "too many frames", None)
            raise Closing(close_code(ErrorCode.RATE_LIMITED) or 1008, "rate limited")
        try:
            # A text frame reaches decode as str, which it refuses with text_frame.
            frame = decode(data, self.app.limits)
        except FrameError as bad:
            self._error(conn, None, bad.code, bad.message, None)
            raise Closing(bad.close_code or 1002, bad.code.value) from None
        rid = m.request_id(frame)
        kind = frame["type"]
        known = kind if kind in m.CLIENT_TYPES else "unknown"
        metrics = self.app.metrics
        metrics.frames_in.labels(known).inc()
        room = frame.get("room") if isinstance(frame.get("room"), str) else None
        started = _perf_counter()
        try:
            request = m.parse(frame)
            conn.handle(ConnEvent.HELLO if isinstance(request, m.Hello) else ConnEvent.REQUEST)
            await dispatch.dispatch(self.app, conn, request)
        except Exception as exc:
            self._failed(conn, exc, kind, rid, room, log)
        finally:
            metrics.request_seconds.labels(known).observe(_perf_counter() - started)

    def _failed(
        self,
        conn: Connection,
        exc: Exception,
        kind: str,
        rid: m.RequestId,
        room: str | None,
        log: Any,
    ) -> None:
        code, message, expected = wire_error(exc)
        if not expected:
            log.exception("request_failed", type=kind)
        limit = exc.limit if isinstance(exc, RequestError) else None
        self._error(conn, rid, code, message, room, limit)
        closing = close_code(code)
        if closing is not None:
            raise Closing(closing, code.value) from None

    def _waiting(self, conn: Connection) -> float:
        """How long ``conn`` may stay silent: the hello timeout until it has said hello and
        joined nothing, then the idle timeout (checked again, not enforced, while it is in a
        room: :meth:`_idle_check`)."""
        c = self.app.config
        return c.hello_timeout if conn.client == "" and not conn.rooms else c.idle_timeout

    def _idle_check(self, conn: Connection, log: Any) -> None:
        if conn.closed:
            return
        loop = self.loop
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

    def _error(
        self,
        conn: Connection,
        rid: m.RequestId,
        code: ErrorCode,
        message: str,
        room: str | None,
        limit: str | None = None,
    ) -> None:
        self.app.metrics.errors.labels(code.value).inc()
        conn.send(f.ErrorFrame.of(rid, code, message, room, limit))
