"""The one-node fan-out of :class:`server.spectators.Fanout` (a unit test: stand-in sockets that
record what they are sent)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from server.connection import Connection
from server.spectators import FANOUT_CHUNK, Fanout


class Socket:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_bytes(self, data: bytes) -> bool:
        self.frames.append(data)
        return True


def _members(n: int) -> tuple[set[Any], list[Socket]]:
    sockets = [Socket() for _ in range(n)]
    return set(sockets), sockets


async def test_a_small_audience_is_written_at_once() -> None:
    """rules-checklist: none (transport)."""
    members, sockets = _members(FANOUT_CHUNK)
    fanout = Fanout(cast(set[Connection], members))
    fanout.send(b"r1")
    assert all(s.frames == [b"r1"] for s in sockets)


async def test_a_large_audience_is_written_in_chunks_after_the_caller_in_order() -> None:
    """rules-checklist: none (transport). Nothing is written before the caller returns to the
    loop; one chunk per loop turn; every socket gets every frame once, in order; a socket that
    left before its chunk is not written to."""
    members, sockets = _members(3 * FANOUT_CHUNK + 5)
    fanout = Fanout(cast(set[Connection], members))
    fanout.send(b"r1")
    fanout.send(b"r2")
    assert not any(s.frames for s in sockets), "written before the caller went on"
    await asyncio.sleep(0)
    written = sum(len(s.frames) for s in sockets)
    assert written == FANOUT_CHUNK
    gone = next(s for s in sockets if not s.frames)
    members.discard(gone)
    for _ in range(20):
        await asyncio.sleep(0)
    assert fanout.backlog == 0
    assert gone.frames == []
    assert all(s.frames == [b"r1", b"r2"] for s in sockets if s is not gone)
    fanout.send(b"r3")  # the queue is empty again: the next frame starts a new round
    for _ in range(20):
        await asyncio.sleep(0)
    assert all(s.frames[-1] == b"r3" for s in sockets if s is not gone)
