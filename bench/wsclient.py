"""A lean RFC 6455 client for the load generator: one asyncio Protocol, no per-frame task.

Every action reaches six sockets, so the bots receive six frames for each frame a server
receives; with the regular ``websockets`` client (a frame assembler, a future and a task wake-up
per message) the bots, not the server, were the limit on this 2-core machine. This client does
the same work on the wire (the HTTP upgrade, masked client frames, answers to pings) but hands
each received message to a plain callback straight from ``data_received``, with the time the
bytes arrived. It speaks only what the servers under test send: unfragmented binary frames,
pings and close; no extensions (both servers run without compression).
"""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import time
from collections.abc import Callable
from typing import cast


def _apply_mask_py(data: bytes, mask: bytes) -> bytes:
    size = len(data)
    key = (mask * (size // 4 + 1))[:size]
    value = int.from_bytes(data, "big") ^ int.from_bytes(key, "big")
    return value.to_bytes(size, "big")


apply_mask: Callable[[bytes, bytes], bytes] = _apply_mask_py
try:  # websockets' C version of the same XOR
    from websockets.speedups import apply_mask as _apply_mask_c

    apply_mask = _apply_mask_c
except ImportError:
    pass


OnMessage = Callable[[bytes, float], None]

_OP_CONT, _OP_TEXT, _OP_BINARY, _OP_CLOSE, _OP_PING, _OP_PONG = 0, 1, 2, 8, 9, 10


class WebSocketError(Exception):
    """The handshake failed or the server broke the protocol."""


def _frame(opcode: int, payload: bytes) -> bytes:
    size = len(payload)
    mask = os.urandom(4)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    return header + mask + apply_mask(payload, mask)


class LeanSocket(asyncio.Protocol):
    """One client connection; ``on_message(payload, arrived)`` gets every binary message."""

    def __init__(self, on_message: OnMessage | None = None) -> None:
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self.open = False
        self.closed = asyncio.get_running_loop().create_future()
        self._handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._buffer = b""
        self._parts: list[bytes] = []

    # asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if not self._handshake.done():
            self._handshake.set_exception(WebSocketError(f"connection lost: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        buffer = self._buffer + data if self._buffer else data
        if not self.open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self._buffer = buffer
                return
            status = buffer[: buffer.find(b"\r\n")]
            if b" 101 " not in status + b" ":
                self._handshake.set_exception(WebSocketError(status.decode(errors="replace")))
                return
            self.open = True
            self._handshake.set_result(None)
            buffer = buffer[end + 4 :]
        offset, size = 0, len(buffer)
        while size - offset >= 2:
            first, second = buffer[offset], buffer[offset + 1]
            length = second & 0x7F
            start = offset + 2
            if length == 126:
                if size - start < 2:
                    break
                (length,) = struct.unpack_from("!H", buffer, start)
                start += 2
            elif length == 127:
                if size - start < 8:
                    break
                (length,) = struct.unpack_from("!Q", buffer, start)
                start += 8
            if second & 0x80:
                raise WebSocketError("the server masked a frame")
            end = start + length
            if end > size:
                break
            self._handle(first, buffer[start:end], arrived)
            offset = end
        self._buffer = buffer[offset:]

    def _handle(self, first: int, payload: bytes, arrived: float) -> None:
        opcode = first & 0x0F
        if opcode in (_OP_BINARY, _OP_TEXT, _OP_CONT):
            self._parts.append(payload)
            if first & 0x80:
                message = b"".join(self._parts) if len(self._parts) > 1 else payload
                self._parts = []
                if self.on_message is not None:
                    self.on_message(message, arrived)
        elif opcode == _OP_PING:
            self.write(_OP_PONG, payload)
        elif opcode == _OP_CLOSE:
            self.write(_OP_CLOSE, payload[:2])
            self.open = False

    # Sending -------------------------------------------------------------------------------

    def write(self, opcode: int, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_frame(opcode, payload))

    def send(self, payload: bytes) -> None:
        """One binary message, written at once (never awaits)."""
        self.write(_OP_BINARY, payload)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


async def connect(
    url: str, on_message: OnMessage | None = None, within: float = 30.0
) -> LeanSocket:
    """Open ``ws://host:port/path`` and finish the handshake."""
    if not url.startswith("ws://"):
        raise ValueError("only ws:// URLs")
    rest = url[len("ws://") :]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":")
    loop = asyncio.get_running_loop()
    socket = LeanSocket(on_message)
    async with asyncio.timeout(within):
        await loop.create_connection(lambda: socket, host, int(port))
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\nUser-Agent: oasis-bench\r\n\r\n"
        )
        assert socket.transport is not None
        socket.transport.write(request.encode())
        await socket._handshake
    return socket
