"""DESIGN: imports only point down. A table of the layers, checked over every module's imports.

Every import of every module counts (top level, function level, ``TYPE_CHECKING`` blocks alike):
a layer that may not use another may not name it at all. ``oasis`` is the launcher above every
layer (it imports each command's module only when that command runs).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PROJECT = {"protocol", "games", "server", "clients", "oasis", "tests", "bench"}

MAY_IMPORT: dict[str, set[str]] = {
    "protocol": set(),
    "games": set(),
    "clients": {"protocol"},
    "server": {"games", "protocol"},
    "oasis": {"clients", "server", "games", "protocol"},
}
"""Each layer: the other project packages it may import (besides itself)."""

ROOM = ("room", "core", "effects", "room_state", "membership", "takeover", "timekeeping", "inbox",
        "views", "keeper", "spectators", "fanout", "seats", "clock", "chat", "play",
        "upkeep", "steps", "member")  # fmt: skip
"""The modules of one room (its actor, its core and parts, below the lobby)."""
CORE = ("core", "effects", "room_state", "membership", "takeover", "timekeeping", "views", "seats",
        "clock", "chat", "play", "upkeep", "spectators", "steps", "member")  # fmt: skip
"""The room's sans-I/O core and its parts: none imports asyncio (no await, no timer, no loop),
nor the actor that runs it (``server.room``) or its inbox."""
DOES_IO = {"asyncio", "socket", "websockets", "redis", "time", "server.connection",
           "server.keeper", "server.room", "server.inbox", "server.store.base",
           "server.store.memory", "server.store.redis", "server.store.client",
           "server.store.commit", "server.store.readiness", "server.lobby", "server.cluster",
           "server.relay", "server.fanout"}  # fmt: skip
"""What the core's own modules never import to run (a type named for the checker only is
no dependency): modules that do I/O, read a clock, or own what does (the store, the keeper,
sockets). Of the store they use the records, the metadata and the errors, never the package
(its ``__init__`` brings in the stores)."""
ABOVE_THE_ROOM = {"server.app", "server.cluster", "server.lobby", "server.main", "server.relay"}
"""What a room must never import, packages with every module in them: the node that holds it
(the room core of issue 18 is to be driven by them, never to drive them) and the relay it
publishes to (handed to it as a callable)."""
ABOVE_THE_RELAY = {"server.app", "server.cluster", "server.lobby", "server.main"}
"""What the relay must never import: the node that runs it (the cluster uses the relay's
spectator counts, never the other way round)."""

PACKAGES: dict[str, tuple[str, ...]] = {
    "server.relay": ("wire", "publisher", "relayed", "subscriber", "counts", "spectators"),
    "server.cluster": ("claims", "eviction", "directory", "node"),
}
"""Each package of the server's middle with its modules from the bottom up: a module imports
only modules listed before it (no cycle), never its own package's ``__init__``."""
PURE = ("server.relay.wire",)
"""Modules of those packages that do no I/O (formats and rules only)."""

THIRD_PARTY: dict[str, set[str]] = {
    "protocol": {"msgpack", "ormsgpack"},
    # mypy_extensions: mypyc's class marker, imported if present (games/base.py, Game)
    "games": {"mypy_extensions"},
    "clients": {"websockets", "msgpack", "rich"},
}
"""Layers that are held to a short list of libraries (the rest: whatever pyproject declares)."""


def within(found: set[str], names: set[str]) -> set[str]:
    """The names of ``found`` that are one of ``names`` or inside one (a module of a package)."""
    return {n for n in found if any(n == x or n.startswith(x + ".") for x in names)}


def imported_modules(path: Path) -> set[str]:
    """The full names of the project modules ``path`` imports by absolute import."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def runtime_imports(path: Path) -> set[str]:
    """The full names of the modules ``path`` imports to run: every import outside ``if
    TYPE_CHECKING:`` blocks, with the names imported from each (``from a import b``: ``a``
    and ``a.b``)."""
    tree = ast.parse(path.read_text(), str(path))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def imported(path: Path, layer: str) -> set[str]:
    """The top-level names of every module ``path`` (of ``layer``) imports, wherever the
    import is."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            found.add(layer)  # a relative import stays in its package
    return found


def _modules(layer: str) -> list[Path]:
    files = [p for p in sorted((ROOT / layer).rglob("*.py")) if "node_modules" not in p.parts]
    assert files, layer
    return files


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = MAY_IMPORT[layer] | {layer}
    for path in _modules(layer):
        for name in imported(path, layer) & PROJECT:
            assert name in allowed, f"{path.relative_to(ROOT)} imports {name}"


