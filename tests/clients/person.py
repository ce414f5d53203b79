"""A person at the full screen: reads what the terminal shows and types what a person would.

It never sees the protocol. It reads the hint line (whose turn it is, what is asked), finds the
decision on the screen, and answers as the screen invites: for Ishtar a space it reads off the
map (the letter on a marked space and the row number in the margin, or the whole name on a wide
screen) and then a rotation's number from the drawings; for Yspahan a souk or shop marked ``+``,
a steward square marked ``›``, or a number from the list. It keeps every screen it acted on, so
a test can check them and save a representative set.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.clients.tmux import Tmux

HELP_SUFFIX = "  (h help · q quit)"
NUMBER = re.compile(r"(?:^|  )\s*(\d+) (?=\S)")
MAP_ROW = re.compile(r"^\s*(\d+) (.*?)\s(\d+)\s*$")
SOUK = re.compile(r"((?:sk|br|ch|va)\d)\(\d+\)\[([^\]]*)\]")
SQUARE = re.compile(r"›([WENS]\d{1,2}|C)")
GOODS = re.compile(r"(\d+) good\(s\) to place")


@dataclass
class Screen:
    """One capture, cut into its parts."""

    lines: list[str]
    width: int

    @property
    def header(self) -> str:
        return self.lines[0] if self.lines else ""

    @property
    def hint(self) -> str:
        return self.lines[-2] if len(self.lines) >= 2 else ""

    @property
    def body(self) -> list[str]:
        return self.lines[1:-2]

    def columns(self) -> tuple[list[str], list[str]]:
        """The body's left and right columns (right empty on a one-column screen)."""
        body = self.body
        split = None
        counts: dict[int, int] = {}
        for line in body:
            index = line.find(" │")
            if index > 0:
                counts[index] = counts.get(index, 0) + 1
        if counts:
            index, count = max(counts.items(), key=lambda kv: kv[1])
            if count >= len(body) // 2:
                split = index
        if split is None:
            return body, []
        left = [line[:split] for line in body]
        right = [line[split + 3 :] if line[split : split + 2] == " │" else "" for line in body]
        return left, right

    def panel(self, title: str) -> list[str]:
        """The lines under ``title`` (in whichever column it is) up to a blank line."""
        for column in self.columns():
            for i, line in enumerate(column):
                shown = line.strip()
                cut = shown.endswith("…") and title.strip().startswith(shown[:-1])
                if shown == title.strip() or shown.startswith(title.strip()) or cut:
                    out = []
                    for below in column[i + 1 :]:
                        if not below.strip():
                            break
                        out.append(below)
                    return out
        return []

    def numbers(self, lines: list[str]) -> list[int]:
        found: list[int] = []
        for line in lines:
            found += [int(m) for m in NUMBER.findall(line)]
        return found

    def offered_spaces(self) -> list[str]:
        """Ishtar: the names of the spaces marked on the map (letter on it + row number)."""
        left, _ = self.columns()
        names: list[str] = []
        wide = any(re.match(r"^\s+a   b   c", line) for line in left)
        for line in left:
            row = MAP_ROW.match(line)
            if not row or row[1] != row[3]:
                continue
            cells = row[2]
            if wide:  # a wide map shows whole names
                names += re.findall(r"\b([a-z]\d{1,2})\b", cells)
            else:  # a narrow one: the column letter on the space, the row in the margin
                names += [f"{letter}{row[1]}" for letter in re.findall(r"[a-z]", cells)]
        return sorted(set(names))


