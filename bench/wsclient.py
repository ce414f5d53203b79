"""A lean WebSocket client for the load generator: one asyncio Protocol, no per-frame task.

Every action reaches six sockets, so the bots receive six frames for each frame a server
receives; with the regular ``websockets`` client (a frame assembler, a future and a task wake-up
per message) the bots, not the server, were the limit on this 2-core machine. This client keeps
the wire to the websockets library's Sans-I/O core (:class:`websockets.client.ClientProtocol`:
the HTTP upgrade, masking, frame parsing, answers to pings, the closing handshake) and keeps
only the I/O here: bytes from ``data_received`` go into the protocol, the protocol's bytes go
to the transport, and each received message goes to a plain callback straight from
``data_received``, with the time the bytes arrived. No extensions (both servers run without
compression); fragmented messages are joined here (the servers under test send none).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import cast

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

OnMessage = Callable[[bytes, float], None]

USER_AGENT = "oasis-bench"


class WebSocketError(Exception):
    """The handshake failed or the server broke the protocol."""


class LeanSocket(asyncio.Protocol):
    """One client connection; ``on_message(payload, arrived)`` gets every binary message."""

    def __init__(self, url: str, on_message: OnMessage | None = None) -> None:
        self.on_message = on_message
        self.protocol = ClientProtocol(parse_uri(url), max_size=None)
        self.transport: asyncio.Transport | None = None
        self.open = False
        self.closed = asyncio.get_running_loop().create_future()
        self._handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._parts: list[bytes] = []

    # asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        request = self.protocol.connect()
        if "User-Agent" not in request.headers:
            request.headers["User-Agent"] = USER_AGENT
        self.protocol.send_request(request)
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        self.protocol.receive_eof()
        if not self._handshake.done():
            self._handshake.set_exception(WebSocketError(f"connection lost: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        protocol = self.protocol
        protocol.receive_data(data)
        for event in protocol.events_received():
            if isinstance(event, Frame):
                self._frame(event, arrived)
            elif isinstance(event, Response):
                self._handshake_done()
        self._flush()  # pongs, the answer to a close, the end of the stream

    def _handshake_done(self) -> None:
        error = self.protocol.handshake_exc
        if error is not None:
            self._handshake.set_exception(WebSocketError(str(error)))
            return
        self.open = True
        self._handshake.set_result(None)

    def _frame(self, frame: Frame, arrived: float) -> None:
        opcode = frame.opcode
        if opcode is Opcode.BINARY or opcode is Opcode.TEXT or opcode is Opcode.CONT:
            payload = frame.data if type(frame.data) is bytes else bytes(frame.data)
            if frame.fin and not self._parts:
                message = payload
            else:
                self._parts.append(payload)
                if not frame.fin:
                    return
                message, self._parts = b"".join(self._parts), []
            if self.on_message is not None:
                self.on_message(message, arrived)
        elif opcode is Opcode.CLOSE:
            self.open = False

    def _flush(self) -> None:
        transport = self.transport
        if transport is None:
            return
        for data in self.protocol.data_to_send():
            if data:
                if not transport.is_closing():
                    transport.write(data)
            elif transport.can_write_eof():
                transport.write_eof()  # the protocol is done sending: half-close
        if self.protocol.close_expected() and not transport.is_closing():
            transport.close()

    # Sending -------------------------------------------------------------------------------

    def send(self, payload: bytes) -> None:
        """One binary message, written at once (never awaits)."""
        if self.protocol.state is State.OPEN:
            self.protocol.send_binary(payload)
            self._flush()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


async def connect(
    url: str, on_message: OnMessage | None = None, within: float = 30.0
) -> LeanSocket:
    """Open ``ws://host:port/path`` and finish the handshake."""
    uri = parse_uri(url)
    if uri.secure:
        raise ValueError("only ws:// URLs")
    loop = asyncio.get_running_loop()
    socket = LeanSocket(url, on_message)
    async with asyncio.timeout(within):
        await loop.create_connection(lambda: socket, uri.host, uri.port)
        await socket._handshake
    return socket
