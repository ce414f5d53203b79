"""Ishtar's screen: the hex map as a text grid, piles and the can, the tree row, every player.

The map is drawn from ``terrain`` (one row per ``r``: the first ``q`` and one code per space,
``.`` sand, ``T`` tablet, ``F`` fountain, ``p``/``r``/``w`` a rock of that colour, blank for no
space) with ``laid`` on top, in the order things were laid: tiles and bloom tokens set the
flowers of their spaces (0 flowers: grass), trees and assistants stand on a space.

Pointy-topped axial hexes ``(q, r)`` sit at column ``2q + r`` in half-hex steps, so each space
is 3 characters wide with one blank between and each row shifts by two characters. During a
decision whose choices name a space (``at``: positions, trees, assistants; a rotation: the last
space it would cover), each such space shows the number of its choice instead of what lies
there, so the player can pick on the map.

Cells (3 characters): `` · `` sand, ``[T]`` tablet, `` Fr`` fountain (its colour's initial),
``<p>`` a rock still holding a gem of that colour, `` , `` grass, `` 2 `` two flowers, ``2@1`` an
assistant of P1 on a two-flower space, `` Y1`` a tree of P1, `` * `` where space 0 of the tile
in hand goes (while its rotation is chosen).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from clients.render.common import EventText, add_row, seat_label

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
Cell = tuple[str, str]
"""Three characters and their style."""


def _hex(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (value[0], value[1])
    return None


def _gems(gems: Mapping[str, Any]) -> Text:
    text = Text()
    for colour in ("purple", "red", "white"):
        text.append(f"{colour[0]}{gems.get(colour, 0)} ", style=GEM_STYLE[colour])
    return text


def tile_text(tile: Mapping[str, Any] | None) -> str:
    """``chevron [1 assistant | 1 | grass]``: each space's flowers and icon."""
    if not tile:
        return "-"
    spaces = []
    for space in tile.get("spaces") or []:
        flowers = space.get("flowers", 0)
        text = f"{flowers}" if flowers else "grass"
        if space.get("icon"):
            text += f" {space['icon']}"
        spaces.append(text)
    return f"{tile.get('shape', '?')} [{' | '.join(spaces)}]"


def _terrain_cells(game: Mapping[str, Any]) -> dict[tuple[int, int], Cell]:
    cells: dict[tuple[int, int], Cell] = {}
    fountains = {_hex(f.get("at")): f.get("colour", "?") for f in game.get("fountains") or []}
    rock_gems = game.get("rock_gems") or {}
    for row in game.get("terrain") or []:
        r, q0, codes = row["r"], row["q"], row["cells"]
        for i, code in enumerate(codes):
            at = (q0 + i, r)
            if code == " ":
                continue
            if code == ".":
                cells[at] = (" · ", "dim")
            elif code == "T":
                cells[at] = ("[T]", "yellow")
            elif code == "F":
                colour = str(fountains.get(at, "?"))
                cells[at] = (f" F{colour[0]}", "bold " + GEM_STYLE.get(colour, "cyan"))
            else:
                gem = rock_gems.get(f"{at[0]},{at[1]}")
                if gem:
                    cells[at] = (f"<{gem[0]}>", GEM_STYLE.get(gem, ""))
                else:
                    cells[at] = ("< >", "dim")
    return cells


def _laid(game: Mapping[str, Any], cells: dict[tuple[int, int], Cell], colours: list[str]) -> None:
    flowers: dict[tuple[int, int], int] = {}
    for item in game.get("laid") or []:
        if "spaces" in item:
            for space in item["spaces"]:
                at = (space[0], space[1])
                flowers[at] = int(space[2])
                n = flowers[at]
                cells[at] = (f" {n} ", "bold green") if n else (" , ", "green")
        elif "tree" in item and (spot := _hex(item.get("at"))) is not None:
            seat = int(item["tree"])
            cells[spot] = (f" Y{seat + 1}", _player_style(colours, seat))
        elif "assistant" in item and (spot := _hex(item.get("at"))) is not None:
            seat = int(item["assistant"])
            cells[spot] = (f"{flowers.get(spot, 0)}@{seat + 1}", _player_style(colours, seat))


def _player_style(colours: list[str], seat: int) -> str:
    colour = colours[seat] if 0 <= seat < len(colours) else ""
    return PLAYER_STYLE.get(colour, "bold")


def choice_spaces(choices: list[dict[str, Any]]) -> dict[tuple[int, int], int]:
    """Space -> choice number, for choices that name one space no other choice names.

    A rotation is shown on the last space it would cover (its ``cells``, space 0 first, which is
    the same for all of them).
    """
    found: dict[tuple[int, int], list[int]] = {}
    for i, choice in enumerate(choices):
        at = _hex(choice.get("at"))
        if at is not None and choice.get("kind") == "rotation":
            cells = choice.get("cells")
            at = _hex(cells[-1]) if isinstance(cells, list) and cells else None
        if at is not None:
            found.setdefault(at, []).append(i + 1)
    return {at: numbers[0] for at, numbers in found.items() if len(numbers) == 1}


