"""The tmux harness reads a whole frame, not the top of a new one over the bottom of the old.

A frame reaches the terminal in pieces (the 160x50 full screen is tens of kilobytes; a capture
between two pieces once made a person read a stale prompt under a newer board). Here a program
draws frames in two writes with a pause between them: some captures are torn, and
:attr:`Tmux.whole` is false for every one of them.
"""

from __future__ import annotations

import asyncio

from tests.clients.tmux import Tmux


async def test_a_capture_in_the_middle_of_a_frame_is_not_taken_for_a_whole_one() -> None:
    rows = 20
    term = await Tmux([str(rows)], cols=60, rows=rows, module="tests.clients.torn").start()
    try:
        await term.wait(r"^A00 ", what="the first frame")
        torn = whole = 0
        for _ in range(150):
            lines = await term.screen()
            marks = {line[:1] for line in lines[: rows - 1]}  # the last row may be mid-line
            if len(marks) > 1:
                torn += 1
                assert not term.whole, "a torn screen taken for a whole frame:\n" + term.text()
            elif term.whole:
                whole += 1
            await asyncio.sleep(0.003)
        assert torn, "the pauses in the middle of frames were never captured"
        assert whole, "no whole frame was ever recognised"
    finally:
        await term.close()
