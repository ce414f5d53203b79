"""What undo costs the engine path: per push, and per undo, for both games.

:meth:`games.base.Match.push` keeps the current turn's steps: a ``dump`` of the state before
the first step of a turn every few turns (``games.base._Turn``), then each step's seat, choice
and the public texts of its events. Plays
seeded random 4-seat matches twice, step for step: once through ``Match.push`` and once
through the bare engine (``narrate(apply(...))``, what ``push`` did before undo), and prints
the mean CPU time per push of each and the difference; then, in the same matches, times
``Match.undo`` (a ``load`` of the copy and a replay of every other step since) at every point
where one is possible, and prints how many steps the copy's record held. Times are CPU time of
this process (``time.process_time_ns``: other processes on the machine do not count), best of
``--repeat`` runs.

Usage: ``.venv/bin/python bench/undo.py [--matches N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.base import Game, Match
from games.registry import get
from games.rng import Rng


def pushes(game: Game[Any], seed: int) -> tuple[int, int, int, int]:
    """One random match played twice in step: (steps, ns in Match.push, ns in bare apply,
    copies of the state)."""
    match = Match.new(game, 4, {}, seed)
    twin = game.setup(4, game.check_options(4, {}), seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    steps = tracked = bare = starts = 0
    clock = time.process_time_ns
    while (decision := match.decision) is not None:
        legal = decision.choices[chooser.below(len(decision.choices))]
        record = match._turn
        t0 = clock()
        match.push(decision.seat, legal)
        t1 = clock()
        game.narrate(twin, game.apply(twin, legal))
        t2 = clock()
        tracked += t1 - t0
        bare += t2 - t1
        starts += match._turn is not record  # (a new copy of the state taken)
        steps += 1
    return steps, tracked, bare, starts


def undos(game: Game[Any], seed: int) -> tuple[list[int], list[int]]:
    """Time an undo at every point one is possible (then redo the step): (ns, steps held since
    the copy it loads)."""
    match = Match.new(game, 4, {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    times: list[int] = []
    lengths: list[int] = []
    clock = time.process_time_ns
    while (decision := match.decision) is not None:
        legal = decision.choices[chooser.below(len(decision.choices))]
        match.push(decision.seat, legal)
        if match.can_undo(decision.seat):
            record = match._turn
            assert record is not None
            lengths.append(len(record.steps))
            t0 = clock()
            match.undo(decision.seat)
            times.append(clock() - t0)
            match.push(decision.seat, legal)
    return times, lengths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    for name in ("ishtar", "yspahan"):
        game = get(name)
        best: tuple[float, float, int, int] | None = None
        for _ in range(args.repeat):
            steps = tracked = bare = starts = 0
            for seed in range(args.matches):
                s, t, b, o = pushes(game, seed)
                steps, tracked, bare, starts = steps + s, tracked + t, bare + b, starts + o
            run = (tracked / steps / 1000, bare / steps / 1000, steps, starts)
            if best is None or run[0] - run[1] < best[0] - best[1]:
                best = run
        assert best is not None
        with_undo, without, steps, starts = best
        print(
            f"{name}: {steps} pushes in {args.matches} 4-seat matches, {starts} copies "
            f"({100 * starts / steps:.0f}%): push {with_undo:.1f} us, bare apply {without:.1f} us, "
            f"undo bookkeeping {with_undo - without:.1f} us per push"
        )
        times: list[int] = []
        lengths: list[int] = []
        for seed in range(args.matches):
            t, n = undos(game, seed)
            times += t
            lengths += n
        times.sort()
        print(
            f"{name}: {len(times)} undos: median {statistics.median(times) / 1000:.0f} us, "
            f"p95 {times[len(times) * 95 // 100] / 1000:.0f} us, max {times[-1] / 1000:.0f} us; "
            f"steps since the copy: median {statistics.median(lengths):.0f}, "
            f"max {max(lengths)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
