"""A server started from a compiled tree says so at start: its ``compiled_modules`` line lists
every module of ``scripts/build_compiled.py``'s ``MODULES`` and ``NATIVE`` (read from the
imported modules' files, not from a setting), and a server started from the same tree without
the extensions lists none (pure Python). The compiled tree is the session's one build
(``tests/test_compiled``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.services import free_port
from tests.test_compiled import MODULES, NATIVE, compiled_tree, module_name

START_TIMEOUT = 60.0


def started_log(tree: Path, log: Path) -> dict[str, Any]:
    """Start ``oasis-server``'s ``main`` from ``tree`` (in memory, JSON logs) and return its
    ``compiled_modules`` event once logged; the server is stopped after."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OASIS_", "REDIS_"))}
    env.update(
        OASIS_STORE="memory", OASIS_HOST="127.0.0.1", OASIS_PORT=str(free_port()),
        OASIS_LOG_FORMAT="json", PYTHONPATH=str(tree),
    )  # fmt: skip
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", "from server.main import main; main()"],
            cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=out,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            lines = log.read_text(errors="replace").splitlines()
            events = [json.loads(line) for line in lines if line.startswith("{")]
            found = next((e for e in events if e.get("event") == "compiled_modules"), None)
            if found is not None:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no compiled_modules line:\n{log.read_text(errors='replace')}")
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_server_from_a_compiled_tree_reports_its_compiled_modules(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    tree = compiled_tree(tmp_path_factory)
    reported = started_log(tree, tmp_path / "compiled.log")
    assert reported["compiled"] == sorted([*(module_name(m) for m in MODULES), *NATIVE.values()])


def test_a_server_from_a_pure_tree_reports_none(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    tree = tmp_path / "pure"
    tree.mkdir()
    skip = shutil.ignore_patterns("*.so", "__pycache__")
    for package in ("protocol", "games", "server"):
        shutil.copytree(root / package, tree / package, ignore=skip)
    for package in ("clients", "oasis"):
        (tree / package).symlink_to(root / package)
    assert started_log(tree, tmp_path / "pure.log")["compiled"] == []
