"""Self-play: complete matches in-process between players that pick uniformly at random.

``oasis selfplay --game G --players N --games K --seed S`` plays K matches with seeds S, S+1, ...
and prints one JSON line per match (``game``, ``seed``, ``players``, ``turns``, ``decisions``,
``scores``, ``winners``, ``ms``) and a last summary line with games per second. The random
players draw from their own generator seeded from the match seed, so the same seed gives the same
lines (all but ``ms``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from games import registry
from games.base import Game, Match
from games.errors import GameError
from games.rng import Rng

CHOOSER_SALT = 0x5EED


def play(
    game: Game[Any], players: int, seed: int, options: Mapping[str, object] | None = None
) -> dict[str, Any]:
    """Play one random match to the end and describe it (see the module doc)."""
    start = time.perf_counter()
    match = Match.new(game, players, options or {}, seed)
    chooser = Rng.from_seed(seed ^ CHOOSER_SALT)
    decisions = 0
    while (decision := match.decision) is not None:
        match.act(decision.seat, chooser.below(len(decision.choices)))
        decisions += 1
    result = match.result()
    assert result is not None
    return {
        "game": game.name,
        "seed": seed,
        "players": players,
        "turns": result.turns,
        "decisions": decisions,
        "scores": list(result.scores),
        "winners": list(result.winners),
        "ms": round((time.perf_counter() - start) * 1000, 3),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, help="game name (ishtar, yspahan)")
    parser.add_argument("--players", type=int, default=2, help="players per match (default 2)")
    parser.add_argument("--games", type=int, default=1, help="how many matches (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    try:
        game = registry.get(args.game)
        game.check_options(args.players, {})
    except GameError as exc:
        print(f"oasis selfplay: {exc.message}", file=sys.stderr)
        return 2
    if args.games < 1:
        print("oasis selfplay: --games must be at least 1", file=sys.stderr)
        return 2
    start = time.perf_counter()
    for i in range(args.games):
        print(json.dumps(play(game, args.players, args.seed + i)), file=out, flush=True)
    elapsed = time.perf_counter() - start
    summary = {
        "summary": True,
        "game": game.name,
        "players": args.players,
        "games": args.games,
        "seconds": round(elapsed, 3),
        "games_per_second": round(args.games / elapsed, 2) if elapsed > 0 else None,
    }
    print(json.dumps(summary), file=out, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="oasis selfplay", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))
