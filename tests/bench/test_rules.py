"""``bench/run.py rules``: a revision's work timed level by level (the rules, the games' views,
the protocol's hashes, Oasis's diffs and frames), in-process, each level over real matches."""

from __future__ import annotations

import argparse

import pytest

from bench.run import RULES_LEVELS, rules


def test_every_level_of_a_revision_is_timed_and_the_hashes_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = rules(argparse.Namespace(games="tiny,yspahan", rules_seconds=0.05))["rules"]

    assert [(row["game"], row["what"]) for row in got] == [
        (game, what) for game in ("tiny", "yspahan") for what in RULES_LEVELS
    ]
    for row in got:
        assert row["matches"] >= 1 and row["us_per_decision"] > 0
        # The hashes are timed apart at the level that computes them, and only there.
        assert ("hash_us" in row) == (row["what"] == "+ encoded, hashed")
    hashed = {row["game"]: row for row in got if "hash_us" in row}
    assert all(row["hash_us"] > 0 and row["hash2_us"] > 0 for row in hashed.values())
    # The shared part measured is the game's own: Yspahan's board is far larger than the tiny
    # game's counts of cards (about 1.3 KB against under 100 B).
    assert hashed["yspahan"]["shared_bytes"] > 5 * hashed["tiny"]["shared_bytes"] > 0
    printed = capsys.readouterr().out
    assert printed.count("of which the hashes") == 2
    assert printed.count("rules + views") == 2


def test_the_hashes_timed_are_every_audiences_hash_under_each_rule() -> None:
    from bench.run import _hash_audiences
    from protocol.codec import canonical
    from protocol.hashing import view_hash

    shared = {"game": {"board": list(range(50))}, "turn": {"seat": 1}}
    owns = [{"seat": seat, "private": {"hand": [seat] * seat}, "choices": []} for seat in range(4)]
    docs = [{"shared": shared, "own": own} for own in [*owns, None]]
    nothing = canonical(None)
    for rule in (1, 2):
        got = _hash_audiences(canonical(shared), [canonical(own) for own in owns], nothing, rule)
        assert got == [view_hash(doc, rule) for doc in docs]
    assert _hash_audiences(canonical(shared), [canonical(owns[0])], nothing, 2)[0] != view_hash(
        docs[0], 1
    )
