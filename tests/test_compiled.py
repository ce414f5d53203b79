"""The optional compiled protocol (``scripts/build-compiled``: mypyc) passes protocol's own tests.

The module builds the compiled modules once in a copy of ``protocol/`` (this checkout stays pure
Python, the default), checks that the copy imports the extensions, not the sources, and runs
``tests/protocol`` against them in a subprocess. The default tier leaves out the six slowest
property tests (the diff's, the tree's and the mutated frames': about 50 s on a loaded machine;
their smaller siblings still run compiled, and the slow tier runs every test), and both leave
out the one test that watches the hasher by monkeypatching a module global, which compiled code
binds at build time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "scripts" / "build_compiled.py"
UNCOMPILABLE = "tests/protocol/test_hashing.py::test_what_a_patch_shares_with_the_old_view_is_not_encoded_again"  # noqa: E501
SLOWEST = (
    "tests/protocol/test_patch.py::test_jsonpatch_applies_our_diff",
    "tests/protocol/test_patch.py::test_no_container_below_the_top_costs_more_than_replacing_it",
    "tests/protocol/test_patch.py::test_apply_of_diff_gives_the_new_document",
    "tests/protocol/test_codec.py::test_mutated_frames_decode_or_raise_frame_error",
    "tests/protocol/test_tree.py::test_the_kept_bytes_are_the_canonical_encoding_of_every_version",
    "tests/protocol/test_tree.py::test_the_diff_of_two_trees_turns_one_version_into_the_next",
)


def _compiled_copy(tmp: Path) -> Path:
    """A checkout of protocol/ and its tests in ``tmp``, with the compiled build in place."""
    skip = shutil.ignore_patterns("*.so", "__pycache__")
    shutil.copytree(ROOT / "protocol", tmp / "protocol", ignore=skip)
    (tmp / "games").symlink_to(ROOT / "games")
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    (tmp / "tests").mkdir()
    for name in ("__init__.py", "conftest.py", "services.py"):
        shutil.copy(ROOT / "tests" / name, tmp / "tests" / name)
    shutil.copytree(ROOT / "tests" / "protocol", tmp / "tests" / "protocol", ignore=skip)
    done = subprocess.run(
        [sys.executable, str(BUILD), "--root", str(tmp)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import protocol.codec, protocol.tree, protocol.patch, "
         "protocol.pointer, protocol.hashing as h; import sys; "
         "print(*(sys.modules[m].__file__ for m in sys.modules if m.startswith('protocol.')))"],
        cwd=tmp, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    files = dict((Path(f).name.split(".")[0], f) for f in where.stdout.split())
    for module in ("codec", "tree", "patch", "pointer", "hashing"):
        assert files[module].startswith(str(tmp)) and files[module].endswith(".so"), files
    return tmp


def _protocol_tests(root: Path, *deselect: str) -> None:
    args = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/protocol"]
    for test in (UNCOMPILABLE, *deselect):
        args += ["--deselect", test]
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compiled_copy(tmp_path_factory.mktemp("compiled"))


def test_the_compiled_protocol_passes_protocols_tests(compiled: Path) -> None:
    _protocol_tests(compiled, *SLOWEST)


@pytest.mark.slow
def test_the_compiled_protocol_passes_every_protocol_test(compiled: Path) -> None:
    _protocol_tests(compiled)


def test_a_compiled_build_is_refused_once_its_sources_changed(
    compiled: Path, tmp_path: Path
) -> None:
    """``--check`` catches an extension older than its source (which Python would still
    import): a copy of the build whose ``tree.py`` is then edited."""
    root = tmp_path / "copy"
    shutil.copytree(compiled, root, symlinks=True)
    check = [sys.executable, str(BUILD), "--root", str(root), "--check"]
    ok = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "compiled" in ok.stdout, ok.stdout
    with (root / "protocol" / "tree.py").open("a") as source:
        source.write("\n# edited\n")
    done = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "protocol/tree.py" in done.stdout, done.stdout
