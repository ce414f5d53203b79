"""Server text is printed as itself: no escape sequence or control character gets through."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clients.printable import printable


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("ann", "ann"),
        ("a\x1b[2Jb", "ab"),  # clear the screen
        ("x\x1b]52;c;ZXZpbA==\x07y", "xy"),  # OSC 52: write the clipboard
        ("x\x1b]0;title\x1b\\y", "xy"),  # set the window title, ST-terminated
        ("c1\x9b2Jz", "c1z"),  # 8-bit CSI
        ("osc\x9d52;c;aaa\x9cend", "oscend"),  # 8-bit OSC and ST
        ("bell\x07\x08", "bell"),
        ("new\nline\ttab", "new line tab"),
        ("rtl\u202eevil", "rtlevil"),  # bidirectional override
        ("esc\x1bc", "esc"),  # reset the terminal
        ("dcs\x1bPqabc\x1b\\ok", "dcsok"),
        ("partial\x1b[", "partial"),
        ("emoji 🐪 é", "emoji 🐪 é"),
    ],
)
def test_escape_sequences_and_control_characters_are_removed(hostile: str, shown: str) -> None:
    assert printable(hostile) == shown


@given(st.text())
def test_nothing_a_terminal_would_act_on_survives(text: str) -> None:
    out = printable(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in out)
    assert "\u202e" not in out


def test_anything_else_is_shown_as_text() -> None:
    assert printable(12) == "12"
    assert printable(None) == "None"
