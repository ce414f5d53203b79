"""Ishtar's hex map as text: the terrain, what is laid on it, and the spaces a choice names.

Drawn from the view's ``terrain`` (one row per ``r``: the first ``q`` and one code per space,
``.`` sand, ``T`` tablet, ``F`` fountain, ``p``/``r``/``w`` a rock of that colour, blank for no
space) with ``laid`` on top in the order things were laid: tiles and bloom tokens set the
flowers of their spaces (0: grass), trees and assistants stand on a space.

Two densities (the server names the spaces, the view's terrain rows say how: columns by letter on
a ruler above and
below, rows by number on both sides):

- ``compact``, 2 characters per hex (80-column terminals): one character per space, ``·`` sand,
  ``T`` tablet, ``F`` fountain, ``P R W`` a rock still holding a purple, red or white gem,
  ``^`` a rock without, ``,`` grass, ``1``-``4`` flowers, ``2¹`` the flowers of a flowerbed P1
  controls, ``@¹`` an assistant of P1 and ``Y¹`` a tree of P1 (the seat's superscript takes the
  gap after the space);
- ``roomy``, 4 characters per hex: `` · ``, ``[T]``, `` Fp`` (the fountain's colour), ``<p>``,
  ``< >``, `` , ``, `` 2 ``, ``2@1``, `` Y1``, and `` 2¹`` for the flowers of a flowerbed P1
  controls (the view's ``beds``; in the narrow map the bed takes its controller's colour).

Marks: a space the decision offers shows, in reverse video, the lower-case letter of its column
(compact) or its whole name (roomy, ``f12``), so the player reads off the name to type: the
column letter on the space, the row number in the margin. Lower-case letters appear nowhere
else on the map. The tile being placed shows ``*`` on its first space. No digit is drawn that is
not a flower count, a row number or a seat.

With room for it (50 lines), :func:`outlined_lines` draws the roomy map on two lines per row
and outlines every laid tile with the hexes' sides (``|``, ``/``, ``\\``).

Colours (a terminal shows them; text captures do not need them): each laid tile gets a
background that differs from its neighbours' so tiles stand out, and pieces take their player's
colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from clients.hexgrid import Grid, Hex, as_hex

GEM_STYLE = {"purple": "magenta", "red": "red", "white": "bold white"}
PLAYER_STYLE = {
    "yellow": "bold yellow",
    "blue": "bold blue",
    "green": "bold green",
    "red": "bold red",
    "white": "bold white",
    "black": "bold bright_black",
    "purple": "bold magenta",
    "pink": "bold magenta",
    "orange": "bold dark_orange",
}
TILE_BACKGROUNDS = ("on grey15", "on grey27", "on dark_green", "on grey35")
MARK_STYLE = "bold black on cyan"
SUPERSCRIPTS = "¹²³⁴⁵⁶"


@dataclass(frozen=True, slots=True)
class Space:
    """What one space shows: its glyph in both densities, style, tile, and an owner digit."""

    compact: str
    roomy: str
    style: str = ""
    tile: int | None = None
    """The index in ``laid`` of the tile (or token) covering the space, for its background."""


def player_style(colours: list[str], seat: int) -> str:
    colour = colours[seat] if 0 <= seat < len(colours) else ""
    return PLAYER_STYLE.get(colour, "bold")


def colours_of(game: Mapping[str, Any]) -> list[str]:
    return [str(p.get("colour", "")) for p in game.get("players") or [] if isinstance(p, dict)]


def spaces(game: Mapping[str, Any]) -> dict[Hex, Space]:
    """Every space of the terrain with what lies on it now."""
    out: dict[Hex, Space] = {}
    fountains = {
        as_hex(f.get("at")): str(f.get("colour", "?")) for f in game.get("fountains") or []
    }
    rock_gems = game.get("rock_gems") or {}
    for row in game.get("terrain") or []:
        r, q0, codes = row["r"], row["q"], row["cells"]
        for i, code in enumerate(codes):
            at = (q0 + i, r)
            if code == " ":
                continue
            if code == ".":
                out[at] = Space("·", " · ", "dim")
            elif code == "T":
                out[at] = Space("T", "[T]", "yellow")
            elif code == "F":
                colour = fountains.get(at, "?")
                out[at] = Space("F", f" F{colour[0]}", "bold " + GEM_STYLE.get(colour, "cyan"))
            else:
                gem = rock_gems.get(f"{at[0]},{at[1]}")
                if gem:
                    initial = str(gem)[0]
                    out[at] = Space(initial.upper(), f"<{initial}>", GEM_STYLE.get(gem, ""))
                else:
                    out[at] = Space("^", "< >", "dim")
    colours = colours_of(game)
    flowers: dict[Hex, int] = {}
    tiles: dict[Hex, int] = {}
    for index, item in enumerate(game.get("laid") or []):
        if not isinstance(item, dict):
            continue
        if "spaces" in item:
            for space in item["spaces"]:
                at = (space[0], space[1])
                flowers[at] = n = int(space[2])
                tiles[at] = index
                glyph = str(n) if n else ","
                style = "bold green" if n else "green"
                out[at] = Space(glyph, f" {glyph} ", style, index)
        elif "tree" in item and (spot := as_hex(item.get("at"))) is not None:
            seat = int(item["tree"])
            out[spot] = Space(
                f"Y{_sup(seat)}", f" Y{seat + 1}", player_style(colours, seat), tiles.get(spot)
            )
        elif "assistant" in item and (spot := as_hex(item.get("at"))) is not None:
            seat = int(item["assistant"])
            style = player_style(colours, seat)
            under = flowers.get(spot, 0)
            out[spot] = Space(f"@{_sup(seat)}", f"{under}@{seat + 1}", style, tiles.get(spot))
    for bed in game.get("beds") or []:
        owner = bed.get("owner") if isinstance(bed, dict) else None
        if type(owner) is not int:
            continue
        for cell in bed.get("cells") or []:
            spot = as_hex(cell)
            space = out.get(spot) if spot is not None else None
            if spot is None or space is None or "@" in space.roomy or "Y" in space.roomy:
                continue
            n = flowers.get(spot, 0)
            out[spot] = Space(
                f"{n}{_sup(owner)}", f" {n}{_sup(owner)}", player_style(colours, owner), space.tile
            )
    return out


def _sup(seat: int) -> str:
    """The seat's number as a superscript (``¹`` for P1), which no one reads as flowers."""
    return SUPERSCRIPTS[seat] if 0 <= seat < len(SUPERSCRIPTS) else str(seat + 1)


