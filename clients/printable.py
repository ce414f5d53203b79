"""Text from the server made safe to print: no control characters, no terminal escape sequences.

Names, chat lines, labels, prompts, event texts, error messages and room ids come from other
people through the server. Printed raw, a name could clear the screen, retitle the window, move
the cursor over the board, or write the reader's clipboard (OSC 52). :func:`printable` removes
every escape sequence whole (CSI, OSC, DCS, SOS, PM, APC, in their 7-bit ``ESC x`` and 8-bit C1
forms, up to their terminator), then every remaining control character (C0, DEL, C1), and the
bidirectional overrides that can make text read backwards. Line breaks and tabs become spaces:
everything the server names is shown on one line.

The rule itself is :func:`protocol.messages.clean_text` (one copy, which the server also
applies to names and chat). Every renderer passes server strings through it before they reach
rich (whose markup is never used for them either: they go into ``Text`` objects, which print
literally).
"""

from __future__ import annotations

from protocol.messages import clean_text


def printable(value: object) -> str:
    """``value`` as text that prints as itself on one line of a terminal."""
    return clean_text(value if isinstance(value, str) else str(value))
