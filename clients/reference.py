"""The ``h`` reference: how to play in this client, then the game's own reference.

The first part is the client's: the commands, how to name what the board shows (Ishtar's
spaces, Yspahan's shops, souks and squares), the map's key. The rest is drawn from the game's
static data (``GET /games/<name>``, :mod:`clients.gamedata`), whatever its shape: each top-level
part becomes a section, a list of records a line per record (its name first, then its cost,
effect, points or text), anything else a line of its own. So the buildings, cards, skills,
trees and scoring rules read as the server describes them, and a newer server's parts show
up without a new client. Without the data it says why.

Paragraphs are returned unwrapped; the screen wraps them to its width.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.text import Text

from clients.intents import HELP
from clients.printable import printable
from protocol.mirror import Mirror

NAME_KEYS = ("name", "en", "title", "souk", "square", "floor", "id", "card", "skill", "building")
FIRST_KEYS = ("cost", "price", "camels", "gold", "effect", "power", "text", "points", "vp",
              "description", "action", "faces")  # fmt: skip
GEOMETRY = frozenset(
    {"hex", "terrain_codes", "board_spaces", "macro_basis", "terrain_boards", "layouts",
     "tile_shapes", "offsets", "adjacency", "arms", "shops", "faced_by", "column", "quarters",
     "space_names"}
)  # fmt: skip
"""Parts of the data that are for drawing the board, not for reading: left out."""
FIRST = ("skills", "buildings", "building_points", "cards", "trees", "tokens", "fountains",
         "icons", "tower", "caravan", "souks", "score_categories")  # fmt: skip
"""The parts read first, in this order; the others follow as the server sends them."""
MAX_LINES = 2000

CLIENT = {
    "ishtar": [
        "Spaces: the map's columns have letters (a, b, ...) on the rulers above and below, its"
        " rows numbers on both sides. A space is named column then row: f7, the names the"
        " server gives the spaces and writes in every choice and log line. The spaces you may"
        " choose show their column letter (or, on a wide screen, their whole name); type the name"
        " and Enter. q,r (the server's axial coordinates) works too.",
        "Placing a tile: first type the space where its first space goes; then each way it can"
        " turn is drawn over the terrain around it, numbered: type the number.",
        "Map key (narrow): · sand, T tablet, F fountain, P R W a rock with a purple, red or white"
        " gem, , grass, 1-4 flowers, 2¹ flowers of a flowerbed P1 controls, @¹ an assistant of P1,"
        " Y¹ a tree of P1, * the tile's first space. Wide: [T] tablet, Fp fountain of that"
        " colour, <p> rock with its gem, 2@1 an assistant of P1 on 2 flowers, Y1 a tree of P1.",
    ],
    "yspahan": [
        "The city: a line per quarter; each souk is its name (sk3 = the 3-shop souk of sacks)"
        " with its points when complete, then its shops, numbered from 0 as the server numbers"
        " them (sk3.0 sk3.1 sk3.2): . empty, 1 a good of P1, + a shop you may fill now.",
        "Placing goods: type a shop (br3.1), several shops in order (br3.0 br3.2), or a souk"
        " (br3) to fill its free shops in one go when your goods cover them all.",
        "The steward walks the cross of squares W10..W1 C E1..E7 and N4..N1 C S1..S7; [W2] is"
        " where he stands, ›W9 a square he can reach now: type the square (W9).",
        "The tower: each floor's die value × how many dice lie there (y: yellow dice).",
    ],
}


def pages(mirror: Mirror, data: Mapping[str, Any] | None, problem: str = "") -> list[Text]:
    """The reference as paragraphs (the first line is its title)."""
    game = mirror.game
    out = [Text(f"Help and reference: {printable(game)} (Esc or Enter closes, PgDn/PgUp)")]
    out.append(Text(""))
    out.append(Text("Playing in this client", style="bold"))
    out.append(Text(HELP))
    out.append(
        Text(
            "More: /word shows only the choices that mention it (/ alone shows all again);"
            " > and < (or PgDn, PgUp) turn the pages of a long list; Enter alone takes the only"
            " choice shown, or closes this help; a lone choice is sent by itself after a moment"
            " (--no-auto turns that off)."
        )
    )
    out += [Text(p) for p in CLIENT.get(game, [])]
    out.append(Text(""))
    if data is None:
        why = f" ({problem})" if problem else ""
        out.append(Text(f"The server sends no reference for {printable(game)}{why}.", style="dim"))
        return out
    out += data_lines(data)
    return out[:MAX_LINES]


def data_lines(data: Mapping[str, Any]) -> list[Text]:
    out: list[Text] = []
    keys = [k for k in FIRST if k in data] + [k for k in data if k not in FIRST]
    for key in keys:
        value = data[key]
        if key.startswith("$") or key in GEOMETRY or key in ("name", "title", "edition"):
            continue
        if isinstance(value, list) and all(not isinstance(v, Mapping | list) for v in value):
            out.append(Text(f"{_words(key).capitalize()}: {', '.join(_scalar(v) for v in value)}"))
            out.append(Text(""))
            continue
        out.append(Text(_words(key).capitalize(), style="bold"))
        out += _part(value, key=key)
        out.append(Text(""))
    return out


def _gems(cost: Any) -> str:
    if not isinstance(cost, Mapping):
        return _scalar(cost)
    return " ".join(f"{n}{printable(c)[:1]}" for c, n in cost.items() if n) or "free"


RECORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "skills": lambda r: (
        f"{printable(r['name'])} ({printable(r['level'])}"
        + (f", needs {printable(r['requires'])}" if r.get("requires") else "")
        + f"; {r['cost']} gems): {printable(r.get('text') or r['summary'])}"
    ),
    "trees": lambda r: f"{printable(r['name'])}: {_gems(r['cost'])} → {r['points']} points",
    "tokens": lambda r: f"{printable(r['token'])}: flowers {_scalar(r['flowers'])}",
    "fountains": lambda r: (
        f"{printable(r['colour'])} fountain: {r['points']} points to whoever leads it"
    ),
    "buildings": lambda r: (
        f"{printable(r['name'])}: {r['camels']} camels, {r['gold']} gold — {printable(r['power'])}"
    ),
    "cards": lambda r: f"{printable(r['name'])} (×{r['count']}): {printable(r['text'])}",
    "souks": lambda r: (
        f"{printable(r['souk'])} ({printable(r['quarter'])}): {len(r['shops'])}"
        f" shops, {r['points']} points when complete"
    ),
    "squares": lambda r: (
        f"{printable(r['square'])}: faces {', '.join(printable(f) for f in r['faces'])}"
        if r.get("faces")
        else f"{printable(r['square'])}: faces no shop"
    ),
    "tiles": lambda r: f"{printable(r['id'])}: {printable(r.get('text'))}",
}
"""Lines for the records of the parts this client knows (SPEC 21, ``protocol/games/``); a record
without the fields expected, or any other part, is drawn generically."""


def _words(key: Any) -> str:
    return printable(key).replace("_", " ")


def _part(value: Any, depth: int = 0, key: str = "") -> list[Text]:
    indent = "  " * depth
    if isinstance(value, list):
        lines: list[Text] = []
        known = RECORDS.get(key)
        for item in value[:200]:
            if isinstance(item, Mapping):
                text = None
                if known is not None:
                    try:
                        text = known(item)
                    except (KeyError, TypeError, ValueError, AttributeError):
                        text = None
                lines.append(Text(indent + "- " + (text or _record(item))))
            else:
                lines.append(Text(indent + "- " + _scalar(item)))
        return lines
    if isinstance(value, Mapping):
        lines = []
        for key, item in list(value.items())[:200]:
            if key in GEOMETRY:
                continue
            if isinstance(item, Mapping | list) and depth < 2:
                lines.append(Text(f"{indent}{_words(key)}:", style="bold" if not depth else ""))
                lines += _part(item, depth + 1, str(key))
            else:
                lines.append(Text(f"{indent}{_words(key)}: {_scalar(item)}"))
        return lines
    return [Text(indent + _scalar(value))]


def _record(item: Mapping[str, Any]) -> str:
    name = next((item[k] for k in NAME_KEYS if isinstance(item.get(k), str | int)), None)
    parts = []
    for key in FIRST_KEYS:
        if key in item:
            parts.append(f"{_words(key)} {_scalar(item[key])}")
    for key, value in item.items():
        if key in FIRST_KEYS or key in GEOMETRY or (name is not None and item.get(key) is name):
            continue
        if key in NAME_KEYS and str(value) in str(name):
            continue  # "Skill A" already says skill A
        parts.append(f"{_words(key)} {_scalar(value)}")
    head = f"{printable(name)}: " if name is not None else ""
    return head + "; ".join(parts)


def _scalar(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{_words(k)} {_scalar(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value[:50]) + "]"
    if value is None:
        return "-"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return printable(value)
