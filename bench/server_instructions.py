"""Instructions per action of the whole server, counted by valgrind: the server's CPU per action
as a figure that other processes on the machine cannot move.

``bench/cost.py`` measures the server's CPU time per action at saturation, and on a shared machine
that figure moves by 20 % (or doubles) between identical runs. This runs the same real server
(``bench/serve.py``, uvloop, the in-memory store, or ``--store redis``) under ``valgrind
--tool=callgrind``, drives it from this process with the load generator's own bots
(``bench.loadgen.RoomBots``: ``--rooms`` rooms of 4 seats + 2 spectators, every seat acting as soon
as it may) until ``--actions`` actions have reached all six viewers, stops it, and reads the
instructions valgrind counted in the server process. Twice per game, for the smaller and the larger
count of ``--actions``, so that start-up, imports, the rooms' set-up and the graceful stop cancel
out: the figure is the difference in instructions over the difference in actions (matches that end
and start again inside the window are part of it, as in ``bench/cost.py``). Only the server is
counted; the bots run natively here. The measured server sends no keepalive pings and its loop-lag
probe does not wake ten times a second: their work follows the wall time, which the machine's load
stretches (both together moved the figure by 7 % between two runs).

``--tree DIR`` runs another checkout's server (its ``bench/serve.py`` imports its own code) with
this process's Python, so that two commits are compared with the same bots, the same
interpreter and the same packages:

    .venv/bin/python bench/server_instructions.py --games tiny,yspahan,ishtar
    .venv/bin/python bench/server_instructions.py --tree ../base --games tiny

``--server-env NAME=VALUE`` (repeatable) adds to the measured server's environment only, so that
allocators are compared with the same bots (valgrind counts the allocator's instructions too)::

    .venv/bin/python bench/server_instructions.py --games tiny --server-env PYTHONMALLOC=malloc

``--keep DIR`` keeps callgrind's profiles (``callgrind.<game>.<actions>``), so that where an
action's instructions go is read from the same runs: subtract the smaller run's function
totals from the larger's (``callgrind_annotate`` of each) and divide by the actions between.

Needs valgrind (``apt-get install valgrind``). Under valgrind the server runs about 50 times
slower, so it, not the bots, is the limit; a few minutes per game.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.loadgen import RoomBots, Tally
from bench.procs import OASIS_ENV, ROOT, add_server_env, server_env, stop_process
from tests.services import free_port, wait_for_port

TINY = "tests.games.tiny:TINY"
START_TIMEOUT = 600.0
"""Seconds for the server to listen under valgrind (imports and the engines, 50 times slower)."""
HASH_SEED: Final = {"PYTHONHASHSEED": "0"}
"""The measured server's string hashes fixed (``--server-env PYTHONHASHSEED=...`` overrides):
Python's random salt moves a count by 0.1 to 0.3 % from run to run (dict and set probes, the
order of set iteration), as much as a small change. (The bots' timing still moves a whole
server's count, by up to 3 %.)"""
NO_PINGS = 1_000_000
"""The keepalive interval of the measured server, in seconds: never within a run."""
QUIET_SERVER = """
import runpy, sys
sys.path.insert(0, sys.argv[1])
import server.app
server.app.LAG_PROBE_SECONDS = 1e6  # (a probe wakes ten times a second, however slow the run)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
"""``bench/serve.py`` of the tree in ``argv[1]``, its loop-lag probe put off beyond the run."""


async def drive(
    url: str, game: str, rooms: int, actions: int, seed: int, rematch: bool = False
) -> int:
    """Open the rooms, play until ``actions`` actions reached all six viewers, let what is in
    flight land; the actions counted (``rematch``: each next match by ``rematch``)."""
    tally = Tally()
    bots = [RoomBots("oasis", game, f"r{i}", tally, seed + i, rematch) for i in range(rooms)]
    for room in bots:
        await room.open(url)
    tally.reset()
    tally.measuring = True
    for room in bots:
        room.active = True
        room.kick()
    while tally.actions < actions:  # noqa: ASYNC110 (a count, polled: no event to wait on)
        await asyncio.sleep(0.05)
    for room in bots:
        room.active = False
    for _ in range(1200):  # (bounded: a minute)
        if all(not room.sent_at or room.restarting for room in bots):
            break
        await asyncio.sleep(0.05)
    done = tally.actions
    for room in bots:
        for bot in room.bots:
            if bot.socket is not None:
                bot.socket.abort()
    if tally.errors:
        print(f"  bot errors: {dict(tally.errors)}", file=sys.stderr)
    return done


def add_run_arguments(parser: argparse.ArgumentParser, actions: str) -> None:
    """The options of a whole-server count (this one and ``bench/server_syscalls.py``): the
    games, whose server, how many rooms, the two counts of actions, the bots' seed, the store."""
    parser.add_argument("--games", default="tiny,yspahan,ishtar")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose server runs")
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--actions", default=actions, help="the two counts of actions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", choices=("memory", "redis"), default="memory")


def serve_command(tree: Path, game: str, store: str, port: int) -> list[str]:
    """``tree``'s ``bench/serve.py`` on ``port`` with ``store`` (uvloop; the tiny game
    registered in that process when it is the one measured), for :data:`QUIET_SERVER`."""
    return [
        str(tree / "bench" / "serve.py"), "--loop", "uvloop", "--store", store,
        *(["--game", TINY] if game == "tiny" else []), "--", "--port", str(port),
    ]  # fmt: skip


def count(
    tree: Path,
    game: str,
    rooms: int,
    actions: int,
    seed: int,
    server_env: dict[str, str],
    store: str = "memory",
    out: Path | None = None,
    rematch: bool = False,
) -> tuple[int, int]:
    """One server under callgrind (``server_env`` added to its environment): the instructions
    it ran and the actions it served. ``store`` redis: the server's private ``redis-server``,
    a child that valgrind does not follow (its work is not counted, the client's is), in a
    directory of its own that goes with the run. ``out``:
    where callgrind writes its profile (none kept if None). ``rematch``: the bots start each
    next match by ``rematch`` (SPEC section 9) instead of six leaves and eight requests."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="oasis-instr-") as tmp:
        log = Path(tmp) / "valgrind.log"
        serve = serve_command(tree, game, store, port)
        command = [
            valgrind, "--tool=callgrind", f"--callgrind-out-file={out or '/dev/null'}",
            f"--log-file={log}",
            sys.executable, "-c", QUIET_SERVER, str(tree), *serve,
        ]  # fmt: skip
        # No keepalive pings: their count would follow the run's wall time, not its actions.
        env = {**os.environ, **OASIS_ENV, "OASIS_PING_INTERVAL": str(NO_PINGS), **HASH_SEED}
        # A new Redis directory per run: in the tree's own ``var/redis`` the rooms one run
        # leaves unfinished would be restored by the next at start-up (counted as its work).
        env["OASIS_REDIS_DIR"] = str(Path(tmp) / "redis")
        env.update(server_env)
        server = subprocess.Popen(
            command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_for_port(port, START_TIMEOUT)
            url = f"ws://127.0.0.1:{port}/"
            done = asyncio.run(drive(url, game, rooms, actions, seed, rematch))
        finally:
            stop_process(server, timeout=300)
        text = log.read_text()
    found = re.search(r"Collected : (\d+)", text)
    if found is None:
        raise SystemExit(f"no count from valgrind: {text[-500:]}")
    return int(found.group(1)), done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_run_arguments(parser, "200,1000")
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep callgrind's profiles in this directory (callgrind.<game>.<actions>: read two "
        "with callgrind_annotate and subtract, as the counts are)",
    )
    parser.add_argument(
        "--rematch",
        action="store_true",
        help="the bots start each next match by rematch (protocol 1.5) instead of requests",
    )
    add_server_env(
        parser, "more environment for the measured server (PYTHONMALLOC=malloc, GLIBC_TUNABLES=...)"
    )
    args = parser.parse_args(argv)
    extra_env = server_env(parser, args.server_env)
    low, high = (int(n) for n in args.actions.split(","))
    tree = args.tree.resolve()
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"server of {tree} at {head or '?'}, {args.store} store, {args.rooms} rooms, "
        f"{low} and {high} actions, {'rematch' if args.rematch else 'requests'} for the next "
        "match, "
        f"environment {extra_env or 'unchanged'}"
    )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    for game in args.games.split(","):
        started = time.perf_counter()
        few, a_few = count(
            tree, game, args.rooms, low, args.seed, extra_env, args.store,
            args.keep and args.keep.resolve() / f"callgrind.{game}.{low}", args.rematch,
        )  # fmt: skip
        many, a_many = count(
            tree, game, args.rooms, high, args.seed, extra_env, args.store,
            args.keep and args.keep.resolve() / f"callgrind.{game}.{high}", args.rematch,
        )  # fmt: skip
        per = (many - few) / max(1, a_many - a_few)
        print(
            f"{game:<8} {per:>12,.0f} instructions per action  ({a_few} and {a_many} actions: "
            f"{few:,} and {many:,}; {time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