def _backgrounds(game: Mapping[str, Any], laid: dict[Hex, Space]) -> dict[int, str]:
    """A background per laid tile, different from every neighbouring tile's (greedy colouring)."""
    neighbours: dict[int, set[int]] = {}
    for (q, r), space in laid.items():
        if space.tile is None:
            continue
        for dq, dr in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)):
            other = laid.get((q + dq, r + dr))
            if other is not None and other.tile is not None and other.tile != space.tile:
                neighbours.setdefault(space.tile, set()).add(other.tile)
    chosen: dict[int, str] = {}
    for tile in sorted({s.tile for s in laid.values() if s.tile is not None}):
        taken = {chosen.get(n) for n in neighbours.get(tile, ())}
        chosen[tile] = next((b for b in TILE_BACKGROUNDS if b not in taken), TILE_BACKGROUNDS[0])
    return chosen


@dataclass(frozen=True)
class Marks:
    """Spaces to mark on the map: the ones a decision offers, and the tile in hand's anchor."""

    offered: frozenset[Hex] = frozenset()
    anchor: Hex | None = None
    placed: frozenset[Hex] = frozenset()


def marks_of(game: Mapping[str, Any], offered: set[Hex]) -> Marks:
    pending = game.get("pending") or {}
    placed = frozenset(h for h in (as_hex(c) for c in pending.get("placed") or []) if h)
    return Marks(frozenset(offered), as_hex(pending.get("at")), placed)


