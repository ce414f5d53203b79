"""The optional compiled hot paths (``scripts/build-compiled``: mypyc) pass the protocol's, the
games' and the server's own tests.

One build per session (:func:`compiled_tree`, shared with ``tests/deploy``'s compiled server): a
copy of ``protocol/``, ``games/`` and ``server/`` (this checkout stays as it is) with every module
of ``scripts/build_compiled.py``'s ``MODULES`` compiled in place (and its ``BENCH``, the tests'
tiny game) and its ``NATIVE`` extensions built (the view diff in C, ``protocol._diffc``; the random
draws and text keys, ``games._gamesc``), checked to import the extensions, not the sources, and the
diff and the draws to use their native twins; then ``tests/protocol``, ``tests/games`` and
``tests/server`` run against it in subprocesses, with ``OASIS_NATIVE_DIFF=required``: the native
diff's differential tests (``tests/protocol/test_diffc.py``, skipped where it is not built) and the
draws' (``tests/games/test_rng.py``, ``test_generic_texts.py``) run there and fail if it is
missing.

The default tier runs a representative part: the protocol's tests but the six slowest property
tests (the diff's, the tree's and the mutated frames': their smaller siblings still run), and the
games' tests of the compiled modules (views, labels, garden, legal choices) with the engines'
contract and the seeded playouts; the server's room core through its in-process twins, its
units, views, clocks and the connection's and fan-out's send paths (over real sockets), and a
new match's way (the lobby, a rematch, the memory store).
The slow tier (``-m slow``) runs every test of the three, the 2,000 random games per engine and
every socket test of the server included. (A test that watches the encoder by monkeypatching a
module global, which compiled code binds at build time, checks what it watched only in pure
Python, and its results either way.)
"""

from __future__ import annotations

import ast
import fcntl
import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "scripts" / "build_compiled.py"
sys.path.insert(0, str(BUILD.parent))
from build_compiled import BENCH_MODULES, MODULES, NATIVE  # noqa: E402

COMPILED = MODULES + BENCH_MODULES
"""Every module compiled in the copy: the shipped ones and the benchmarks' game (its tests' copy
holds it)."""

SLOWEST = (
    "tests/protocol/test_patch.py::test_jsonpatch_applies_our_diff",
    "tests/protocol/test_patch.py::test_no_container_below_the_top_costs_more_than_replacing_it",
    "tests/protocol/test_patch.py::test_apply_of_diff_gives_the_new_document",
    "tests/protocol/test_codec.py::test_mutated_frames_decode_or_raise_frame_error",
    "tests/protocol/test_tree.py::test_the_kept_bytes_are_the_canonical_encoding_of_every_version",
    "tests/protocol/test_tree.py::test_the_diff_of_two_trees_turns_one_version_into_the_next",
)
GAMES_DEFAULT = (
    "tests/games/test_contract.py",
    "tests/games/test_rng.py",
    "tests/games/test_generic_texts.py",
    "tests/games/test_undo.py",
    "tests/games/ishtar/test_views.py",
    "tests/games/ishtar/test_labels.py",
    "tests/games/ishtar/test_garden.py",
    "tests/games/ishtar/test_choose.py",
    "tests/games/ishtar/test_playouts.py",
    "tests/games/ishtar/test_snapshot.py",
    "tests/games/ishtar/test_actions.py",
    "tests/games/ishtar/test_scoring.py",
    "tests/games/ishtar/test_game.py",
    "tests/games/yspahan/test_views.py",
    "tests/games/yspahan/test_labels.py",
    "tests/games/yspahan/test_decisions.py",
    "tests/games/yspahan/test_turn.py",
    "tests/games/yspahan/test_game.py",
    "tests/games/yspahan/test_state.py",
    "tests/games/yspahan/test_actions.py",
    "tests/games/yspahan/test_buildings.py",
    "tests/games/yspahan/test_caravan.py",
    "tests/games/yspahan/test_cards.py",
    "tests/games/yspahan/test_city.py",
    "tests/games/yspahan/test_steward.py",
    "tests/games/yspahan/test_tower.py",
    "tests/games/yspahan/test_data.py",
)
"""The games' tests in the default tier: those of the compiled modules, the contract and the
seeded playouts (their non-slow tests, ``GAMES_DEFAULT_K``); the slow tier runs all of
``tests/games``."""
GAMES_DEFAULT_K = "not 200_random and not random_matches_keep and (not harness or [0- or [1-)"
"""Of those, the seeded playouts of two seeds per player count, not the hundreds of random games
(the default tier's pure run has them; the slow tier runs them compiled)."""
SERVER_DEFAULT = (
    "tests/server/core",
    "tests/server/test_units.py",
    "tests/server/test_views.py",
    "tests/server/test_clock.py",
    "tests/server/test_connection.py",
    "tests/server/test_relay_fanout.py",
    "tests/server/test_metrics.py",
    "tests/server/test_messages.py",
    "tests/server/store",
    "tests/server/persistence/test_redis_trouble.py",
    "tests/server/test_lobby.py",
    "tests/server/test_rematch.py",
    "tests/server/test_new_match.py",
)
"""The server's tests in the default tier: the room core's twins and units, its views and
clocks, the shell's send paths over real sockets, its metrics and the requests' parser, the
Redis store's write path (its group commit, pipelined connection and batched writes, and Redis
going away), and a new match's way (the lobby, a rematch, the memory store); the slow tier
runs all of ``tests/server`` (``test_undo.py``'s 13 s among them)."""
COMPILED_PACKAGES = ("protocol", "games", "server")
OPT_LEVEL = "0"
"""The copy's C is compiled at ``-O0``, not the shipped ``-O3``: what the code does is mypyc's,
not the C compiler's optimisation, and the build takes half the time (54 s against about 100
on a slow machine; the default tier's largest part)."""
TESTS_COPIED = ("__init__.py", "conftest.py", "services.py", "harness.py")
_BUILT: dict[str, Path] = {}


