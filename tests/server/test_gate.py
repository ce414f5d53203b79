"""The gate's counts as units (the real sockets are in test_quotas.py): per address, per node,
and a trusted proxy's connections counted only per node."""

from __future__ import annotations

from collections import deque

from websockets.asyncio.messages import Assembler
from websockets.frames import Frame, Opcode

from server.forwarded import parse_networks
from server.gate import Gate
from server.quotas import Quota


def _gate(
    max_connections: int = 10, half_open: int = 2, proxies: str = ""
) -> tuple[Gate, list[str]]:
    """A gate and the list of the limits it refused connections by."""
    refused: list[str] = []
    gate = Gate(
        max_connections,
        Quota("half_open_per_address", half_open, "upgrading", refused.append),
        parse_networks(proxies),
        refused.append,
    )
    return gate, refused


def test_half_open_connections_are_counted_per_address_until_upgraded() -> None:
    gate, refused = _gate()
    keys = [gate.admit("10.0.0.1"), gate.admit("10.0.0.1")]
    assert keys == ["10.0.0.1", "10.0.0.1"]
    assert gate.admit("10.0.0.1") is None
    assert gate.admit("10.0.0.2") == "10.0.0.2"  # another address has its own count
    gate.upgraded("10.0.0.1")
    assert gate.admit("10.0.0.1") == "10.0.0.1"
    assert refused == ["half_open_per_address"]
    assert gate.open == 4 and gate.upgrading == 3


def test_connections_per_node_count_upgraded_ones_until_lost() -> None:
    gate, refused = _gate(max_connections=2, half_open=5)
    for _ in range(2):
        gate.upgraded(gate.admit("10.0.0.1") or "")
    assert gate.admit("10.0.0.3") is None
    assert refused == ["max_connections"]
    gate.lost()
    assert gate.admit("10.0.0.3") == "10.0.0.3"


def test_a_trusted_proxy_is_counted_per_node_only() -> None:
    gate, _ = _gate(half_open=1, proxies="10.9.0.0/16")
    assert [gate.admit("10.9.0.7") for _ in range(3)] == ["", "", ""]
    assert gate.upgrading == 3 and gate.half_open.held("10.9.0.7") == 0
    assert gate.admit("10.0.0.1") == "10.0.0.1" and gate.admit("10.0.0.1") is None


async def test_websockets_keeps_its_received_frames_in_the_deque_the_fast_path_reads() -> None:
    """rules-checklist: none (transport). ``GatedConnection._task_waits`` (the read path's fast
    path, on every socket read) and ``Connection.frames_waiting`` read the deque behind
    websockets' queue of received frames (``recv_messages.frames.queue``), not the queue's
    Python ``__len__``: the deque must stay where they read it and hold every frame queued, or
    the fast path could take a frame ahead of one the connection's task has not read yet."""
    assembler = Assembler()
    frames = assembler.frames
    assert not frames.queue and len(frames) == 0
    assembler.put(Frame(Opcode.BINARY, b"one"))
    assembler.put(Frame(Opcode.BINARY, b"two"))
    assert isinstance(frames.queue, deque)
    assert len(frames.queue) == len(frames) == 2
    assert await assembler.get() == b"one"
    assert len(frames.queue) == len(frames) == 1