def map_width(grid: Grid, *, roomy: bool) -> int:
    """Characters a map line takes, margins for the row numbers included."""
    margin = len(str(grid.rows)) + 1
    return 2 * margin + (4 if roomy else 2) * grid.columns + 1


def map_lines(
    game: Mapping[str, Any], grid: Grid, marks: Marks | None = None, *, roomy: bool = False
) -> list[Text]:
    """The map, a ruler of column letters above and below, row numbers on both sides."""
    marks = marks or Marks()
    laid = spaces(game)
    backgrounds = _backgrounds(game, laid)
    digits = len(str(grid.rows))
    step = 2 if roomy else 1  # characters per half hex
    width = grid.columns * 2 * step + 1
    ruler = Text(" " * (digits + 1), style="dim")
    letters = [" "] * width
    for c in range(grid.columns):
        letters[c * 2 * step + step] = grid.column_label(c + 1) or " "
    ruler.append("".join(letters).rstrip(), style="dim")
    lines = [ruler]
    for row in range(grid.rows):
        r = grid.top + row
        line = Text(f"{grid.row_label(row):>{digits}} ", style="dim")
        cells: dict[int, Hex] = {grid.x(at): at for at in grid.spaces if at[1] == r}
        x = 0
        while x < 2 * grid.columns:
            at = cells.get(x)
            if at is None:
                line.append(" " * step)
                x += 1
                continue
            glyph, style = _glyph(laid[at], at, grid, marks, backgrounds, roomy=roomy)
            shown = glyph.rstrip() or glyph[:1]
            line.append(shown, style=style)
            line.append(" " * (2 * step - len(shown)))
            x += 2
        line.rstrip()
        pad = width - (line.cell_len - digits - 1)
        line.append(" " * max(pad, 1))
        line.append(grid.row_label(row), style="dim")
        lines.append(line)
    lines.append(ruler.copy())
    return lines


def _glyph(
    space: Space,
    at: Hex,
    grid: Grid,
    marks: Marks,
    backgrounds: dict[int, str],
    *,
    roomy: bool,
) -> tuple[str, str]:
    """What one space shows (its glyph and style), marks first."""
    glyph = space.roomy if roomy else space.compact
    style = space.style
    if space.tile is not None:
        style = f"{style} {backgrounds.get(space.tile, '')}".strip()
    if at in marks.offered:
        name = grid.name(at)
        return (f"{name:^3}" if roomy else name.rstrip("0123456789")[-1]), MARK_STYLE
    if at == marks.anchor and not marks.placed:
        return (" * " if roomy else "*"), MARK_STYLE
    if at in marks.placed:
        style = f"{style} reverse".strip()
    return glyph, style


WALL_STYLE = "bold green"


