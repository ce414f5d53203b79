"""Seeded random games through the shared harness, with the Ishtar invariants after every step.

The full ``check_playout`` (leak check for every audience, snapshot and diff round trips,
replay determinism) costs about half a second per game, so the default tier runs it on six seeds per
player count and plays the rest of its 200 games with ``play_random`` and the invariants. The
slow tier plays 2,000 more.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.base import Match
from games.ishtar import GAME
from games.ishtar.state import State
from tests.games.ishtar.helpers import invariant_checker
from tests.harness import check_playout, play_random

FULL_SEEDS = range(6)
RANDOM_GAMES = 200


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", FULL_SEEDS)
def test_harness_passes_with_invariants(players: int, seed: int) -> None:
    out = check_playout(GAME, players, seed, invariants=invariant_checker())
    assert out.match is not None and out.match.over


def _random_games(count: int, offset: int) -> None:
    for i in range(count):
        players = 2 + i % 3
        check = invariant_checker()

        def on_step(match: Match[State], check: Any = check) -> None:
            check(match.state)

        out = play_random(GAME, players, offset + i, on_step=on_step)
        assert out.match is not None
        result = out.match.result()
        assert result is not None
        assert result.scores == tuple(b["total"] for b in result.breakdown)


def test_200_random_games_keep_the_invariants() -> None:
    """ISH-GEMS-06 and tile, assistant, marker conservation over 200 seeded games."""
    _random_games(RANDOM_GAMES - 3 * len(FULL_SEEDS), 1000)


@pytest.mark.slow
def test_2000_random_games_keep_the_invariants() -> None:
    _random_games(2000, 100_000)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(2, 12))
def test_harness_passes_on_more_seeds(players: int, seed: int) -> None:
    check_playout(GAME, players, seed, invariants=invariant_checker())


def test_ish_setup_05_a_custom_layout_plays_through_the_harness() -> None:
    layout = [
        {"board": "board-6", "side": "B", "rotation": 2, "macro": [0, 0]},
        {"board": "board-5", "side": "A", "rotation": 5, "macro": [1, 0]},
        {"board": "board-2", "side": "A", "rotation": 0, "macro": [2, -1]},
        {"board": "board-3", "side": "B", "rotation": 3, "macro": [0, 1]},
    ]
    out = check_playout(GAME, 2, 77, {"layout": layout}, invariants=invariant_checker())
    assert out.match is not None
    assert [p.board for p in out.match.state.layout] == ["board-6", "board-5", "board-2", "board-3"]
