"""Build the optional compiled hot paths: mypyc compiles the protocol's and the engines' hot
modules into C extensions beside their sources (in place), which Python then imports instead of
the ``.py`` files.

Pure Python stays the fallback: nothing imports the extensions by name, a checkout without them
(or where mypyc or a C compiler is missing) runs the same code from source. The modules are those
that earn their place (BENCHMARKS.md, "Compiled hot paths"): the protocol's canonical splicer,
kept trees and their diff, JSON Patch, pointers, view hash, spliced patch frames and the
requests' parser (``messages.py``: its one untyped field is spelled ``builtins.object``, which
a compiled dataclass looks up among the module's globals); the game contract
(``games/base.py``: the match, the views' parts, the default labels and texts; its ``Game``
allows the engines' interpreted subclasses) and the engines' random generator (``games/rng.py``:
the dice and shuffles: interpreted, about 0.7 % of a Yspahan action; its draws in C beside it);
Ishtar's and Yspahan's views, labels and legal
choices, their states (``state.py``: native classes, so that the compiled modules read a field
directly instead of looking it up in an instance dict; a native class has no ``__dict__``, so
nothing may ``copy.copy`` a state: Ishtar's ``hidden_variant`` copies it field by field) and
what a move runs through (each engine's ``Game`` subclass, called by the compiled ``Match``
without a Python frame, its actions, scoring and snapshots; Yspahan's turn, tower, city,
buildings, steward, caravan and cards, and its component tables, ``data.py``, which the
compiled modules then read as constants, not as attributes of a module; not Ishtar's edition,
either's setup, static data and explanations, built once or read on an error only); the
server's room core and the shell's hot path (a frame read, dispatched, queued in the room's
inbox, its effects carried out, the keeper's store calls among them, frames written to sockets
and spectators, the metrics counted), with the room's vocabulary (``server/room_state.py``: its
``Status``, settings and commands native classes, whose fields the core reads at every command,
looked up as attributes of Python objects otherwise) and the core's other parts (chat, upkeep,
stand-ins, quotas); the lobby, which makes a new match (``server/lobby.py``); the Redis store's
write path (the group commit, its pipelined connection, the script calls, records and keys), the
room's stored meta (``server/store/meta.py``: a ``RoomMeta`` built and written at every seat
change) and the memory store (``server/store/memory.py``: one append per choice on a server
without Redis). The lobby's and the memory store's classes are ordinary Python classes with
compiled methods (mypyc's ``native_class=False``): tests replace a method of one lobby or store
and subclass the store. Such a class cannot hold a lambda or a nested function in a method
(mypyc fails on it) nor a property with a setter.
Where a checkout has it, the benchmarks' game too (``BENCH``: the tests' tiny card game, which
the peer comparison serves), as the engines are.
Not compiled: ``server/room.py``, the actor around the core (a native class cannot be weakly
referenced, which ``tests/server/test_memory.py`` proves freed rooms by; compiled as an
ordinary class, the compiled effector would check the room it is given is one, and
``tests/server/test_effector.py`` gives it a stand-in; it does little per action: its command
loop is the effector's), ``server/gate.py`` (it subclasses websockets' classes) and
``server/store/redis.py`` (a test subclasses the store; it hands each call on).

A module-level name that a compiled function reads is declared ``Final``: else compiled code
looks it up in the module's globals dict at every use (a ``Final`` one is a C static or
inlined); ``tests/test_compiled.py`` checks every compiled module's sources for it.

Two mypyc mistakes the compiled modules keep clear of, each held by a check of their sources in
``tests/test_compiled.py``: an ``except A as e`` followed by ``except B as e`` in one function,
``A`` a native class, types ``e`` as ``A`` and the second raises ``TypeError`` (each ``except``
name has one type); and a coroutine that handled an exception, then reaches a ``finally``
holding an ``await`` that does not run, raises the exception underneath the one handled when a
compiled coroutine awaits it (no ``await`` in a ``finally``).

Beside them two hand-written C extensions (``NATIVE``), built by setuptools with the groups (gcc
``-O3`` always, the tests' copy too: the tested binary is then the shipped one), removed by
``--clean`` and counted in ``--check``'s staleness like a module. ``protocol/_diffc.c``: the view
diff of ``protocol/patch.py`` in C (issue 21, "native diff") and the views' other per-revision
work (the view hash's BLAKE2b, the codec's plain-value pack, canonical and unpack, a revision's
ops joined); ``patch.py``, ``tree.py``, ``hashing.py`` and ``codec.py`` (its ``pack`` of the
plain types) use it when it imports and their own Python otherwise. ``games/_gamesc.c``: the
random generator's draws on a machine word, which ``games/rng.py`` uses the same way. A tree
without them still runs.

One mypyc group per package (``GROUPS``): each builds one shared library beside its modules
(``protocol/native__mypyc.*.so``, ...), so that an installed tree (the image's wheel) carries
every compiled file inside its packages.

    scripts/build-compiled              # build in place (gcc, about 1 to 2 minutes)
    scripts/build-compiled --clean      # remove the extensions: back to pure Python
    scripts/build-compiled --check      # fail if a build is stale (a source changed since)
    scripts/build-compiled --if-stale   # build only if missing or stale
    python scripts/build_compiled.py --auto   # scripts/serve: build if it can, else pure Python
    python scripts/build_compiled.py --root DIR   # build in another checkout (the tests' copy)
    python scripts/build_compiled.py --modules protocol/codec.py,...   # measure another set
        (``.c`` sources of ``NATIVE`` among them build those; none: no native extension)
    python scripts/build_compiled.py --root DIR --opt-level 0   # gcc -O0: half the build time

After editing a compiled module, build again or clean: an extension beside a newer source is
still what Python imports (``--check`` says whether the built ones match their sources).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GROUPS: dict[str, tuple[str, ...]] = {
    "protocol": (
        "protocol/codec.py",
        "protocol/tree.py",
        "protocol/patch.py",
        "protocol/pointer.py",
        "protocol/hashing.py",
        "protocol/_spliced.py",
        "protocol/messages.py",
    ),
    "games": ("games/base.py", "games/rng.py"),
    "games.ishtar": (
        "games/ishtar/views.py",
        "games/ishtar/labels.py",
        "games/ishtar/garden.py",
        "games/ishtar/turn.py",
        "games/ishtar/hexes.py",
        "games/ishtar/state.py",
        "games/ishtar/scoring.py",
        "games/ishtar/snapshot.py",
        "games/ishtar/actions.py",
        "games/ishtar/game.py",
    ),
    "games.yspahan": (
        "games/yspahan/views.py",
        "games/yspahan/labels.py",
        "games/yspahan/decisions.py",
        "games/yspahan/state.py",
        "games/yspahan/actions.py",
        "games/yspahan/game.py",
        "games/yspahan/scoring.py",
        "games/yspahan/turn.py",
        "games/yspahan/tower.py",
        "games/yspahan/buildings.py",
        "games/yspahan/steward.py",
        "games/yspahan/caravan.py",
        "games/yspahan/cards.py",
        "games/yspahan/city.py",
        "games/yspahan/data.py",
    ),
    "server": (
        # The room core (sans I/O): its commands, views, seats, spectators and clocks.
        "server/core.py",
        "server/room_state.py",  # (its Status, read by the core at every command)
        "server/steps.py",
        "server/play.py",
        "server/views.py",
        "server/seats.py",
        "server/spectators.py",
        "server/membership.py",
        "server/effects.py",
        "server/clock.py",
        "server/timekeeping.py",
        # The shell's hot path: a frame read, dispatched, queued, carried out and written.
        # (Not server/member.py: a Protocol for types only, never imported at run time.)
        "server/effector.py",
        "server/keeper.py",
        "server/fanout.py",
        "server/connection.py",
        "server/reader.py",
        "server/inbox.py",
        "server/dispatch.py",
        "server/description.py",
        "server/autoplay.py",
        "server/limits.py",
        "server/metrics.py",
        # The rest of the room core's parts, built at every new match and read per command.
        "server/chat.py",
        "server/upkeep.py",
        "server/takeover.py",
        "server/quotas.py",
        # A new match's way: the lobby that makes it (an ordinary Python class, mypyc's
        # native_class=False: compiled methods, an instance dict).
        "server/lobby.py",
    ),
    "server.store": (
        # The Redis store's write path: the group commit and its pipelined connection, the
        # script calls packed, the records and key names. (Not redis.py, the store itself: a
        # test subclasses it, and its methods only hand each call on.)
        "server/store/writes.py",
        "server/store/commit.py",
        "server/store/client.py",
        "server/store/lane.py",
        "server/store/records.py",
        "server/store/meta.py",
        "server/store/keys.py",
        # The memory store (an ordinary Python class, mypyc's native_class=False: tests replace
        # its methods and subclass it): its calls compiled coroutines, one append per choice.
        "server/store/memory.py",
    ),
}
"""Package -> its compiled modules: one mypyc group (one shared library) per package."""
MODULES = tuple(m for group in GROUPS.values() for m in group)
NATIVE: dict[str, str] = {
    "protocol/_diffc.c": "protocol._diffc",
    "games/_gamesc.c": "games._gamesc",
}
"""Hand-written C extensions: source -> module, built in place beside the mypyc groups."""
NATIVE_OPT = "3"
"""gcc's optimisation of the native extensions, whatever ``--opt-level`` says (a second's build)."""
SOURCES = MODULES + tuple(NATIVE)
"""Every source of the shipped build (the stamp's digests)."""
BENCH: dict[str, tuple[str, ...]] = {"tests.games": ("tests/games/tiny.py",)}
"""The benchmarks' game, compiled as the engines are wherever the checkout has it (a checkout,
the tests' copy; not the image, which holds no tests, nor its ``compiled_modules`` line, which
names the project's modules only): the tests' tiny card game that ``bench/cost.py``,
``bench/server_instructions.py`` and the peer comparison (``bench/peers``) serve. Interpreted,
its own code (a decision, a move, the shared view and four hands per action, called through
``Game``'s glue) was about 7 % of the server's instructions per action there: a cost of the
game, not of the framework the benchmarks measure, whose own engines run compiled, as the
peers' tiny games run compiled by V8 (BENCHMARKS.md, twentieth session)."""
BENCH_MODULES = tuple(m for group in BENCH.values() for m in group)
SCANNED = (
    "protocol", "games", "games/ishtar", "games/yspahan", "server", "server/store", "tests/games"
)  # fmt: skip
"""Where extensions may be (``--modules`` may compile any of these packages' modules)."""
LIBRARY = "native"
"""mypyc's shared library of a package's group: ``<package>/native__mypyc.*.so``."""
LEGACY = "oasis_native"
"""The one group of earlier builds, at the root (``--clean`` removes it too)."""
STAMP = "build/compiled.json"
"""The built modules and their sources' digests at the last build (``--check``)."""

SETUP = """
import sys
from mypyc.build import mypycify
from setuptools import Extension, setup

sys.argv[1:] = ["build_ext", "--inplace", "--parallel", {jobs!r}]
files = {files!r}
compiled = mypycify(files, opt_level={opt!r}, separate={groups!r}) if files else []
native = [
    Extension(name, [source], extra_compile_args=["-O" + {native_opt!r}])
    for source, name in {native!r}
]
setup(name="oasis-compiled", packages=[], py_modules=[], ext_modules=compiled + native)
"""


def sources(root: Path) -> tuple[str, ...]:
    """Every source of a full build in ``root``: the shipped ones (``SOURCES``) and those of
    ``BENCH`` that ``root`` holds."""
    return MODULES + tuple(m for m in BENCH_MODULES if (root / m).is_file()) + tuple(NATIVE)


def package(module: str) -> str:
    """``games/ishtar/views.py`` -> ``games.ishtar``."""
    return str(Path(module).parent).replace(os.sep, ".")


def extensions(root: Path) -> list[Path]:
    """The compiled files present under ``root`` (of any module this script builds)."""
    found = [p for d in SCANNED for p in sorted((root / d).glob("*.so"))]
    return found + sorted(root.glob(LEGACY + "__mypyc.*.so"))


def digests(root: Path, modules: tuple[str, ...]) -> dict[str, str]:
    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in modules}


