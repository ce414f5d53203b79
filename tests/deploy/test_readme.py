"""deploy/README.md: its table of variables is the server's settings, and it names real files."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from server.config import Config
from tests.deploy import files

README = files.DEPLOY / "README.md"
ROW = re.compile(r"^\| `([A-Z_]+)` \| `(--[a-z-]+)` \| `([^`]*)` \| (.+) \|$")


def shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return '""'
    return str(value)


def documented() -> dict[str, tuple[str, str, str]]:
    rows = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            name, flag, default, text = match.groups()
            assert name not in rows, f"{name} twice"
            rows[name] = (flag, default, text)
    return rows


def test_variables_table_is_every_setting_with_its_flag_and_default() -> None:
    rows = documented()
    defaults = Config()
    expected = {}
    for f in fields(Config):
        flag = "--" + f.name.replace("_", "-")
        expected[files.env_name(f.name)] = (flag, shown(getattr(defaults, f.name)))
    assert {name: row[:2] for name, row in rows.items()} == expected


def test_no_variable_is_still_planned() -> None:
    """The multi-node settings landed: the page lists no planned variable any more."""
    assert "| Planned variable |" not in README.read_text(encoding="utf-8")


def test_files_the_page_names_exist() -> None:
    text = README.read_text(encoding="utf-8")
    paths = set(
        re.findall(r"`(?:deploy/)?(k8s/[\w/.-]+|[\w.-]+\.(?:yaml|cfg|dockerignore))`", text)
    )
    paths |= set(re.findall(r"-k deploy/(k8s/[\w-]+)", text))
    assert "k8s/single-node" in paths and "haproxy.cfg" in paths
    places = [files.DEPLOY, files.K8S, files.SINGLE_NODE]
    for path in sorted(paths):
        assert any((place / path).exists() for place in places), f"{path} is named but missing"
    for path in ("Dockerfile", "Dockerfile.dockerignore", "k8s/single-node/kustomization.yaml"):
        assert (files.DEPLOY / path).exists()