def hex_map(game: Mapping[str, Any], choices: list[dict[str, Any]] | None = None) -> Text:
    """The terrain with everything on it, one text line per row ``r``."""
    colours = [str(p.get("colour", "")) for p in game.get("players") or []]
    cells = _terrain_cells(game)
    _laid(game, cells, colours)
    pending = game.get("pending") or {}
    marked = {h for h in (_hex(c) for c in pending.get("placed") or []) if h}
    anchor = _hex(pending.get("at"))
    if anchor:
        marked.add(anchor)
    numbers = choice_spaces(choices or [])
    if not cells:
        return Text("(no terrain)")
    xs = [2 * q + r for q, r in cells]
    low, high = min(xs), max(xs)
    rows = sorted({r for _, r in cells})
    # A grid must never be re-wrapped at spaces: on a narrow terminal let the lines run long.
    text = Text(no_wrap=True, overflow="ignore")
    text.append("  r  q0\n", style="dim")
    for r in rows:
        row = sorted(q for q, rr in cells if rr == r)
        line_cells = {2 * q + r: (q, r) for q in row}
        text.append(f"{r:>3} {row[0]:>3} ", style="dim")
        x = low
        while x <= high:
            at = line_cells.get(x)
            if at is None:
                text.append("  ")
                x += 1
                continue
            chars, style = cells[at]
            if at in numbers:
                chars, style = f"{numbers[at]:>3}", "bold black on cyan"
            elif at == anchor and not pending.get("placed"):
                chars, style = " * ", "bold black on cyan"
            elif at in marked:
                style = (style + " reverse").strip()
            text.append(chars, style=style)
            text.append(" ")
            x += 2
        text.rstrip()
        text.append("\n")
    text.append(
        " · sand  [T] tablet  F fountain  <p> rock with gem  , grass  2 flowers"
        "  2@1 assistant of P1  Y1 tree of P1  * tile in hand",
        style="dim",
    )
    return text


def _piles(game: Mapping[str, Any]) -> Table:
    table = Table(title="Piles", title_justify="left", show_edge=False)
    for column in ("pile", "cup", "left", "top tile", "can"):
        table.add_column(column)
    can = game.get("can")
    for i, pile in enumerate(game.get("piles") or []):
        top = pile.get("top")
        shown = tile_text(top) + (f" ({top['id']})" if top else "") if top else "face down"
        if not pile.get("count"):
            shown = "empty"
        add_row(
            table,
            str(i + 1),
            str(pile.get("cup")),
            str(pile.get("count")),
            shown,
            "can" if can == i else "",
        )
    return table


def _display(game: Mapping[str, Any]) -> Table:
    table = Table(title="Tree row", title_justify="left", show_edge=False)
    for column in ("card", "tree", "cost", "points", "marker"):
        table.add_column(column)
    for card in game.get("display") or []:
        cost = card.get("cost") or {}
        price = Text()
        for colour in ("purple", "red", "white"):
            if cost.get(colour):
                price.append(f"{cost[colour]}{colour[0]} ", style=GEM_STYLE[colour])
        add_row(
            table,
            str(card.get("card")),
            str(card.get("name")),
            price,
            str(card.get("points")),
            "yes" if card.get("marker") else "no",
        )
    return table


def _players(game: Mapping[str, Any], info: Mapping[str, Any]) -> Table:
    table = Table(title="Players", title_justify="left", show_edge=False)
    for column in ("player", "colour", "gems", "assistants", "skills", "trees", "reserved"):
        table.add_column(column)
    colours = [str(p.get("colour", "")) for p in game.get("players") or []]
    for p in game.get("players") or []:
        seat = int(p.get("seat", 0))
        skills = ", ".join(
            k + (f"({len(v)} gems)" if v else "") for k, v in (p.get("skills") or {}).items()
        )
        reserved = []
        if p.get("reserved_tree"):
            reserved.append(f"tree {p['reserved_tree'].get('name')}")
        if p.get("reserved_tile"):
            reserved.append(f"tile {tile_text(p['reserved_tile'])}")
        add_row(
            table,
            Text(seat_label(info, seat), style=_player_style(colours, seat)),
            str(p.get("colour")),
            _gems(p.get("gems") or {}),
            f"{p.get('assistants')} free, {p.get('placed')} out, {p.get('blocked')} locked",
            skills or "-",
            str(p.get("planted")),
            "; ".join(reserved) or "-",
        )
    return table


