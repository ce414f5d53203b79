"""server/trim.py: memory handed back after rooms close, once per burst, never on the loop."""

from __future__ import annotations

import asyncio

from server.trim import Trimmer


async def test_a_burst_of_closes_is_trimmed_once_after_it_and_again_after_the_next() -> None:
    trimmer = Trimmer(lambda: 0, interval=0.01)
    if trimmer._trim is None:  # not glibc: nothing to give back, nothing scheduled
        trimmer.room_closed()
        assert trimmer._pending is None
        return
    for _ in range(50):
        trimmer.room_closed()
    assert trimmer.trims == 0  # (a second later: one trim serves the whole burst)
    async with asyncio.timeout(5):
        while trimmer.trims == 0:  # noqa: ASYNC110 (a timer of the trimmer's own)
            await asyncio.sleep(0.05)
        assert trimmer._running is not None
        await trimmer._running  # malloc_trim ran, in a thread
    assert (trimmer.trims, trimmer.closed) == (1, 0)
    trimmer.room_closed()
    async with asyncio.timeout(5):
        while trimmer.trims == 1:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    trimmer.stop()
