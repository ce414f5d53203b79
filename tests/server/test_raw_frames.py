"""A client's frames as raw bytes, cut across socket reads in every way that matters to the read
path's fast path (:class:`server.reader.Intake`), which takes a read's first
whole binary frame without websockets' parser only when that parser is provably between two
frames. Each case checks the server's answers as a client sees them, and which way each frame
went. rules-checklist: none (transport)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from typing import Any

import pytest

from protocol.codec import encode, unpack
from server.app import App
from server.gate import GatedConnection
from tests.server.conftest import TEST_CONFIG, MakeApp

MASK = b"\x11\x22\x33\x44"


def frame(
    payload: bytes, *, opcode: int = 0x2, fin: bool = True, mask: bytes | None = MASK
) -> bytes:
    """A client's frame (RFC 6455 5.2): masked with ``mask`` unless it is None."""
    head = bytes([(0x80 if fin else 0) | opcode])
    length = len(payload)
    masked = 0x80 if mask is not None else 0
    if length < 126:
        head += bytes([masked | length])
    elif length < 1 << 16:
        head += bytes([masked | 126]) + length.to_bytes(2)
    else:
        head += bytes([masked | 127]) + length.to_bytes(8)
    if mask is None:
        return head + payload
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def request(message: dict[str, Any], mask: bytes = MASK) -> bytes:
    return frame(encode(message), mask=mask)


class Raw:
    """A WebSocket client that writes exactly the bytes it is given, when it is given them."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, app: App) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 101"), head
        raw = cls(reader, writer)
        await raw.write(request({"type": "hello", "version": 1, "id": "h"}))
        assert (await raw.message())["type"] == "welcome"
        return raw

    async def write(self, *chunks: bytes) -> None:
        """Each chunk in its own write, with a pause so that the server reads it alone."""
        for chunk in chunks:
            self.writer.write(chunk)
            await self.writer.drain()
            await asyncio.sleep(0.05)

    async def frame(self) -> tuple[int, bytes]:
        """The server's next frame: its opcode and payload (server frames are not masked)."""
        first, second = await asyncio.wait_for(self.reader.readexactly(2), 5)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(await self.reader.readexactly(2))
        elif length == 127:
            length = int.from_bytes(await self.reader.readexactly(8))
        return first & 0x0F, await self.reader.readexactly(length)

    async def message(self) -> dict[str, Any]:
        opcode, payload = await self.frame()
        assert opcode == 0x2, (opcode, payload)
        message: dict[str, Any] = unpack(payload)
        return message

    async def close_code(self) -> int:
        opcode, payload = await self.frame()
        assert opcode == 0x8, (opcode, payload)
        return int.from_bytes(payload[:2])

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The payloads the fast path took from raw bytes, without websockets' parser: those its
    :attr:`GatedConnection.fast` handled outside ``process_event`` (the way in of a frame
    websockets parsed)."""
    seen: list[bytes] = []
    parsing: list[bool] = []
    real_fast: property = vars(GatedConnection)["fast"]
    real_event = GatedConnection.process_event

    def process_event(self: GatedConnection, event: Any) -> None:
        parsing.append(True)
        try:
            real_event(self, event)
        finally:
            parsing.pop()

    def set_fast(self: GatedConnection, fast: Any) -> None:
        def offered(payload: bytes) -> bool:
            handled = fast(payload)
            if handled and not parsing:
                seen.append(payload)
            return bool(handled)

        assert real_fast.fset is not None
        real_fast.fset(self, None if fast is None else offered)

    monkeypatch.setattr(GatedConnection, "fast", property(real_fast.fget, set_fast))
    monkeypatch.setattr(GatedConnection, "process_event", process_event)
    return seen


def ping(rid: int) -> dict[str, Any]:
    return {"type": "ping", "id": rid}


async def test_a_whole_frame_alone_in_a_read_is_taken_without_the_parser(
    make_app: MakeApp, taken: list[bytes]
) -> None:
    raw = await Raw.open(await make_app())
    for rid in range(3):
        await raw.write(request(ping(rid)))
        answer = await raw.message()
        assert (answer["type"], answer["id"]) == ("pong", rid)
    assert [unpack(p)["id"] for p in taken] == [0, 1, 2]
    # (a frame with the 16-bit length too)
    long = {"type": "chat", "room": "r-none", "text": "x" * 200, "id": 9}
    await raw.write(request(long))
    answer = await raw.message()
    assert (answer["type"], answer["id"], answer["code"]) == ("error", 9, "not_found")
    assert len(taken) == 4 and len(taken[-1]) > 125
    await raw.close()


def test_on_uvloop_the_fast_path_takes_frames_from_the_reads(taken: list[bytes]) -> None:
    """uvloop reads a protocol's ``data_received`` once, when it makes the transport (the other
    tests run on asyncio's loop, which reads it at every read): the connection's intake must
    be it by then, or every frame would go to websockets' parser."""
    uvloop = pytest.importorskip("uvloop")

    async def serve_one() -> None:
        app = App(TEST_CONFIG)
        await app.start()
        try:
            raw = await Raw.open(app)
            await raw.write(request(ping(1)))
            assert (await raw.message())["id"] == 1
            await raw.close()
        finally:
            await app.stop()

    uvloop.run(serve_one())
    assert [unpack(p)["id"] for p in taken] == [1]


