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
  (:class:`Intake`: taken from the read's bytes when they start with its frame, else from the
  frame websockets parsed) when the task waits in ``recv()`` with
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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN
from websockets.streams import StreamReader

try:  # (websockets' own choice: its C unmasking where it is built)
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover (a platform without a build)
    from websockets.utils import apply_mask

from protocol import frames as f
from protocol import messages as m
from protocol.codec import Limits, decode
from protocol.errors import ErrorCode, FrameError, RequestError
from server import dispatch
from server.connection import TRANSITIONS, Connection, ConnEvent, ConnState
from server.errors import Closing, close_code, wire_error
from server.metrics import Metrics

if TYPE_CHECKING:
    from server.app import App

_perf_counter: Final = time.perf_counter
"""(A final name: compiled code calls it as a constant, not the ``time`` module's attribute
looked up at every request.)"""


_AFTER_REQUEST: Final[dict[ConnState, ConnState]] = {
    state: after
    for (state, event), after in TRANSITIONS.items()
    if event is ConnEvent.REQUEST and state is not ConnState.CLOSED
}
"""The lifecycle table's transitions by a request, by state (one look-up per frame of the fast
path instead of a tuple made and looked up twice)."""

_OPEN: Final = OPEN
_BINARY: Final = Opcode.BINARY
_Frame: Final = Frame
_apply_mask: Final = apply_mask
_AT_EOF: Final[Any] = StreamReader.at_eof.__code__
"""Where websockets' frame parser waits between two frames (``Protocol.parse``): it asks its
reader whether the stream ended before it reads the next frame's header."""
_BINARY_FIN: Final = 0x82
"""The first byte of an unfragmented binary frame with no extension bits (RFC 6455 5.2)."""


