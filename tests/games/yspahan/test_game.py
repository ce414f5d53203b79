"""The Yspahan engine under the contract's harness, with its invariants after every step."""

from __future__ import annotations

import pytest

from games import registry
from games.base import Match
from games.rng import Rng
from games.yspahan import GAME
from games.yspahan.state import YState
from protocol.codec import canonical
from tests.games.yspahan.helpers import Ledger, check_state
from tests.harness import check_playout, play_random

FULL_CHECKS_PER_COUNT = 8
"""Matches per player count run under the full check_playout (leaks, snapshots, diffs, replay)."""
RANDOM_GAMES = 200
"""Matches in the default tier with the invariants and the event ledger after every step."""


def play_with_ledger(players: int, seed: int) -> Match[YState]:
    """A random match checking the state invariants and the event ledger after every step."""
    match = Match.new(GAME, players, {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    ledger = Ledger(players)
    check_state(match.state)
    steps = 0
    while (decision := match.decision) is not None:
        assert decision.choices, f"{decision.kind} has no legal choice"
        events = match.act(decision.seat, chooser.below(len(decision.choices)))
        ledger.feed(events)
        ledger.check(match.state)
        check_state(match.state)
        steps += 1
        assert steps < 5_000, "no end"
    result = match.result()
    assert result is not None
    assert list(result.scores) == match.state.score
    return match


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(FULL_CHECKS_PER_COUNT))
def test_harness_full_checks(players: int, seed: int) -> None:
    """YSP-VIEW-07: leaks, snapshots, diffs and replays on whole matches (the harness)."""
    out = check_playout(GAME, players, 1000 * players + seed, invariants=check_state)
    assert out.match is not None and out.match.over


def test_random_matches_keep_invariants() -> None:
    """Goods conserved, no negative gold or camels, scores equal the sum of score events."""
    for i in range(RANDOM_GAMES):
        play_with_ledger(2 + i % 3, 7_000 + i)


@pytest.mark.slow
def test_many_random_matches_keep_invariants() -> None:
    for i in range(2_000):
        play_with_ledger(2 + i % 3, 100_000 + i)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
def test_harness_full_checks_slow(players: int) -> None:
    for seed in range(20):
        check_playout(GAME, players, 50_000 + seed, invariants=check_state)


def test_registry_serves_yspahan() -> None:
    assert registry.get("yspahan") is GAME
    assert "yspahan" in registry.names()


def test_same_seed_same_match() -> None:
    a = play_random(GAME, 4, 99)
    b = play_random(GAME, 4, 99)
    assert a.choices == b.choices
    assert a.match is not None and b.match is not None
    assert canonical(GAME.dump(a.match.state)) == canonical(GAME.dump(b.match.state))


def test_ysp_end_02_end_03_result_names_every_top_scorer() -> None:
    """YSP-END-02, YSP-END-03: the most VP wins and players tied for the most share the win."""
    for seed in range(30):
        out = play_random(GAME, 3, seed)
        assert out.match is not None
        result = out.match.result()
        assert result is not None
        best = max(result.scores)
        assert result.winners == tuple(i for i, s in enumerate(result.scores) if s == best)
        assert [sum(b.values()) for b in result.breakdown] == list(result.scores)
