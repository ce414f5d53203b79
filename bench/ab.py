"""Two servers measured at the same time: server CPU per action of each, side by side.

On a shared machine the speed of the same build drifts by 20 % or more from one minute to the
next (BENCHMARKS.md, nineteenth session), so two builds measured one after the other compare
the machine as much as the code. Here both run at once, each with its own load generator
(``bench/loadgen.py``, ``--rooms`` saturated rooms of 4 seats + 2 spectators): whatever the
machine does meanwhile, both see it. Each side is a checkout (``--a``, ``--b``: a tree with its
own ``.venv``, compiled or not) and its own server environment (``--env-a``, ``--env-b``), so
the same tree under two settings compares too::

    .venv/bin/python bench/ab.py --a /tmp/c0 --b /tmp/c1 --store redis --rounds 2
    .venv/bin/python bench/ab.py --a . --b . --env-b OASIS_MOVED_ROOM_TTL=30

Each round swaps which side starts first. Printed per side and round: CPU us per action (the
kernel's part), actions/s, and the server's RSS at the window's start and end (a server whose
memory grows during the window touches fresh pages: page faults in its kernel part). Two
servers and two load generators share the cores, so each figure is higher than
``bench/cost.py``'s alone: read the difference, not the level. ``--warmup``: seconds before the
window (past ``finished_room_ttl``, 30 s, the finished rooms close inside it as in a server
that has run for a while).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import procs

TINY = "tests.games.tiny:TINY"


def _use(tree: Path) -> None:
    """Start what comes next from ``tree`` (its ``bench/serve.py`` and ``.venv``): the
    launchers of :mod:`bench.procs` read these two names when they start a process."""
    procs.ROOT = tree
    procs.PYTHON = str(tree / ".venv" / "bin" / "python")


def one_round(
    sides: list[tuple[str, Path, dict[str, str]]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Both servers and their bots at once; one saturated window measured on each."""
    running: list[tuple[str, Path, procs.Server, procs.Worker]] = []
    try:
        for name, tree, env in sides:
            _use(tree)
            games = [TINY] if args.game == "tiny" else []
            server = procs.Server("oasis", "uvloop", args.store, games=games, env=env)
            server.start()
            bots = ["--url", server.url, "--kind", "oasis", "--game", args.game]
            bots += ["--rooms", str(args.rooms), "--seed", "1"]
            if not args.requests:
                bots.append("--rematch")
            running.append((name, tree, server, procs.Worker(bots)))
        for _, _, _, worker in running:
            worker.expect("ready", 180)
        phase = {
            "mode": "saturation",
            "rooms": args.rooms,
            "warmup": args.warmup,
            "seconds": args.seconds,
        }
        for _, _, _, worker in running:
            worker.send("go " + json.dumps(phase))
        time.sleep(args.warmup)
        before = [(procs.cpu_split(s.pid), procs.rss_bytes(s.pid)) for _, _, s, _ in running]
        started = time.perf_counter()
        time.sleep(args.seconds)
        after = [(procs.cpu_split(s.pid), procs.rss_bytes(s.pid)) for _, _, s, _ in running]
        window = time.perf_counter() - started
        out = []
        for (name, tree, _, worker), (cpu0, rss0), (cpu1, rss1) in zip(
            running, before, after, strict=True
        ):
            result = worker.expect("result", args.warmup + args.seconds + 60)
            rate = result["actions"] / result["seconds"] if result["seconds"] > 0 else 0.0
            actions = max(1.0, rate * window)
            user, kernel = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
            out.append(
                {
                    "side": name,
                    "tree": str(tree),
                    "us_per_action": (user + kernel) / actions * 1e6,
                    "kernel_us_per_action": kernel / actions * 1e6,
                    "actions_per_s": rate,
                    "rss_start_mib": rss0 / 2**20,
                    "rss_end_mib": rss1 / 2**20,
                }
            )
        return out
    finally:
        for _, _, server, worker in running:
            worker.stop()
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--a", type=Path, default=procs.ROOT, help="side A's checkout")
    parser.add_argument("--b", type=Path, default=procs.ROOT, help="side B's checkout")
    parser.add_argument("--env-a", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--env-b", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--store", choices=("memory", "redis"), default="memory")
    parser.add_argument("--game", default="tiny")
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=2, help="each swaps who starts first")
    parser.add_argument(
        "--requests", action="store_true", help="bots set each next match up by requests"
    )
    args = parser.parse_args(argv)
    sides = [
        ("A", args.a.resolve(), procs.server_env(parser, args.env_a)),
        ("B", args.b.resolve(), procs.server_env(parser, args.env_b)),
    ]
    for side, tree, env in sides:
        if not (tree / ".venv" / "bin" / "python").exists():
            parser.error(f"side {side}: {tree} has no .venv (link the checkout's own)")
        print(f"{side}: {tree} {env or ''}", flush=True)
    rounds = []
    for i in range(args.rounds):
        order = sides if i % 2 == 0 else sides[::-1]
        results = sorted(one_round(order, args), key=lambda r: str(r["side"]))
        rounds.append(results)
        for r in results:
            print(
                f"round {i + 1} {r['side']}: {r['us_per_action']:.0f} us/action "
                f"(kernel {r['kernel_us_per_action']:.0f}), {r['actions_per_s']:.0f} actions/s, "
                f"RSS {r['rss_start_mib']:.0f} -> {r['rss_end_mib']:.0f} MiB",
                flush=True,
            )
    a = [r[0]["us_per_action"] for r in rounds]
    b = [r[1]["us_per_action"] for r in rounds]
    print(f"B/A per round: {', '.join(f'{y / x:.3f}' for x, y in zip(a, b, strict=True))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