def module_name(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _compiled_copy(tmp: Path) -> Path:
    """A checkout of protocol/, games/, server/ and their tests in ``tmp``, compiled in place
    (clients/, oasis/ and bench/ linked, as Python)."""
    skip = shutil.ignore_patterns("*.so", "__pycache__")
    for package in COMPILED_PACKAGES:
        shutil.copytree(ROOT / package, tmp / package, ignore=skip)
    for package in ("clients", "oasis", "bench"):
        (tmp / package).symlink_to(ROOT / package)
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    (tmp / "tests").mkdir()
    for name in TESTS_COPIED:
        shutil.copy(ROOT / "tests" / name, tmp / "tests" / name)
    for tests in COMPILED_PACKAGES:
        shutil.copytree(ROOT / "tests" / tests, tmp / "tests" / tests, ignore=skip)
    done = subprocess.run(
        [sys.executable, str(BUILD), "--root", str(tmp), "--opt-level", OPT_LEVEL],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = [module_name(m) for m in COMPILED] + list(NATIVE.values())
    where = subprocess.run(
        [sys.executable, "-c", f"import importlib, sys\nfor m in {names!r}: "
         "print(m, importlib.import_module(m).__file__)\n"
         "from protocol import patch\nassert patch._NATIVE is not None, 'no native diff'\n"
         "from games import rng\nassert rng.NATIVE is not None, 'no native draws'"],
        cwd=tmp, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    files = dict(line.split(" ", 1) for line in where.stdout.splitlines())
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    for name in names:
        assert files[name].startswith(str(tmp)) and files[name].endswith(suffixes), files
    return tmp


def compiled_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's compiled copy, built on first use (this module's tests and
    ``tests/deploy``'s compiled server share it). Under pytest-xdist the workers share it too:
    it lies in their common temporary directory, and the first to need it builds it under a
    file lock while any other waits for it."""
    if "tree" in _BUILT:
        return _BUILT["tree"]
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # (pytest-of-USER/pytest-N: every worker's basetemp is below)
    tree, done = shared / "compiled-tree", shared / "compiled-tree.done"
    with open(shared / "compiled-tree.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(tree, ignore_errors=True)  # (a build that failed in another worker)
            tree.mkdir()
            _compiled_copy(tree)
            done.touch()
    _BUILT["tree"] = tree
    return tree


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compiled_tree(tmp_path_factory)


NATIVE_REQUIRED = {"OASIS_NATIVE_DIFF": "required"}
"""The compiled copy's test runs: tests/protocol/test_diffc.py runs (never skips) and fails if
the native diff is missing."""


def _run_tests(
    root: Path, paths: tuple[str, ...], *extra: str, env: dict[str, str] | None = None
) -> str:
    args = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *paths, *extra]
    done = subprocess.run(
        args,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=3600,
        env={**os.environ, **NATIVE_REQUIRED, **(env or {})},
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
    return done.stdout


def _protocol_tests(root: Path, *deselect: str) -> None:
    extra: list[str] = []
    for test in deselect:
        extra += ["--deselect", test]
    _run_tests(root, ("tests/protocol",), *extra)


def test_the_compiled_protocol_passes_protocols_tests(compiled: Path) -> None:
    _protocol_tests(compiled, *SLOWEST)


@pytest.mark.slow
def test_the_compiled_protocol_passes_every_protocol_test(compiled: Path) -> None:
    _protocol_tests(compiled)


def test_the_native_diff_makes_the_python_ops(compiled: Path) -> None:
    """The native diff's differential and reference tests, none skipped (also part of the
    protocol's tests above: here on their own, to show they ran)."""
    out = _run_tests(compiled, ("tests/protocol/test_diffc.py",), "-rs")
    assert "skipped" not in out, out[-2000:]


@pytest.mark.slow
def test_the_native_diff_under_the_debug_allocator(compiled: Path) -> None:
    """The same under ``PYTHONMALLOC=debug``: a write past a block, a block freed twice or
    used after it was freed (a reference dropped once too often) fails them."""
    out = _run_tests(
        compiled, ("tests/protocol/test_diffc.py",), "-rs", env={"PYTHONMALLOC": "debug"}
    )
    assert "skipped" not in out, out[-2000:]


def test_the_compiled_engines_pass_their_rules_tests_and_seeded_playouts(compiled: Path) -> None:
    _run_tests(compiled, GAMES_DEFAULT, "-k", GAMES_DEFAULT_K)


@pytest.mark.slow
def test_the_compiled_engines_pass_every_games_test(compiled: Path) -> None:
    """Every test of ``tests/games``, the slow random playouts included."""
    _run_tests(compiled, ("tests/games",), "-m", "slow or not slow")


def test_the_compiled_room_core_passes_its_twins_and_unit_tests(compiled: Path) -> None:
    _run_tests(compiled, SERVER_DEFAULT)


@pytest.mark.slow
def test_the_compiled_server_passes_every_server_test(compiled: Path) -> None:
    """Every test of ``tests/server``: lobby, resume, spectators, takeover, the store, relays.
    But ``test_effector.py``, whose stand-ins for the room's parts the compiled effector refuses
    (it takes their real classes): pure Python only, as its docstring says."""
    _run_tests(
        compiled,
        ("tests/server",),
        "-m",
        "slow or not slow",
        "--ignore=tests/server/test_effector.py",
    )


def _except_names(function: ast.AST) -> dict[str, set[str]]:
    """Name -> the exception types bound to it by the ``except ... as name`` clauses of one
    function (not of the functions inside it)."""
    bound: dict[str, set[str]] = {}
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.ExceptHandler) and node.name and node.type is not None:
            bound.setdefault(node.name, set()).add(ast.unparse(node.type))
        todo.extend(ast.iter_child_nodes(node))
    return bound


def test_no_compiled_function_binds_one_except_name_to_two_types() -> None:
    """mypyc types an ``except A as e`` variable as ``A`` for the whole function, so a later
    ``except B as e`` of the same function raises ``TypeError`` in compiled code when ``A`` is
    a native class (seen: a room's store effects, their failure lost with the room's task).
    Every compiled module gives each ``except`` name one type."""
    found = []
    for module in COMPILED:
        tree = ast.parse((ROOT / module).read_text(), module)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for name, types in _except_names(node).items():
                    if len(types) > 1:
                        found.append(f"{module}:{node.lineno} {node.name}: {name} {types}")
    assert not found, found
    # The check finds what it is for (a function of the two clauses).
    two = ast.parse("def f():\n try: g()\n except KeyError as e: h(e)\n"
                    " except OSError as e: h(e)\n")  # fmt: skip
    assert _except_names(two.body[0]) == {"e": {"KeyError", "OSError"}}


_NOT_FINAL: dict[str, frozenset[str]] = {
    "protocol/patch.py": frozenset({"Op"}),  # (type aliases: read in annotations only)
    "games/ishtar/views.py": frozenset({"_PileItem"}),
    "server/effects.py": frozenset({"Effect"}),
    "games/yspahan/tower.py": frozenset({"Floor"}),
    "server/store/commit.py": frozenset({"Sender"}),
    "server/store/records.py": frozenset({"Migration"}),
    # (the fan-out's pacing, which tests/server/test_relay_fanout.py patches, compiled too)
    "server/fanout.py": frozenset({"FANOUT_AT_ONCE", "FANOUT_BUDGET", "FANOUT_STEP"}),
}
"""Module-level names that compiled functions read and that are rightly not ``Final``."""


def _unfinal_constants(tree: ast.Module) -> list[str]:
    """The module-level names, assigned once and never declared ``global``, that a function
    reads without their being ``Final`` (nor a ``TypeVar``)."""
    rebound = {
        name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names
    }
    assigned: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if any(k in ast.unparse(node.annotation) for k in ("Final", "TypeAlias", "ClassVar")):
                continue
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name) or target.id.startswith("__"):
            continue
        if isinstance(value, ast.Call) and ast.unparse(value.func) in ("TypeVar", "ParamSpec"):
            continue
        assigned[target.id] = assigned.get(target.id, 0) + 1
    read = {
        sub.id
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)
    }
    return sorted(
        name for name, n in assigned.items() if n == 1 and name in read and name not in rebound
    )