@dataclass
class Person:
    term: Tmux
    rng: random.Random
    seen: dict[str, list[str]] = field(default_factory=dict)
    """A screen per kind of prompt met (the first one), for the record."""
    typed: list[str] = field(default_factory=list)
    screens: int = 0
    prompt: str = ""
    refused: int = 0
    lone: set[str] = field(default_factory=set)
    """Lone choices seen on the screen (they are sent by themselves)."""
    kept: int = 0
    """Screens acted on that still showed a kept panel (Yspahan's week scoring)."""
    acted: list[str] | None = None
    """The screen last answered (without its input line): the next one must differ."""

    async def look(self, wait: float = 60.0, unless: Callable[[], bool] | None = None) -> Screen:
        """The next screen at which a person would act (our decision, or the end), once stable.

        After an answer the screen must have changed first (what was typed is on its way), then
        stay the same for two captures in a row, each of a whole frame (:attr:`Tmux.whole`: not
        the top of a new frame over the bottom of the old one). With ``unless``, the screen at
        which it holds (the caller has something else to do first). A ``! `` line that is not
        the refusal of our last answer (its decision no longer on the screen) is a notice: it
        hides the prompt until a key, so a person presses one (Ctrl-L) and reads on.
        """
        previous: list[str] | None = None

        def ready(lines: list[str]) -> bool:
            nonlocal previous
            if unless is not None and unless():
                return True
            if len(lines) < 3 or lines[:-1] == self.acted:
                return False
            hint = lines[-2]
            stable = lines == previous and self.term.whole
            previous = lines if self.term.whole else None
            if hint.startswith("Only one choice"):
                self.lone.add(lines[0] + hint)  # sent by itself, nothing to type
                return False
            if hint.startswith("Waiting for"):
                return False
            asked = hint.endswith(HELP_SUFFIX.strip()) or hint.startswith("! ")
            return stable and (asked or "press Enter to leave" in hint)

        while True:
            lines = await self.term.wait(ready, wait, "a decision or the end of the match")
            screen = Screen(lines, self.term.cols)
            if not screen.hint.startswith("! ") or (unless is not None and unless()):
                break
            if self.prompt and screen.panel(self.prompt):
                break  # our answer refused, the decision still asked: answer again
            # A notice ("! bob took seat P2") hides the prompt until a key: press one to read.
            await self.term.key("C-l")
            previous = None
            self.acted = lines[:-1]
        self.screens += 1
        return screen

    async def act(self, screen: Screen) -> str:
        """Type an answer to the decision on ``screen``; what was typed."""
        if screen.hint.startswith("! "):
            self.refused += 1
            if self.refused > 5:
                raise AssertionError(f"refused again and again:\n{chr(10).join(screen.lines)}")
        else:
            self.refused = 0
            self.prompt = screen.hint.removesuffix(HELP_SUFFIX).strip()
        kind = self.prompt.split(":")[0]
        self.seen.setdefault(kind, screen.lines)
        answer = self.answer(screen, self.prompt)
        self.typed.append(answer)
        self.acted = screen.lines[:-1]
        await self.term.type(answer)
        return answer

    def answer(self, screen: Screen, prompt: str) -> str:
        header = screen.header
        if header.startswith("Ishtar"):
            spaces = screen.offered_spaces()
            if spaces and "Turn your tile" not in prompt:
                return self.rng.choice(spaces)
        if header.startswith("Yspahan"):
            found = self._yspahan(screen)
            if found:
                return found
        numbers = screen.numbers(screen.panel(prompt))
        if not numbers:
            for column in screen.columns():
                numbers += [int(m) for line in column for m in re.findall(r"^(\d+): ", line)]
        if not numbers:
            raise AssertionError(f"no choice to read on the screen:\n{chr(10).join(screen.lines)}")
        return str(self.rng.choice(numbers))

    def _yspahan(self, screen: Screen) -> str | None:
        text = "\n".join(screen.body)
        squares = SQUARE.findall(text)
        if squares:
            return str(self.rng.choice(squares))
        shops: list[str] = []
        free: dict[str, int] = {}
        for souk, inside in SOUK.findall(text):
            marks = inside.split(" ")
            free[souk] = marks.count("+") + marks.count(".")
            shops += [f"{souk}.{i}" for i, mark in enumerate(marks) if mark == "+"]
        if not shops:
            return None
        goods = GOODS.search(text)
        souk = shops[0].split(".")[0]
        if goods and int(goods[1]) >= free.get(souk, 99) and self.rng.random() < 0.7:
            return souk  # the whole souk in one prompt
        return self.rng.choice(shops)
