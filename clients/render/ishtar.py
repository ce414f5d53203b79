"""Ishtar's screen: the hex map, piles and the can, the tree row, every player, the decision.

The map itself is :mod:`.ishtar_map` (spaces named by column letter and row number, marks for
the spaces a decision offers); this module draws the rest twice: as rich tables for the plain
line mode (:func:`board`), and as short lines for the full screen (:func:`body`), where a
rotation decision shows each rotation's footprint over the terrain around the chosen space, a
long list of spaces (a tile's first space: up to about a hundred) shows their names several to
a line rather than a label each, and a pile's choice leaves out the tile the piles panel shows.

What the server adds to explain the board (flowerbeds with their controllers, each fountain's
leaders, provisional scores) is drawn when the view has it (``flowerbeds``, ``fountains[i]
.leaders``, ``provisional``), and simply missing from the screen otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from clients.choices import label, space_of
from clients.hexgrid import Grid, Hex, as_hex
from clients.printable import printable
from clients.render import ishtar_map
from clients.render.common import add_row, seat_label
from clients.render.ishtar_map import GEM_STYLE, colours_of, player_style
from clients.render.layout import SIDE_LAST, SIDE_MIN, UNDER_MIN, Body, Panel
from clients.render.scene import (
    WRAP_UP_TO,
    WRAPPED_AT_MOST,
    Scene,
    chat_panel,
    decision_panel,
    kept_panel,
    log_panel,
    paged,
    prompt_of,
)

_hex = as_hex


def _gems(gems: Mapping[str, Any]) -> Text:
    text = Text()
    for colour in ("purple", "red", "white"):
        text.append(f"{colour[0]}{gems.get(colour, 0)} ", style=GEM_STYLE[colour])
    return text


def tile_short(tile: Mapping[str, Any] | None) -> str:
    """``, | 2 skill | 1``: each space's flowers (``,`` grass) and icon, for narrow panels."""
    if not tile:
        return "-"
    spaces = []
    for space in tile.get("spaces") or []:
        flowers = space.get("flowers", 0)
        text = f"{flowers}" if flowers else ","
        if space.get("icon"):
            text += f" {space['icon']}"
        spaces.append(text)
    return printable(" | ".join(spaces))


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
    return printable(f"{tile.get('shape', '?')} [{' | '.join(spaces)}]")


def grid_of(game: Mapping[str, Any]) -> Grid:
    return Grid.of_terrain(game.get("terrain"))


def offered_spaces(choices: list[dict[str, Any]]) -> set[Hex]:
    """The spaces the choices name (positions, assistants, trees, a token's first cell)."""
    from clients.choices import space_of

    return {at for c in choices if c.get("kind") != "rotation" and (at := space_of(c)) is not None}


def hex_map(
    game: Mapping[str, Any], choices: list[dict[str, Any]] | None = None, *, roomy: bool = True
) -> Text:
    """The map with its rulers and legend as one text (the plain mode's drawing)."""
    grid = grid_of(game)
    if not grid.spaces:
        return Text("(no terrain)")
    marks = ishtar_map.marks_of(game, offered_spaces(choices or []))
    text = Text(no_wrap=True, overflow="ignore")
    for line in ishtar_map.map_lines(game, grid, marks, roomy=roomy):
        text.append_text(line)
        text.append("\n")
    text.append_text(ishtar_map.legend(roomy=roomy))
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
    colours = colours_of(game)
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
            Text(seat_label(info, seat), style=player_style(colours, seat)),
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


def tree_name(data: Mapping[str, Any] | None, card: Any) -> str:
    """``Fig``: a tree card's name from the static data (``trees``), else its id as sent."""
    trees = data.get("trees") if data else None
    for tree in trees if isinstance(trees, list) else []:
        if isinstance(tree, Mapping) and tree.get("card") == card and tree.get("name"):
            return printable(tree["name"])
    return printable(card)


