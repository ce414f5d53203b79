"""The gate at TCP accept: connections per node and half-open upgrades per address.

Counted when the TCP connection is made, before a byte of HTTP is read, because the costly
attack is the connection that never finishes its upgrade (a slow or silent handshake holds a
file descriptor and a handler task for up to ``open_timeout``). Policy (STYLE 11):

- at most ``max_connections`` TCP connections on the node, upgraded or not (HTTP probes
  included, each for the instant it lasts);
- at most ``half_open_per_address`` connections of one peer address that have not finished the
  WebSocket upgrade yet. A peer that is a trusted proxy is not counted per address (its clients
  are many; the address they forward is only known once the headers are read).

A refused connection is aborted at once (``transport.abort()``: no HTTP answer, no close
handshake, no buffers), which is the cheapest answer there is. The counts are released when the
upgrade completes (:meth:`GatedConnection.upgraded`) or the connection is lost.

The same connection class also offers the read path's fast path its frames
(:class:`GatedConnection`), taking a read's first whole binary frame from the bytes when
websockets' parser is provably between two frames (:meth:`GatedConnection._take_binary`).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Callable
from ipaddress import IPv4Network, IPv6Network
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN, Event
from websockets.streams import StreamReader

try:  # (websockets' own choice: its C unmasking where it is built)
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover (a platform without a build)
    from websockets.utils import apply_mask

from protocol.errors import QuotaExceeded
from server.quotas import Quota


class Gate:
    """The counts of one node, shared by every :class:`GatedConnection` it makes."""

    def __init__(
        self,
        max_connections: int,
        half_open: Quota,
        proxies: list[IPv4Network | IPv6Network],
        refused: Callable[[str], None],
    ) -> None:
        self.max_connections = max_connections
        self.half_open = half_open
        self.proxies = proxies
        self._refused = refused
        self.open = 0
        """TCP connections admitted and not lost yet."""
        self.upgrading = 0
        """Of those, the ones still before the end of their upgrade."""

    def admit(self, peer: str) -> str | None:
        """Count a new TCP connection from ``peer``: the key it is counted under per address
        (``""``: not counted per address), or None when it must be aborted."""
        if self.open >= self.max_connections:
            self._refused("max_connections")
            return None
        key = "" if _trusted(peer, self.proxies) else peer
        if key:
            try:
                self.half_open.acquire(key)
            except QuotaExceeded:
                return None
        self.open += 1
        self.upgrading += 1
        return key

    def upgraded(self, key: str) -> None:
        self.upgrading -= 1
        if key:
            self.half_open.release(key)

    def lost(self) -> None:
        self.open -= 1

    def connection_class(self) -> type[ServerConnection]:
        """The :class:`ServerConnection` subclass that ``serve`` makes for this gate."""
        gate = self

        class Gated(GatedConnection):
            pass

        Gated.gate = gate
        return Gated


def _trusted(address: str, networks: list[IPv4Network | IPv6Network]) -> bool:
    if not networks:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


_BINARY_FIN = b"\x82"
"""The first byte of an unfragmented binary frame with no extension bits (RFC 6455 5.2)."""
_AT_EOF = StreamReader.at_eof.__code__
"""Where websockets' frame parser waits between two frames (``Protocol.parse``): it asks its
reader whether the stream ended before it reads the next frame's header."""


