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

The same connection class gives its socket reads to the read path's fast path first
(:class:`server.reader.Intake`: a read's first whole binary frame taken from the bytes when
websockets' parser is provably between two frames).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Callable
from ipaddress import IPv4Network, IPv6Network
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.protocol import Event

from protocol.errors import QuotaExceeded
from server.quotas import Quota
from server.reader import Intake


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


class GatedConnection(ServerConnection):
    """A server connection counted by its :class:`Gate` from TCP accept on.

    Its socket reads go to its :class:`server.reader.Intake` (compiled), which offers each
    read's first whole binary message to :attr:`fast` (the read path's fast path,
    :meth:`server.reader.Reader.now`, through the connection's :class:`server.reader.Offer`)
    and hands every other byte to websockets: the intake's ``data_received`` is this
    connection's (an instance attribute: the event loop reads it when it makes the
    transport, after ``__init__``, and calls it at every read without a Python frame of this
    class). A frame websockets parsed is offered by :meth:`process_event`."""

    gate: Gate
    _key: str | None = None
    _upgrading = False
    _admitted = False
    _refused = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._intake = Intake(self.protocol, super().data_received)
        self.data_received = self._intake.data_received  # type: ignore[method-assign]

    @property
    def fast(self) -> Callable[[bytes], bool] | None:
        """The read path's fast path (None: every frame goes to the connection's task)."""
        return self._intake.fast

    @fast.setter
    def fast(self, fast: Callable[[bytes], bool] | None) -> None:
        self._intake.fast = fast

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        key = self.gate.admit(address)
        if key is None:
            # Refused before websockets sees it: no handler task, no buffers; the loop calls
            # connection_lost next, which has nothing to undo.
            self._refused = True
            self._intake.lost()  # (reads nothing: websockets' parser never sees a byte)
            transport.abort()  # type: ignore[attr-defined]
            return
        self._key, self._upgrading, self._admitted = key, True, True
        super().connection_made(transport)
        self._intake.made(self.recv_messages)

    def upgraded(self) -> None:
        """The WebSocket upgrade is done: no longer half-open (idempotent)."""
        if self._upgrading:
            self._upgrading = False
            self.gate.upgraded(self._key or "")

    def connection_lost(self, exc: Any) -> None:
        if self._refused:
            return
        self._intake.lost()  # (it lets go of this connection: no reference cycle left)
        self.upgraded()
        if self._admitted:
            self._admitted = False
            self.gate.lost()
        super().connection_lost(exc)

    def process_event(self, event: Event) -> None:
        if not self._intake.parsed(event):
            super().process_event(event)

    def eof_received(self) -> None:
        if not self._refused:
            super().eof_received()