def test_compiled_modules_declare_the_constants_their_functions_read_final() -> None:
    """Compiled, a module-level name that is not ``Final`` is looked up in the module's globals
    dict at every use; a ``Final`` one is held in a C static or inlined (the views' constants
    were a measurable share of ``Views.advance``: BENCHMARKS.md, thirteenth session). Every
    compiled module declares what its functions read ``Final``, but for :data:`_NOT_FINAL`."""
    found = []
    for module in COMPILED:
        names = _unfinal_constants(ast.parse((ROOT / module).read_text(), module))
        found += [f"{module}: {n}" for n in names if n not in _NOT_FINAL.get(module, ())]
    assert not found, found
    sample = ast.parse("A = 1\nB: Final = 2\nC = 3\ndef f():\n return A + B\n")
    assert _unfinal_constants(sample) == ["A"]


def _awaits_in_finally(tree: ast.AST) -> list[int]:
    """The lines of the ``try`` statements whose ``finally`` block awaits."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and node.finalbody:
            inner = [n for block in node.finalbody for n in ast.walk(block)]
            if any(isinstance(n, ast.Await | ast.AsyncFor | ast.AsyncWith) for n in inner):
                lines.append(node.lineno)
    return lines


def test_no_compiled_coroutine_awaits_in_a_finally_block() -> None:
    """A mypyc mistake: a compiled coroutine that handles an exception and then reaches a
    ``finally`` holding an ``await`` that does not run (a loop over nothing) raises the
    exception underneath the one it handled, when a compiled coroutine awaits it (seen: the
    Redis store's start against a Redis that is away raised ``ConnectionRefusedError``, which
    ``Client.open_pool`` catches). No compiled module awaits in a ``finally``."""
    found = [
        f"{module}:{line}"
        for module in COMPILED
        for line in _awaits_in_finally(ast.parse((ROOT / module).read_text(), module))
    ]
    assert not found, found
    sample = "async def f():\n try: await g()\n except OSError: pass\n finally: await h()\n"
    assert _awaits_in_finally(ast.parse(sample)) == [2]


def test_a_compiled_build_is_refused_once_its_sources_changed(
    compiled: Path, tmp_path: Path
) -> None:
    """``--check`` catches an extension older than its source (which Python would still
    import): a copy of the build whose ``tree.py``, Ishtar's ``views.py`` and the native diff's
    C are then edited."""
    root = tmp_path / "copy"
    shutil.copytree(compiled, root, symlinks=True)
    check = [sys.executable, str(BUILD), "--root", str(root), "--check"]
    ok = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "compiled" in ok.stdout, ok.stdout
    for source in ("protocol/tree.py", "games/ishtar/views.py", "tests/games/tiny.py"):
        with (root / source).open("a") as f:
            f.write("\n# edited\n")
    with (root / "protocol/_diffc.c").open("a") as f:
        f.write("\n/* edited */\n")
    done = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout
    assert "protocol/tree.py" in done.stdout and "games/ishtar/views.py" in done.stdout
    assert "protocol/_diffc.c" in done.stdout and "tests/games/tiny.py" in done.stdout
    assert "games/yspahan/views.py" not in done.stdout


def test_the_benchmarks_game_is_built_where_a_tree_has_it(tmp_path: Path) -> None:
    """The tests' tiny game is among a full build's sources where the tree holds it (a
    checkout, the tests' copy), and left out where it does not (the image holds no tests)."""
    import build_compiled

    assert "tests/games/tiny.py" in build_compiled.sources(ROOT)
    assert build_compiled.sources(tmp_path) == build_compiled.SOURCES


def test_serve_never_runs_a_stale_build_and_says_which_it_runs(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``scripts/serve``'s choice (``build_compiled.py --auto``) where it cannot build: an
    up-to-date build is kept, a stale one is removed (pure Python, said in one line), and
    ``OASIS_COMPILED=0`` removes any."""
    import build_compiled

    root = tmp_path / "copy"
    shutil.copytree(compiled, root, symlinks=True)
    monkeypatch.setattr(build_compiled, "compiler", lambda: "no C compiler (cc, gcc)")
    line = build_compiled.auto(root, "")
    assert line.startswith("oasis: compiled: ") and build_compiled.extensions(root), line
    assert any(p.name.startswith("_diffc.") for p in build_compiled.extensions(root))
    with (root / "games" / "yspahan" / "views.py").open("a") as f:
        f.write("\n# edited\n")
    line = build_compiled.auto(root, "")
    assert line.startswith("oasis: pure Python: stale") and "no C compiler" in line, line
    assert not build_compiled.extensions(root)
    assert build_compiled.auto(root, "").startswith("oasis: pure Python: no C compiler")
    shutil.copytree(compiled, tmp_path / "again", symlinks=True)
    assert build_compiled.auto(tmp_path / "again", "0") == "oasis: pure Python (OASIS_COMPILED=0)"
    assert not build_compiled.extensions(tmp_path / "again")
