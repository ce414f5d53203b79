"""Frames that arrive in pieces, as a big one reaches a terminal: for tests/clients/test_tmux.py.

``python -m tests.clients.torn ROWS`` draws full screens the way the full screen does (cursor
home, then every line padded to the width, the last without a newline, so the cursor ends on
the last row), each frame's lines all ``A`` then all ``B`` and so on, in two writes with a pause
in between: a capture in the pause shows the top of the new frame over the bottom of the old.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    rows = int(sys.argv[1])
    cols = os.get_terminal_size().columns
    for frame in range(400):
        mark = "AB"[frame % 2]
        lines = [f"{mark}{row:02d} ".ljust(cols, mark) for row in range(rows)]
        text = "\x1b[H" + "\r\n".join(lines)
        half = len(text) // 2
        os.write(1, text[:half].encode())
        time.sleep(0.02)
        os.write(1, text[half:].encode())
        time.sleep(0.01)
    time.sleep(60)


if __name__ == "__main__":
    main()
