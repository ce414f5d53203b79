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
seat's frames, acks and replies are framed once per socket (:meth:`Connection.send_bytes`).
The direct write is taken only while the protocol is OPEN, with no extension negotiated (the
server offers none: ``compression=None``), the transport not closing and nothing of websockets'
own pending (:func:`_direct`); otherwise ``send_bytes`` falls back to ``broadcast`` (which
skips a connection that is not open) and ``send_framed`` drops the frame. websockets writes its
own frames (pings, pongs, the close) to the transport synchronously as it makes them
(``send_data``), each one whole, so no frame of ours can land inside one of theirs, nor one of
theirs inside ours.

Reading has a fast path too (:func:`fast_reads`): a whole, final, masked binary frame of up to
64 KiB that arrives while websockets' parser waits at a frame boundary is unmasked here and
handed to websockets as the same ``Frame`` its own parser would have made; anything else (a
partial frame, control frames, text, fragments, a frame too large, a closing connection) goes
through websockets' parser unchanged.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import Enum
from types import MethodType
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN, Protocol
from websockets.streams import StreamReader

from protocol.errors import ErrorCode, RequestError
from protocol.frames import ServerFrame, encode_frame
from server.limits import SendBuffer, SendVerdict, TokenBucket
from server.metrics import Metrics

try:  # (what websockets' own parser uses: the C one where it is built)
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

_SHORT_HEADERS = tuple(bytes((0x82, n)) for n in range(126))
"""The headers of binary frames of 0 to 125 bytes: FIN + BINARY, then the length, unmasked."""


def ws_frame(data: bytes) -> bytes:
    """``data`` as one final, unmasked, uncompressed binary WebSocket frame (what a server
    sends), byte for byte what websockets' own ``Frame(BINARY, data).serialize(mask=False)``
    builds (RFC 6455 5.2: 7-bit length, or 126 + 16 bits, or 127 + 64 bits)."""
    n = len(data)
    if n < 126:
        return _SHORT_HEADERS[n] + data
    if n < 0x10000:
        return b"\x82\x7e" + n.to_bytes(2, "big") + data
    return b"\x82\x7f" + n.to_bytes(8, "big") + data


def _direct(ws: ServerConnection) -> bool:
    """Whether a frame of ours may be written straight to ``ws``'s transport now: the protocol
    is OPEN (not closing: nothing may follow a close frame), no extension was negotiated (a
    frame of ours is not compressed), no fragmented message of websockets' is half sent, the
    transport is not closing, and nothing websockets serialized waits to be written (it never
    does between two of its calls: ``send_data`` follows each at once; checked all the same so
    that frames keep their order)."""
    protocol = ws.protocol
    return (
        protocol.state is OPEN
        and not protocol.extensions
        and not protocol.writes
        and ws.send_in_progress is None
        and not ws.transport.is_closing()
    )


_AT_EOF = StreamReader.at_eof.__code__
_PARSE = Protocol.parse.__code__
_BINARY = Opcode.BINARY


def fast_reads(protocol: Protocol) -> None:
    """Install the read fast path (:func:`receive_data`) on one connection's protocol."""
    protocol.receive_data = MethodType(receive_data, protocol)  # type: ignore[method-assign]