def clean(root: Path) -> None:
    for path in extensions(root):
        path.unlink()
    (root / STAMP).unlink(missing_ok=True)


def build(root: Path, modules: tuple[str, ...] | None = None, opt: str = "3") -> None:
    """Build ``modules`` in place in ``root``: the ``.py`` ones by mypyc, the ``.c`` ones
    (``NATIVE``) as they are; ``opt``: the mypyc modules' C optimisation level (``3`` as
    shipped; the tests' copy takes ``0``: it changes how fast the code runs, not what it does,
    and takes about half the time to build)."""
    modules = sources(root) if modules is None else modules
    clean(root)
    unknown = [m for m in modules if m.endswith(".c") and m not in NATIVE]
    if unknown:
        raise SystemExit(f"not a native extension's source: {', '.join(unknown)}")
    python = [m for m in modules if not m.endswith(".c")]
    native = [(m, NATIVE[m]) for m in modules if m.endswith(".c")]
    groups: dict[str, list[str]] = {}
    for module in python:
        groups.setdefault(package(module), []).append(module)
    separate = [(files, f"{name}.{LIBRARY}") for name, files in groups.items()]
    env = {**os.environ, "MYPYC_OPT_LEVEL": opt}
    jobs = str(max(1, min(len(separate) + len(native), os.cpu_count() or 1)))
    code = SETUP.format(
        files=python, groups=separate, jobs=jobs, opt=opt, native=native, native_opt=NATIVE_OPT
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    shutil.rmtree(root / "build" / "temp.linux-x86_64-cpython-311", ignore_errors=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"mypyc build failed ({done.returncode})")
    missing = [m for m in modules if not list((root / m).parent.glob(Path(m).stem + ".*.so"))]
    if missing:
        raise SystemExit(f"the build made no extension for {', '.join(missing)}")
    (root / STAMP).parent.mkdir(exist_ok=True)
    (root / STAMP).write_text(json.dumps(digests(root, modules), indent=1) + "\n")


def stale(root: Path, modules: tuple[str, ...] | None = None) -> list[str]:
    """Modules that a build in place lacks or whose source changed since (an empty list for a
    tree with no extensions at all: pure Python is never stale)."""
    if not extensions(root):
        return []
    modules = sources(root) if modules is None else modules
    try:
        built = json.loads((root / STAMP).read_text())
    except (OSError, ValueError):
        return list(modules)
    now = digests(root, modules)
    changed = [m for m in modules if built.get(m) != now[m]]
    extra = [m for m in built if m not in modules]
    return changed + extra


def compiler() -> str | None:
    """Why this Python cannot build the extensions, or None if it can (mypyc and a C compiler)."""
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypyc is not installed (the dev extras: EXTRAS=dev)"
    if not (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")):
        return "no C compiler (cc, gcc)"
    return None


def auto(root: Path, setting: str) -> str:
    """``scripts/serve``'s choice, as one line: build if missing or stale and this Python can
    (mypyc and a C compiler), else pure Python; never a stale extension (it would run the old
    code), never a failed start. ``setting`` is ``OASIS_COMPILED``: ``0`` for pure Python."""
    if setting.strip().lower() in ("0", "no", "off", "false"):
        if extensions(root):
            clean(root)
        return f"oasis: pure Python (OASIS_COMPILED={setting})"
    built = bool(extensions(root))
    old = stale(root) if built else list(sources(root))
    if not old:
        return f"oasis: compiled: {len(MODULES)} modules, {len(NATIVE)} native (up to date)"
    why = compiler()
    if why is None:
        sys.stderr.write(
            "oasis: building the compiled modules (mypyc, 1 to 2 minutes, once per change; "
            "OASIS_COMPILED=0 for pure Python)\n"
        )
        try:
            build(root)
        except SystemExit as failed:
            clean(root)
            return f"oasis: pure Python: the compiled build failed ({failed})"
        return f"oasis: compiled: {len(MODULES)} modules, {len(NATIVE)} native (built now)"
    if built:
        clean(root)
        return f"oasis: pure Python: stale compiled modules removed, cannot rebuild: {why}"
    return f"oasis: pure Python: {why} (scripts/build-compiled installs it and builds)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to build in")
    parser.add_argument("--clean", action="store_true", help="remove the extensions")
    parser.add_argument("--check", action="store_true", help="fail if a build is stale")
    parser.add_argument(
        "--if-stale", action="store_true", help="build only if missing or stale; else say so"
    )
    parser.add_argument(
        "--modules", help="comma-separated paths to compile instead of the shipped set (measuring)"
    )
    parser.add_argument(
        "--auto", action="store_true", help="scripts/serve: build if it can, else pure Python"
    )
    parser.add_argument(
        "--opt-level",
        choices=("0", "1", "2", "3"),
        default="3",
        help="the C compiler's optimisation (3, as shipped; the tests build at 0, faster)",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    modules = tuple(args.modules.split(",")) if args.modules else sources(root)
    if args.clean:
        clean(root)
        print("compiled modules removed: pure Python")
        return 0
    if args.check:
        old = stale(root, modules)
        if old:
            print(f"stale compiled modules (build again or --clean): {', '.join(old)}")
            return 1
        print("compiled" if extensions(root) else "pure Python")
        return 0
    if args.auto:
        print(auto(root, os.environ.get("OASIS_COMPILED", "")), file=sys.stderr)
        return 0
    if args.if_stale and extensions(root) and not stale(root, modules):
        print(f"compiled (up to date): {len(modules)} modules")
        return 0
    build(root, modules, args.opt_level)
    print(f"compiled: {', '.join(modules)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
