"""System calls per action of the whole server, counted by strace: the kernel's side of an
action, which valgrind's instruction counts (``bench/server_instructions.py``) do not see.

Every frame the server writes is a ``write`` to a socket, and on the loopback that call also
carries the receiving end's work, so the kernel's part of the server's CPU follows how many
frames an action brings: the protocol's frames of a revision (one per seat and one per
spectator), its share of match set-ups (joins, leaves, the ``room`` frame to every member each
time) and the reads. This runs the same real server as ``bench/server_instructions.py``
(``bench/serve.py``, uvloop, natively: no valgrind), attaches ``strace -c -f`` to it once it
listens, drives it with the same bots for the smaller and the larger count of ``--actions``, and
prints each system call's count per action (the difference between the two runs over the
actions between them, so start-up and the rooms' set-up cancel out):

    .venv/bin/python bench/server_syscalls.py --games tiny,yspahan,ishtar
    .venv/bin/python bench/server_syscalls.py --tree ../base --games tiny --store redis

Needs strace (``apt-get install strace``) and the right to trace a child (ptrace). The counts
are not timings: strace slows every call it sees, so its time columns are not reported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.procs import OASIS_ENV, add_server_env, server_env, stop_process
from bench.server_instructions import (
    NO_PINGS,
    QUIET_SERVER,
    add_run_arguments,
    drive,
    serve_command,
)
from tests.services import free_port, wait_for_port

START_TIMEOUT = 120.0


def parse_summary(text: str) -> Counter[str]:
    """Calls per system call from ``strace -c``'s table (its ``total`` row left out)."""
    calls: Counter[str] = Counter()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[3].isdigit() or fields[-1] == "total":
            continue
        calls[fields[-1]] += int(fields[3])
    return calls


def count(
    tree: Path,
    game: str,
    rooms: int,
    actions: int,
    seed: int,
    extra_env: dict[str, str],
    store: str = "memory",
    rematch: bool = False,
) -> tuple[Counter[str], int]:
    """One server traced from the moment it listens: its system calls and the actions served
    (with ``store`` redis, the server's private ``redis-server`` is not traced; ``rematch``: the
    bots start each next match by ``rematch``)."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("strace is not installed (apt-get install strace)")
    port = free_port()
    serve = serve_command(tree, game, store, port)
    env = {**os.environ, **OASIS_ENV, "OASIS_PING_INTERVAL": str(NO_PINGS), **extra_env}
    server = subprocess.Popen(
        [sys.executable, "-c", QUIET_SERVER, str(tree), *serve],
        cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="oasis-syscalls-") as tmp:
        summary = Path(tmp) / "strace.txt"
        tracer: subprocess.Popen[bytes] | None = None
        try:
            wait_for_port(port, START_TIMEOUT)
            tracer = subprocess.Popen(
                [strace, "-c", "-f", "-o", str(summary), "-p", str(server.pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1.0)  # (attached to every thread before the first bot connects)
            done = asyncio.run(
                drive(f"ws://127.0.0.1:{port}/", game, rooms, actions, seed, rematch)
            )
        finally:
            if tracer is not None:
                tracer.send_signal(signal.SIGINT)  # (detaches and writes its table)
                tracer.wait(timeout=60)
            stop_process(server, timeout=60)
        text = summary.read_text() if summary.exists() else ""
    calls = parse_summary(text)
    if not calls:
        raise SystemExit(f"no table from strace (is ptrace allowed?): {text[-500:]!r}")
    return calls, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_run_arguments(parser, "500,2500")
    add_server_env(parser, "more environment for the measured server (PYTHONMALLOC=malloc)")
    parser.add_argument(
        "--rematch",
        action="store_true",
        help="the bots start each next match by rematch (protocol 1.5) instead of requests",
    )
    args = parser.parse_args(argv)
    extra_env = server_env(parser, args.server_env)
    low, high = (int(n) for n in args.actions.split(","))
    tree = args.tree.resolve()
    print(
        f"server of {tree}, {args.store} store, {args.rooms} rooms, {low} and {high} actions, "
        f"{'rematch' if args.rematch else 'requests'} for the next match, "
        f"environment {extra_env or 'unchanged'}"
    )
    for game in args.games.split(","):
        few, a_few = count(
            tree, game, args.rooms, low, args.seed, extra_env, args.store, args.rematch
        )
        many, a_many = count(
            tree, game, args.rooms, high, args.seed, extra_env, args.store, args.rematch
        )
        actions = max(1, a_many - a_few)
        per = {name: (many[name] - few[name]) / actions for name in many | few}
        shown = sorted(
            ((name, n) for name, n in per.items() if n >= 0.01), key=lambda item: -item[1]
        )
        total = sum(n for _, n in shown)
        listed = ", ".join(f"{name} {n:.2f}" for name, n in shown)
        print(
            f"{game:<8} {total:6.2f} system calls per action ({a_few} and {a_many} actions): "
            f"{listed}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
