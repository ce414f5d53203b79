"""One relayed room (:class:`server.relay.relayed.Relayed`) in process: the owner's messages fed
in order, a stand-in node for its reads and tasks, stand-in sockets that record what they get.

What a spectator here must see: each patch as the owner encoded it, in order; after a gap, the
owner's state before any later patch; never a patch that does not fit its view.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from protocol import frames as f
from protocol.codec import unpack
from server import logging as oasis_logging
from server.connection import Connection, ws_frame
from server.metrics import Metrics
from server.relay.relayed import Relayed
from server.relay.wire import INFO, PATCH, STATE, State

METRICS = Metrics()


class Node:
    """The node a relayed room runs on (:class:`server.relay.relayed.Host`): the owner's stored
    state is :attr:`state`; spawned reads are awaited by :meth:`settle`."""

    chat_rates = (20, 60)

    def __init__(self, state: State | None) -> None:
        self.state = state
        self.log = oasis_logging.get(component="test")
        self.resyncs = 0
        self.tasks: list[asyncio.Task[Any]] = []
        self.discarded: list[Any] = []

    def spawn(self, coro: Any) -> None:
        self.tasks.append(asyncio.get_running_loop().create_task(coro))

    async def settle(self) -> None:
        while self.tasks:
            await self.tasks.pop(0)

    async def read_state(self, room: str) -> State | None:
        return self.state

    async def read_rev(self, room: str) -> int | None:
        return None if self.state is None else self.state[0]

    def discard(self, relayed: Relayed, conn: Any) -> None:
        self.discarded.append(conn)


class Socket:
    metrics = METRICS

    def __init__(self) -> None:
        self.framed: list[bytes] = []
        self.sent: list[Any] = []
        self.closed = False
        self.rooms: dict[str, None] = {}

    def send_framed(self, framed: bytes) -> bool:
        self.framed.append(framed)
        return True

    def send(self, frame: Any) -> None:
        self.sent.append(frame)

    def frames(self) -> list[dict[str, Any]]:
        """What it was written, decoded (the WebSocket header of :func:`ws_frame` cut)."""
        out = []
        for framed in self.framed:
            payload = framed[2:] if framed[1] < 126 else framed[4:]
            out.append(unpack(payload))
        return out


def patch(rev: int, ops: list[dict[str, Any]]) -> bytes:
    return f.encode_frame(f.Patch("r", rev, ops, f"h{rev}", []))


async def opened(state: State, *members: Socket) -> tuple[Relayed, Node]:
    """A relayed room that read its first view (as :meth:`Relay._open` leaves it)."""
    node = Node(state)
    relayed = Relayed(node, "r", 0.0)
    await relayed.fetch("opened")
    relayed.members.update(cast(set[Connection], set(members)))
    return relayed, node


async def test_patches_in_order_reach_the_spectators_as_the_owner_encoded_them() -> None:
    """rules-checklist: none (transport)."""
    sock = Socket()
    relayed, node = await opened((3, {"a": 1}, "h3", {}), sock)
    data = patch(4, [{"op": "replace", "path": "/a", "value": 2}])
    relayed.message(PATCH, 4, data)
    relayed.message(PATCH, 4, data)  # (a duplicate: already applied)
    await node.settle()
    assert sock.framed == [ws_frame(data)]
    assert (relayed.rev, relayed.hash, relayed.doc) == (4, "h4", {"a": 2})
    joined = relayed.joined(7, None)
    assert (joined.rev, joined.view, joined.hash) == (4, {"a": 2}, "h4")
    assert relayed.joined(8, 4).view is None  # (already at that rev: nothing to send)
    assert relayed.resyncs == 0


async def test_after_a_gap_the_owners_state_comes_before_any_later_patch() -> None:
    """rules-checklist: none (transport)."""
    sock = Socket()
    relayed, node = await opened((3, {"a": 1}, "h3", {}), sock)
    node.state = (5, {"a": 5}, "h5", {})
    relayed.message(PATCH, 5, patch(5, [{"op": "replace", "path": "/a", "value": 5}]))  # 4 lost
    relayed.message(PATCH, 6, patch(6, [{"op": "replace", "path": "/a", "value": 6}]))
    await node.settle()
    got = sock.frames()
    assert [(g["type"], g["rev"]) for g in got] == [("state", 5), ("patch", 6)]
    assert got[0]["view"] == {"a": 5} and got[0]["hash"] == "h5"
    assert (relayed.rev, relayed.doc) == (6, {"a": 6})
    assert relayed.resyncs == node.resyncs == 1


async def test_a_state_notice_ahead_of_the_relay_makes_it_read_the_state() -> None:
    """rules-checklist: none (transport). A lost *last* patch: no later patch shows the gap."""
    sock = Socket()
    relayed, node = await opened((3, {"a": 1}, "h3", {}), sock)
    node.state = (9, {"a": 9}, "h9", {"spectator_chat": False})
    relayed.message(STATE, 9, b"")
    await node.settle()
    assert [(g["type"], g["rev"]) for g in sock.frames()] == [("state", 9)]
    assert relayed.info == {"spectator_chat": False}


async def test_a_patch_that_does_not_fit_is_never_sent_and_the_owners_state_replaces_it() -> None:
    """rules-checklist: none (transport). The owner's state is at the rev of the patch that did
    not fit (it is written before each patch is published): the relay adopts it even so."""
    sock = Socket()
    relayed, node = await opened((3, {"a": 1}, "h3", {}), sock)
    node.state = (4, {"b": 4}, "h4", {})
    relayed.message(PATCH, 4, patch(4, [{"op": "remove", "path": "/missing"}]))
    await node.settle()
    assert [(g["type"], g["rev"], g["view"]) for g in sock.frames()] == [("state", 4, {"b": 4})]
    relayed.message(PATCH, 5, patch(5, [{"op": "add", "path": "/c", "value": 5}]))
    assert (relayed.rev, relayed.doc) == (5, {"b": 4, "c": 5})


async def test_spectators_who_asked_early_are_answered_with_the_first_view() -> None:
    """rules-checklist: none (transport)."""
    early, late = Socket(), Socket()
    late.closed = True
    node = Node((3, {"a": 1}, "h3", {}))
    relayed = Relayed(node, "r", 0.0)
    relayed.waiting[cast(Connection, early)] = (11, None)
    relayed.waiting[cast(Connection, late)] = (12, None)
    await relayed.fetch("opened")
    assert [(j.id, j.rev, j.view) for j in early.sent] == [(11, 3, {"a": 1})]
    assert relayed.members == {early} and node.discarded == [late]


async def test_info_is_kept_and_forwarded_at_once() -> None:
    """rules-checklist: none (transport)."""
    sock = Socket()
    relayed, _ = await opened((3, {"a": 1}, "h3", {}), sock)
    relayed.delay = 30.0  # (info is not delayed, as on the owner)
    data = f.encode_frame(f.RoomInfo("r", {"room": "r", "spectator_chat": False}))
    relayed.message(INFO, 3, data)
    assert sock.framed == [ws_frame(data)]
    assert relayed.info == {"room": "r", "spectator_chat": False}
