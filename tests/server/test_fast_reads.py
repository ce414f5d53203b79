"""The read fast path (:func:`server.connection.receive_data`) against websockets' own parser:
the same bytes, cut the same way, give the same events, the same answers and the same state."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import OPEN, Protocol
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from server.connection import fast_reads

MAX_SIZE = 2_000
"""The servers' limit on a message here, so that frames above it are refused."""


def _pair() -> tuple[ClientProtocol, ServerProtocol]:
    """A client and a server protocol after a real opening handshake."""
    client = ClientProtocol(parse_uri("ws://127.0.0.1/"))
    server = ServerProtocol(max_size=MAX_SIZE)
    client.send_request(client.connect())
    for data in client.data_to_send():
        server.receive_data(data)
    (request,) = server.events_received()
    assert isinstance(request, Request)
    server.send_response(server.accept(request))
    for data in server.data_to_send():
        client.receive_data(data)
    assert client.state is OPEN and server.state is OPEN
    return client, server


def _frames(kinds: list[tuple[str, int]]) -> bytes:
    """The bytes of frames of ``kinds`` (kind, payload size), masked as a client's are."""
    out = []
    for kind, size in kinds:
        data = os.urandom(size)
        if kind == "binary":
            frames = [Frame(Opcode.BINARY, data)]
        elif kind == "text":
            frames = [Frame(Opcode.TEXT, b"t" * size)]
        elif kind == "fragmented":
            half = size // 2
            frames = [Frame(Opcode.BINARY, data[:half], fin=False), Frame(Opcode.CONT, data[half:])]
        elif kind == "ping":
            frames = [Frame(Opcode.PING, data[:125])]
        elif kind == "close":
            frames = [Frame(Opcode.CLOSE, Close(1000, "bye").serialize())]
        else:
            frames = []
        out += [frame.serialize(mask=True) for frame in frames]
        if kind == "unmasked":
            out.append(Frame(Opcode.BINARY, data).serialize(mask=False))
        elif kind == "reserved":
            masked = Frame(Opcode.BINARY, data).serialize(mask=True)
            out.append(bytes([masked[0] | 0x20]) + masked[1:])
    return b"".join(out)


def _run(server: Protocol, stream: bytes, cuts: list[int]) -> list[object]:
    """Feed ``stream`` in pieces cut at ``cuts``; everything observable, in order."""
    seen: list[object] = []
    at = 0
    for cut in [*sorted(cuts), len(stream)]:
        piece = stream[at:cut]
        at = max(at, cut)
        if not piece or server.state.name == "CLOSED":
            continue
        server.receive_data(piece)
        for event in server.events_received():
            assert isinstance(event, Frame)
            seen.append((event.opcode, bytes(event.data), event.fin))
        seen.append(("writes", b"".join(server.data_to_send())))
    seen.append(("state", server.state, server.current_size, type(server.parser_exc).__name__))
    seen.append(("close", server.close_rcvd and Close(server.close_rcvd.code, "")))
    return seen


KINDS = st.sampled_from(
    ["binary"] * 6 + ["text", "fragmented", "ping", "unmasked", "reserved", "close"]
)
SIZES = st.sampled_from([0, 1, 5, 125, 126, 127, 300, 1_999, 2_000, 2_001, 65_535, 70_000])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(KINDS, SIZES), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=150_000), max_size=6),
)
def test_the_fast_path_sees_what_websockets_parser_sees(
    kinds: list[tuple[str, int]], cuts: list[int]
) -> None:
    """rules-checklist: none (transport). Whole frames, frames cut anywhere (inside a header,
    inside a mask, inside a payload), control frames, text, fragments, frames too large, bad
    masking and reserved bits, the close: events, answers (pongs, the close), state and errors
    are websockets' own."""
    _client, plain = _pair()
    stream = _frames(kinds)
    _client, fast = _pair()
    fast_reads(fast)
    assert _run(fast, stream, cuts) == _run(plain, stream, cuts)


def test_whole_binary_frames_take_the_fast_path_and_the_rest_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """rules-checklist: none (transport). The common frame never reaches websockets' parser;
    one cut inside a frame sends that frame, and only that one, through it."""
    _client, server = _pair()
    fast_reads(server)
    calls: list[int] = []
    original = Protocol.receive_data

    def parse(protocol: Protocol, data: bytes | bytearray) -> None:
        calls.append(len(data))
        original(protocol, data)

    payloads = [os.urandom(random.Random(i).randrange(1, 1_500)) for i in range(20)]
    stream = b"".join(Frame(Opcode.BINARY, p).serialize(mask=True) for p in payloads)
    monkeypatch.setattr(Protocol, "receive_data", parse)
    server.receive_data(stream)
    assert calls == []
    cut = 3  # inside the next frame's header
    more = b"".join(
        Frame(Opcode.BINARY, data).serialize(mask=True) for data in (b"x" * 200, b"y" * 10)
    )
    server.receive_data(more[:cut])
    server.receive_data(more[cut:])
    assert calls == [cut, len(more) - cut]  # the cut frame's rest and what followed
    server.receive_data(Frame(Opcode.BINARY, b"z").serialize(mask=True))
    assert len(calls) == 2  # back at a frame boundary: the fast path again
    got = [bytes(e.data) for e in server.events_received() if isinstance(e, Frame)]
    assert got == [*payloads, b"x" * 200, b"y" * 10, b"z"]
