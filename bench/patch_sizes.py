"""Patch frame sizes and the cost of ``Views.advance``, in process, per game.

Plays seeded random 4-seat matches through :class:`server.views.Views` exactly as a room does
(no sockets) and prints, per game: the median ``patch`` frame over the six viewers of a bench
room (4 seats + 2 spectators, as ``bench/loadgen.py`` counts them), the median full view of seat
0, the median of seat 0's frame / its full view (the bench's *patch/view*), the bytes per path
prefix, and the CPU time of one ``advance``. Each frame is also checked: applying it to the
previous view gives the new one with the announced hash. ``--texts`` measures the same matches
twice: as served (labels, prompts, texts) and without the texts (the engine's bare choices, no
prompt, no event text), so the difference is what the texts cost.

    .venv/bin/python bench/patch_sizes.py [--matches N] [--games yspahan,ishtar] [--no-check]
                                          [--texts]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games import registry
from games.base import Decision, Event, Game, Match
from games.rng import Rng
from protocol.hashing import view_hash
from protocol.patch import apply
from protocol.pointer import parse, pointer
from server.views import Views

SEATS = 4
SPECTATORS = 2


def _prefix(path: str, depth: int = 3) -> str:
    """The first ``depth`` tokens of a pointer, list indices shown as ``N``."""
    return pointer(*("N" if t.isdigit() else t for t in parse(path)[:depth]))


class Untold:
    """A game as served before views explained themselves: bare choices, no prompt, no texts."""

    def __init__(self, game: Game[Any]) -> None:
        self._game = game

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def describe(self, state: Any, decision: Decision) -> list[Any]:
        return list(decision.choices)

    def prompt(self, state: Any, decision: Decision) -> str:
        return ""

    def narrate(self, state: Any, events: list[Event]) -> list[Event]:
        return events


def measure(game_name: str, matches: int, check: bool, texts: bool = True) -> dict[str, Any]:
    game: Any = registry.get(game_name)
    if not texts:
        game = Untold(game)
    sizes: list[int] = []
    views: list[int] = []
    ratios: list[float] = []
    by_path: Counter[str] = Counter()
    cpu = 0.0
    revisions = 0
    for seed in range(1, matches + 1):
        match = Match.new(game, SEATS, {}, seed)
        room = Views(f"room-{seed:04d}", match, SEATS)
        docs = [room.full(s)[0] for s in range(SEATS)] if check else []
        chooser = Rng.from_seed(seed ^ 0x5EED)
        rev = 0
        while (decision := match.decision) is not None:
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            rev += 1
            start = time.process_time()
            revision = room.advance(rev, events)
            cpu += time.process_time() - start
            revisions += 1
            frames = [*revision.seat_frames, *[revision.spectator_frame] * SPECTATORS]
            sizes.extend(len(f) for f in frames)
            full0 = len(msgpack.packb(room.full(0)[0]))
            views.append(full0)
            ratios.append(len(revision.seat_frames[0]) / full0)
            frame0 = msgpack.unpackb(revision.seat_frames[0])
            for op in frame0["ops"]:
                by_path[_prefix(op["path"])] += len(msgpack.packb(op))
            if check:
                for s in range(SEATS):
                    frame = msgpack.unpackb(revision.seat_frames[s])
                    docs[s] = apply(docs[s], frame["ops"])
                    assert view_hash(docs[s]) == frame["hash"], (game_name, seed, rev, s)
                    assert docs[s] == room.full(s)[0]
    total = sum(by_path.values())
    return {
        "game": game_name,
        "revisions": revisions,
        "patch_median": statistics.median(sizes),
        "patch_mean": statistics.fmean(sizes),
        "view_median": statistics.median(views),
        "ratio_median": statistics.median(ratios),
        "us_per_advance": 1e6 * cpu / max(1, revisions),
        "top_paths": [(p, round(b / revisions, 1), b / total) for p, b in by_path.most_common(8)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--games", default="yspahan,ishtar")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--texts", action="store_true", help="also measure without the texts")
    args = parser.parse_args()
    runs = [(name, texts) for name in args.games.split(",") for texts in (True, False)]
    for name, texts in runs if args.texts else [(n, True) for n in args.games.split(",")]:
        r = measure(name, args.matches, not args.no_check, texts)
        label = name if texts else f"{name} (no texts)"
        print(
            f"{label:<8} {r['revisions']:>6} revisions  patch median {r['patch_median']:>5.0f} B "
            f"(mean {r['patch_mean']:.0f})  view {r['view_median']:>5.0f} B  "
            f"patch/view {100 * r['ratio_median']:.1f} %  advance {r['us_per_advance']:.0f} us"
        )
        for path, per_rev, share in r["top_paths"]:
            print(f"    {path:<40} {per_rev:>7.1f} B/rev to seat 0 ({100 * share:.0f} %)")


if __name__ == "__main__":
    main()
