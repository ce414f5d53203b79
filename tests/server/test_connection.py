"""A connection's send path: every frame written pre-framed straight to its transport, one whole
frame per write, in order, over a real socket to a real client (:mod:`server.connection`)."""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from websockets.asyncio.server import broadcast
from websockets.frames import Frame, Opcode
from websockets.protocol import CLOSED, CLOSING, CONNECTING, OPEN
from websockets.server import ServerProtocol

from games import registry
from games.base import JSON, Choice, Decision, Event, Game, Result
from games.rng import Rng
from protocol.codec import encode, unpack
from server import app as app_module
from server import connection, reader
from server.app import App
from server.connection import Connection, ws_frame
from server.limits import SendBuffer, TokenBucket
from server.main import open_store, start_rooms
from server.metrics import Metrics
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG, MakeApp, MakeClient
from tests.services import RedisServer

WIDE = 70_000
"""Bytes of the wide game's view: past 64 KiB, so its frames take the 64-bit length header."""


@dataclass
class WideState:
    turns: int


class Wide(Game[WideState]):
    """Endless one-seat game whose shared view is a 70 kB string that changes every turn."""

    name = "wide"
    title = "Wide"
    min_players = 1
    max_players = 1

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> WideState:
        return WideState(0)

    def decision(self, state: WideState) -> Decision | None:
        return Decision(0, "grow", [{"kind": "grow"}])

    def apply(self, state: WideState, choice: Choice) -> list[Event]:
        state.turns += 1
        return []

    def shared_view(self, state: WideState) -> dict[str, JSON]:
        return {"blob": f"{state.turns:08d}" + "w" * WIDE, "turns": state.turns}

    def own_view(self, state: WideState, seat: int) -> dict[str, JSON]:
        return {"seat": seat}

    def result(self, state: WideState) -> Result | None:
        return None

    def dump(self, state: WideState) -> dict[str, JSON]:
        return {"turns": state.turns}

    def load(self, data: Mapping[str, JSON]) -> WideState:
        return WideState(int(data["turns"]))  # type: ignore[arg-type]

    def hidden_variant(self, state: WideState, viewer: int | None, rng: Rng) -> WideState:
        return copy.deepcopy(state)


registry.register(Wide())


def _frame_sizes(data: bytes) -> list[int]:
    """The total size of each whole frame in ``data`` (unmasked, as a server writes them)."""
    sizes = []
    at = 0
    while at < len(data):
        n = data[at + 1] & 0x7F
        head = 2
        if n == 126:
            n, head = int.from_bytes(data[at + 2 : at + 4], "big"), 4
        elif n == 127:
            n, head = int.from_bytes(data[at + 2 : at + 10], "big"), 10
        sizes.append(head + n)
        at += head + n
    assert at == len(data), "a write ends inside a frame"
    return sizes


def _split(data: bytes) -> list[bytes]:
    """The whole frames of one write, in order."""
    frames, at = [], 0
    for size in _frame_sizes(data):
        frames.append(data[at : at + size])
        at += size
    return frames


def _payload(frame: bytes) -> bytes:
    """A whole unmasked frame's payload."""
    n = frame[1] & 0x7F
    return frame[2 + {126: 2, 127: 8}.get(n, 0) :]


class Writes:
    """Records each ``transport.write`` of one server-side connection, then passes it on."""

    def __init__(self, conn: Connection) -> None:
        transport: Any = conn.ws.transport
        self.real = transport.write
        self.writes: list[bytes] = []
        self.since = 0
        """How many frames the client had received before (set by the test)."""
        transport.write = self

    def __call__(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))
        self.real(data)


