"""One client connection: its lifecycle as a transition table, its rooms, and its send path.

Lifecycle (h11 style: an event not in the table is a typed error naming state and event)::

    awaiting_hello --hello--> ready --request--> ready
    awaiting_hello / ready --close--> closed

Requests before ``hello`` and a second ``hello`` are refused with ``not_allowed``; the
connection survives them. Frames that arrive after the close started are ignored.

Sending never awaits (see :mod:`server.limits` for the slow-reader policy): a frame is pushed
into the socket's write buffer at once, so a room can fan a revision out to hundreds of sockets
without yielding, and one slow socket only ever costs its own buffer.

Every frame is written pre-framed straight to the socket's transport (:func:`ws_frame`, then one
``transport.write`` per whole frame), not through websockets' ``broadcast``, which serializes a
``Frame`` and queues it in the protocol object per socket: the fan-out to spectators frames a
message once and writes those bytes to every socket (:meth:`Connection.send_framed`), and a
seat's frames, acks and replies are framed once per socket (:meth:`Connection.send_bytes`). The
frames one command of a room sends one socket go in one write (:meth:`Connection.send_all`, one
system call: the acting seat's patch and its ``ack``, a ``joined`` and the ``room`` frame that
follows it; :mod:`server.room` gathers them); the other audiences get one frame per revision each.
The direct write is taken only while the protocol is OPEN, with no extension negotiated (the
server offers none: ``compression=None``), the transport not closing and nothing of websockets'
own pending (:meth:`Connection._direct`); otherwise ``send_bytes`` falls back to ``broadcast``
(which skips a connection that is not open) and ``send_framed`` drops the frame. websockets
writes its own frames (pings, pongs, the close) to the transport synchronously as it makes them
(``send_data``), each one whole, so no frame of ours can land inside one of theirs, nor one of
theirs inside ours.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from enum import Enum
from typing import Any, Final

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.protocol import OPEN

from protocol.errors import ErrorCode, RequestError
from protocol.frames import ServerFrame, encode_frame
from server.limits import SendBuffer, SendVerdict, TokenBucket
from server.metrics import Metrics

_OPEN: Final = OPEN

_SHORT_HEADERS: Final = tuple(bytes((0x82, n)) for n in range(126))
"""The headers of binary frames of 0 to 125 bytes: FIN + BINARY, then the length, unmasked."""
_MEDIUM_HEADERS: Final = tuple(bytes((0x82, 0x7E, high)) for high in range(256))
"""The headers of binary frames of 126 to 65,535 bytes but their last byte: FIN + BINARY, 126
(a 16-bit length follows), the length's high byte."""
_LOW_BYTES: Final = tuple(bytes((n,)) for n in range(256))
"""(The tables are final names: compiled, read as constants, not looked up among the module's
globals.)"""


def ws_header(n: int) -> bytes:
    """The header of one final, unmasked, uncompressed binary WebSocket frame of ``n`` bytes
    (what a server sends), byte for byte what websockets' own ``Frame(BINARY, data)
    .serialize(mask=False)`` starts with (RFC 6455 5.2: 7-bit length, or 126 + 16 bits, or
    127 + 64 bits). Taken from tables below 64 KiB: ``int.to_bytes`` made a bytes object of
    its own (about 450 instructions) for most frames of a revision."""
    if n < 126:
        return _SHORT_HEADERS[n]
    if n < 0x10000:
        return _MEDIUM_HEADERS[n >> 8] + _LOW_BYTES[n & 0xFF]
    return b"\x82\x7f" + n.to_bytes(8, "big")


def ws_frame(data: bytes) -> bytes:
    """``data`` as one WebSocket frame (:func:`ws_header`, then ``data``)."""
    return ws_header(len(data)) + data


class ConnState(Enum):
    AWAITING_HELLO = "awaiting_hello"
    READY = "ready"
    CLOSED = "closed"

    __hash__ = object.__hash__
    """Members are singletons: their identity hashes them, in C (``Enum.__hash__`` is Python,
    and every frame looks its transition up in :data:`TRANSITIONS` twice)."""


class ConnEvent(Enum):
    HELLO = "hello"
    REQUEST = "request"
    CLOSE = "close"

    __hash__ = object.__hash__
    """(As :class:`ConnState`'s.)"""


