"""The JSON Schemas of protocol/schema/: valid draft 2020-12, documented field by field in their
reference pages, strict (an undocumented field fails), and the test checker agrees with the
``jsonschema`` library."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from games import registry
from games.base import Match
from games.rng import Rng
from tests.protocol.schemas import Checker, documents, problems

ROOT = Path(__file__).parents[2]
PAGES = {
    "client.json": ROOT / "protocol" / "SPEC.md",
    "server.json": ROOT / "protocol" / "SPEC.md",
    "view.json": ROOT / "protocol" / "SPEC.md",
    "ishtar.json": ROOT / "protocol" / "games" / "ishtar.md",
    "yspahan.json": ROOT / "protocol" / "games" / "yspahan.md",
}
SESSION = ROOT / "protocol" / "vectors" / "session" / "session.json"


def _walk(node: Any, props: set[str], consts: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                props.update(value)
            if key == "const" and isinstance(value, str):
                consts.add(value)
            _walk(value, props, consts)
    elif isinstance(node, list):
        for value in node:
            _walk(value, props, consts)


def test_every_schema_is_draft_2020_12_and_has_a_page() -> None:
    assert set(documents()) == set(PAGES)
    for name, doc in documents().items():
        Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert doc["$id"].endswith("/" + name)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_property_and_kind_of_a_schema_appears_in_its_reference_page(name: str) -> None:
    props: set[str] = set()
    consts: set[str] = set()
    _walk(documents()[name], props, consts)
    page = PAGES[name].read_text(encoding="utf-8").replace("```", "")
    named = set(re.findall(r"`([^`\s]+)`", page))
    named |= {w for quoted in re.findall(r"`([^`]+)`", page) for w in re.findall(r"\w+", quoted)}
    assert not sorted(props - named), f"{PAGES[name].name} does not name these fields"
    assert not sorted(consts - named), f"{PAGES[name].name} does not name these kinds"


def _views(game: str, seed: int) -> list[Any]:
    engine = registry.get(game)
    players = 2 + seed % 3
    match = Match.new(engine, players, {}, seed)
    chooser = Rng.from_seed(seed)
    out = []
    for step in range(400):
        decision = match.decision
        if step % 37 == 0 or decision is None:
            out.append(match.view(None if decision is None else decision.seat).to_json())
        if decision is None:
            break
        match.act(decision.seat, chooser.below(len(decision.choices)))
    return out


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every map in ``value``, by its path."""
    found = [path] if isinstance(value, dict) else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*path, i))
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_an_undocumented_field_anywhere_in_a_view_fails_and_the_checker_agrees(game: str) -> None:
    checker = Checker()
    rng = Rng.from_seed(3)
    name = f"{game}.json"
    for view in _views(game, 11) + _views(game, 12):
        assert checker.check(name, "view", view) == []
        assert problems(name, "view", view) == []
        maps = _paths(view)
        for _ in range(4):
            bad = copy.deepcopy(view)
            _at(bad, maps[rng.below(len(maps))])["undocumented"] = 1
            assert checker.check(name, "view", bad), "the checker let an unknown field pass"
            assert problems(name, "view", bad), "the schema let an unknown field pass"


def _session() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(SESSION.read_text())
    return entries


def test_every_frame_of_the_recorded_session_validates_and_one_more_field_fails() -> None:
    checker = Checker()
    entries = _session()
    assert len(entries) > 50
    malformed = {
        (e["connection"], e["frame"].get("id"))
        for e in entries
        if e["frame"]["type"] == "error" and e["frame"]["code"] == "malformed_choice"
    }
    assert malformed, "the session shows a malformed choice and its refusal"
    for entry in entries:
        frame = entry["frame"]
        schema = "client.json" if entry["direction"] == "sent" else "server.json"
        if entry["direction"] == "sent" and (entry["connection"], frame.get("id")) in malformed:
            assert checker.check(schema, frame["type"], frame), "a malformed act fails"
            continue
        assert checker.check(schema, frame["type"], frame) == [], entry["file"]
        bad = {**frame, "undocumented": True}
        assert checker.check(schema, frame["type"], bad), entry["file"]
        assert problems(schema, None, bad), entry["file"]
