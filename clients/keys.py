"""Keystrokes from a terminal: the bytes a terminal sends, decoded into keys; cbreak mode.

:class:`KeyDecoder` is pure (bytes in, keys out) so it is tested without a terminal. A key is a
one-character string for text (``"a"``, ``"7"``, ``","``) or a name for the others: ``enter``,
``backspace``, ``tab``, ``esc``, ``up``, ``down``, ``left``, ``right``, ``pgup``, ``pgdn``,
``home``, ``end``, ``ctrl-c``, ``ctrl-d``, ``ctrl-l`` and ``ctrl-u``. A sequence split between
two reads is held until its end arrives; an ``ESC`` alone at the end of a read is the Esc key
(terminals send a whole sequence in one write).

:class:`KeyReader` puts a terminal in cbreak mode (keys arrive one by one, unechoed; Ctrl-C
still raises SIGINT, which the play loop turns into a polite quit) and hands decoded keys to a
callback from the event loop's reader; :meth:`KeyReader.close` restores the terminal as it was.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import termios
import tty
from collections.abc import Callable

_CSI_KEYS = {
    "A": "up",
    "B": "down",
    "C": "right",
    "D": "left",
    "H": "home",
    "F": "end",
    "5~": "pgup",
    "6~": "pgdn",
    "1~": "home",
    "4~": "end",
    "7~": "home",
    "8~": "end",
}
_CONTROL_KEYS = {
    "\r": "enter",
    "\n": "enter",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\t": "tab",
    "\x03": "ctrl-c",
    "\x04": "ctrl-d",
    "\x0c": "ctrl-l",
    "\x15": "ctrl-u",
}


class KeyDecoder:
    """Turns the bytes of a terminal's input into keys (see the module docstring)."""

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._held = ""

    def feed(self, data: bytes) -> list[str]:
        text = self._held + self._text.decode(data)
        self._held = ""
        keys: list[str] = []
        i = 0
        while i < len(text):
            char = text[i]
            if char != "\x1b":
                i += 1
                if char in _CONTROL_KEYS:
                    if char == "\n" and keys[-1:] == ["enter"] and text[i - 2 : i] == "\r\n":
                        continue  # CR LF is one Enter
                    keys.append(_CONTROL_KEYS[char])
                elif char.isprintable():
                    keys.append(char)
                continue
            end = _sequence_end(text, i)
            if end is None:  # an unfinished sequence: wait for the rest
                self._held = text[i:]
                break
            name = _sequence_key(text[i + 1 : end])
            if name is not None:
                keys.append(name)
            i = end
        return keys

    def flush(self) -> list[str]:
        """What is held at the end of input: an ``ESC`` alone is the Esc key."""
        held, self._held = self._held, ""
        return ["esc"] if held.startswith("\x1b") else []


def _sequence_end(text: str, start: int) -> int | None:
    """The index after the escape sequence at ``start``, or None while it is incomplete."""
    if start + 1 >= len(text):
        return start + 1  # a lone ESC at the end of a read is the Esc key
    kind = text[start + 1]
    if kind == "O":  # SS3: one more character
        return start + 3 if start + 2 < len(text) else None
    if kind != "[":
        return start + 1  # ESC then a key: Esc, and the key follows on its own
    i = start + 2
    while i < len(text):
        if "\x40" <= text[i] <= "\x7e":
            return i + 1
        if not "\x20" <= text[i] <= "\x3f":
            return i  # not a sequence after all: drop what came so far
        i += 1
    return None


def _sequence_key(body: str) -> str | None:
    """The key of an escape sequence (without its ESC): ``[A`` up, ``[5~`` page up, ``""`` Esc."""
    if not body:
        return "esc"
    if body[0] == "O":
        return _CSI_KEYS.get(body[1:])
    if body[0] != "[" or len(body) < 2:
        return None
    final = body[-1]
    params = body[1:-1].split(";")[0]  # modifiers (shift, ctrl) after a ";" are ignored
    return _CSI_KEYS.get(params + "~" if final == "~" else final)


class KeyReader:
    """Keys from a terminal in cbreak mode, delivered to ``on_key`` in the event loop."""

    def __init__(self, fd: int, on_key: Callable[[str], None]) -> None:
        self.fd = fd
        self.on_key = on_key
        self.decoder = KeyDecoder()
        self._saved = termios.tcgetattr(fd)
        tty.setcbreak(fd, termios.TCSANOW)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(fd, self._readable)
        self.closed = False

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            self._loop.remove_reader(self.fd)
            self.on_key("ctrl-d")
            return
        keys = self.decoder.feed(data)
        for key in keys:
            self.on_key(key)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(ValueError, OSError):
            self._loop.remove_reader(self.fd)
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
