"""One client connection: its lifecycle as a transition table, its rooms, and its send path.

Lifecycle (h11 style: an event not in the table is a typed error naming state and event)::

    awaiting_hello --hello--> ready --request--> ready
    awaiting_hello / ready --close--> closed

Requests before ``hello`` and a second ``hello`` are refused with ``not_allowed``; the
connection survives them. Frames that arrive after the close started are ignored.

Sending never awaits (see :mod:`server.limits` for the slow-reader policy): a frame is pushed
into the socket's write buffer at once, so a room can fan a revision out to hundreds of sockets
without yielding, and one slow socket only ever costs its own buffer. The fan-out to spectators
frames a message once (:func:`ws_frame`) and writes those bytes to every socket's transport
(:meth:`Connection.send_framed`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

from protocol.errors import ErrorCode, RequestError
from protocol.frames import ServerFrame, encode_frame
from server.limits import SendBuffer, SendVerdict, TokenBucket
from server.metrics import Metrics


def ws_frame(data: bytes) -> bytes:
    """``data`` as one unmasked, uncompressed binary WebSocket frame (what a server sends),
    built once by websockets' own serializer for :meth:`Connection.send_framed`."""
    return Frame(Opcode.BINARY, data).serialize(mask=False)


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

    @property
    def closed(self) -> bool:
        return self.state is ConnState.CLOSED

    def send(self, frame: ServerFrame) -> bool:
        return self.send_bytes(encode_frame(frame))

    def send_bytes(self, data: bytes) -> bool:
        """Write one frame now; False if it was dropped (closed or lagging connection)."""
        if self.closed or self.send_buffer.lagging:
            return False
        broadcast((self.ws,), data)
        self.metrics.frames_out.inc()
        self.metrics.bytes_out.inc(len(data))
        transport = self.ws.transport
        buffered = transport.get_write_buffer_size() if transport is not None else 0
        if buffered > self.send_buffer.limit:
            self._overflowed(buffered)
        return True

    def send_framed(self, framed: bytes) -> bool:
        """Write one message already framed for WebSocket (:func:`ws_frame`) straight to the
        socket's transport: the fan-out's path, the same bytes for every socket, no frame
        built per socket. Same policy as :meth:`send_bytes`; the metrics are the caller's
        (counted once per fan-out). False if not written (closed, lagging, closing)."""
        if self.state is ConnState.CLOSED or self.send_buffer.lagging:
            return False
        ws = self.ws
        transport = ws.transport
        # Only an open connection, with nothing of websockets' own pending: its writes are
        # flushed to the transport as they are made (send_data), so frames never interleave.
        if ws.protocol.state is not OPEN or ws.protocol.extensions or transport.is_closing():
            return False
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
