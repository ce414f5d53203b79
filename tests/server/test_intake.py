"""A connection's socket reads before websockets' parser (:class:`server.reader.Intake`), fed
literal bytes with no socket: which frames the fast path is offered, and that websockets'
own parser gets every other byte, from a frame boundary. The same cases over real sockets
are in test_raw_frames.py. rules-checklist: none (transport)."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN
from websockets.server import ServerProtocol

from protocol.codec import encode
from server.app import App
from server.gate import GatedConnection
from server.reader import Intake
from tests.server.conftest import MakeClient
from tests.server.test_raw_frames import MASK, frame

UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


class Queue:
    """What the intake reads of websockets' receive queue: whether the connection's task waits
    in ``recv()``, and the deque of frames queued for it."""

    def __init__(self) -> None:
        self.get_in_progress = True
        self.frames = type("Frames", (), {"queue": deque[Frame]()})()


class Reads:
    """An intake over an open websockets protocol: what it offered from the reads' bytes
    (``offered``) and from websockets' parsed frames (``offered_parsed``), and the frames
    websockets parsed and kept for the connection's task (``parsed``)."""

    def __init__(self, accept: bool = True, max_size: int = 1000) -> None:
        self.protocol = ServerProtocol(max_size=max_size)
        self.protocol.receive_data(UPGRADE)
        [request] = self.protocol.events_received()
        self.protocol.send_response(self.protocol.accept(request))  # type: ignore[arg-type]
        assert self.protocol.state is OPEN
        self.offered: list[bytes] = []
        self.offered_parsed: list[bytes] = []
        self.parsed: list[Frame] = []
        self._parsing = False
        self.accept = accept
        self.queue = Queue()
        self.intake = Intake(self.protocol, self._hand_on)
        self.intake.made(self.queue)
        self.intake.fast = self._fast

    def _fast(self, payload: bytes) -> bool:
        (self.offered_parsed if self._parsing else self.offered).append(payload)
        return self.accept

    def _hand_on(self, data: bytes) -> None:
        """websockets' ``data_received``: its parser, then each frame to ``process_event``."""
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            assert isinstance(event, Frame)
            self._parsing = True
            try:
                if not self.intake.parsed(event):
                    self.parsed.append(event)
            finally:
                self._parsing = False

    def read(self, *chunks: bytes) -> None:
        """Each chunk in its own socket read."""
        for chunk in chunks:
            self.intake.data_received(chunk)


def payloads(frames: list[Frame]) -> list[bytes]:
    return [bytes(f.data) for f in frames]


def test_a_read_of_one_whole_binary_frame_is_offered_without_websockets() -> None:
    reads = Reads()
    reads.read(frame(b"one"), frame(b"two" * 100))  # (a 7-bit and a 16-bit length)
    assert reads.offered == [b"one", b"two" * 100]
    assert reads.parsed == [] and not reads.protocol.reader.buffer


def test_the_rest_of_a_read_goes_to_websockets_from_the_frame_boundary() -> None:
    """One offer per socket read: the second frame is queued by websockets for the task."""
    reads = Reads()
    reads.read(frame(b"one") + frame(b"two") + frame(b"three"))
    assert reads.offered == [b"one"] and reads.offered_parsed == []
    assert payloads(reads.parsed) == [b"two", b"three"]


def test_a_refused_offer_leaves_the_whole_read_to_websockets() -> None:
    reads = Reads(accept=False)
    reads.read(frame(b"one") + frame(b"two"))
    assert reads.offered == [b"one"] and reads.offered_parsed == []  # (one offer per read)
    assert payloads(reads.parsed) == [b"one", b"two"]


def test_nothing_is_offered_unless_the_task_waits_with_nothing_queued() -> None:
    reads = Reads()
    reads.queue.get_in_progress = False
    reads.read(frame(b"busy"))
    reads.queue.get_in_progress = True
    reads.queue.frames.queue.append(Frame(Opcode.BINARY, b"queued"))
    reads.read(frame(b"behind"))
    assert reads.offered == [] and reads.offered_parsed == []
    assert payloads(reads.parsed) == [b"busy", b"behind"]


def test_frames_the_fast_path_does_not_take_go_to_websockets() -> None:
    reads = Reads(max_size=100)
    reads.read(
        frame(b"text", opcode=0x1),
        frame(b"first", fin=False),
        frame(b" and last", opcode=0x0),
        frame(b"ping", opcode=0x9),
        frame(b"x" * 101),  # (over the size limit: websockets fails the connection)
    )
    assert reads.offered == [] and reads.offered_parsed == []
    assert [(f.opcode, bytes(f.data)) for f in reads.parsed] == [
        (Opcode.TEXT, b"text"),
        (Opcode.BINARY, b"first"),
        (Opcode.CONT, b" and last"),
        (Opcode.PING, b"ping"),
    ]
    assert reads.protocol.state is not OPEN


def test_an_unmasked_frame_goes_to_websockets_which_fails_the_connection() -> None:
    reads = Reads()
    reads.read(frame(b"bare", mask=None))
    assert reads.offered == [] and reads.protocol.state is not OPEN


def test_a_read_that_starts_inside_a_frame_is_not_taken_for_one() -> None:
    """The payload's first masked byte is 0x82, as a binary frame's first byte would be."""
    reads = Reads()
    payload = encode({"type": "ping", "id": 7})
    mask = bytes([payload[0] ^ 0x82]) + MASK[1:]
    whole = frame(payload, mask=mask)
    assert whole[6] == 0x82
    reads.accept = False
    reads.read(whole[:6], whole[6:])
    assert reads.offered == [] and reads.offered_parsed == [payload]
    assert payloads(reads.parsed) == [payload]
    # Split inside the 16-bit length too, then a whole frame is taken again.
    long = frame(b"y" * 300)
    reads.read(long[:3], long[3:], frame(b"next"))
    assert payloads(reads.parsed) == [payload, b"y" * 300, b"next"]
    assert reads.offered == [b"next"] and reads.offered_parsed == [payload, b"y" * 300]


def test_a_frame_websockets_parsed_is_offered_once_per_read() -> None:
    reads = Reads()
    whole = frame(b"split")
    reads.read(whole[:4], whole[4:] + frame(b"after"))
    assert reads.offered == [] and reads.offered_parsed == [b"split"]  # (read began inside)
    assert payloads(reads.parsed) == [b"after"]


def test_a_lost_connection_reads_nothing_more() -> None:
    reads = Reads()
    reads.intake.lost()
    reads.read(frame(b"late"))
    assert reads.offered == [] and reads.parsed == []
    assert reads.intake.fast is None and reads.intake.hand_on is None


async def test_a_connection_reads_through_its_intake_which_lets_it_go_once_lost(
    app: App, make_client: MakeClient
) -> None:
    """The connection's ``data_received`` is its intake's (on uvloop, which reads it once:
    test_raw_frames.py). Once the connection is lost, the intake no longer refers to it (no
    cycle left for the garbage collector) and reads nothing more."""
    client = await make_client("c")
    assert (await client.request({"type": "ping"}))["type"] == "pong"
    [conn] = app.connections
    ws: Any = conn.ws
    assert isinstance(ws, GatedConnection)
    intake = ws._intake
    assert ws.__dict__["data_received"] == intake.data_received
    assert intake.fast is not None
    await client.close()
    for _ in range(200):
        if intake.hand_on is None:
            break
        await asyncio.sleep(0.01)
    assert intake.hand_on is None and intake.fast is None
