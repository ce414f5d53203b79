"""Random-game throughput of the Yspahan engine for 2, 3 and 4 players.

Plays seeded random matches through :class:`games.base.Match` (the same checked path the server
uses: every choice resolved against the legal list, the decision recomputed after each step) and
prints, per player count, the median and 95th-percentile time of one match, matches per second
and decisions per second. The target is a 4-player match in 20 ms median or less.

Usage: ``.venv/bin/python bench/bench_yspahan.py [--games N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.base import Match
from games.rng import Rng
from games.yspahan import GAME

TARGET_MS = 20.0


def play(players: int, seed: int) -> int:
    """One random match; returns the number of decisions taken."""
    match = Match.new(GAME, players, {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    steps = 0
    while (decision := match.decision) is not None:
        match.act(decision.seat, chooser.below(len(decision.choices)))
        steps += 1
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="matches per player count")
    parser.add_argument("--seed", type=int, default=1, help="first seed")
    args = parser.parse_args(argv)
    print(f"yspahan random games: {args.games} per player count, seeds from {args.seed}")
    print(f"{'players':>7} {'median ms':>10} {'p95 ms':>8} {'games/s':>8} {'decisions/s':>12}")
    for players in (2, 3, 4):
        times: list[float] = []
        steps = 0
        for i in range(args.games):
            start = time.perf_counter()
            steps += play(players, args.seed + i)
            times.append(time.perf_counter() - start)
        total = sum(times)
        median = statistics.median(times) * 1000
        p95 = sorted(times)[max(0, int(len(times) * 0.95) - 1)] * 1000
        flag = (
            ""
            if players != 4
            else ("  (target <= 20 ms: ok)" if median <= TARGET_MS else "  (over target)")
        )
        print(
            f"{players:>7} {median:>10.2f} {p95:>8.2f} {len(times) / total:>8.0f} "
            f"{steps / total:>12.0f}{flag}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