@pytest.mark.parametrize("module", ROOM)
def test_a_room_imports_nothing_of_the_node_above_it(module: str) -> None:
    found = imported_modules(ROOT / "server" / f"{module}.py")
    assert not within(found, ABOVE_THE_ROOM), (module, within(found, ABOVE_THE_ROOM))


@pytest.mark.parametrize("layer", sorted(THIRD_PARTY))
def test_the_lower_layers_use_only_their_few_libraries(layer: str) -> None:
    allowed = THIRD_PARTY[layer] | PROJECT | {"__future__"}
    for path in _modules(layer):
        for name in imported(path, layer):
            assert name in allowed or name in sys.stdlib_module_names, (
                f"{path.relative_to(ROOT)} imports {name}"
            )


def test_the_scan_sees_forbidden_imports(tmp_path: Path) -> None:
    """The scan is not blind: the launcher names every layer, and a late or type-only import
    counts as much as one at the top."""
    assert {"clients", "server", "games"} <= imported(ROOT / "oasis" / "cli.py", "oasis")
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import server.app\n"
        "def late() -> None:\n    from games import registry\n"
        "from . import sibling\n"
    )
    assert imported(sample, "clients") == {"typing", "server", "games", "clients"}
    assert "server.app" in imported_modules(sample)
    assert "server.lobby" in imported_modules(ROOT / "server" / "app.py")


@pytest.mark.parametrize("module", CORE)
def test_the_room_core_does_no_io_of_its_own(module: str) -> None:
    found = imported_modules(ROOT / "server" / f"{module}.py")
    assert not found & {"asyncio", "server.room", "server.inbox"}, (module, found)


@pytest.mark.parametrize("module", CORE)
def test_the_room_core_imports_nothing_that_does_io(module: str) -> None:
    found = runtime_imports(ROOT / "server" / f"{module}.py")
    assert not within(found, DOES_IO), (module, within(found, DOES_IO))
    assert "server.store" not in found, (module, "imports the store package")


@pytest.mark.parametrize("module", CORE)
def test_the_room_core_never_names_the_socket_class(module: str) -> None:
    """Not even for the checker: the core types its members as :class:`server.member.Member`
    (what it reads of one), so a compiled core, which checks every argument's declared class,
    takes the twins' members as well as the server's connections."""
    found = imported_modules(ROOT / "server" / f"{module}.py")
    assert "server.connection" not in found, module


def test_the_io_scan_skips_only_type_checking_blocks(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "import time\n"
        "if TYPE_CHECKING:\n    from server.connection import Connection\n"
        "def late() -> None:\n    from server.store import memory\n"
    )
    found = runtime_imports(sample)
    assert {"time", "server.store", "server.store.memory"} <= found
    assert "server.connection" not in found


def _path(module: str) -> Path:
    return ROOT / Path(*module.split(".")).with_suffix(".py")


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_module_of_a_package_is_in_its_table(package: str) -> None:
    directory = ROOT / Path(*package.split("."))
    found = {p.stem for p in directory.glob("*.py") if p.stem != "__init__"}
    assert found == set(PACKAGES[package]), (package, found ^ set(PACKAGES[package]))


@pytest.mark.parametrize(
    "module", [f"{package}.{name}" for package, names in PACKAGES.items() for name in names]
)
def test_a_module_of_a_package_imports_only_the_ones_below_it(module: str) -> None:
    package, name = module.rsplit(".", 1)
    below = PACKAGES[package][: PACKAGES[package].index(name)]
    found = imported_modules(_path(module))
    assert package not in found, (module, "imports its own package")
    for imported_name in within(found, {package}):
        sibling = imported_name.removeprefix(package + ".").split(".")[0]
        assert sibling in below, (module, imported_name)


@pytest.mark.parametrize("module", [f"server.relay.{name}" for name in PACKAGES["server.relay"]])
def test_the_relay_imports_nothing_of_the_node_above_it(module: str) -> None:
    found = imported_modules(_path(module))
    assert not within(found, ABOVE_THE_RELAY), (module, within(found, ABOVE_THE_RELAY))


@pytest.mark.parametrize("module", PURE)
def test_the_relay_wire_does_no_io(module: str) -> None:
    found = runtime_imports(_path(module))
    assert not within(found, DOES_IO | {"server.store"}), (module, found)


def test_the_package_scan_sees_a_module_importing_one_above_it(tmp_path: Path) -> None:
    """The order check is not blind: ``within`` finds a package's modules and the names
    imported from them."""
    sample = tmp_path / "sample.py"
    sample.write_text("from server.relay.spectators import Relay\nimport server.clusterx\n")
    found = imported_modules(sample)
    assert within(found, {"server.relay"}) == {
        "server.relay.spectators",
        "server.relay.spectators.Relay",
    }
    assert within(found, {"server.cluster"}) == set()
