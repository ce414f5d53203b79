"""Text from the server made safe to print: no control characters, no terminal escape sequences.

Names, chat lines, labels, prompts, event texts, error messages and room ids come from other
people through the server. Printed raw, a name could clear the screen, retitle the window, move
the cursor over the board, or write the reader's clipboard (OSC 52). :func:`printable` removes
every escape sequence whole (CSI, OSC, DCS, SOS, PM, APC, in their 7-bit ``ESC x`` and 8-bit C1
forms, up to their terminator), then every remaining control character (C0, DEL, C1), and the
bidirectional overrides that can make text read backwards. Line breaks and tabs become spaces:
everything the server names is shown on one line.

Every renderer passes server strings through it before they reach rich (whose markup is never
used for them either: they go into ``Text`` objects, which print literally).
"""

from __future__ import annotations

import re

_SEQUENCE = re.compile(
    r"""
    (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI ... final byte
  | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                     # OSC DCS SOS PM APC ...
    [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?                      # ... up to BEL or ST
  | \x1b [\x20-\x2f]* [\x30-\x7e]?                              # other ESC sequences
    """,
    re.VERBOSE,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SPACE = re.compile(r"[\t\n]")


def printable(value: object) -> str:
    """``value`` as text that prints as itself on one line of a terminal."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    text = _SEQUENCE.sub("", text)
    text = _SPACE.sub(" ", text)
    return _CONTROL.sub("", text)