def receive_data(protocol: Protocol, data: bytes | bytearray) -> None:
    """websockets' ``Protocol.receive_data`` with its per-frame generators skipped for the
    common frame: whole, final, binary, masked, no reserved bit, a 7- or 16-bit length within
    the size limit, arriving while the parser waits at a frame boundary (suspended in
    ``StreamReader.at_eof``, so its buffer is empty and no frame is half read) with no
    fragmented message open and no extension. Each such frame becomes the event websockets'
    parser would have made (``Frame(BINARY, unmasked)``; ``recv_frame`` does nothing else for
    it); from the first other frame on, the rest of ``data`` goes to websockets' parser."""
    parser: Any = protocol.parser
    waiting = parser.gi_yieldfrom  # (the server's parser delegates to Protocol.parse)
    if waiting is not None and waiting.gi_code is _PARSE:
        waiting = waiting.gi_yieldfrom
    if (
        waiting is None
        or waiting.gi_code is not _AT_EOF
        or protocol.state is not OPEN
        or protocol.current_size is not None
        or protocol.extensions
        or protocol.debug
    ):
        Protocol.receive_data(protocol, data)
        return
    limit = protocol.max_message_size
    if protocol.max_fragment_size is not None:
        limit = (
            protocol.max_fragment_size if limit is None else min(limit, protocol.max_fragment_size)
        )
    events = protocol.events
    n = len(data)
    at = 0
    while at + 6 <= n and data[at] == 0x82:  # FIN, no reserved bit, BINARY
        length = data[at + 1] ^ 0x80  # masked: 0 to 127; not masked: 128 and up
        if length < 126:
            start = at + 6
        elif length == 126 and at + 8 <= n:
            start = at + 8
            length = int.from_bytes(data[at + 2 : at + 4], "big")
        else:
            break
        end = start + length
        if end > n or (limit is not None and length > limit):
            break
        events.append(Frame(_BINARY, apply_mask(data[start:end], data[start - 4 : start])))
        at = end
    if at < n:
        Protocol.receive_data(protocol, data[at:] if at else data)


class ConnState(Enum):
    AWAITING_HELLO = "awaiting_hello"
    READY = "ready"
    CLOSED = "closed"


class ConnEvent(Enum):
    HELLO = "hello"
    REQUEST = "request"
    CLOSE = "close"


TRANSITIONS: dict[tuple[ConnState, ConnEvent], ConnState] = {
    (ConnState.AWAITING_HELLO, ConnEvent.HELLO): ConnState.READY,
    (ConnState.READY, ConnEvent.REQUEST): ConnState.READY,
    (ConnState.AWAITING_HELLO, ConnEvent.CLOSE): ConnState.CLOSED,
    (ConnState.READY, ConnEvent.CLOSE): ConnState.CLOSED,
    (ConnState.CLOSED, ConnEvent.CLOSE): ConnState.CLOSED,
}

_REFUSALS = {
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
        fast_reads(ws.protocol)
        self.ip = ip
        self.bucket = bucket
        self.send_buffer = send_buffer
        self.metrics = metrics
        self.resync_timeout = resync_timeout
        self.on_lag = on_lag
        self.state = ConnState.AWAITING_HELLO
        self.client = ""
        self.rooms: dict[str, int | None] = {}
        """Room id -> seat held there (None: spectating)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.last_frame = 0.0
        """Loop time of the last frame received (or handled): the idle timer reads it."""
        self.idle_timer: asyncio.TimerHandle | None = None

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

    def frames_waiting(self) -> bool:
        """Whether websockets holds frames of this connection not yet received (``recv``)."""
        return bool(self.ws.recv_messages.frames)

    @property
    def closed(self) -> bool:
        return self.state is ConnState.CLOSED

    def send(self, frame: ServerFrame) -> bool:
        return self.send_bytes(encode_frame(frame))

    def send_bytes(self, data: bytes) -> bool:
        """Write one frame now (framed here, straight to the transport when :func:`_direct`,
        else through websockets' ``broadcast``); False if it was dropped (closed or lagging
        connection)."""
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        ws = self.ws
        if _direct(ws):
            ws.transport.write(ws_frame(data))
        else:
            broadcast((ws,), data)
        metrics = self.metrics
        metrics.frames_out.inc()
        metrics.bytes_out.inc(len(data))
        buffered = ws.transport.get_write_buffer_size()
        if buffered > self.send_buffer.limit:
            self._overflowed(buffered)
        return True

    def send_framed(self, framed: bytes) -> bool:
        """Write one message already framed for WebSocket (:func:`ws_frame`) straight to the
        socket's transport: the fan-out's path, the same bytes for every socket, no frame
        built per socket. Same policy as :meth:`send_bytes`; the metrics are the caller's
        (counted once per fan-out). False if not written (closed, lagging, not :func:`_direct`:
        the connection is closing, so the frame could not be sent anyway)."""
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        ws = self.ws
        if not _direct(ws):
            return False
        transport = ws.transport
        transport.write(framed)
        buffered = transport.get_write_buffer_size()
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

    def _spawn(self, coro: Any) -> None:
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
