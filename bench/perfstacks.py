"""Where the server's wall time goes, from ``perf`` samples with their call stacks.

``bench/cost.py --perf`` attaches ``perf record`` (a clock sample about every millisecond,
each with its stack unwound from DWARF) to the compiled server during a saturated window, then
reads ``perf script``'s text here. Unlike callgrind's instruction counts
(``bench/server_instructions.py``) this sees time: the kernel's side of the socket writes and
reads (on loopback the sender's kernel also runs the receiver's TCP input and wakes the bots'
process), cache misses, and code that retires many instructions fast (BLAKE2b, ``memcpy``).
mypyc's compiled functions show by name (``CPyDef_server___views___Views___advance``:
:func:`readable` makes it ``server.views.Views.advance``); interpreted Python shows only as the
interpreter's loop, so this profiles the compiled build.

Each sample is counted once in the first *part* (:data:`PARTS`, in order) any frame of its stack
belongs to, so the parts add up to the whole; and once in every function of its stack for the
inclusive shares.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

_FRAME: Final = re.compile(r"^\s+[0-9a-f]+\s+(.+?)\s+\((.*)\)\s*$")
_OFFSET: Final = re.compile(r"\+0x[0-9a-f]+$")

PARTS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("kernel: socket writes", ("ksys_write", "__GI___libc_write", "__libc_write")),
    ("kernel: reads", ("ksys_read", "__GI___libc_read", "__libc_read")),
    ("the game's views and labels", ("CPyDef_games___base___shared_part", "own_part")),
    ("the rules (a move, the next decision)", ("Match___push", "Match___decision")),
    ("views: tracked, diffed, hashed, framed", ("CPyDef_server___views___",)),
    (
        "reading and dispatching a request",
        ("server___reader___", "protocol___codec___decode", "messages___parse"),
    ),
    ("the store", ("server___store___",)),
    (
        "effects: frames handed out",
        (
            "server___effector___execute_Effector",
            "server___effector___Effector___now",
            "server___effector____write",
            "server___fanout___",
        ),
    ),
    ("the room core, the rest", ("CPyDef_server___",)),
    ("kernel: the rest (epoll, timers)", ("[kernel]",)),
)
"""The parts of a sample's stack, matched in this order (a frame's name contains one of the
markers; ``[kernel]`` marks any kernel frame; a socket's part counts its libc call with the
kernel's work under it): a socket write inside a room's effects counts as
the kernel's write (the store's writes to Redis too), a game's view inside ``Views.advance`` as
the game's, the store's client inside the effects as the store. The effects are the
effector's carrying them out (``execute``, ``now``, ``_write``) and the fan-out, not its
``handle``, under which the core runs as well (the core's own work is the room core's). A
request the reader
carries out at once (the lobby's: ``create``, ``join``, ``rematch``...) counts as reading, a
room's command as the room's."""
OTHER: Final = "the event loop, the collector, interpreted code"


@dataclass
class Profile:
    """The samples of one run: each one's stack, leaf first."""

    stacks: list[list[str]] = field(default_factory=list)

    @property
    def samples(self) -> int:
        return len(self.stacks)

    def parts(self) -> dict[str, float]:
        """Each part's share of the samples (:data:`PARTS` and :data:`OTHER`, adding up to 1)."""
        counts: Counter[str] = Counter()
        for stack in self.stacks:
            counts[part_of(stack)] += 1
        total = self.samples or 1
        names = [name for name, _ in PARTS] + [OTHER]
        return {name: counts[name] / total for name in names}

    def inclusive(self, only: str = "CPyDef_") -> list[tuple[str, float]]:
        """Functions whose symbols contain ``only``, by :func:`readable` name (a method and its
        glue are one), by their inclusive share (a sample counts once per function however deep
        it recurses), largest first."""
        counts: Counter[str] = Counter()
        for stack in self.stacks:
            counts.update({readable(name) for name in stack if only in name})
        total = self.samples or 1
        return [(name, n / total) for name, n in counts.most_common()]

    def leaves(self) -> list[tuple[str, float]]:
        """Functions by self share (the sample's leaf frame, an inlined one included), by
        :func:`readable` name, largest first."""
        counts = Counter(readable(stack[0]) for stack in self.stacks if stack)
        total = self.samples or 1
        return [(name, n / total) for name, n in counts.most_common()]


def parse(lines: Iterable[str]) -> Profile:
    """``perf script``'s output: a header line per sample, then one line per frame (address,
    symbol+offset, object in parentheses), a blank line between samples. A kernel frame's name
    is prefixed ``[kernel]``; an unknown symbol (``[unknown]``) is kept as its object's name."""
    profile = Profile()
    stack: list[str] = []
    for line in lines:
        match = _FRAME.match(line)
        if match is None:
            if not line.strip() and stack:
                profile.stacks.append(stack)
                stack = []
            continue
        symbol, where = match.groups()
        name = _OFFSET.sub("", symbol)
        if name == "[unknown]":
            name = f"[unknown] {where.rsplit('/', 1)[-1]}"
        if "kernel.kallsyms" in where:
            name = f"[kernel] {name}"
        stack.append(name)
    if stack:
        profile.stacks.append(stack)
    return profile


def part_of(stack: list[str]) -> str:
    """The first part of :data:`PARTS` any frame of ``stack`` belongs to (else :data:`OTHER`)."""
    for name, markers in PARTS:
        if any(marker in frame for frame in stack for marker in markers):
            return name
    return OTHER


_SUFFIXES: Final = ("_gen_____mypyc_generator_helper__", "__Game_glue")


def readable(symbol: str) -> str:
    """A mypyc function's dotted name (``CPyDef_server___views___Views___advance`` ->
    ``server.views.Views.advance``; a coroutine's body ``server.play.act_Play`` ->
    ``server.play.Play.act``); any other symbol as it is."""
    if not symbol.startswith("CPyDef_"):
        return symbol
    name = symbol.removeprefix("CPyDef_")
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    parts = name.split("___")
    last = parts[-1]
    method, sep, owner = last.rpartition("_")
    if symbol.endswith(_SUFFIXES[0]) and sep and owner[:1].isupper():
        parts[-1:] = [owner, method]
    return ".".join(parts)
