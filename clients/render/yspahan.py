"""Yspahan's screen: the city by quarter and souk, the steward's path, the tower, the caravan.

The view's city is one list per souk (``"br2": [null, 0]``: the second shop holds P1's good). A
souk is drawn ``br2(3) [. 1]``: its id, its VP when complete, and each shop's occupant (``.``
empty). The steward's path is a cross of squares ``W10..W1 C E1..E7`` and ``N4..N1 C S1..S7``;
it is drawn as two lines with the steward's square highlighted.

The souk VP and the path's squares are printed on the board, not sent in the view, so they are
written here (from the game's published data); anything unknown is still drawn, without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from clients.choices import CARD_TEXT, QUARTER_OF_PREFIX
from clients.render.common import EventText, add_row, seat_label

SOUK_VP = {
    "sk3": 3, "sk4": 4, "sk5": 6, "sk6": 8,
    "br2": 3, "br3": 4, "br4": 6, "br5": 8,
    "ch2": 4, "ch3": 6, "ch4": 8,
    "va1": 4, "va2": 6, "va3": 12,
}  # fmt: skip
ARMS = {"W": 10, "E": 7, "N": 4, "S": 7}
SEAT_STYLE = ("bold yellow", "bold blue", "bold green", "bold red")


def _seat_style(seat: int) -> str:
    return SEAT_STYLE[seat % len(SEAT_STYLE)]


def _city(game: Mapping[str, Any], highlight: set[str]) -> Table:
    table = Table(title="City", title_justify="left", show_edge=False, show_header=False)
    table.add_column("quarter", style="bold")
    table.add_column("souks")
    city = game.get("city") or {}
    # Patches may reorder the view's keys: draw quarters and souks in the board's order.
    by_quarter: dict[str, list[str]] = {q: [] for q in QUARTER_OF_PREFIX.values()}
    for souk in sorted(city, key=lambda s: (s[:2], int(s[2:]) if s[2:].isdigit() else 0)):
        by_quarter.setdefault(QUARTER_OF_PREFIX.get(souk[:2], souk[:2]), []).append(souk)
    for quarter, souks in by_quarter.items():
        if not souks:
            continue
        line = Text()
        for souk in souks:
            vp = SOUK_VP.get(souk)
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


def steward_path(steward: str) -> Text:
    """The cross of squares with the steward's square highlighted."""
    text = Text("Steward: ", style="bold")
    for i in range(ARMS["W"], 0, -1):
        _square(text, f"W{i}", steward)
    _square(text, "C", steward)
    for i in range(1, ARMS["E"] + 1):
        _square(text, f"E{i}", steward)
    text.append("\n         north ")
    for i in range(ARMS["N"], 0, -1):
        _square(text, f"N{i}", steward)
    text.append("| C | ")
    for i in range(1, ARMS["S"] + 1):
        _square(text, f"S{i}", steward)
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


def _players(game: Mapping[str, Any], info: Mapping[str, Any]) -> Table:
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
            ", ".join(p.get("buildings") or []) or "-",
            ", ".join(credits) or "-",
            breakdown or "-",
        )
    return table


def _status(game: Mapping[str, Any], info: Mapping[str, Any], stage: object) -> Text:
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
        text.append(f"\nCard in play: {pending['card']}")
    discard = ", ".join(game.get("discard") or []) or "none"
    text.append(f"\nDeck {game.get('deck')} cards · discard: {discard}", style="dim")
    return text


def _hand(private: Mapping[str, Any]) -> Text:
    hand = private.get("hand") or []
    cards = "; ".join(f"{c} ({CARD_TEXT.get(c, '?')})" for c in hand) or "no cards"
    return Text(f"Your hand: {cards}", style="italic")


def board(
    view: Mapping[str, Any], info: Mapping[str, Any], choices: list[dict[str, Any]]
) -> RenderableType:
    """The whole Yspahan screen for one audience; shops named by a choice are highlighted."""
    shared = view.get("shared") or {}
    game = shared.get("game") or {}
    turn = shared.get("turn")
    stage = turn.get("decision") if isinstance(turn, dict) else "over"
    own = view.get("own")
    highlight = {str(c["shop"]) for c in choices if isinstance(c.get("shop"), str)}
    parts: list[RenderableType] = [
        _status(game, info, stage),
        _city(game, highlight),
        steward_path(str(game.get("steward", ""))),
        _tower(game),
        _caravan(game),
        _players(game, info),
    ]
    if isinstance(own, dict) and isinstance(own.get("private"), dict):
        parts.append(_hand(own["private"]))
    return Group(*parts)


def _gain(e: Mapping[str, Any]) -> str:
    return ", ".join(f"{v} {k}" for k, v in e.items() if k not in ("kind", "seat"))


EVENTS: dict[str, EventText] = {
    "roll": lambda e, n: f"{n(e['seat'])} rolls: white {e.get('white')} yellow {e.get('yellow')}",
    "take": lambda e, n: f"{n(e['seat'])} takes the {e['floor']} dice ({e.get('action')})",
    "gain": lambda e, n: f"{n(e['seat'])} gains {_gain(e)}",
    "place": lambda e, n: f"{n(e['seat'])} puts a good in {e['shop']}",
    "move": lambda e, n: f"{n(e['seat'])} moves the steward {e['from']} -> {e['to']}",
    "play": lambda e, n: f"{n(e['seat'])} plays {e['card']}",
    "draw": lambda e, n: (
        f"{n(e['seat'])} draws a card" + (f" ({e['card']})" if "card" in e else "")
    ),
    "build": lambda e, n: f"{n(e['seat'])} builds the {e['building']}",
    "score": lambda e, n: f"{n(e['seat'])} scores {e['points']} VP ({e.get('reason')})",
    "keep": lambda e, n: f"{n(e['seat'])} pays a camel to keep the good in {e['shop']}",
    "caravan": lambda e, n: f"{n(e['seat'])} sends a good to the caravan ({e.get('from')})",
    "caravan_emptied": lambda e, n: "the caravan is scored and emptied",
    "city_emptied": lambda e, n: "the city's goods go back to their owners",
    "extra_die": lambda e, n: f"{n(e['seat'])} discards {e['card']} as an extra die",
    "swap": lambda e, n: f"{n(e['seat'])} exchanges {e['camels']} camels for {e['gold']} gold",
    "end_turn": lambda e, n: f"{n(e['seat'])} ends the turn",
    "day_end": lambda e, n: f"day {e['day']} of week {e['week']} ends",
    "reshuffle": lambda e, n: f"the discard is shuffled into a new deck of {e['deck']}",
    "day": lambda e, n: f"week {e['week']}, day {e['day']} begins",
    "week_end": lambda e, n: f"week {e['week']} ends",
    "game_end": lambda e, n: (
        "the match is over: scores "
        + ", ".join(f"{n(i)} {s}" for i, s in enumerate(e.get("scores") or []))
    ),
}