def _own(private: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> Text:
    planted = private.get("planted") or []
    cards = (
        ", ".join(f"{tree_name(data, c.get('card'))} ({c.get('points')} pts)" for c in planted)
        or "none"
    )
    return Text(
        f"Your planted tree cards: {cards} · {private.get('planted_points', 0)} points",
        style="italic",
    )


def board(
    view: Mapping[str, Any],
    info: Mapping[str, Any],
    choices: list[dict[str, Any]],
    data: Mapping[str, Any] | None = None,
) -> RenderableType:
    """The whole Ishtar screen for one audience (``data``: the static data, for tree names)."""
    shared = view.get("shared") or {}
    game = shared.get("game") or {}
    if not isinstance(game.get("terrain"), list):
        raise ValueError("a view without terrain rows")  # drawn as data instead
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
        parts.append(_own(own["private"], data))
    return Group(*parts)


def _at(event: Mapping[str, Any]) -> str:
    at = _hex(event.get("at"))
    return f"({at[0]},{at[1]})" if at else "?"


def _gems_text(gems: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} {c}" for c, n in gems.items() if n) or "no gems"


# The full screen -------------------------------------------------------------------------------


def body(scene: Scene) -> Body:
    """Ishtar on the full screen: the map on the left, the decision and the panels beside it."""
    game = scene.game
    grid = grid_of(game)
    side = scene.width - ishtar_map.map_width(grid, roomy=True) - 3
    roomy = side >= 40 and bool(grid.spaces)
    width = ishtar_map.map_width(grid, roomy=roomy)
    offered = (
        offered_spaces(scene.choices)
        if scene.shown is None
        else offered_spaces([scene.choices[i] for i in scene.shown if 0 <= i < len(scene.choices)])
    )
    marks = ishtar_map.marks_of(game, offered)
    outlined = roomy and scene.height - 3 >= 2 * grid.rows + 5
    if not grid.spaces:
        main: list[Text] = []
    elif outlined:
        main = ishtar_map.outlined_lines(game, grid, marks)
    else:
        main = ishtar_map.map_lines(game, grid, marks, roomy=roomy)
    column = scene.width - width - 3
    if column < SIDE_MIN and not (column >= SIDE_LAST and scene.height - 3 - len(main) < UNDER_MIN):
        column = scene.width
    decision = _decision(scene, grid, column)
    trees = scene.turn.get("decision") in ("plant", "tree", "reserve_tree")
    piles, display = _piles_panel(scene), _display_panel(scene)
    tiles = scene.turn.get("decision") in ("choose", "pay")
    panels = [
        decision,
        *((piles,) if tiles else ()),
        _status_panel(scene),
        kept_panel(scene),
        *((display,) if trees else ()),
        _players_panel(scene),
        _standings_panel(scene),
        *(() if tiles else (piles,)),
        *(() if trees else (display,)),
    ]
    key = [ishtar_map.legend(roomy=roomy)]
    if outlined:
        key.append(Text("| / \\ outline each tile laid", style="dim"))
    below = [log_panel(scene), chat_panel(scene), Panel("Key", key)]
    return Body(
        main=main,
        panels=[p for p in panels if p is not None],
        main_width=width,
        below=[p for p in below if p is not None],
    )


def _decision(scene: Scene, grid: Grid, width: int) -> Panel | None:
    choices = scene.choices
    if scene.turn.get("decision") == "rotation" and choices and scene.shown is None:
        return _footprints(scene, grid, width)
    if offered_spaces(choices):
        hint = Text("Type a space (f7: letter on it, row)", style="dim")
        if scene.shown is None and len(choices) > WRAP_UP_TO:
            return _spaces(scene, grid, hint, width)
        return decision_panel(scene, grid, hint, least=3, width=width)
    # A short list is wrapped whole (WRAPPED_AT_MOST lines): it gets the lines for that.
    return decision_panel(scene, grid, width=width, text=_beside_piles, least=WRAPPED_AT_MOST)


def _spaces(scene: Scene, grid: Grid, hint: Text, width: int) -> Panel:
    """A long list of spaces (a tile's first space, an assistant's flowerbed): their names,
    several to a line, since the map marks them; any choice that is not a space numbered under
    them. The whole labels come back with a filter (``/f7``)."""
    names: list[str] = []
    others: list[Text] = []
    digits = len(str(len(scene.choices)))
    for i, choice in enumerate(scene.choices):
        at = space_of(choice) if choice.get("kind") != "rotation" else None
        if at is not None and at in grid.spaces:
            names.append(grid.name(at))
            continue
        line = Text(f"{i + 1:>{digits}} ", style="bold cyan")
        line.append(label(scene.mirror.game, choice, grid))
        others.append(line)
    rows: list[Text] = []
    row = Text()
    for name in names:
        if row.cell_len and row.cell_len + 1 + len(name) > width:
            rows.append(row)
            row = Text()
        if row.cell_len:
            row.append(" ")
        row.append(name, style="bold cyan")
    if row.cell_len:
        rows.append(row)
    top = [hint, Text(f"{len(names)} spaces, marked on the map:", style="dim")]
    lines = rows + others
    pager = paged(scene, top, lines)
    least = 1 + len(top) + min(len(lines), NAME_LINES)
    return Panel(Text(prompt_of(scene)), top + lines, least=least, pager=pager)


NAME_LINES = 9
"""Lines of space names shown before the list pages (102 first spaces at 80x24: 9 lines)."""


_TILE_SAID = re.compile(r": [^:()]*\btile \([^)]*\)")


def _beside_piles(scene: Scene, choice: Mapping[str, Any]) -> str | None:
    """A pile's choice without the tile it would take when the piles panel beside it shows
    that tile (``take from pile 3, paying 2 gems to move the watering can there``): what
    differs between the piles, the cost, then fits in a narrow column."""
    if "pile" not in choice or scene.turn.get("decision") not in ("choose", "pay"):
        return None
    text = label(scene.mirror.game, choice)
    return _TILE_SAID.sub("", text, count=1) or None


def _footprints(scene: Scene, grid: Grid, width: int) -> Panel:
    """Each rotation of the tile in hand, drawn on the spaces around the chosen one."""
    game = scene.game
    pending = game.get("pending") or {}
    tile = pending.get("tile") or {}
    glyphs = [
        (str(sp.get("flowers")) if sp.get("flowers") else ",") for sp in tile.get("spaces") or []
    ]
    for margin in ((2, 1), (1, 1), (1, 0), (0, 0)):
        drawings: list[list[Text]] = []
        for i, choice in enumerate(scene.choices):
            cells = [h for h in (as_hex(c) for c in choice.get("cells") or []) if h is not None]
            if not cells:
                drawings.append([Text(f"{i + 1}: {label('ishtar', choice)}")])
                continue
            names = " ".join(grid.name(c) for c in cells if c in grid.spaces)
            heading = f"{i + 1}: {names}"
            drawings.append(ishtar_map.footprint(game, cells, glyphs, title=heading, margin=margin))
        cell_width = max((line.cell_len for d in drawings for line in d), default=10) + 2
        per_row = max(width // cell_width, 1)
        if per_row >= min(len(drawings), 3):
            break
    lines: list[Text] = []
    for start in range(0, len(drawings), per_row):
        group = drawings[start : start + per_row]
        height = max(len(d) for d in group)
        for row in range(height):
            line = Text()
            for d in group:
                part = d[row] if row < len(d) else Text("")
                line.append_text(part)
                line.append(" " * (cell_width - part.cell_len))
            lines.append(line)
    title = Text(prompt_of(scene) + f": {tile_short(tile)}")
    hints = [Text("Type a number: (2) flowers (,) grass", style="dim")]
    if title.cell_len > width:  # the tile on a line of its own rather than cut off the title
        title = Text(prompt_of(scene))
        hints.insert(0, Text(f"The tile: {tile_short(tile)}"))
    return Panel(title, [*hints, *lines], least=len(lines) + 1 + len(hints))


def _status_panel(scene: Scene) -> Panel:
    game = scene.game
    pending = game.get("pending") or {}
    text = Text(f"Turn {game.get('turn')}", style="bold")
    turn = scene.turn
    if turn and turn.get("seat") != scene.mirror.seat:
        who = seat_label(scene.mirror.info, turn.get("seat"))
        text.append(f" · {who}: {prompt_of(scene).lower()}")
    lines = [text]
    if pending.get("tile"):
        lines.append(Text(f"Tile in hand: {tile_text(pending['tile'])}"))
    if pending.get("pay_left"):
        lines.append(Text(f"{pending['pay_left']} gem(s) to pay for the {pending.get('pay_for')}"))
    if pending.get("take_left"):
        lines.append(Text(f"{pending['take_left']} gem(s) to take"))
    if game.get("triggered"):
        lines.append(Text("END TRIGGERED: this is the last round", style="bold red"))
    return Panel(None, lines, least=1)


def _players_panel(scene: Scene) -> Panel:
    game = scene.game
    info = scene.mirror.info
    colours = colours_of(game)
    lines = []
    for p in game.get("players") or []:
        seat = int(p.get("seat", 0))
        line = Text(seat_label(info, seat), style=player_style(colours, seat))
        if seat == scene.mirror.seat:
            line.append(" (you)")
        line.append(_score(scene, seat), style="bold")
        line.append(" ")
        line.append_text(_gems(p.get("gems") or {}))
        line.append(f"· trees {p.get('planted')}")
        lines.append(line)
        more = Text(
            f"  assistants: {p.get('assistants')} free {p.get('placed')} out"
            f" {p.get('blocked')} locked",
            style="dim",
        )
        skills = "".join(sorted(p.get("skills") or {}))
        if skills:
            more.append(f" · skills {printable(skills)}")
        lines.append(more)
        reserved = []
        if p.get("reserved_tree"):
            reserved.append(f"tree {printable(p['reserved_tree'].get('name'))}")
        if p.get("reserved_tile"):
            reserved.append(f"tile {tile_text(p['reserved_tile'])}")
        if reserved:
            lines.append(Text("   reserved: " + "; ".join(reserved), style="dim"))
    own = scene.mirror.own
    private = own.get("private") if own else None
    if isinstance(private, dict):
        planted = private.get("planted") or []
        cards = ", ".join(
            f"{tree_name(scene.data, c.get('card'))} {c.get('points')}" for c in planted
        )
        lines.append(
            Text(f"Your tree cards: {cards or 'none'} = {private.get('planted_points', 0)} pts")
        )
    return Panel("Players: points so far, gems p r w", lines, least=len(lines) + 1)


def _score(scene: Scene, seat: int) -> str:
    """`` 12 pts`` (provisional, public: the view's ``provisional``), with one's own planted
    trees for oneself (`` 12+4 pts``) and a ``+?`` for the others' face-down trees."""
    provisional = scene.game.get("provisional")
    if not isinstance(provisional, list) or not 0 <= seat < len(provisional):
        return ""
    entry = provisional[seat]
    if not isinstance(entry, dict):
        return ""
    total = entry.get("total", sum(v for v in entry.values() if type(v) is int))
    if seat != scene.mirror.seat:
        return f" {total}+? pts" if scene.mirror.seat is not None else f" {total} pts"
    own = scene.mirror.own
    private = own.get("private") if own else None
    mine = private.get("planted_points", 0) if isinstance(private, dict) else 0
    return f" {total}+{mine} pts" if mine else f" {total} pts"


def _piles_panel(scene: Scene) -> Panel:
    game = scene.game
    can = game.get("can")
    lines = []
    for i, pile in enumerate(game.get("piles") or []):
        top = pile.get("top")
        shown = f"top {tile_short(top)}" if top else "face down"
        if not pile.get("count"):
            shown = "empty"
        line = Text(f"{i + 1} ", style="bold")
        line.append(f"{printable(pile.get('cup')):<8} ×{pile.get('count')}  {shown}")
        if can == i:
            line.append(" ◀ can", style="bold cyan")
        lines.append(line)
    wanted = scene.turn.get("decision") in ("choose", "pay")  # the piles are the decision
    return Panel("Piles", lines, least=len(lines) + 1 if wanted else 3)


def _display_panel(scene: Scene) -> Panel:
    lines = []
    for card in scene.game.get("display") or []:
        cost = card.get("cost") or {}
        line = Text(f"{printable(card.get('name')):<13} ")
        for colour in ("purple", "red", "white"):
            if cost.get(colour):
                line.append(f"{cost[colour]}{colour[0]} ", style=GEM_STYLE[colour])
        line.append(f"→ {card.get('points')} pts")
        if not card.get("marker"):
            line.append(" (no tree marker left)", style="dim")
        lines.append(line)
    return Panel("Tree row (cost → points)", lines, least=3)


def _standings_panel(scene: Scene) -> Panel | None:
    """Fountain leaders, flowerbed controllers and provisional scores, when the view has them."""
    game = scene.game
    info = scene.mirror.info
    lines: list[Text] = []
    grid = grid_of(game)
    for fountain in game.get("fountains") or []:
        leaders = fountain.get("leaders")
        if isinstance(leaders, list):
            at = as_hex(fountain.get("at"))
            where = grid.name(at) if at and at in grid.spaces else "?"
            points = fountain.get("points")
            line = Text(f"{where} {printable(fountain.get('colour'))}")
            line.append(f" {points}pts: " if points is not None else ": ")
            who = ", ".join(f"P{s + 1}" for s in leaders if type(s) is int)
            line.append(f"{who} lead{'s' * (len(leaders) == 1)}" if who else "nobody yet")
            counts = fountain.get("spaces")
            if isinstance(counts, list) and any(counts):
                line.append(" (" + " ".join(f"P{i + 1}:{n}" for i, n in enumerate(counts)) + ")")
            lines.append(line)
    if not lines:
        return None
    del info
    return Panel("Fountains: who leads (flower spaces)", lines, least=min(len(lines), 4) + 1)