def _status(game: Mapping[str, Any], step: object) -> Text:
    pending = game.get("pending") or {}
    text = Text()
    text.append(f"Turn {game.get('turn')}", style="bold")
    text.append(f" · step {step}")
    if pending.get("tile"):
        text.append(f" · tile in hand: {tile_text(pending['tile'])} ({pending['tile'].get('id')})")
    if pending.get("at"):
        text.append(f" at ({pending['at'][0]},{pending['at'][1]})")
    if pending.get("pay_left"):
        text.append(f" · {pending['pay_left']} gem(s) to pay for {pending.get('pay_for')}")
    if pending.get("take_left"):
        text.append(f" · {pending['take_left']} gem(s) to take")
    if game.get("triggered"):
        text.append(" · END TRIGGERED: last round", style="bold red")
    stock = game.get("stock") or {}
    text.append(
        f"\nTree deck {game.get('deck')} · tree markers {game.get('markers')} · "
        f"bloom tokens {len(game.get('tokens') or [])} · gem stock "
    )
    text.append_text(_gems(stock))
    return text


def _own(private: Mapping[str, Any]) -> Text:
    planted = private.get("planted") or []
    cards = ", ".join(f"{c.get('card')} ({c.get('points')} pts)" for c in planted) or "none"
    return Text(
        f"Your planted tree cards: {cards} · {private.get('planted_points', 0)} points",
        style="italic",
    )


def board(
    view: Mapping[str, Any], info: Mapping[str, Any], choices: list[dict[str, Any]]
) -> RenderableType:
    """The whole Ishtar screen for one audience."""
    shared = view.get("shared") or {}
    game = shared.get("game") or {}
    turn = shared.get("turn")
    step = turn.get("decision") if isinstance(turn, dict) else "over"
    own = view.get("own")
    parts: list[RenderableType] = [
        _status(game, step),
        hex_map(game, choices),
        _piles(game),
        _display(game),
        _players(game, info),
    ]
    if isinstance(own, dict) and isinstance(own.get("private"), dict):
        parts.append(_own(own["private"]))
    return Group(*parts)


def _at(event: Mapping[str, Any]) -> str:
    at = _hex(event.get("at"))
    return f"({at[0]},{at[1]})" if at else "?"


def _gems_text(gems: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} {c}" for c, n in gems.items() if n) or "no gems"


EVENTS: dict[str, EventText] = {
    "tile_taken": lambda e, n: f"{n(e['seat'])} takes {e['tile']} from pile {e['pile'] + 1}",
    "tile_placed": lambda e, n: f"{n(e['seat'])} places {e['tile']} at {_at(e)}",
    "tree_planted": lambda e, n: f"{n(e['seat'])} plants a tree at {_at(e)}",
    "tree_bought": lambda e, n: (
        f"{n(e['seat'])} buys a tree card" + (f" ({e['card']})" if e.get("card") else "")
    ),
    "assistant_placed": lambda e, n: f"{n(e['seat'])} puts an assistant at {_at(e)}",
    "gems_collected": lambda e, n: f"{n(e['seat'])} collects {_gems_text(e['gems'])}",
    "skill_unlocked": lambda e, n: f"{n(e['seat'])} unlocks skill {e['skill']}",
    "can_aimed": lambda e, n: (
        f"{n(e['seat'])} aims the can at pile {e['pile'] + 1}"
        + (f" for {e['cost']} gem(s)" if e.get("cost") else "")
    ),
    "can_moved": lambda e, n: f"{n(e['seat'])} moves the can to pile {e['to'] + 1}",
    "gem_paid": lambda e, n: f"{n(e['seat'])} pays a {e['colour']} gem for the {e.get('for')}",
    "gem_taken": lambda e, n: f"{n(e['seat'])} takes a {e['colour']} gem",
    "tile_revealed": lambda e, n: f"pile {e['pile'] + 1} shows {e['tile']}",
    "tile_reserved": lambda e, n: f"{n(e['seat'])} reserves {e['tile']}",
    "reserved_tile_taken": lambda e, n: f"{n(e['seat'])} takes the reserved tile {e['tile']}",
    "bloom_placed": lambda e, n: f"{n(e['seat'])} lays bloom token {e['token']}",
    "skill_chosen": lambda e, n: f"{n(e['seat'])} chooses skill {e['skill']}",
    "special_declined": lambda e, n: f"{n(e['seat'])} does no special action",
    "special_unavailable": lambda e, n: f"{n(e['seat'])} cannot use the {e.get('icon')} icon",
    "assistant_freed": lambda e, n: f"{n(e['seat'])} frees an assistant",
    "display_refilled": lambda e, n: "the tree row is refilled: " + ", ".join(e["cards"]),
    "turn_ended": lambda e, n: f"{n(e['seat'])} ends the turn",
    "end_triggered": lambda e, n: f"{n(e['seat'])} triggers the end: last round",
    "game_over": lambda e, n: (
        "the match is over: scores "
        + ", ".join(f"{n(i)} {s}" for i, s in enumerate(e.get("scores") or []))
    ),
}