def outlined_lines(game: Mapping[str, Any], grid: Grid, marks: Marks | None = None) -> list[Text]:
    """The roomy map on two lines per row, with every laid tile outlined.

    Between two rows an edge line holds the slanted sides of the hexes (``/`` and ``\\``);
    within a row the upright sides take the gap between two spaces (``|``). A side is drawn
    where a tile's space meets a space that is not of the same tile (another tile, open
    terrain, the edge of the board), so each tile shows as one closed shape.
    """
    marks = marks or Marks()
    laid = spaces(game)
    backgrounds = _backgrounds(game, laid)
    digits = len(str(grid.rows))
    width = grid.columns * 4 + 1
    rows: dict[int, dict[int, Hex]] = {}
    for at in grid.spaces:
        rows.setdefault(at[1], {})[grid.x(at)] = at

    def tile(at: Hex | None) -> int | None:
        space = laid.get(at) if at is not None else None
        return space.tile if space is not None else None

    def side(a: Hex | None, b: Hex | None) -> bool:
        return tile(a) != tile(b) and (tile(a) is not None or tile(b) is not None)

    def text(cells: list[tuple[str, str]], number: str) -> Text:
        line = Text(f"{number:>{digits}} ", style="dim")
        for char, style in cells:
            line.append(char, style=style)
        line.rstrip()
        if number:
            line.append(" " * max(digits + 1 + width - line.cell_len, 1))
            line.append(number, style="dim")
        return line

    ruler = Text(" " * (digits + 1), style="dim")
    letters = [" "] * width
    for c in range(grid.columns):
        letters[c * 4 + 2] = grid.column_label(c + 1) or " "
    ruler.append("".join(letters).rstrip(), style="dim")
    lines = [ruler]
    for row in range(grid.rows):
        r = grid.top + row
        here = rows.get(r, {})
        cells: list[tuple[str, str]] = [(" ", "")] * width
        for x, at in here.items():
            glyph, style = _glyph(laid[at], at, grid, marks, backgrounds, roomy=True)
            for i, char in enumerate(glyph[:3].ljust(3)):
                cells[2 * x + i] = (char, style)
        for x in range(-2, 2 * grid.columns):
            if 0 <= 2 * x + 3 < width and side(here.get(x), here.get(x + 2)):
                cells[2 * x + 3] = ("|", WALL_STYLE)
        lines.append(text(cells, grid.row_label(row)))
        if row == grid.rows - 1:
            break
        below = rows.get(r + 1, {})
        edges: list[tuple[str, str]] = [(" ", "")] * width
        for k in range(0, 2 * grid.columns + 1):
            upper = k if k % 2 == r % 2 else k - 1
            lower = k if k % 2 == (r + 1) % 2 else k - 1
            if 2 * k < width and side(here.get(upper), below.get(lower)):
                edges[2 * k] = ("\\" if lower > upper else "/", WALL_STYLE)
        lines.append(text(edges, ""))
    lines.append(ruler.copy())
    return lines


def legend(*, roomy: bool) -> Text:
    if roomy:
        text = (
            " · sand  [T] tablet  Fp fountain (colour)  <p> rock with a purple gem  , grass"
            "  2 flowers  2¹ in a bed P1 controls  2@1 assistant of P1 on 2 flowers  Y1 tree of P1"
            "  f7 a space you may choose"
        )
    else:
        text = (
            "· sand T tablet F fountain P/R/W rock with a gem , grass 2 flowers 2¹ in a bed P1"
            " controls @¹ assistant of P1 Y¹ tree of P1 f a space you may choose (column f)"
        )
    return Text(text, style="dim")


def footprint(
    game: Mapping[str, Any],
    cells: list[Hex],
    flowers: list[str],
    *,
    title: str,
    margin: tuple[int, int] = (2, 1),
) -> list[Text]:
    """A small window of the map around ``cells`` with the tile drawn on it: ``(2)`` ``(,)``.

    Roomy glyphs (4 characters a hex): the window spans the cells' rows and ``margin`` beyond
    them (half hexes sideways, rows up and down), so a person sees the tile against the spaces
    around it.
    """
    laid = spaces(game)
    rows = [r for _, r in cells]
    xs = [2 * q + r for q, r in cells]
    top, bottom = min(rows) - margin[1], max(rows) + margin[1]
    left, right = min(xs) - margin[0], max(xs) + margin[0]
    tile = dict(zip(cells, flowers, strict=False))
    out = [Text(title, style="bold")]
    for r in range(top, bottom + 1):
        line = Text()
        x = left
        while x <= right:
            q2 = x - r
            at = (q2 // 2, r)
            if q2 % 2 or at not in laid:
                line.append("  ")
                x += 1
                continue
            if at in tile:
                glyph = tile[at]
                line.append(f"({glyph})", style=MARK_STYLE)
            else:
                space = laid[at]
                line.append(space.roomy[:3].ljust(3), style=space.style)
            line.append(" ")
            x += 2
        out.append(line)
    return out
