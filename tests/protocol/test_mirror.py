"""The view mirror follows SPEC section 10: patches in order, hash checks, sync on any doubt."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from games import registry
from games.base import Match, audience_view
from protocol.hashing import view_hash
from protocol.mirror import Mirror
from protocol.patch import diff

VECTORS = json.loads((Path(__file__).parents[2] / "protocol/vectors/patches.json").read_text())


def joined(view: Any, rev: int = 0, **extra: Any) -> dict[str, Any]:
    frame = {"type": "joined", "room": "r", "seat": 0, "rev": rev, "view": view}
    frame |= {"hash": view_hash(view), "info": {"game": "g"}, **extra}
    return frame


def patch(old: Any, new: Any, rev: int, events: list[Any] | None = None) -> dict[str, Any]:
    ops = diff(old, new)
    return {"type": "patch", "room": "r", "rev": rev, "ops": ops, "hash": view_hash(new),
            "events": events or []}  # fmt: skip


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
@pytest.mark.parametrize("rule", [1, 2])
def test_mirror_applies_every_protocol_vector_and_checks_its_hash(
    case: dict[str, Any], rule: int
) -> None:
    mirror = Mirror("r", hash_rule=rule)
    old = joined(case["old"], 4)
    old["hash"] = view_hash(case["old"], rule)
    assert not mirror.on_frame(old).problem
    digest = case["new_hash" if rule == 1 else "new_hash2"]
    update = mirror.on_frame(
        {"type": "patch", "room": "r", "rev": 5, "ops": case["patch"], "hash": digest}
    )
    assert update.changed and not update.need_sync and update.problem is None
    assert mirror.view == case["new"] and mirror.rev == 5


def test_a_seats_view_hashed_under_the_other_rule_asks_for_sync() -> None:
    """SPEC section 4: a mirror checks the rule its connection follows, not either rule."""
    case = next(c for c in VECTORS if c["new_hash"] != c["new_hash2"])
    for rule, wrong in ((1, case["new_hash2"]), (2, case["new_hash"])):
        mirror = Mirror("r", hash_rule=rule)
        old = joined(case["old"], 4)
        old["hash"] = view_hash(case["old"], rule)
        assert not mirror.on_frame(old).problem
        patch = {"type": "patch", "room": "r", "rev": 5, "ops": case["patch"], "hash": wrong}
        assert mirror.on_frame(patch).need_sync


def test_joined_keeps_the_seat_token_and_info() -> None:
    mirror = Mirror("r")
    mirror.on_frame(joined({"shared": {}, "own": None}, 3, token="secret", seat=1))
    assert (mirror.rev, mirror.token, mirror.seat, mirror.game) == (3, "secret", 1, "g")


def test_old_patches_are_ignored_after_a_newer_state() -> None:
    a, b = {"shared": {"x": 1}, "own": None}, {"shared": {"x": 2}, "own": None}
    mirror = Mirror("r")
    mirror.on_frame(joined(a, 0))
    mirror.on_frame({"type": "state", "room": "r", "rev": 1, "view": b, "hash": view_hash(b)})
    update = mirror.on_frame(patch(a, b, 1))
    assert not update.changed and not update.need_sync and mirror.view == b


def test_a_gap_asks_for_sync_once_and_the_state_repairs_the_view() -> None:
    views = [{"shared": {"n": i}, "own": None} for i in range(4)]
    mirror = Mirror("r")
    mirror.on_frame(joined(views[0], 0))
    first = mirror.on_frame(patch(views[1], views[2], 2))
    assert first.need_sync and "missed revisions 1" in (first.problem or "")
    second = mirror.on_frame(patch(views[2], views[3], 3))
    assert not second.need_sync, "no second sync while one is pending"
    assert mirror.view == views[0] and mirror.rev == 0
    state = {"type": "state", "room": "r", "rev": 3, "view": views[3], "hash": view_hash(views[3])}
    mirror.on_frame(state)
    assert (mirror.view, mirror.rev, mirror.sync_pending) == (views[3], 3, False)
    assert mirror.resyncs == 1


def test_a_wrong_hash_asks_for_sync_but_still_shows_the_events() -> None:
    a, b = {"shared": {"n": 1}, "own": None}, {"shared": {"n": 2}, "own": None}
    mirror = Mirror("r")
    mirror.on_frame(joined(a))
    frame = patch(a, b, 1, [{"kind": "moved"}]) | {"hash": "0" * 16}
    update = mirror.on_frame(frame)
    assert update.need_sync and update.changed and update.events == [{"kind": "moved"}]
    assert "wrong hash" in (update.problem or "")


def test_a_patch_that_does_not_fit_asks_for_sync_and_keeps_the_view() -> None:
    a = {"shared": {"n": 1}, "own": None}
    mirror = Mirror("r")
    mirror.on_frame(joined(a))
    bad = {"type": "patch", "room": "r", "rev": 1, "hash": "x",
           "ops": [{"op": "remove", "path": "/shared/missing"}]}  # fmt: skip
    update = mirror.on_frame(bad)
    assert update.need_sync and "does not fit" in (update.problem or "")
    assert mirror.view == a and mirror.rev == 0


def test_a_resume_without_view_keeps_ours_when_the_revisions_agree() -> None:
    a = {"shared": {"n": 1}, "own": None}
    mirror = Mirror("r")
    mirror.on_frame(joined(a, 7, token="t"))
    assert not mirror.on_frame(joined(None, 7) | {"hash": None}).need_sync
    assert mirror.view == a and mirror.token == "t"
    assert mirror.on_frame(joined(None, 9) | {"hash": None}).need_sync


def test_a_state_with_a_wrong_hash_is_reported() -> None:
    a = {"shared": {"n": 1}, "own": None}
    update = Mirror("r").on_frame({"type": "state", "room": "r", "rev": 0, "view": a, "hash": "1"})
    assert update.problem and "wrong hash" in update.problem


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_mirror_rebuilds_every_view_of_a_whole_match_from_patches(game: str) -> None:
    """Patches between the real views of a random match, for a seat and a spectator."""
    engine = registry.get(game)
    match = Match.new(engine, 2, {}, 5)
    rng = random.Random(5)
    mirrors = {0: Mirror("r"), None: Mirror("r")}
    olds = {}
    for audience, mirror in mirrors.items():
        olds[audience] = audience_view(engine, match.state, audience).to_json()
        mirror.on_frame(joined(olds[audience]))
    rev = 0
    while (decision := match.decision) is not None:
        match.act(decision.seat, rng.randrange(len(decision.choices)))
        rev += 1
        for audience, mirror in mirrors.items():
            new = audience_view(engine, match.state, audience).to_json()
            update = mirror.on_frame(patch(olds[audience], new, rev))
            assert update.problem is None and not update.need_sync
            olds[audience] = new
    for audience, mirror in mirrors.items():
        assert mirror.view == olds[audience] and mirror.over
    assert mirrors[0].result == mirrors[None].result
