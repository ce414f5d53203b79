"""The recorded session in protocol/vectors/session is self-consistent (SPEC section 15)."""

from __future__ import annotations

import json
from typing import Any

import msgpack

from protocol import messages as m
from protocol.frames import parse_frame
from protocol.hashing import view_hash
from protocol.patch import apply
from tests.server.record_session import OUT


def test_the_recorded_session_decodes_applies_and_hashes() -> None:
    index = json.loads((OUT / "session.json").read_text())
    views: dict[str, Any] = {}
    revs: dict[str, int] = {}
    rules: dict[str, int] = {}
    patches = 0
    for entry in index:
        data = (OUT / "frames" / entry["file"]).read_bytes()
        frame = msgpack.unpackb(data, raw=False)
        assert frame == entry["frame"]
        conn = entry["connection"]
        if entry["direction"] == "sent":
            m.parse(frame)
            continue
        assert parse_frame(frame).to_wire() == frame
        if frame["type"] == "welcome":
            rules[conn] = frame["hash_rule"]
        if frame["type"] in ("joined", "state") and frame.get("view") is not None:
            assert view_hash(frame["view"], rules[conn]) == frame["hash"]
            views[conn], revs[conn] = frame["view"], frame["rev"]
        elif frame["type"] == "patch":
            assert frame["rev"] == revs[conn] + 1
            views[conn] = apply(views[conn], frame["ops"])
            revs[conn] = frame["rev"]
            assert view_hash(views[conn], rules[conn]) == frame["hash"]
            patches += 1
    assert patches > 20
    assert rules == {"seat0": 1, "seat1": 2, "spectator": 1}
    assert views["spectator"]["own"] is None
    assert views["seat0"]["shared"] == views["spectator"]["shared"]
    assert views["seat0"]["shared"]["result"] is not None