TRANSITIONS: Final[dict[tuple[ConnState, ConnEvent], ConnState]] = {
    (ConnState.AWAITING_HELLO, ConnEvent.HELLO): ConnState.READY,
    (ConnState.READY, ConnEvent.REQUEST): ConnState.READY,
    (ConnState.AWAITING_HELLO, ConnEvent.CLOSE): ConnState.CLOSED,
    (ConnState.READY, ConnEvent.CLOSE): ConnState.CLOSED,
    (ConnState.CLOSED, ConnEvent.CLOSE): ConnState.CLOSED,
}

_REFUSALS: Final = {
    (ConnState.AWAITING_HELLO, ConnEvent.REQUEST): "send hello first",
    (ConnState.READY, ConnEvent.HELLO): "hello was already received",
}


class Connection:
    """What the server knows of one client; rooms hold references to it while it is a member."""

    def __init__(
        self,
        session: str,
        ws: ServerConnection,
        ip: str,
        bucket: TokenBucket,
        send_buffer: SendBuffer,
        metrics: Metrics,
        resync_timeout: float,
        on_lag: Callable[[Connection], None],
    ) -> None:
        self.session = session
        self.ws = ws
        self.ip = ip
        self.bucket = bucket
        self.send_buffer = send_buffer
        self.metrics = metrics
        self._protocol = ws.protocol
        self._transport = ws.transport
        """``ws``'s protocol and transport, kept: websockets sets both once, before the handler
        that makes this connection runs (the transport in ``connection_made``, the protocol
        when the connection is made), and reading them on every frame was two generic
        attribute lookups each."""
        self._is_closing: Callable[[], bool] = ws.transport.is_closing
        self._buffered: Callable[[], int] = ws.transport.get_write_buffer_size
        """The transport's ``is_closing`` and ``get_write_buffer_size``, bound once: called at
        every frame, each was a method looked up by name on the transport's type first. (Not
        ``write``: the tests spy on a live transport's by replacing it.)"""
        self._plain = not ws.protocol.extensions
        """No extension was negotiated (the server offers none): they are settled by the
        opening handshake, before this connection exists."""
        self.resync_timeout = resync_timeout
        self.on_lag = on_lag
        self.state = ConnState.AWAITING_HELLO
        self.client = ""
        self.hash_rule = 1
        """The view hash rule of its frames (SPEC section 4): 1 unless ``hello`` asked for 2."""
        self.rooms: dict[str, int | None] = {}
        """Room id -> seat held there (None: spectating)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.last_frame = 0.0
        """Loop time of the last frame received (or handled): the idle timer reads it."""
        self.idle_timer: asyncio.TimerHandle | None = None
        self.held: list[bytes] | None = None
        """Frames a room's effector gathered for one write, not yet written
        (:mod:`server.effector`, which writes them with :meth:`flush` before it awaits)."""
        self.spawner: Callable[[Coroutine[Any, Any, None]], None] | None = None
        """Starts the connection's own tasks (a drain watcher, a close) instead of the loop: a
        test's seam (a compiled class takes no patched method)."""

    def __repr__(self) -> str:
        return f"<Connection {self.session} {self.state.value}>"

    def handle(self, event: ConnEvent) -> None:
        """Apply a lifecycle event or raise ``not_allowed`` naming the state and the event."""
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            why = _REFUSALS.get((self.state, event), "not possible now")
            raise RequestError(
                ErrorCode.NOT_ALLOWED, f"{event.value} in state {self.state.value}: {why}"
            )
        self.state = new

    def _direct(self) -> bool:
        """Whether a frame of ours may be written straight to the socket's transport now: the
        protocol is OPEN (not closing: nothing may follow a close frame), no extension was
        negotiated (a frame of ours is not compressed), the transport is not closing, and
        nothing websockets serialized waits to be written (it never does between two of its
        calls: ``send_data`` follows each at once; checked all the same so that frames keep
        their order). No message of websockets' own is ever half sent: the server sends no
        fragmented message (it never calls ``ws.send``).

        The state is read from ``protocol._state``, the attribute behind websockets' public
        ``state`` property (whose getter only returns it and whose setter only sets it, but
        as a Python property it ran interpreted on every frame, about 1,000 instructions);
        ``tests/server/test_connection.py`` fails if websockets stops keeping it there."""
        protocol = self._protocol
        return (
            protocol._state is _OPEN
            and self._plain
            and not protocol.writes
            and not self._is_closing()
        )

    def frames_waiting(self) -> bool:
        """Whether websockets holds frames of this connection not yet received (``recv``)."""
        return bool(self.ws.recv_messages.frames.queue)  # (the deque: its own len is C)

    @property
    def closed(self) -> bool:
        return self.state is ConnState.CLOSED

    def send(self, frame: ServerFrame) -> bool:
        return self.send_bytes(encode_frame(frame))

    def send_bytes(self, data: bytes, then: bytes | None = None) -> bool:
        """Write one frame now (framed here, straight to the transport when :meth:`_direct`,
        else through websockets' ``broadcast``); False if it was dropped (closed or lagging
        connection). ``then``: a second frame right after it, as :meth:`send_all` writes
        them (a seat's ``ack`` after its patch: one write)."""
        if then is not None:
            return self.send_all([data, then])
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        transport = self._transport
        if self._direct():
            transport.write(ws_frame(data))
        else:
            broadcast((self.ws,), data)
        metrics = self.metrics
        metrics.frames_out.inc()
        metrics.bytes_out.inc(len(data))
        buffered = self._buffered()
        if buffered > self.send_buffer.limit:
            self._overflowed(buffered)
        return True

    def send_all(self, frames: list[bytes]) -> bool:
        """Write ``frames`` (encoded frames, in order) now, in one ``transport.write`` (one
        system call) when the send-buffer rule would have let them all through one by one:
        the buffer stays within the limit after the last. Otherwise each is written on its own
        (:meth:`send_bytes`), the limit checked after each, as separate calls would. False if
        the first was dropped."""
        if len(frames) == 1:
            return self.send_bytes(frames[0])
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        framed = b""
        size = 0
        if self._direct():  # (each frame's bytes copied once: into the write's)
            parts: list[bytes] = []
            for data in frames:
                n = len(data)
                parts.append(ws_header(n))
                parts.append(data)
                size += n
            framed = b"".join(parts)
        transport = self._transport
        if not framed or self._buffered() + len(framed) > self.send_buffer.limit:
            sent = self.send_bytes(frames[0])
            for data in frames[1:]:
                self.send_bytes(data)
            return sent
        transport.write(framed)  # (within the limit: no overflow to check)
        metrics = self.metrics
        metrics.frames_out.inc(len(frames))
        metrics.bytes_out.inc(size)  # (counted while framing: no generator made per write)
        return True

    def flush(self) -> None:
        """Write the frames :attr:`held` (one write: :meth:`send_all`), if any."""
        frames = self.held
        if frames is None:
            return
        self.held = None
        if len(frames) == 1:  # (most sockets: one frame, no list to join)
            self.send_bytes(frames[0])
        else:
            self.send_all(frames)

    def send_framed(self, framed: bytes) -> bool:
        """Write one message already framed for WebSocket (:func:`ws_frame`) straight to the
        socket's transport: the fan-out's path, the same bytes for every socket, no frame
        built per socket. Same policy as :meth:`send_bytes`; the metrics are the caller's
        (counted once per fan-out). False if not written (closed, lagging, not :meth:`_direct`:
        the connection is closing, so the frame could not be sent anyway)."""
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        if not self._direct():
            return False
        self._transport.write(framed)
        buffered = self._buffered()
        if buffered > self.send_buffer.limit:
            self._overflowed(buffered)
        return True

    def _overflowed(self, buffered: int) -> None:
        verdict = self.send_buffer.after_write(buffered)
        if verdict is SendVerdict.LAGGING:
            self._spawn(self._drain_then_resync())
        elif verdict is SendVerdict.CLOSE:
            self.close_soon(1008, "too slow")

    def close_soon(self, code: int, reason: str) -> None:
        """Start closing without awaiting (callable from a room)."""
        if code == 1008 and reason == "too slow":
            self.metrics.slow_closes.inc()
        self._spawn(self.ws.close(code, reason))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        if self.spawner is not None:
            self.spawner(coro)
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain_then_resync(self) -> None:
        try:
            async with asyncio.timeout(self.resync_timeout):
                while (  # noqa: ASYNC110
                    self.ws.transport is not None
                    and self.ws.transport.get_write_buffer_size() > self.send_buffer.limit // 2
                ):
                    # Polling, not ws.drain(): drain wakes at the transport's own low-water
                    # mark, which has nothing to do with our limit.
                    await asyncio.sleep(0.01)
        except TimeoutError:
            self.close_soon(1008, "too slow")
            return
        except Exception:  # the socket died while we waited: the shell cleans up
            return
        if self.closed:
            return
        self.send_buffer.resynced(time.monotonic())
        self.metrics.resyncs.inc()
        self.on_lag(self)
