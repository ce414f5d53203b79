"""Yspahan's screen: the city by quarter and souk, the steward's path, the tower, the caravan.

The view's city is one list per souk (``"br2": [null, 0]``: the second shop holds P1's good). A
souk is drawn ``br2(3) [. 1]``: its id, its VP when complete, and each shop's occupant (``.``
empty). The steward's path is a cross of squares ``W10..W1 C E1..E7`` and ``N4..N1 C S1..S7``;
it is drawn as two lines with the steward's square highlighted.

On the full screen (:func:`body`) the same board takes a line per quarter: shops a ``place``
decision offers show ``+``, squares a steward decision can reach are marked ``›`` before their
name, and the steward stands in brackets (``[W2]``). A player types a shop (``br3.1``), a souk
to fill (``br3``) or a square (``W9``) as well as a choice's number.

The souks' quarters and points, the path's squares and the cards' effects are printed on the
board, not sent in the view: they come from the game's static data (``GET /games/yspahan``,
``data`` below), never from a table of the client's own. Without it (not fetched yet, or a
server that does not serve it) the board is still drawn from the view alone: souks grouped by
their prefix without points, the steward's square and the squares he may reach as a list, cards
by their id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from clients.choices import label
from clients.printable import printable
from clients.render.common import add_row, seat_label
from clients.render.layout import GAP, SIDE_MIN, Body, Panel
from clients.render.scene import (
    Scene,
    chat_panel,
    decision_panel,
    kept_panel,
    log_panel,
    paged,
    prompt_of,
)

Data = Mapping[str, Any] | None
"""The static data of ``GET /games/yspahan`` (None: not available)."""
SEAT_STYLE = ("bold yellow", "bold blue", "bold green", "bold red")


def _seat_style(seat: int) -> str:
    return SEAT_STYLE[seat % len(SEAT_STYLE)]


def souks_by_quarter(city: Mapping[str, Any], data: Data) -> dict[str, list[str]]:
    """The view's souks by quarter in the board's order (the data's), else by their prefix."""
    quarters = data.get("quarters") if data else None
    by_quarter: dict[str, list[str]] = {}
    if isinstance(quarters, list):
        for quarter in quarters:
            if isinstance(quarter, Mapping) and isinstance(quarter.get("souks"), list):
                name = printable(quarter.get("quarter"))
                by_quarter[name] = [str(s) for s in quarter["souks"] if s in city]
    listed = {s for souks in by_quarter.values() for s in souks}
    for souk in sorted(city, key=_souk_order):
        if souk not in listed:
            by_quarter.setdefault(printable(souk.rstrip("0123456789")), []).append(souk)
    return by_quarter


def _souk_order(souk: str) -> tuple[str, int]:
    prefix = souk.rstrip("0123456789")
    number = souk[len(prefix) :]
    return prefix, int(number) if number.isdigit() else 0


def souk_points(data: Data) -> dict[str, int]:
    """Each souk's points when complete, from the data."""
    souks = data.get("souks") if data else None
    return {
        str(s.get("souk")): s["points"]
        for s in (souks if isinstance(souks, list) else [])
        if isinstance(s, Mapping) and type(s.get("points")) is int
    }


def steward_arms(data: Data) -> dict[str, list[str]] | None:
    """The path's four arms from the centre outwards (``west``: ``W1``...), from the data."""
    steward = data.get("steward") if data else None
    arms = steward.get("arms") if isinstance(steward, Mapping) else None
    if not isinstance(arms, Mapping):
        return None
    found = {str(k): [str(x) for x in v] for k, v in arms.items() if isinstance(v, list)}
    return found if {"west", "east", "north", "south"} <= set(found) else None


def _named(data: Data, part: str, key: str, value: Any) -> str:
    """The ``name`` the data gives the entry of ``part`` whose ``key`` is ``value``, else the
    value itself (an id, shown as sent)."""
    entries = data.get(part) if data else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and entry.get(key) == value and entry.get("name"):
            return printable(entry["name"])
    return printable(value)


def card_name(data: Data, card: Any) -> str:
    """``3 gold``: a card's name from the data, else its id."""
    return _named(data, "cards", "card", card)


def building_name(data: Data, building: Any) -> str:
    """``Camel pen``: a building's name from the data, else its id."""
    return _named(data, "buildings", "building", building)


def card_text(data: Data, card: Any) -> str:
    """``3 gold (receive 3 gold)``: a card's name and effect from the data, else its id."""
    cards = data.get("cards") if data else None
    for entry in cards if isinstance(cards, list) else []:
        if isinstance(entry, Mapping) and entry.get("card") == card:
            return printable(f"{entry.get('name')} ({entry.get('text')})")
    return printable(card)


def _city(game: Mapping[str, Any], highlight: set[str], data: Data) -> Table:
    table = Table(title="City", title_justify="left", show_edge=False, show_header=False)
    table.add_column("quarter", style="bold")
    table.add_column("souks")
    city = game.get("city") or {}
    points = souk_points(data)
    # Patches may reorder the view's keys: draw quarters and souks in the board's order.
    for quarter, souks in souks_by_quarter(city, data).items():
        if not souks:
            continue
        line = Text()
        for souk in souks:
            vp = points.get(souk)
            line.append(souk + (f"({vp})" if vp else ""), style="dim")
            line.append(" [")
            shops = city[souk]
            for i, seat in enumerate(shops):
                style = _seat_style(seat) if isinstance(seat, int) else "dim"
                if f"{souk}.{i}" in highlight:
                    style += " reverse"
                line.append(str(seat + 1) if isinstance(seat, int) else ".", style=style)
                if i < len(shops) - 1:
                    line.append(" ")
            line.append("]  ")
        add_row(table, quarter, line)
    return table


def _square(text: Text, square: str, steward: str) -> None:
    if square == steward:
        text.append(f"[{square}]", style="bold black on yellow")
    else:
        text.append(square, style="dim")
    text.append(" ")


def steward_path(steward: str, data: Data = None) -> Text:
    """The cross of squares with the steward's square highlighted (the data's squares)."""
    text = Text("Steward: ", style="bold")
    arms = steward_arms(data)
    if arms is None:
        text.append(f"[{printable(steward)}]", style="bold black on yellow")
        return text
    for square in reversed(arms["west"]):
        _square(text, square, steward)
    _square(text, "C", steward)
    for square in arms["east"]:
        _square(text, square, steward)
    text.append("\n         north ")
    for square in reversed(arms["north"]):
        _square(text, square, steward)
    text.append("| C | ")
    for square in arms["south"]:
        _square(text, square, steward)
    text.append("south")
    return text


def _tower(game: Mapping[str, Any]) -> Table:
    table = Table(title="Tower", title_justify="left", show_edge=False)
    for column in ("floor", "value", "white dice", "yellow dice"):
        table.add_column(column)
    for floor in reversed(game.get("tower") or []):
        dice = int(floor.get("white", 0)) + int(floor.get("yellow", 0))
        add_row(
            table,
            str(floor.get("floor")),
            str(floor.get("value")),
            str(floor.get("white")),
            str(floor.get("yellow")),
            style="" if dice else "dim",
        )
    return table


def _caravan(game: Mapping[str, Any]) -> Text:
    caravan = game.get("caravan") or {}
    goods = caravan.get("goods") or []
    capacity = int(caravan.get("capacity") or 0)
    text = Text(f"Caravan ({len(goods)}/{capacity}): ", style="bold")
    per_row = max(capacity // 3, 1)
    for i in range(capacity):
        if i and i % per_row == 0:
            text.append("| ")
        seat = goods[i] if i < len(goods) else None
        if isinstance(seat, int):
            text.append(f"{seat + 1} ", style=_seat_style(seat))
        else:
            text.append(". ", style="dim")
    return text


def _players(game: Mapping[str, Any], info: Mapping[str, Any], data: Data) -> Table:
    table = Table(title="Players", title_justify="left", show_edge=False)
    for column in ("player", "VP", "gold", "camels", "cards", "buildings", "credits", "breakdown"):
        table.add_column(column)
    for seat, p in enumerate(game.get("players") or []):
        credits = []
        if p.get("no_camels"):
            credits.append(f"{p['no_camels']}x no camels")
        if p.get("no_gold"):
            credits.append(f"{p['no_gold']}x no gold")
        breakdown = " ".join(f"{k} {v}" for k, v in (p.get("breakdown") or {}).items() if v)
        add_row(
            table,
            Text(seat_label(info, seat), style=_seat_style(seat)),
            str(p.get("score")),
            str(p.get("gold")),
            str(p.get("camels")),
            str(p.get("cards")),
            ", ".join(building_name(data, b) for b in p.get("buildings") or []) or "-",
            ", ".join(credits) or "-",
            breakdown or "-",
        )
    return table


def _status(game: Mapping[str, Any], info: Mapping[str, Any], stage: object, data: Data) -> Text:
    text = Text()
    text.append(f"Week {game.get('week')} · day {game.get('day')}", style="bold")
    text.append(f" · day pawn {seat_label(info, game.get('pawn'))}")
    order = " ".join(f"P{s + 1}" for s in game.get("order") or [] if isinstance(s, int))
    text.append(f" · order {order} · stage {stage}")
    text.append(f" · acting {seat_label(info, game.get('actor'))}")
    pending = game.get("pending") or {}
    if pending.get("goods"):
        text.append(f"\nGoods to place: {pending['goods']} in {pending.get('quarter')}")
    if pending.get("value"):
        text.append(f"\nSteward moves: {pending['value']}")
    if pending.get("queue"):
        text.append(f"\nGoods leaving the city: {', '.join(pending['queue'])}")
    if pending.get("card"):
        text.append(f"\nCard in play: {card_name(data, pending['card'])}")
    discard = ", ".join(game.get("discard") or []) or "none"
    text.append(f"\nDeck {game.get('deck')} cards · discard: {discard}", style="dim")
    return text


def _hand(private: Mapping[str, Any], data: Data) -> Text:
    hand = private.get("hand") or []
    cards = "; ".join(card_text(data, c) for c in hand) or "no cards"
    return Text(f"Your hand: {cards}", style="italic")


def board(
    view: Mapping[str, Any],
    info: Mapping[str, Any],
    choices: list[dict[str, Any]],
    data: Data = None,
) -> RenderableType:
    """The whole Yspahan screen for one audience; shops named by a choice are highlighted."""
    shared = view.get("shared") or {}
    game = shared.get("game") or {}
    turn = shared.get("turn")
    stage = turn.get("decision") if isinstance(turn, dict) else "over"
    own = view.get("own")
    highlight = {str(c["shop"]) for c in choices if isinstance(c.get("shop"), str)}
    parts: list[RenderableType] = [
        _status(game, info, stage, data),
        _city(game, highlight, data),
        steward_path(str(game.get("steward", "")), data),
        _tower(game),
        _caravan(game),
        _players(game, info, data),
    ]
    if isinstance(own, dict) and isinstance(own.get("private"), dict):
        parts.append(_hand(own["private"], data))
    return Group(*parts)


def _gain(e: Mapping[str, Any]) -> str:
    return ", ".join(f"{v} {k}" for k, v in e.items() if k not in ("kind", "seat"))


# The full screen -------------------------------------------------------------------------------


def city_lines(
    game: Mapping[str, Any],
    offered: set[str],
    data: Data = None,
    leaving: frozenset[str] = frozenset(),
) -> list[Text]:
    """``sacks   sk3(3)[. 1 +] ...``: a line per quarter; ``+`` a shop the decision offers; the
    goods of ``leaving`` (shops a steward move offered would empty) in reverse video."""
    city = game.get("city") or {}
    points = souk_points(data)
    lines = []
    for quarter, souks in souks_by_quarter(city, data).items():
        if not souks:
            continue
        line = Text(f"{quarter:<8}", style="bold")
        for souk in souks:
            vp = points.get(souk)
            line.append(printable(souk) + (f"({vp})" if vp else ""), style="dim")
            line.append("[")
            shops = city[souk] if isinstance(city[souk], list) else []
            for i, seat in enumerate(shops):
                shop = f"{souk}.{i}"
                if isinstance(seat, int):
                    style = _seat_style(seat) + (" reverse" if shop in leaving else "")
                    line.append(str(seat + 1), style=style)
                elif shop in offered:
                    line.append("+", style="bold black on cyan")
                else:
                    line.append(".", style="dim")
                if i < len(shops) - 1:
                    line.append(" ")
            line.append("] ")
        line.rstrip()
        lines.append(line)
    return lines


def path_lines(steward: str, reachable: set[str], data: Data = None) -> list[Text]:
    """The steward's cross on two lines: ``[W2]`` where he stands, ``›W9`` where he may go
    (without the data's squares: one line, the steward's square and the reachable ones)."""

    def square(text: Text, name: str) -> None:
        if name == steward:
            text.append(f"[{name}]", style="bold black on yellow")
        else:
            text.append("›" if name in reachable else " ", style="bold cyan")
            text.append(name, style="bold black on cyan" if name in reachable else "dim")

    west_east = Text("Steward", style="bold")
    arms = steward_arms(data)
    if arms is None:
        square(west_east, steward)
        for name in sorted(reachable - {steward}):
            square(west_east, name)
        return [west_east]
    for name in reversed(arms["west"]):
        square(west_east, name)
    square(west_east, "C")
    for name in arms["east"]:
        square(west_east, name)
    north_south = Text("  north", style="dim")
    for name in reversed(arms["north"]):
        square(north_south, name)
    square(north_south, "C")
    for name in arms["south"]:
        square(north_south, name)
    north_south.append(" south", style="dim")
    return [west_east, north_south]


def tower_line(game: Mapping[str, Any]) -> Text:
    """``Tower camels 1×2 · sacks - · ... · gold 6×3 (1 yellow)``: each floor's value × dice."""
    text = Text("Tower ", style="bold")
    for i, floor in enumerate(game.get("tower") or []):
        if i:
            text.append(" · ", style="dim")
        white, yellow = int(floor.get("white", 0)), int(floor.get("yellow", 0))
        name = printable(floor.get("floor"))
        if not white + yellow:
            text.append(f"{name} -", style="dim")
            continue
        text.append(f"{name} {floor.get('value')}×{white + yellow}")
        if yellow:
            text.append(f"({yellow}y)", style="yellow")
    return text


def caravan_line(game: Mapping[str, Any]) -> Text:
    text = _caravan(game)
    text.append(" (rows score ×1 ×2 ×3)", style="dim")
    return text


def body(scene: Scene) -> Body:
    """Yspahan on the full screen: the board on top (or left), the decision and panels."""
    game = scene.game
    choices = scene.choices
    shown = (
        choices
        if scene.shown is None
        else [choices[i] for i in scene.shown if 0 <= i < len(choices)]
    )
    offered = {str(c["shop"]) for c in shown if c.get("kind") == "place" and "shop" in c}
    reachable = {str(c["to"]) for c in shown if c.get("kind") == "move" and "to" in c}
    main = [
        _week_line(scene),
        *city_lines(game, offered, scene.data, _leaving(shown)),
        *path_lines(str(game.get("steward", "")), reachable, scene.data),
        tower_line(game),
        caravan_line(game),
    ]
    hint = None
    if offered:
        hint = Text("Type a shop (br3.1) or a souk to fill (br3), or a number", style="dim")
    elif reachable:
        hint = Text("Type a square (e.g. W9) or a number", style="dim")
    width = _column_width(scene, main)
    choices_all = scene.choices
    takes = sum(1 for c in choices_all if c.get("kind") == "take")
    if scene.shown is None and takes > 4:
        decision: Panel | None = _dice_panel(scene, width)
    else:
        decision = decision_panel(scene, None, hint, width=width, text=_effects_text)
    panels = [decision, kept_panel(scene), _players_panel(scene)]
    below = [log_panel(scene), chat_panel(scene)]
    return Body(
        main=main,
        panels=[p for p in panels if p is not None],
        below=[p for p in below if p is not None],
    )


def _dice_panel(scene: Scene, width: int) -> Panel:
    """The dice to take, a line per floor: ``sacks 3×2: 4 place 2 sacks  5 steward 3  6 card``."""
    game = scene.game
    floors = {str(f.get("floor")): f for f in game.get("tower") or [] if isinstance(f, dict)}
    by_floor: dict[str, list[tuple[int, str]]] = {}
    others: list[Text] = []
    digits = len(str(len(scene.choices)))
    for i, choice in enumerate(scene.choices):
        if choice.get("kind") != "take":
            other = Text(f"{i + 1:>{digits}} ", style="bold cyan")
            other.append(label("yspahan", choice))
            others.append(other)
            continue
        floor = str(choice.get("floor"))
        short = _short(choice)
        by_floor.setdefault(floor, []).append((i + 1, short))
    lines = []
    for floor, items in by_floor.items():
        info = floors.get(floor) or {}
        dice = int(info.get("white", 0)) + int(info.get("yellow", 0))
        head = f"{printable(floor):<8}{info.get('value')}×{dice}: "
        line = Text(head, style="bold")
        for number, short in items:
            part = Text(f" {number:>{digits}} ", style="bold cyan")
            part.append(short)
            part.append(" ")
            if line.cell_len + part.cell_len > width and line.cell_len > len(head):
                lines.append(line)
                line = Text(" " * len(head))
            line.append_text(part)
        lines.append(line)
    lines += others
    hint = Text(
        "value×dice · steward: moves by the value · +card: discard it for one more die",
        style="dim",
    )
    pager = paged(scene, [hint], lines)
    return Panel(prompt_of(scene), [hint, *lines], least=len(lines) + 2, pager=pager)


def _short(choice: Mapping[str, Any]) -> str:
    """A take's label without the group it comes from: ``gain 2 camels`` from ``gain 2 camels
    (the camels group, 2 dice showing 1)`` (the floor heads the line already)."""
    text = label("yspahan", choice)
    return text.split(" (the ", 1)[0]


def _effects_text(scene: Scene, choice: Mapping[str, Any]) -> str | None:
    """Short lines from the consequences the server lists (``effects``), for narrow screens:
    ``W7 (pay 1 gold): sends your sk5.0 and P2's ch3.1``, ``br4.0: souk br4 3 of 4 filled``."""
    effects = choice.get("effects")
    if not isinstance(effects, dict):
        return None
    kind = choice.get("kind")
    if kind == "move" and isinstance(effects.get("sends"), list):
        gold = choice.get("gold") or 0
        text = printable(choice.get("to")) + (f" (pay {gold} gold)" if gold else "")
        sends = []
        for sent in effects["sends"]:
            if not isinstance(sent, dict):
                continue
            seat = sent.get("seat")
            if type(seat) is not int:
                whose = "a"
            else:
                whose = "your" if seat == scene.mirror.seat else f"P{seat + 1}'s"
            sends.append(f"{whose} {printable(sent.get('shop'))}")
        return text + (": sends " + ", ".join(sends) if sends else ": sends nothing")
    if kind == "place" and "souk" in effects:
        souk = printable(effects.get("souk"))
        vp = souk_points(scene.data).get(souk)
        done = " complete!" if effects.get("filled") == effects.get("shops") else ""
        text = f"{printable(choice.get('shop'))}: souk {souk} {effects.get('filled')} of"
        return text + f" {effects.get('shops')} filled{done}" + (f" ({vp} pts)" if vp else "")
    return None


def _leaving(choices: list[dict[str, Any]]) -> frozenset[str]:
    """The shops the steward moves offered would empty (their ``effects``, from the server)."""
    found: set[str] = set()
    for choice in choices:
        effects = choice.get("effects") if choice.get("kind") == "move" else None
        sends = effects.get("sends") if isinstance(effects, dict) else None
        for sent in sends if isinstance(sends, list) else []:
            if isinstance(sent, dict) and isinstance(sent.get("shop"), str):
                found.add(sent["shop"])
    return frozenset(found)


def _column_width(scene: Scene, main: list[Text]) -> int:
    """The width the panels get: beside the board when there is room, else the whole width."""
    side = scene.width - max(line.cell_len for line in main) - len(GAP)
    return side if side >= SIDE_MIN else scene.width


def _week_line(scene: Scene) -> Text:
    game = scene.game
    info = scene.mirror.info
    text = Text(f"Week {game.get('week')} · day {game.get('day')}", style="bold")
    actor = game.get("actor")
    if scene.mirror.result is not None:
        text.append(" · the match is over")
    elif isinstance(actor, int):
        who = "your" if actor == scene.mirror.seat else seat_label(info, actor) + "'s"
        text.append(f" · {who} turn")
    order = " ".join(f"P{s + 1}" for s in game.get("order") or [] if isinstance(s, int))
    if order:
        text.append(f" · order {order}")
    pending = game.get("pending") or {}
    if pending.get("goods"):
        text.append(
            f" · {pending['goods']} good(s) to place in {printable(pending.get('quarter'))}"
        )
    if pending.get("value"):
        text.append(f" · steward moves {pending['value']}")
    if pending.get("queue"):
        text.append(" · leaving: " + ", ".join(printable(q) for q in pending["queue"]))
    if pending.get("card"):
        text.append(f" · card in play: {card_name(scene.data, pending['card'])}")
    text.append(f" · deck {game.get('deck')}", style="dim")
    return text


def _players_panel(scene: Scene) -> Panel:
    game = scene.game
    info = scene.mirror.info
    lines = []
    for seat, p in enumerate(game.get("players") or []):
        line = Text(seat_label(info, seat), style=_seat_style(seat))
        if seat == scene.mirror.seat:
            line.append(" (you)")
        line.append(f" {p.get('score')} VP · {p.get('gold')} gold · {p.get('camels')} camels")
        line.append(f" · {p.get('cards')} card(s)")
        built = ", ".join(building_name(scene.data, b) for b in p.get("buildings") or [])
        if built:
            line.append(f" · built {built}")
        credits = []
        if p.get("no_camels"):
            credits.append(f"{p['no_camels']}x build without camels")
        if p.get("no_gold"):
            credits.append(f"{p['no_gold']}x build without gold")
        if credits:
            line.append(" · " + ", ".join(credits))
        lines.append(line)
    own = scene.mirror.own
    private = own.get("private") if own else None
    if isinstance(private, dict):
        hand = private.get("hand") or []
        cards = "; ".join(card_text(scene.data, c) for c in hand)
        lines.append(Text(f"Your cards: {cards or 'none'}", style="italic"))
    return Panel("Players", lines, least=len(lines) + 1)
