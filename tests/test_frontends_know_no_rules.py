"""The clients and the server's bots know the games only from views and ``GET /games/<name>``.

DESIGN: "A frontend needs the protocol alone, never the rules." Nothing under ``clients/`` or
``server/bots/`` may import a rules engine (any ``games`` module; the bots may use the generic
generator ``games.rng``, which knows no game) or name an engine's files (its modules' paths,
its data files such as ``ishtar-edition.json``), in Python or in the browser client's scripts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
ENGINE_FILES = sorted(
    p.name for p in (ROOT / "games").rglob("*") if p.is_file() and p.suffix in (".json", ".py")
)
ENGINE_PATH = re.compile(r"(?<![/\w])games[./](ishtar|yspahan)\b")
"""A module path or directory of an engine (``GET /games/ishtar``, the data's URL, is fine)."""
ALLOWED = {"games.rng"}
"""The one module of ``games`` a bot may use: a seeded generator, no rules."""


def _sources() -> list[Path]:
    found = sorted((ROOT / "server" / "bots").rglob("*.py"))
    found += sorted((ROOT / "clients").rglob("*.py"))
    found += sorted(p for p in (ROOT / "clients").rglob("*.js") if "vendor" not in p.parts)
    found += sorted((ROOT / "clients").rglob("*.html"))
    return found


def engine_uses(path: Path) -> list[str]:
    """What in ``path`` reaches into an engine: imports of ``games`` modules, and strings that
    name an engine module or one of the files under ``games/``."""
    text = path.read_text(encoding="utf-8")
    found: list[str] = []
    if path.suffix == ".py":
        tree = ast.parse(text, str(path))
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for module in modules:
                top = module.split(".")[0]
                if top == "games" and module not in ALLOWED and node_module(node) not in ALLOWED:
                    found.append(f"imports {module}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += _named(node.value)
    else:
        found += _named(text)
    return found


def node_module(node: ast.AST) -> str:
    return node.module or "" if isinstance(node, ast.ImportFrom) else ""


def _named(text: str) -> list[str]:
    out = []
    for name in ENGINE_FILES:
        if name != "__init__.py" and (f"/{name}" in text or f'"{name}' in text or text == name):
            out.append(f"names the engine file {name}")
    for match in ENGINE_PATH.finditer(text):
        out.append(f"names {match.group(0)}")
    return out


def test_no_client_and_no_bot_reaches_into_an_engine() -> None:
    sources = _sources()
    assert len(sources) >= 15, "the scan must see the clients and the bots"
    problems = {str(p.relative_to(ROOT)): engine_uses(p) for p in sources}
    assert {p: found for p, found in problems.items() if found} == {}


def test_the_scan_sees_an_engine_import_and_an_engine_file(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(
        "from games.ishtar.hexes import rotate\n"
        "import games.yspahan.data\n"
        "from games.rng import Rng\n"
        "TABLE = resources.files('games.ishtar').joinpath('ishtar-edition.json')\n"
    )
    found = engine_uses(bot)
    assert "imports games.ishtar.hexes" in found
    assert "imports games.yspahan.data" in found
    assert "names the engine file ishtar-edition.json" in found
    assert not any("games.rng" in f for f in found)
    page = tmp_path / "page.js"
    page.write_text('fetch("/static/yspahan.json")')
    assert engine_uses(page) == ["names the engine file yspahan.json"]
    assert engine_uses(ROOT / "oasis" / "cli.py"), "the scan finds the command line's engines"


def _rule_vocabulary() -> dict[str, set[str]]:
    """What a client's own rule table would be keyed by: each game's choice, decision and event
    kinds (the wording tables of ``games/*/labels.py``) and its components' ids (its static
    data: buildings, cards, souks, squares, trees, tiles, tokens)."""
    from games.ishtar import labels as ishtar_words
    from games.yspahan import labels as yspahan_words
    from server.gamedata import document

    found: dict[str, set[str]] = {}
    for game, words in (("ishtar", ishtar_words), ("yspahan", yspahan_words)):
        found[f"{game} choice kinds"] = set(words.CHOICES)
        found[f"{game} decisions"] = set(words.PROMPTS)
        found[f"{game} event kinds"] = set(words.EVENTS)
    ys = document("yspahan").value
    ish = document("ishtar").value
    assert isinstance(ys, dict) and isinstance(ish, dict)
    found["yspahan buildings"] = {b["building"] for b in ys["buildings"]}
    found["yspahan cards"] = {c["card"] for c in ys["cards"]}
    found["yspahan souks"] = {s["souk"] for s in ys["souks"]}
    found["yspahan squares"] = {s["square"] for s in ys["steward"]["squares"]}
    # (not the skills: their ids, single letters A-J, also name the terminal's arrow keys)
    found["ishtar trees"] = {t["card"] for t in ish["trees"]}
    found["ishtar tiles"] = {t["id"] for t in ish["tiles"]}
    found["ishtar tokens"] = {t["token"] for t in ish["tokens"]}
    return found


def rule_tables(path: Path, vocabulary: dict[str, set[str]]) -> list[str]:
    """The dict literals in ``path`` keyed by three or more kinds or ids of one game's
    vocabulary: a table of the client's own (texts, costs, effects) beside the server's."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Dict):
            continue
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        for what, words in vocabulary.items():
            hits = keys & words
            if len(hits) >= 3:
                found.append(f"line {node.lineno}: a table keyed by {what} ({sorted(hits)[:3]})")
    return found


def test_the_terminal_client_keeps_no_rule_table_of_its_own() -> None:
    """Labels, prompts, texts, costs and effects come from the server (views and
    ``GET /games/<name>``): no table in clients/ (the terminal client, the bots) repeats them."""
    vocabulary = _rule_vocabulary()
    sources = [p for p in sorted((ROOT / "clients").rglob("*.py")) if "web" not in p.parts]
    assert len(sources) >= 15
    problems = {str(p.relative_to(ROOT)): rule_tables(p, vocabulary) for p in sources}
    assert {p: found for p, found in problems.items() if found} == {}


def test_the_table_scan_sees_a_table_of_building_costs(tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    client.write_text(
        'COSTS = {"pen": (2, 0), "stall": (2, 2), "crane": (4, 4)}\n'
        'WORDS = {"pile": "take a tile", "position": "place it", "end_turn": "end"}\n'
        'FINE = {"pen": 1, "width": 2}\n'
    )
    found = rule_tables(client, _rule_vocabulary())
    assert len(found) == 2
    assert "yspahan buildings" in found[0] and "ishtar choice kinds" in found[1]