def _spy_on_broadcast(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Record every frame that goes through websockets' ``broadcast`` (the fallback path)."""
    fallbacks: list[bytes] = []
    real_broadcast = broadcast

    def spy(conns: Any, data: bytes) -> None:
        fallbacks.append(data)
        real_broadcast(conns, data)

    monkeypatch.setattr(connection, "broadcast", spy)
    return fallbacks


async def _received(client: Client, frames: int) -> None:
    await client.until(lambda: len(client.raw) >= frames)


def _conn(app: App, name: str) -> Connection:
    return next(c for c in app.connections if c.client == name)


def test_a_frame_is_framed_as_websockets_frames_it_at_every_length_boundary() -> None:
    """rules-checklist: none (transport). The 7-bit, 16-bit and 64-bit length forms, on both
    sides of each boundary, and every high byte of a 16-bit length (its headers are tables)."""
    for n in (0, 1, 125, 126, 127, 255, 256, *range(300, 65_536, 251), 65_535, 65_536, 70_000):
        data = os.urandom(n)
        assert ws_frame(data) == Frame(Opcode.BINARY, data).serialize(mask=False), n


async def test_every_frame_is_written_whole_and_in_order_straight_to_the_transport(
    make_app: MakeApp, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (transport). Replies, acks, joined, patches (7-bit, 16-bit and
    64-bit lengths) and websockets' own ping reach a real client intact and in order, each
    ``transport.write`` one whole frame (an act's patch and its ack: two, in one write), never
    through websockets' ``broadcast``; the client offers permessage-deflate and the server
    negotiates none."""
    app = await make_app()
    fallbacks = _spy_on_broadcast(monkeypatch)
    player = await make_client("player", target=app)
    watcher = await make_client("watcher", target=app)
    assert player.ws.protocol.extensions == []  # offered by the client, not negotiated
    seat_writes = Writes(_conn(app, "player"))
    watch_writes = Writes(_conn(app, "watcher"))
    seat_writes.since, watch_writes.since = len(player.raw), len(watcher.raw)
    frames_before = app.metrics.frames_out.value

    # Pipelined requests: the answers come back in the order the requests were sent.
    start = len(player.frames)
    ids = [player.new_id() for _ in range(200)]
    for rid in ids:
        await player.send({"type": "ping", "id": rid})
    await player.until(lambda: len(player.frames) >= start + len(ids))
    assert [f["id"] for f in player.frames[start:]] == ids
    assert all(f["type"] == "pong" for f in player.frames[start:])

    room = (await player.request({"type": "create", "game": "wide", "players": 1}))["room"]
    await player.request({"type": "join", "room": room})
    await player.request({"type": "start", "room": room})
    await watcher.request({"type": "spectate", "room": room})
    await _conn(app, "player").ws.ping()  # websockets' own frame, between two of ours
    for _ in range(5):
        rev = player.rev(room)
        ack = await player.request({"type": "act", "room": room, "rev": rev, "choice": 0})
        assert ack["type"] == "ack", ack
    await player.until(lambda: player.rev(room) == rev + 1)
    await watcher.until(lambda: watcher.rev(room) == rev + 1)
    game = player.view(room)["shared"]["game"]
    assert game == watcher.view(room)["shared"]["game"]
    assert game["turns"] == 5 and len(game["blob"]) == 8 + WIDE

    assert fallbacks == []
    for record, client in ((seat_writes, player), (watch_writes, watcher)):
        frames = [_split(data) for data in record.writes]  # (each write ends on a frame's end)
        ours = [f for split in frames for f in split if f[0] == 0x82]  # binary, final
        assert all(len(split) == 1 or f[0] == 0x82 for split in frames for f in split)
        await _received(client, record.since + len(ours))
        assert ours == [ws_frame(raw) for raw in client.raw[record.since :]]
    heads = {data[1] & 0x7F for data in seat_writes.writes if data[0] == 0x82}
    assert {127} <= heads and any(n < 126 for n in heads)  # 64-bit and 7-bit lengths
    assert any(data[0] == 0x89 for data in seat_writes.writes)  # the ping, whole, on its own
    # The frames of one command for one socket went in one write: each act's patch and ack,
    # the join's joined and the room frame that announced it, the start's room frame and ack.
    kinds = [
        [unpack(_payload(f))["type"] for f in _split(w)] for w in seat_writes.writes if w[0] == 0x82
    ]
    together = (["patch", "ack"], ["joined", "room"], ["room", "ack"])
    assert kinds.count(["patch", "ack"]) == 5
    assert kinds.count(["joined", "room"]) == 1 and kinds.count(["room", "ack"]) == 1
    assert all(len(k) == 1 for k in kinds if k not in together)
    assert all(len(_split(w)) == 1 for w in watch_writes.writes)
    seat_frames = sum(len(_split(w)) for w in seat_writes.writes if w[0] == 0x82)
    # (the spectators' fan-out counts its own frames, once per fan-out: the seat's only here)
    assert app.metrics.frames_out.value - frames_before >= seat_frames
    assert not player.failures and not watcher.failures


async def test_a_closing_connection_falls_back_to_websockets_and_closes_cleanly(
    make_app: MakeApp, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (transport). Once the close handshake has started nothing is
    written straight to the transport (websockets skips it: nothing may follow a close frame),
    and a graceful stop's ``bye`` arrives before the close frame of 1001."""
    app = await make_app()
    fallbacks = _spy_on_broadcast(monkeypatch)
    client = await make_client("leaving", target=app)
    conn = _conn(app, "leaving")
    writes = Writes(conn)
    await app.stop()
    closed = await asyncio.wait_for(asyncio.shield(client.closed), 5)
    assert closed[0] == 1001
    assert client.frames[-1]["type"] == "bye"
    assert [data[0] for data in writes.writes][:2] == [0x82, 0x88]  # bye, then the close
    assert fallbacks == []
    before = len(writes.writes)
    assert conn.send_framed(ws_frame(b"late")) is False
    conn.state = connection.ConnState.READY  # as if a room still wrote to it, late
    conn.send_bytes(b"late")
    assert fallbacks == [b"late"]  # handed to websockets, which skips a socket not open
    assert len(writes.writes) == before


class _Answers:
    """Records, in the order they are written, the ``id`` of every frame written to the
    transports of some server-side connections, as ``(client, id)``."""

    def __init__(self, *conns: Connection) -> None:
        self.order: list[tuple[str, Any]] = []
        for conn in conns:
            transport: Any = conn.ws.transport
            transport.write = self._spy(conn.client, transport.write)

    def _spy(self, name: str, real: Any) -> Any:
        def write(data: bytes | bytearray | memoryview) -> None:
            for frame in _split(bytes(data)):
                if frame[0] & 0x0F != Opcode.BINARY.value:  # (the close frame at the end)
                    continue
                answer = unpack(_payload(frame))
                if isinstance(answer, Mapping) and "id" in answer:
                    self.order.append((name, answer["id"]))
            real(data)

        return write


async def test_a_connection_with_frames_queued_takes_turns_with_the_others(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    """rules-checklist: none (transport). Ten frames that arrive at once on one socket and one
    on another: the other's is answered before the first socket's last one (each connection
    yields after a frame that has another behind it), and every frame is answered in order."""
    app = await make_app()
    busy = await make_client("busy", target=app)
    other = await make_client("other", target=app)
    answers = _Answers(_conn(app, "busy"), _conn(app, "other"))
    start = len(busy.frames)
    # Written without yielding to the loop: the server finds both sockets' frames at once.
    for rid in range(1, 11):
        busy.ws.protocol.send_binary(encode({"type": "ping", "id": rid}))
    busy.ws.send_data()
    other.ws.protocol.send_binary(encode({"type": "ping", "id": 99}))
    other.ws.send_data()
    await busy.until(lambda: len(busy.frames) >= start + 10)
    await other.wait_for(lambda f: f.get("id") == 99)
    assert [f["id"] for f in busy.frames[start:]] == list(range(1, 11))
    assert answers.order.index(("other", 99)) < answers.order.index(("busy", 10))


def test_websockets_keeps_its_protocol_state_in_the_attribute_the_send_path_reads() -> None:
    """rules-checklist: none (transport). ``Connection._direct`` reads ``protocol._state``, not
    websockets' ``state`` property (interpreted, on every frame): the property must stay a
    plain read of that attribute, and every change of state go through it, or a frame of ours
    could follow a close frame."""
    protocol = ServerProtocol()
    assert protocol.state is CONNECTING and protocol._state is protocol.state
    protocol.state = OPEN  # (what the handshake does)
    assert protocol._state is OPEN
    protocol.send_close(1000)
    assert protocol.state is CLOSING and protocol._state is CLOSING
    protocol.receive_eof()
    assert protocol.state is CLOSED and protocol._state is CLOSED


class _Transport:
    """A transport whose peer reads nothing past ``takes`` bytes: the rest stays buffered."""

    def __init__(self, takes: int) -> None:
        self.takes = takes
        self.writes: list[bytes] = []
        self.buffered = 0

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        taken = min(self.takes, len(data))
        self.takes -= taken
        self.buffered += len(data) - taken

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return False


def _stand_in(limit: int, takes: int) -> tuple[Connection, _Transport]:
    transport = _Transport(takes)
    protocol = SimpleNamespace(_state=OPEN, extensions=[], writes=[])
    ws: Any = SimpleNamespace(protocol=protocol, transport=transport)
    conn = Connection(
        "s", ws, "ip", TokenBucket(10, 10), SendBuffer(limit, 60.0), Metrics(), 1.0, lambda c: None
    )
    conn.state = connection.ConnState.READY

    def spawn(coro: Any) -> None:  # (no loop: the drain watcher is not run)
        coro.close()

    conn.spawner = spawn
    return conn, transport


def test_a_patch_and_its_ack_are_one_write_only_where_frame_by_frame_would_not_lag() -> None:
    """rules-checklist: none (transport). Two frames for one socket (a patch and its ack) go in
    one write while the buffer stays within the limit after both; otherwise frame by frame, the
    limit checked after each: the one that passes it makes the connection lag and the next is
    dropped, as two sends would."""
    conn, transport = _stand_in(limit=100, takes=10_000)
    assert conn.send_bytes(b"p" * 40, b"a" * 40)
    assert transport.writes == [ws_frame(b"p" * 40) + ws_frame(b"a" * 40)]

    # The peer reads nothing: both fit within the limit, still one write, not lagging.
    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_bytes(b"p" * 40, b"a" * 40)
    assert len(transport.writes) == 1 and not conn.send_buffer.lagging

    # Past the limit with the second: one by one, the first passes it, the second is dropped.
    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_bytes(b"p" * 120, b"a" * 10)
    assert transport.writes == [ws_frame(b"p" * 120)] and conn.send_buffer.lagging

    # The first within it, the second past it: two writes, lagging after the second.
    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_bytes(b"p" * 50, b"a" * 60)
    assert transport.writes == [ws_frame(b"p" * 50), ws_frame(b"a" * 60)]
    assert conn.send_buffer.lagging
    assert not conn.send_bytes(b"late")


def test_the_frames_of_one_command_for_one_socket_are_one_write_within_the_limit() -> None:
    """rules-checklist: none (transport). Any number of frames for one socket (what one command
    of a room sends it: a patch, the end's room frame, the ack) go in one write, in order, while
    the buffer stays within the limit after the last; otherwise frame by frame, as separate
    sends would: the one that passes the limit makes the connection lag, the rest are dropped."""
    frames = [b"p" * 30, b"r" * 20, b"a" * 10]
    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_all(frames)
    assert transport.writes == [b"".join(ws_frame(data) for data in frames)]
    assert conn.metrics.frames_out.value == 3 and conn.metrics.bytes_out.value == 60

    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_all([b"p" * 90, b"r" * 20, b"a" * 10])
    assert transport.writes == [ws_frame(b"p" * 90), ws_frame(b"r" * 20)]
    assert conn.send_buffer.lagging and conn.metrics.frames_out.value == 2

    conn, transport = _stand_in(limit=100, takes=0)
    assert conn.send_all([b"only"])
    assert transport.writes == [ws_frame(b"only")]


def _count_fast_path(monkeypatch: pytest.MonkeyPatch) -> dict[bool, int]:
    """How many frames the fast path took (True) and left to the connection's task (False).

    (Counted around each connection's :class:`server.reader.Offer`, which the app, interpreted,
    makes by name: compiled, the offer calls ``Reader.now`` natively, where a patch of the
    class would not be seen.)"""
    counts = {True: 0, False: 0}
    real = reader.Offer

    class Counted:
        def __init__(self, on: reader.Reader, conn: Connection, log: Any) -> None:
            self.offer = real(on, conn, log)

        def take(self, data: bytes) -> bool:
            taken = self.offer.take(data)
            counts[taken] += 1
            return taken

    monkeypatch.setattr(app_module, "Offer", Counted)
    return counts


async def test_a_frame_is_handled_in_the_socket_read_unless_it_must_await(
    make_app: MakeApp, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (transport). While a connection's task waits for its next frame,
    a ping or a room request is served in the socket read (the fast path), answered in order;
    a create (it awaits the store) goes to the task, as does a frame before hello."""
    counts = _count_fast_path(monkeypatch)
    app = await make_app()
    late = await make_client("late", target=app, hello=False)
    refused = await late.request({"type": "ping"})
    assert (refused["type"], refused["code"]) == ("error", "not_allowed")
    client = await make_client("fast", target=app)
    before = dict(counts)
    for _ in range(5):
        assert (await client.request({"type": "ping"}))["type"] == "pong"
    assert counts[True] - before[True] == 5 and counts[False] == before[False]
    created = await client.request({"type": "create", "game": "tiny", "players": 2})
    assert created["type"] == "ack"
    assert counts[False] == before[False] + 1
    joined = await client.request({"type": "join", "room": created["room"], "name": "a"})
    assert joined["type"] == "joined" and counts[True] - before[True] == 6


async def test_a_frame_over_the_rate_limit_goes_to_the_task_which_closes(
    make_app: MakeApp, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (transport). Pings one at a time (each one taken by the fast path)
    until the bucket is empty: the next one is left to the connection's task, which answers
    rate_limited and closes with 1008, as it always did."""
    counts = _count_fast_path(monkeypatch)
    strict = await make_app(rate_per_second=0.01, rate_burst=4)
    client = await make_client("paced", target=strict)  # (its hello took one token)
    for _ in range(3):
        assert (await client.request({"type": "ping"}))["type"] == "pong"
    assert counts[True] == 3
    await client.send({"type": "ping"})
    error = await client.wait_for(lambda f: f.get("code") == "rate_limited")
    assert error["type"] == "error" and counts == {True: 3, False: 2}
    closed = await asyncio.wait_for(asyncio.shield(client.closed), 10)
    assert closed[0] == 1008, closed


async def test_a_node_on_redis_serves_its_own_rooms_in_the_socket_read(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rules-checklist: none (transport). On Redis, with the cluster and the relay set up as
    ``oasis-server`` sets them up, a request of a room this node serves takes the fast path
    like in memory (the cluster would not redirect it, nor the relay serve it); a request of a
    room it does not serve goes to the task, which asks the store (here: no such room)."""
    counts = _count_fast_path(monkeypatch)
    store = open_store(TEST_CONFIG, redis_server.url)
    await store.start()
    app = App(TEST_CONFIG, store)
    await start_rooms(app, asyncio.Event())
    await app.start()
    assert app.cluster is not None and app.relay is not None
    client = await Client.open(f"ws://127.0.0.1:{app.port}/", "node")
    try:
        created = await client.request({"type": "create", "game": "tiny", "players": 2})
        assert created["type"] == "ack"
        before = dict(counts)
        joined = await client.request({"type": "join", "room": created["room"], "name": "a"})
        assert joined["type"] == "joined"
        assert counts == {True: before[True] + 1, False: before[False]}
        missing = await client.request({"type": "join", "room": "r-not-here", "name": "b"})
        assert (missing["type"], missing["code"]) == ("error", "not_found")
        assert counts == {True: before[True] + 1, False: before[False] + 1}
    finally:
        await client.close()
        await app.stop()
