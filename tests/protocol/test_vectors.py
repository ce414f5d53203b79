"""protocol/vectors/: the files frontends check themselves against agree with our code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonpatch  # type: ignore[import-untyped]
import pytest

from protocol.codec import canonical, decode, encode
from protocol.errors import FrameError
from protocol.hashing import view_hash
from protocol.patch import apply, diff
from tests.protocol.make_vectors import build

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def _load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    assert cases
    return cases


@pytest.mark.parametrize("case", _load("frames"), ids=lambda c: c["name"])
def test_frame_vectors(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["hex"])
    if case["valid"]:
        assert decode(data) == case["frame"]
        assert encode(case["frame"]) == data
    else:
        with pytest.raises(FrameError) as info:
            decode(data)
        assert info.value.code == case["error"]


@pytest.mark.parametrize("case", _load("patches"), ids=lambda c: c["name"])
def test_patch_vectors(case: dict[str, Any]) -> None:
    old, new, ops = case["old"], case["new"], case["patch"]
    assert diff(old, new) == ops
    assert canonical(apply(old, ops)) == canonical(new)
    assert jsonpatch.apply_patch(old, ops) == new
    assert view_hash(old) == case["old_hash"]
    assert view_hash(new) == case["new_hash"]
    assert canonical(new).hex() == case["new_canonical_hex"]


def test_vector_files_are_up_to_date() -> None:
    """Regenerate with ``python -m tests.protocol.make_vectors`` if this fails."""
    built = build()
    for name in ("frames", "patches"):
        assert json.loads(json.dumps(built[name])) == _load(name)