async def test_two_frames_in_one_read_first_taken_then_the_parser_in_order(
    make_app: MakeApp, taken: list[bytes]
) -> None:
    raw = await Raw.open(await make_app())
    await raw.write(request(ping(1)) + request(ping(2)) + request(ping(3)))
    ids = [(await raw.message())["id"] for _ in range(3)]
    assert ids == [1, 2, 3]
    assert [unpack(p)["id"] for p in taken] == [1]
    await raw.close()


async def test_a_read_that_ends_between_a_header_and_its_payload_leaves_the_parser_on(
    make_app: MakeApp, taken: list[bytes]
) -> None:
    """The payload's first byte, masked, is 0x82, as a binary frame's first byte would be: the
    second read must not be taken for a frame of its own."""
    raw = await Raw.open(await make_app())
    payload = encode(ping(7))
    mask = bytes([payload[0] ^ 0x82]) + MASK[1:]
    whole = request(ping(7), mask=mask)
    assert whole[6] == 0x82  # (2 bytes of header, 4 of mask, then the masked payload)
    await raw.write(whole[:6], whole[6:])
    answer = await raw.message()
    assert (answer["type"], answer["id"]) == ("pong", 7)
    # split inside the header and inside the payload as well
    await raw.write(request(ping(8))[:1], request(ping(8))[1:4], request(ping(8))[4:])
    assert (await raw.message())["id"] == 8
    assert taken == []
    # and the next whole frame is taken again: the parser is between two frames
    await raw.write(request(ping(9)))
    assert (await raw.message())["id"] == 9
    assert [unpack(p)["id"] for p in taken] == [9]
    await raw.close()


async def test_fragments_control_frames_and_bad_frames_go_to_websockets(
    make_app: MakeApp, taken: list[bytes]
) -> None:
    raw = await Raw.open(await make_app())
    payload = encode(ping(1))
    await raw.write(frame(payload[:3], fin=False), frame(payload[3:], opcode=0x0))
    assert (await raw.message())["id"] == 1
    await raw.write(frame(b"are you there", opcode=0x9))  # a WebSocket ping
    assert await raw.frame() == (0xA, b"are you there")
    await raw.write(request(ping(2)))
    assert (await raw.message())["id"] == 2
    assert [unpack(p)["id"] for p in taken] == [2]
    await raw.write(frame(encode(ping(3)), mask=None))
    assert await raw.close_code() == 1002  # (an unmasked client frame: a protocol error)
    await raw.close()


async def test_a_frame_over_the_size_limit_is_refused_as_before(
    make_app: MakeApp, taken: list[bytes]
) -> None:
    app = await make_app(max_frame_bytes=1000)
    raw = await Raw.open(app)
    await raw.write(frame(b"\x90" + b"\x00" * 2500))  # (over websockets' 2 x 1000 bytes)
    assert await raw.close_code() == 1009
    assert taken == []
    await raw.close()
