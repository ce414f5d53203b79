"""Instructions per ``Views.advance``, counted by valgrind: a figure other processes cannot move.

On a shared machine CPU time moves by 20 % between identical runs; an instruction count does
not. This plays the same seeded 4-seat random matches twice under ``valgrind --tool=callgrind``,
once with :meth:`server.views.Views.advance` after every choice and once without, and prints the
difference per revision (every audience's diff, frame and hash, the engine's views included).
Needs valgrind (``apt-get install valgrind``); about a minute per game.

    .venv/bin/python bench/instructions.py [--games tiny,yspahan,ishtar] [--matches 2]
        [--hash-rule 2]

``--hash-rule``: the view hash rule of every seat's frames (SPEC section 4; 2, what Oasis's
clients ask for, by default; 1: what a client that asks for none gets).

``--play GAME N MODE`` is the child's side (what valgrind runs), with ``PYTHONHASHSEED=0`` unless
the environment sets it: Python's random salt of string hashes moves the count by 0.1 to 0.3 %
from run to run; fixed, two runs agree to within 0.01 %.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SEATS = 4


def play(game_name: str, matches: int, advance: bool, rule: int = 2) -> int:
    """Play the matches; with ``advance`` the room's views follow every choice, every seat's
    frame hashed under ``rule``. Revisions."""
    from games import registry
    from games.base import Match
    from games.rng import Rng
    from server.views import Views

    if game_name == "tiny":
        registry.register(importlib.import_module("tests.games.tiny").TINY)
    game = registry.get(game_name)
    revisions = 0
    rules = [rule] * SEATS
    for seed in range(1, matches + 1):
        match = Match.new(game, SEATS, {}, seed)
        views = Views(f"room-{seed:04d}", match, SEATS)
        chooser = Rng.from_seed(seed ^ 0x5EED)
        rev = 0
        while (decision := match.decision) is not None:
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            rev += 1
            if advance:
                views.advance(rev, events, None, rules)
        revisions += rev
    return revisions


def count(game: str, matches: int, mode: str, rule: int = 2) -> tuple[int, int]:
    """Instructions of the whole child process and its revisions."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--play", game, str(matches), mode, "--hash-rule", str(rule)],
        capture_output=True, text=True, cwd=ROOT, check=True,
        env={**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")},
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    revisions = re.search(r"^revisions (\d+)$", done.stdout, re.M)
    if found is None or revisions is None:
        raise SystemExit(f"no count from valgrind: {done.stderr[-500:]}")
    return int(found.group(1)), int(revisions.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", default="tiny,yspahan,ishtar")
    parser.add_argument("--matches", type=int, default=2, help="per game (tiny: 20 times more)")
    parser.add_argument("--hash-rule", type=int, choices=(1, 2), default=2)
    parser.add_argument("--play", nargs=3, metavar=("GAME", "N", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play:
        game, n, mode = args.play
        print(f"revisions {play(game, int(n), mode == 'advance', args.hash_rule)}")
        return 0
    for game in args.games.split(","):
        matches = args.matches * (20 if game == "tiny" else 1)
        with_views, revisions = count(game, matches, "advance", args.hash_rule)
        without, _ = count(game, matches, "none", args.hash_rule)
        per = (with_views - without) // max(1, revisions)
        print(
            f"{game:<8} {revisions:>5} revisions  {per:>10,} instructions per Views.advance "
            f"(hash rule {args.hash_rule})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
