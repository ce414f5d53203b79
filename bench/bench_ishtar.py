"""Ishtar benchmark: random-game throughput for 2, 3 and 4 players, and placement enumeration.

Run as ``.venv/bin/python bench/bench_ishtar.py [--games N]``. It prints figures; it asserts
nothing (targets: a 4-player random game <= 50 ms median, one placement enumeration <= 2 ms).
Random games pick uniformly among the legal choices, like ``oasis selfplay``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.base import Match
from games.ishtar import GAME
from games.ishtar import state as st
from games.ishtar.turn import placements
from games.rng import Rng


def random_game(players: int, seed: int, probe: list[float] | None = None) -> int:
    match = Match.new(GAME, players, {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    steps = 0
    while (decision := match.decision) is not None:
        if probe is not None and decision.kind == st.POSITION:
            state = match.state
            saved = state.cache.pop("placements")
            start = time.perf_counter()
            placements(state)
            probe.append(time.perf_counter() - start)
            state.cache["placements"] = saved
        match.act(decision.seat, chooser.below(len(decision.choices)))
        steps += 1
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100, help="games per player count")
    args = parser.parse_args()
    for players in (2, 3, 4):
        times, steps = [], 0
        for seed in range(args.games):
            start = time.perf_counter()
            steps += random_game(players, seed)
            times.append(time.perf_counter() - start)
        total = sum(times)
        print(
            f"{players} players: {args.games / total:7.1f} games/s, "
            f"median {statistics.median(times) * 1000:6.1f} ms/game, "
            f"p95 {sorted(times)[int(0.95 * len(times))] * 1000:6.1f} ms, "
            f"{steps / args.games:.0f} decisions/game"
        )
    probe: list[float] = []
    for seed in range(max(1, args.games // 10)):
        random_game(4, seed, probe)
    probe.sort()
    print(
        f"placement enumeration (4 players, {len(probe)} samples): "
        f"median {statistics.median(probe) * 1000:.3f} ms, "
        f"p95 {probe[int(0.95 * len(probe))] * 1000:.3f} ms, max {probe[-1] * 1000:.3f} ms"
    )


if __name__ == "__main__":
    main()