class GatedConnection(ServerConnection):
    """A server connection counted by its :class:`Gate` from TCP accept on.

    It also offers each socket read's first whole binary message to :attr:`fast` (the read
    path's fast path, :meth:`server.reader.Reader.now`, through the connection's
    :class:`server.reader.Offer`) when the connection's task waits in ``recv()`` with nothing
    queued: handled there, the task is not woken for it; refused
    (False), it is queued for the task as websockets does. When the read starts with that
    message's frame, it is taken from the bytes without websockets' parser
    (:meth:`_take_binary`); otherwise from the frame websockets parsed
    (:meth:`process_event`)."""

    gate: Gate
    fast: Callable[[bytes], bool] | None = None
    _key: str | None = None
    _upgrading = False
    _admitted = False
    _refused = False
    _offered = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        key = self.gate.admit(address)
        if key is None:
            # Refused before websockets sees it: no handler task, no buffers; the loop calls
            # connection_lost next, which has nothing to undo.
            self._refused = True
            transport.abort()  # type: ignore[attr-defined]
            return
        self._key, self._upgrading, self._admitted = key, True, True
        super().connection_made(transport)

    def upgraded(self) -> None:
        """The WebSocket upgrade is done: no longer half-open (idempotent)."""
        if self._upgrading:
            self._upgrading = False
            self.gate.upgraded(self._key or "")

    def connection_lost(self, exc: Any) -> None:
        if self._refused:
            return
        self.upgraded()
        if self._admitted:
            self._admitted = False
            self.gate.lost()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._offered = False
        fast = self.fast
        if fast is not None and data[:1] == _BINARY_FIN:
            taken = self._take_binary(data, fast)
            if taken:
                if taken < len(data):  # (the rest starts at a frame boundary)
                    super().data_received(data[taken:])
                return
        super().data_received(data)

    def _take_binary(self, data: bytes, fast: Callable[[bytes], bool]) -> int:
        """The fast path without websockets' parser: when this read starts with a whole
        unfragmented binary frame, masked, within the size limit, at a frame boundary of an
        open connection whose task waits in ``recv()`` with nothing queued, its payload goes to
        :attr:`fast`; the bytes it took, or 0 (nothing done: websockets parses ``data`` as
        usual). Any other frame (text, fragments, control frames, compression bits) and any
        read that starts inside a frame never comes here, so websockets sees every frame that
        could change its own state; a data frame taken here would only have been queued."""
        protocol = self.protocol
        # (``_state``: what websockets' ``state`` property returns, read without running the
        # property's Python getter; see :meth:`server.connection.Connection._direct`)
        if protocol._state is not OPEN or protocol.current_size is not None:
            return 0
        if protocol.reader.buffer:
            return 0
        waiting: Any = protocol.parser  # (the server's parse, in the frames' parse, in the wait)
        while (inner := waiting.gi_yieldfrom) is not None:
            waiting = inner
        if waiting.gi_code is not _AT_EOF:
            return 0  # (not provably between two frames: websockets' parser goes on)
        if not self._task_waits():
            return 0
        second = data[1] if len(data) > 1 else 0
        if not second & 0x80:
            return 0  # (an unmasked client frame: websockets fails the connection)
        length, start = second & 0x7F, 2
        if length == 126:
            length, start = int.from_bytes(data[2:4]), 4
        elif length == 127:
            return 0
        end = start + 4 + length
        limit = protocol.max_message_size
        if len(data) < end or (limit is not None and length > limit):
            return 0
        payload = apply_mask(data[start + 4 : end], data[start : start + 4])
        self._offered = True  # (one offer per socket read: the others take turns meanwhile)
        return end if fast(payload) else 0

    def process_event(self, event: Event) -> None:
        fast = self.fast
        if (
            fast is not None
            and not self._offered
            and isinstance(event, Frame)
            and event.opcode is Opcode.BINARY
            and event.fin
            and self.protocol._state is OPEN
        ):
            self._offered = True  # (one per socket read: the others take turns meanwhile)
            if self._task_waits() and fast(bytes(event.data)):
                return
        super().process_event(event)

    def _task_waits(self) -> bool:
        """The connection's task waits in ``recv()`` with nothing queued before a new frame.

        (``frames.queue``: the deque behind websockets' queue of received frames, whose own
        ``__len__`` is Python: read as a truth value, it ran interpreted on every socket read.
        ``tests/server/test_gate.py`` fails if websockets stops keeping them there.)"""
        received = self.recv_messages
        return received.get_in_progress and not received.frames.queue

    def eof_received(self) -> None:
        if not self._refused:
            super().eof_received()
