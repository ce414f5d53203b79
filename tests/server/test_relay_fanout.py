"""The one-node fan-out of :class:`server.fanout.Fanout` (a unit test: stand-in sockets that
record what they are sent; the real sockets' path is every spectator test's)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from server import fanout as fanout_module
from server.connection import Connection, ws_frame
from server.fanout import FANOUT_AT_ONCE, FANOUT_STEP, Fanout
from server.metrics import Metrics

METRICS = Metrics()


class Socket:
    metrics = METRICS

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_framed(self, framed: bytes) -> bool:
        self.frames.append(framed)
        return True


def _members(n: int) -> tuple[set[Any], list[Socket]]:
    sockets = [Socket() for _ in range(n)]
    return set(sockets), sockets


def _frames_out() -> float:
    return METRICS.frames_out.value


def test_a_frame_is_framed_once_as_websockets_would() -> None:
    """rules-checklist: none (transport). A binary, final, unmasked frame: the header, then the
    payload's length (7 bits, 16 bits past 125 bytes), then the bytes themselves."""
    assert ws_frame(b"abc") == b"\x82\x03abc"
    big = bytes(300)
    assert ws_frame(big) == b"\x82\x7e\x01\x2c" + big


async def test_a_small_audience_is_written_at_once() -> None:
    """rules-checklist: none (transport)."""
    members, sockets = _members(FANOUT_AT_ONCE)
    fanout = Fanout(cast(set[Connection], members))
    before = _frames_out()
    fanout.send(b"r1")
    assert all(s.frames == [ws_frame(b"r1")] for s in sockets)
    assert _frames_out() - before == FANOUT_AT_ONCE


async def test_a_large_audience_is_written_in_turns_after_the_caller_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """rules-checklist: none (transport). Nothing is written before the caller returns to the
    loop; a turn ends once its time budget is spent (here none: one step of sockets per turn);
    every socket gets every frame once, in order; a socket that left before its turn is not
    written to."""
    monkeypatch.setattr(fanout_module, "FANOUT_BUDGET", 0.0)
    members, sockets = _members(3 * FANOUT_AT_ONCE + 5)
    fanout = Fanout(cast(set[Connection], members))
    fanout.send(b"r1")
    fanout.send(b"r2")
    assert not any(s.frames for s in sockets), "written before the caller went on"
    await asyncio.sleep(0)
    written = sum(len(s.frames) for s in sockets)
    assert written == FANOUT_STEP
    gone = next(s for s in sockets if not s.frames)
    members.discard(gone)
    for _ in range(200):
        await asyncio.sleep(0)
    assert fanout.backlog == 0
    assert gone.frames == []
    assert all(s.frames == [ws_frame(b"r1"), ws_frame(b"r2")] for s in sockets if s is not gone)
    fanout.send(b"r3")  # the queue is empty again: the next frame starts a new round
    for _ in range(200):
        await asyncio.sleep(0)
    assert all(s.frames[-1] == ws_frame(b"r3") for s in sockets if s is not gone)
