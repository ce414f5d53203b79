"""DESIGN: imports only point down. The client speaks the protocol and never knows the rules."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CLIENTS = Path(__file__).parents[2] / "clients"
THIRD_PARTY = {"websockets", "msgpack", "rich"}
PROJECT = {"clients", "protocol"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_clients_import_only_the_protocol_the_stdlib_and_their_libraries() -> None:
    files = sorted(CLIENTS.rglob("*.py"))
    assert len(files) >= 8
    for path in files:
        for module in imported_modules(path):
            allowed = module in PROJECT | THIRD_PARTY | {"__future__"}
            assert allowed or module in sys.stdlib_module_names, f"{path.name} imports {module}"


def test_the_scan_sees_a_forbidden_import() -> None:
    sample = CLIENTS.parent / "oasis" / "cli.py"
    assert "games" in imported_modules(sample)
