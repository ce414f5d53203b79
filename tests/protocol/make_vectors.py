"""Write protocol/vectors/*.json from hand-picked cases: ``python -m tests.protocol.make_vectors``.

The files are for frontends in other languages: each case gives bytes as hex and the decoded
value as JSON, so a client can check its codec, its patch application and its hash. The test
suite checks the files against our implementation (tests/protocol/test_vectors.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack

from protocol.codec import canonical, decode, encode
from protocol.errors import FrameError
from protocol.hashing import view_hash
from protocol.patch import apply, diff

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"

GOOD_FRAMES: list[tuple[str, dict[str, Any]]] = [
    ("hello", {"type": "hello", "id": 1, "version": 1, "client": "oasis-cli/0.1"}),
    ("hello_rule_2", {"type": "hello", "id": 1, "version": 1, "client": "web", "hash_rule": 2}),
    ("act_by_index", {"type": "act", "id": 7, "room": "r-8f3a", "rev": 12, "choice": 3}),
    (
        "act_by_map",
        {
            "type": "act",
            "id": "a1",
            "room": "r-8f3a",
            "rev": 12,
            "choice": {
                "kind": "rotation",
                "tile": "chevron-07",
                "at": [3, -2],
                "rotation": 4,
                "cells": [[3, -2], [2, -1], [2, 0]],
                "label": "lay the tile turned 120° clockwise (rotation 4): "
                "on (3,-2), (2,-1), (2,0)",
            },
        },
    ),
    ("unicode_and_floats", {"type": "chat", "text": "Ishtar ☀ 1.5×", "x": -0.25}),
    ("big_ints", {"type": "ping", "t": 2**63 - 1, "u": 2**64 - 1, "n": -(2**63)}),
]

BAD_FRAMES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "malformed_frame"),
    ("reserved_byte", b"\xc1", "malformed_frame"),
    ("truncated_map", b"\x81\xa4type", "malformed_frame"),
    ("trailing_bytes", encode({"type": "x"}) + b"\x00", "malformed_frame"),
    ("not_a_map", msgpack.packb([1, 2]), "bad_envelope"),
    ("no_type", msgpack.packb({"kind": "hello"}), "bad_envelope"),
    ("int_key", msgpack.packb({"type": "x", 1: 2}), "bad_type"),
    ("ext_type", msgpack.packb({"type": "x", "e": msgpack.ExtType(5, b"ab")}), "bad_type"),
    ("too_deep", encode({"type": "x", "v": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}), "too_deep"),
    ("invalid_utf8", b"\x81\xa4type\xa2\xff\xfe", "malformed_frame"),
    ("deeper_than_the_unpacker", b"\x82\xa4type\xa1x\xa1v" + b"\x91" * 1100 + b"\xc0", "too_deep"),
    ("map_as_map_key", b"\x82\xa4type\xa1x\x80\x01", "bad_type"),
]

PATCH_CASES: list[tuple[str, Any, Any]] = [
    ("scalar_replace", {"a": 1, "b": "x"}, {"a": 2, "b": "x"}),
    ("add_and_remove_keys", {"keep": 1, "gone": True}, {"keep": 1, "new": [1, 2]}),
    ("list_append", {"log": [1, 2]}, {"log": [1, 2, 3, 4]}),
    ("list_truncate", {"log": [1, 2, 3, 4]}, {"log": [1]}),
    ("nested", {"shared": {"board": [[0, 0], [0, 1]]}}, {"shared": {"board": [[0, 0], [2, 1]]}}),
    ("escaped_keys", {"a/b": 1, "m~n": 2}, {"a/b": 3, "m~n": 2}),
    ("type_change", {"v": 1}, {"v": True}),
    ("int_to_float", {"v": 1}, {"v": 1.0}),
    ("null_and_empty", {"v": None, "l": []}, {"v": {}, "l": [None]}),
    (
        "whole_view",
        {"shared": {"turn": None}, "own": None},
        {
            "shared": {"turn": {"seat": 1, "decision": "turn", "prompt": "take a group of dice"}},
            "own": {
                "seat": 1,
                "private": {"hand": ["3_gold"]},
                "choices": [{"kind": "end", "label": "end your turn"}],
            },
        },
    ),
    (
        "spectator_view",
        {"shared": {"turn": {"seat": 0, "decision": "turn"}, "log": list(range(40))}, "own": None},
        {"shared": {"turn": {"seat": 1, "decision": "turn"}, "log": list(range(40))}, "own": None},
    ),
]


def build() -> dict[str, Any]:
    frames = []
    for name, frame in GOOD_FRAMES:
        data = encode(frame)
        assert decode(data) == frame
        frames.append({"name": name, "hex": data.hex(), "frame": frame, "valid": True})
    for name, data, code in BAD_FRAMES:
        try:
            decode(data)
        except FrameError as exc:
            if exc.code != code:
                raise AssertionError(f"{name}: {exc.code}, expected {code}") from None
        else:
            raise AssertionError(f"{name} decoded")
        frames.append({"name": name, "hex": data.hex(), "valid": False, "error": code})
    patches = []
    for name, old, new in PATCH_CASES:
        ops = diff(old, new)
        assert canonical(apply(old, ops)) == canonical(new)
        patches.append(
            {
                "name": name,
                "old": old,
                "patch": ops,
                "new": new,
                "old_hash": view_hash(old),
                "new_hash": view_hash(new),
                "new_canonical_hex": canonical(new).hex(),
                "new_hash2": view_hash(new, 2),
            }
        )
    return {"frames": frames, "patches": patches}


def main() -> None:
    built = build()
    VECTORS.mkdir(parents=True, exist_ok=True)
    for key, cases in built.items():
        path = VECTORS / f"{key}.json"
        path.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(cases)} cases to {path.relative_to(VECTORS.parents[1])}")


if __name__ == "__main__":
    main()
