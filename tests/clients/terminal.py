"""A command in a pseudo-terminal, driven from an asyncio test: expect text, type lines.

Stdlib only (``pty``, ``os``, ``subprocess``): the child gets a real terminal of a fixed size, so
rich draws exactly as it would for a person. Output is read with ``loop.add_reader`` on the
master side, decoded, and stripped of ANSI escapes before matching, so the in-process server in
the same event loop keeps running while the test waits. Waits are for text, never for time.
"""

from __future__ import annotations

import asyncio
import codecs
import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Sequence

ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?|\r"
)


class Terminal:
    def __init__(self, args: Sequence[str], *, cols: int = 140, rows: int = 60) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": str(cols),
            "LINES": str(rows),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "oasis", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.fd = master
        self.text = ""
        self.raw = b""
        """Every byte the program wrote, escapes included."""
        self.pos = 0
        self.eof = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._held = ""
        self._data = asyncio.Event()
        asyncio.get_running_loop().add_reader(self.fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        self.raw += chunk
        if not chunk:
            self.eof = True
            asyncio.get_running_loop().remove_reader(self.fd)
            self.text += ANSI.sub("", self._held + self._decoder.decode(b"", final=True))
            self._held = ""
        else:
            text = self._held + self._decoder.decode(chunk)
            # An escape sequence may be split between chunks: hold back from a late ESC.
            esc = text.rfind("\x1b")
            cut = esc if esc >= 0 and len(text) - esc < 32 else len(text)
            self.text += ANSI.sub("", text[:cut])
            self._held = text[cut:]
        self._data.set()

    async def expect(self, pattern: str, wait: float = 30.0) -> re.Match[str]:
        """The next match of ``pattern`` after the previous one (what was typed is echoed)."""
        regex = re.compile(pattern)
        try:
            return await asyncio.wait_for(self._expect(regex), wait)
        except TimeoutError:
            raise AssertionError(
                f"no {pattern!r} within {wait} s; last output:\n{self.tail()}"
            ) from None

    async def _expect(self, regex: re.Pattern[str]) -> re.Match[str]:
        while True:
            found = regex.search(self.text, self.pos)
            if found:
                self.pos = found.end()
                return found
            if self.eof:
                raise AssertionError(
                    f"the program ended before {regex.pattern!r}; last output:\n{self.tail()}"
                )
            self._data.clear()
            await self._data.wait()

    def tail(self, chars: int = 3000) -> str:
        return self.text[-chars:]

    def send(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    async def exit_code(self, wait: float = 15.0) -> int:
        """Wait for the program to end (the reader keeps draining its output meanwhile)."""
        return await asyncio.to_thread(self.proc.wait, wait)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(5)
        if not self.eof:
            asyncio.get_running_loop().remove_reader(self.fd)
        os.close(self.fd)
