"""A command in a tmux window of a fixed size: read its screen as a person sees it, type keys.

Each :class:`Tmux` runs its own tmux server on a private socket (``-S`` in a temporary
directory, ``-f /dev/null``: no user configuration), with one window of exactly ``cols`` x
``rows`` running the command, followed by ``[exited N]`` so the lines a program prints when it
ends stay readable. :meth:`Tmux.screen` is ``capture-pane -J``: wrapped lines are joined, so a
line the program drew too long shows as one line longer than the width. Waits poll the screen
until a condition holds (the screen is the event), never for a fixed time. ``scripts/test``
installs tmux where it is missing.

A frame is written in pieces: the terminal reads a big one (160x50 with its colours is tens of
kilobytes) a few kilobytes at a time, and a capture can land between two pieces, showing the
top of the new frame over the bottom of the old one (under load, the same torn screen even twice
in a row). So each capture also reads the cursor, in the same tmux command (tmux runs a command
list without reading the pane in between): the full screen draws from the top line down and ends
on the last line, so a frame is whole when the cursor is on the last row (:attr:`Tmux.whole`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

POLL = 0.05


class Tmux:
    def __init__(
        self, args: Sequence[str], *, cols: int = 80, rows: int = 24, module: str = "oasis"
    ) -> None:
        self.args = list(args)
        self.module = module
        """What runs: ``python -m <module> <args>``."""
        self.cols, self.rows = cols, rows
        self._dir = tempfile.TemporaryDirectory(prefix="oasis-tmux-")
        self.socket = str(Path(self._dir.name) / "tmux.sock")
        self.last: list[str] = []
        self.cursor = (0, 0)
        """Where the cursor was at the last capture (column, row)."""
        self.env = {
            **os.environ,
            "TERM": "xterm-256color",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("NO_COLOR", None)
        self.env.pop("TMUX", None)
        for name in ("COLUMNS", "LINES"):
            self.env.pop(name, None)

    async def tmux(self, *args: str, check: bool = True) -> str:
        proc = await asyncio.create_subprocess_exec(
            "tmux", "-S", self.socket, "-f", "/dev/null", *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )  # fmt: skip
        out, err = await proc.communicate()
        if check and proc.returncode:
            raise AssertionError(f"tmux {' '.join(args)} failed: {err.decode()}")
        return out.decode(errors="replace")

    async def start(self) -> Tmux:
        command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", self.module, *self.args])
        shell = f'{command}; echo "[exited $?]"; sleep 3600'
        await self.tmux(
            "new-session", "-d", "-s", "main", "-x", str(self.cols), "-y", str(self.rows), shell
        )
        await self.tmux("set-option", "-t", "main", "status", "off")
        return self

    async def screen(self) -> list[str]:
        text = await self.tmux(
            "capture-pane", "-p", "-J", "-t", "main", ";",
            "display-message", "-p", "-t", "main", "#{cursor_x} #{cursor_y}",
        )  # fmt: skip
        lines = [line.rstrip() for line in text.split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        x, y = lines.pop().split() if lines else ("0", "0")
        self.cursor = (int(x), int(y))
        self.last = lines
        return lines

    @property
    def whole(self) -> bool:
        """The last capture shows a whole frame of the full screen: the cursor ended on the last
        row (a frame is drawn top down; a capture in the middle of one has it higher up)."""
        return self.cursor[1] == self.rows - 1

    def text(self) -> str:
        return "\n".join(self.last)

    async def wait(
        self, found: Callable[[list[str]], bool] | str, wait: float = 30.0, what: str = ""
    ) -> list[str]:
        """The first screen for which ``found`` holds (a regex: that it matches)."""
        if isinstance(found, str):
            regex = re.compile(found, re.M)
            what = what or found

            def found_fn(lines: list[str]) -> bool:
                return bool(regex.search("\n".join(lines)))

            test = found_fn
        else:
            test = found
        deadline = time.monotonic() + wait
        while True:
            lines = await self.screen()
            if test(lines):
                return lines
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no {what or 'screen'} within {wait} s; screen:\n{self.text()}"
                )
            await asyncio.sleep(POLL)

    async def type(self, text: str, *, enter: bool = True) -> None:
        if text:
            await self.tmux("send-keys", "-t", "main", "-l", text)
        if enter:
            await self.tmux("send-keys", "-t", "main", "Enter")

    async def key(self, *names: str) -> None:
        """tmux key names: ``C-c``, ``PageDown``, ``Escape``."""
        await self.tmux("send-keys", "-t", "main", *names)

    async def title(self) -> str:
        return (await self.tmux("display-message", "-p", "-t", "main", "#{pane_title}")).strip()

    async def buffers(self) -> str:
        return await self.tmux("list-buffers", check=False)

    async def close(self) -> None:
        await self.tmux("kill-server", check=False)
        self._dir.cleanup()