class Intake:
    """One connection's socket reads before websockets' parser: the fast path's way in.

    :class:`server.gate.GatedConnection` makes one per connection and gives the event loop
    its :meth:`data_received` as the connection's own (an instance attribute, which uvloop
    reads once, when it makes the transport: no interpreted frame per socket read).
    Each read's first whole binary message goes to :attr:`fast` (:meth:`Offer.take`) when the
    connection's task waits in ``recv()`` with nothing queued: handled there, the task is not
    woken for it; refused (False), it is queued for the task as websockets does. When the read
    starts with that message's frame, it is taken from the bytes without websockets' parser
    (:meth:`_take`); otherwise from the frame websockets parsed (:meth:`parsed`, from the
    connection's ``process_event``). Every other byte goes to websockets' own
    ``data_received`` (:attr:`hand_on`).

    What it reads of websockets' objects is kept from the start where websockets never
    replaces it (the protocol, its stream reader's buffer, the size limit, the receive queue
    and its deque); the rest (the state, the parser's wait, the message in progress, the
    task's wait) is read at every read, as websockets leaves it."""

    def __init__(self, protocol: Any, hand_on: Callable[[bytes], None]) -> None:
        self.protocol = protocol
        self.hand_on: Callable[[bytes], None] | None = hand_on
        """websockets' ``data_received`` of the connection (None once it is lost)."""
        self.buffer: bytearray = protocol.reader.buffer
        self.limit: int | None = protocol.max_message_size
        """websockets' size limit (set by its constructor only)."""
        self.queue: Any = None
        """websockets' receive queue (its ``Assembler``), from ``connection_made`` on."""
        self.frames: Any = None
        """The deque behind it (read directly: its ``__len__`` is Python)."""
        self.fast: Callable[[bytes], bool] | None = None
        self.offered = False
        """This read's message was offered to :attr:`fast` (one offer per socket read: the
        others take turns meanwhile)."""

    def made(self, queue: Any) -> None:
        """The connection is made: ``queue`` is its receive queue."""
        self.queue = queue
        self.frames = queue.frames.queue

    def lost(self) -> None:
        """Refused at accept or lost: nothing more is read, and the intake no longer refers
        to the connection (which refers to it: no reference cycle is left)."""
        self.hand_on = None
        self.fast = None

    def data_received(self, data: bytes) -> None:
        """A socket read (module doc: the fast path)."""
        hand_on = self.hand_on
        if hand_on is None:
            return
        self.offered = False
        fast = self.fast
        if fast is not None and len(data) > 1 and data[0] == _BINARY_FIN:
            taken = self._take(data, fast)
            if taken:
                if taken < len(data):  # (the rest starts at a frame boundary)
                    hand_on(data[taken:])
                return
        hand_on(data)

    def _take(self, data: bytes, fast: Callable[[bytes], bool]) -> int:
        """The fast path without websockets' parser: when this read starts with a whole
        unfragmented binary frame, masked, within the size limit, at a frame boundary of an
        open connection whose task waits in ``recv()`` with nothing queued, its payload goes to
        ``fast``; the bytes it took, or 0 (nothing done: websockets parses ``data`` as usual).
        Any other frame (text, fragments, control frames, compression bits) and any read that
        starts inside a frame never comes here, so websockets sees every frame that could
        change its own state; a data frame taken here would only have been queued."""
        protocol = self.protocol
        # (``_state``: what websockets' ``state`` property returns, read without running the
        # property's Python getter; see :meth:`server.connection.Connection._direct`)
        if protocol._state is not _OPEN or protocol.current_size is not None or self.buffer:
            return 0
        waiting = protocol.parser  # (the server's parse, in the frames' parse, in the wait)
        inner = waiting.gi_yieldfrom
        while inner is not None:
            waiting = inner
            inner = waiting.gi_yieldfrom
        if waiting.gi_code is not _AT_EOF:
            return 0  # (not provably between two frames: websockets' parser goes on)
        if not self.task_waits():
            return 0
        second = data[1]
        if not second & 0x80:
            return 0  # (an unmasked client frame: websockets fails the connection)
        length = second & 0x7F
        start = 2
        if length == 126:
            if len(data) < 4:
                return 0
            length = data[2] << 8 | data[3]
            start = 4
        elif length == 127:
            return 0
        end = start + 4 + length
        limit = self.limit
        if len(data) < end or (limit is not None and length > limit):
            return 0
        payload: bytes = _apply_mask(data[start + 4 : end], data[start : start + 4])
        self.offered = True
        return end if fast(payload) else 0

    def parsed(self, event: Any) -> bool:
        """A frame websockets parsed (the connection's ``process_event``): True if the fast
        path handled it (websockets must not queue it), False if websockets goes on."""
        fast = self.fast
        if (
            fast is None
            or self.offered
            or not isinstance(event, _Frame)
            or event.opcode is not _BINARY
            or not event.fin
            or self.protocol._state is not _OPEN
        ):
            return False
        self.offered = True
        return self.task_waits() and fast(bytes(event.data))

    def task_waits(self) -> bool:
        """The connection's task waits in ``recv()`` with nothing queued before a new frame.

        (``frames``: the deque behind websockets' queue of received frames, whose own
        ``__len__`` is Python. ``tests/server/test_gate.py`` fails if websockets stops
        keeping them there.)"""
        return bool(self.queue.get_in_progress) and not self.frames


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
        # (read at every frame, attributes of the interpreted App otherwise: each set once,
        # by App.__init__ before it makes the reader; its Config is frozen)
        self.limits: Limits = app.limits
        self.metrics: Metrics = app.metrics
        self.hello_timeout: float = app.config.hello_timeout
        self.idle_timeout: float = app.config.idle_timeout
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
        try:
            frame = decode(data, self.limits)
            req = m.parse(frame)
        except Exception:  # (the task finds the same error and answers it)
            return False
        after = _AFTER_REQUEST.get(conn.state)
        if (
            after is None
            or isinstance(req, m.Hello)  # (a wrong version closes)
            or dispatch.awaits(self.app, conn, req)
            or not conn.bucket.take()  # (a refusal changes nothing: the task's take refuses too)
        ):
            return False
        try:
            self._now(conn, frame, req, after, log)
        except Closing as closing:  # (no request of the fast path closes: not reached)
            log.info("closing", code=closing.code, reason=closing.reason)
            conn.close_soon(closing.code, closing.reason)
        except Exception:  # a bug in the shell itself, as in the task's path
            log.exception("connection_failed")
            conn.close_soon(1011, "internal error")
        return True

    def _now(
        self, conn: Connection, frame: dict[str, Any], req: m.Request, after: ConnState, log: Any
    ) -> None:
        kind = frame["type"]  # (the frame's time is recorded once it is handled: _handled)
        metrics = self.metrics
        metrics.frames_in.labels(kind).inc()
        started = _perf_counter()
        try:
            conn.state = after
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
            frame = decode(data, self.limits)
        except FrameError as bad:
            self._error(conn, None, bad.code, bad.message, None)
            raise Closing(bad.close_code or 1002, bad.code.value) from None
        rid = m.request_id(frame)
        kind = frame["type"]
        known = kind if kind in m.CLIENT_TYPES else "unknown"
        metrics = self.metrics
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
        return self.hello_timeout if conn.client == "" and not conn.rooms else self.idle_timeout

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
        self.metrics.errors.labels(code.value).inc()
        conn.send(f.ErrorFrame.of(rid, code, message, room, limit))
