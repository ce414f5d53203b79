"""Build the optional compiled protocol: mypyc compiles protocol's hot modules into C extensions
beside their sources (in place), which Python then imports instead of the ``.py`` files.

Pure Python stays the default and the fallback: nothing imports the extensions by name, a
checkout without them (or where mypyc or a C compiler is missing) runs the same code from
source. The modules are those that earn their place (BENCHMARKS.md, "Compiled protocol"):
the canonical encoding's splicer, the kept trees and their diff, JSON Patch, pointers and the
view hash; the frame dataclasses (``frames``, ``messages``) do not compile with mypyc and stay
Python.

    scripts/build-compiled              # build in place (gcc, about 20 s)
    scripts/build-compiled --clean      # remove the extensions: back to pure Python
    python scripts/build_compiled.py --root DIR   # build in another checkout (the tests' copy)

After editing a compiled module, build again or clean: an extension beside a newer source is
still what Python imports (``--check`` says whether the built ones match their sources).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = (
    "protocol/codec.py",
    "protocol/tree.py",
    "protocol/patch.py",
    "protocol/pointer.py",
    "protocol/hashing.py",
)
GROUP = "oasis_native"
"""mypyc's shared library of the group: ``oasis_native__mypyc.*.so`` at the root."""
STAMP = "build/compiled.json"
"""The sources' digests at the last build (``--check``)."""

SETUP = """
import sys
from mypyc.build import mypycify
from setuptools import setup

sys.argv[1:] = ["build_ext", "--inplace"]
setup(
    name="oasis-compiled",
    packages=[],
    py_modules=[],
    ext_modules=mypycify({modules!r}, opt_level="3", group_name={group!r}),
)
"""


def extensions(root: Path) -> list[Path]:
    """The compiled files present under ``root``."""
    found = [p for m in MODULES for p in (root / m).parent.glob(Path(m).stem + ".*.so")]
    return found + sorted(root.glob(GROUP + "__mypyc.*.so"))


def digests(root: Path) -> dict[str, str]:
    return {m: hashlib.sha256((root / m).read_bytes()).hexdigest() for m in MODULES}


def clean(root: Path) -> None:
    for path in extensions(root):
        path.unlink()
    (root / STAMP).unlink(missing_ok=True)


def build(root: Path) -> None:
    clean(root)
    env = {**os.environ, "MYPYC_OPT_LEVEL": "3"}
    code = SETUP.format(modules=list(MODULES), group=GROUP)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"mypyc build failed ({done.returncode})")
    missing = [m for m in MODULES if not list((root / m).parent.glob(Path(m).stem + ".*.so"))]
    if missing:
        raise SystemExit(f"mypyc built no extension for {', '.join(missing)}")
    (root / STAMP).parent.mkdir(exist_ok=True)
    (root / STAMP).write_text(json.dumps(digests(root), indent=1) + "\n")


def stale(root: Path) -> list[str]:
    """Compiled modules whose source changed since they were built (all of them if unknown)."""
    if not extensions(root):
        return []
    try:
        built = json.loads((root / STAMP).read_text())
    except (OSError, ValueError):
        return list(MODULES)
    now = digests(root)
    return [m for m in MODULES if built.get(m) != now[m]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to build in")
    parser.add_argument("--clean", action="store_true", help="remove the extensions")
    parser.add_argument("--check", action="store_true", help="fail if a build is stale")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.clean:
        clean(root)
        print("compiled protocol removed: pure Python")
        return 0
    if args.check:
        old = stale(root)
        if old:
            print(f"stale compiled modules (build again or --clean): {', '.join(old)}")
            return 1
        print("compiled" if extensions(root) else "pure Python")
        return 0
    build(root)
    print(f"compiled: {', '.join(MODULES)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
