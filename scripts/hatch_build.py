"""Hatchling's build hook: a wheel built from a tree with the compiled hot paths in place
(``scripts/build_compiled.py``, as deploy/Dockerfile's build stage does) carries their ``.so``
files (``artifacts`` in pyproject.toml) and is tagged for this interpreter and platform, not as
pure Python. A tree without them builds the pure wheel as before; editable installs are left as
they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompiledBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        if any(Path(self.root).glob("protocol/*.so")) or any(Path(self.root).glob("games/*/*.so")):
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
