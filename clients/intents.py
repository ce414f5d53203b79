"""What a typed line means: a choice, a few choices in a row, a filter, or a command.

Pure (the line and the room's mirror in, an :data:`Intent` out), so the play loop only carries
intents out and tests check the reading of every form:

- a number: the choice with that number (``Choose``);
- Ishtar: a space as the map names it (``f7``) or as ``q,r``: the choice that names that space,
  or the choices there when several do (``Filter``);
- Yspahan: a shop (``br3.1``) or several (``br3.0 br3.2``): goods placed there in that order
  (``Plan``); a souk (``br3``): its free shops filled, which is one prompt for several goods
  when the goods cover every free shop (the order cannot matter then); a square (``W9``): the
  steward moved there;
- ``/word``: the choices whose text contains it (``/`` alone clears the filter); a word that is
  no command but appears in some choices' texts filters them the same way;
- commands: ``h`` help and reference, ``r`` redraw, ``s`` start, ``u`` undo (take back your
  last step of this turn, where the view says you may), ``p`` play again (a rematch, once the
  match is over), ``say TEXT``, ``q`` quit,
  ``>`` / ``<`` next and previous page; an empty line (``Enter``);
- anything else: a :class:`Problem` whose sentence suggests the nearest command.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from clients.choices import label, space_of
from clients.hexgrid import Grid
from protocol.mirror import Mirror


@dataclass(frozen=True)
class Choose:
    index: int


@dataclass(frozen=True)
class Plan:
    """Choices to send one after the other, each at the next decision that offers it."""

    steps: tuple[dict[str, Any], ...]
    fill: str | None = None
    """A souk whose free shops go on being filled while the decision offers them."""

    def step(self, choices: list[dict[str, Any]]) -> tuple[int, Plan | None] | None:
        """The index of the next step among ``choices`` and the plan after it (None: done);
        None when the decision does not offer it (the plan ends there)."""
        wanted = self.steps[0] if self.steps else None
        index = next(
            (
                i
                for i, c in enumerate(choices)
                if wanted is not None and all(c.get(k) == v for k, v in wanted.items())
            ),
            None,
        )
        if index is None and self.fill is not None:
            shops = self.fill + "."
            index = next(
                (
                    i
                    for i, c in enumerate(choices)
                    if c.get("kind") == "place" and str(c.get("shop", "")).startswith(shops)
                ),
                None,
            )
        if index is None:
            return None
        rest = self.steps[1:]
        return index, Plan(rest, self.fill) if rest or self.fill else None


@dataclass(frozen=True)
class Filter:
    indices: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class Command:
    name: str
    """``help``, ``redraw``, ``start``, ``undo``, ``again`` (a rematch), ``say``, ``quit``,
    ``next``, ``previous``, ``enter``, ``clear`` (the filter)."""
    argument: str = ""


@dataclass(frozen=True)
class Problem:
    text: str


Intent = Choose | Plan | Filter | Command | Problem

COMMANDS = {
    "h": "help",
    "help": "help",
    "?": "help",
    "r": "redraw",
    "redraw": "redraw",
    "s": "start",
    "start": "start",
    "u": "undo",
    "undo": "undo",
    "p": "again",
    "again": "again",
    "rematch": "again",
    "q": "quit",
    "quit": "quit",
    "exit": "quit",
    ">": "next",
    "<": "previous",
    "say": "say",
}
HELP = (
    "Type the number of a choice and Enter. Other commands: "
    "r redraw · s start the match (host: bots fill free seats) · u undo"
    " · say TEXT chat · p play again (once the match is over) · q quit"
)
_SHOP = re.compile(r"^(sk|br|ch|va)\d\.\d$")
_SOUK = re.compile(r"^(sk|br|ch|va)\d$")
_SQUARE = re.compile(r"^(c|[wens]\d{1,2})$")


def interpret(line: str, mirror: Mirror, grid: Grid | None = None) -> Intent:
    """The meaning of ``line`` for the seat of ``mirror`` now."""
    text = line.strip()
    if not text:
        return Command("enter")
    word, _, rest = text.partition(" ")
    lowered = word.lower()
    if lowered in COMMANDS and (lowered == "say" or not rest):
        return Command(COMMANDS[lowered], rest.strip())
    choices = mirror.choices if mirror.info.get("state") == "playing" else []
    if text.isdigit():
        number = int(text)
        if not choices:
            return Problem(_not_your_turn(mirror))
        if not 1 <= number <= len(choices):
            return Problem(f"Choose a number from 1 to {len(choices)}.")
        return Choose(number - 1)
    if text.startswith("/"):
        wanted = text[1:].strip()
        if not wanted:
            return Command("clear")
        return _filter(wanted, choices, mirror.game, grid)
    game = mirror.game
    if game == "ishtar" and grid is not None and grid.looks_like_a_space(text):
        return _space(text, choices, grid)
    if game == "yspahan":
        found = _yspahan(text.lower(), choices, mirror)
        if found is not None:
            return found
    if choices:
        matched = _filter(text, choices, game, grid)
        if isinstance(matched, Filter):
            return matched
    return Problem(_unknown(text, choices))


def _not_your_turn(mirror: Mirror) -> str:
    if mirror.info.get("state") == "open":
        return "The match has not started yet."
    turn = mirror.shared.get("turn")
    whose = turn.get("seat") if isinstance(turn, dict) else None
    who = f"P{whose + 1}" if isinstance(whose, int) else "nobody"
    return f"Not your turn: {who} must decide now. Please wait."


def _filter(wanted: str, choices: list[dict[str, Any]], game: str, grid: Grid | None) -> Intent:
    needle = wanted.lower()
    found = tuple(i for i, c in enumerate(choices) if needle in label(game, c, grid).lower())
    if not found:
        return Problem(f"No choice mentions {wanted!r}.")
    return Filter(found, wanted)  # shown first: a filter never plays a move by itself


def _space(text: str, choices: list[dict[str, Any]], grid: Grid) -> Intent:
    at = grid.parse(text)
    if at is None:
        first, last = grid.column_label(1), grid.column_label(grid.columns)
        rows = f"rows {grid.row_label(0)}-{grid.row_label(grid.rows - 1)}"
        where = f" (columns {first}-{last}, {rows})" if first and last else ""
        return Problem(f"There is no space {text} on the map{where}.")
    name = grid.name(at)
    found = tuple(
        i for i, c in enumerate(choices) if c.get("kind") != "rotation" and space_of(c) == at
    )
    if not choices:
        return Problem(f"{name}: it is not your turn to choose a space.")
    if not found:
        return Problem(f"None of your choices is on {name}; the spaces you may choose are marked.")
    if len(found) == 1:
        return Choose(found[0])
    return Filter(found, name)


def _yspahan(text: str, choices: list[dict[str, Any]], mirror: Mirror) -> Intent | None:
    words = text.split()
    if words and all(_SHOP.match(w) for w in words):
        steps = tuple({"kind": "place", "shop": w} for w in words)
        if not any(c.get("kind") == "place" and c.get("shop") == words[0] for c in choices):
            return Problem(f"You cannot put a good in {words[0]} now.")
        return Plan(steps)
    if len(words) == 1 and _SOUK.match(text):
        return _fill(text, choices, mirror)
    if len(words) == 1 and _SQUARE.match(text):
        square = text.upper()
        found = tuple(
            i for i, c in enumerate(choices) if c.get("kind") == "move" and c.get("to") == square
        )
        if not found:
            return Problem(f"The steward cannot go to {square} now.")
        return Choose(found[0]) if len(found) == 1 else Filter(found, square)
    return None


def _fill(souk: str, choices: list[dict[str, Any]], mirror: Mirror) -> Intent:
    shops = [
        str(c["shop"])
        for c in choices
        if c.get("kind") == "place" and str(c.get("shop", "")).startswith(souk + ".")
    ]
    if not shops:
        return Problem(f"You cannot put goods in souk {souk} now.")
    game = mirror.shared.get("game")
    pending = game.get("pending") if isinstance(game, dict) else None
    goods = pending.get("goods") if isinstance(pending, dict) else None
    city = game.get("city") if isinstance(game, dict) else None
    free = sum(1 for s in (city or {}).get(souk) or [] if s is None)
    if isinstance(goods, int) and goods < free:
        return Problem(
            f"You have {goods} good(s) for {free} free shops of {souk}: which shops matters"
            f" (the steward faces some); type them, e.g. {' '.join(shops[:goods])}"
        )
    return Plan(({"kind": "place", "shop": shops[0]},), fill=souk)


def _unknown(text: str, choices: list[dict[str, Any]]) -> str:
    words = sorted({w for w in COMMANDS if len(w) > 1} | {"help", "redraw", "start", "quit"})
    near = difflib.get_close_matches(text.split()[0].lower(), words, n=1, cutoff=0.6)
    hint = f" Did you mean {near[0]!r}?" if near else ""
    if choices:
        return f"{text!r} is not a choice number or a command.{hint} {HELP}"
    return f"{text!r} is not a command.{hint} {HELP}"
