"""Start the real Oasis server with an event loop and a store chosen by the benchmark.

A thin launcher over ``oasis-server`` itself (``server.main.main``): the loop and the store are
the server's own settings ``OASIS_LOOP`` / ``--loop`` and ``OASIS_STORE`` / ``--store``; this
script only raises the open-file limit first (thousands of bot sockets) and keeps the
benchmark's command line:

    .venv/bin/python bench/serve.py --loop asyncio --store redis -- --port 8765 --redis-url URL
    .venv/bin/python bench/serve.py --loop uvloop --store memory -- --port 8765

Everything after ``--`` is ``oasis-server``'s own flags. ``--store redis`` without a URL starts
the server's private ``redis-server``, as ``oasis-server`` does. ``--game MODULE:NAME`` registers
one more game in this process only (the peer comparison's ``tests.games.tiny:TINY``); the
product's registry is left as it is. ``--cprofile PATH`` runs the server under cProfile and
writes its statistics to PATH when it stops (``bench/fanout.py --cprofile``).
``OASIS_BENCH_PROBE=PATH`` in the environment loads ``bench/probe.py`` (GC pauses, loop lag,
store call times to PATH).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.baseline import raise_fd_limit
from games import registry
from server import main as server_main
from server.config import LOOPS, STORES


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    ours, theirs = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--loop", choices=LOOPS, default="uvloop")
    parser.add_argument("--store", choices=STORES, default="redis")
    parser.add_argument("--game", action="append", default=[], metavar="MODULE:NAME")
    parser.add_argument(
        "--cprofile", default="", metavar="PATH", help="write a cProfile of the server to PATH"
    )
    args = parser.parse_args(ours)
    for spec in args.game:
        module, _, name = spec.partition(":")
        registry.register(getattr(importlib.import_module(module), name))
    raise_fd_limit()
    if os.environ.get("OASIS_BENCH_PROBE"):  # the runners' --probe (bench/probe.py)
        from bench.probe import install

        install(os.environ["OASIS_BENCH_PROBE"])
    argv = ["--loop", args.loop, "--store", args.store, *theirs]
    if not args.cprofile:
        server_main.main(argv)
        return
    here = Path(__file__).resolve().parent  # (bench/profile.py would shadow the stdlib's)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    import cProfile

    profile = cProfile.Profile()
    try:
        profile.runcall(server_main.main, argv)
    finally:
        profile.dump_stats(args.cprofile)


if __name__ == "__main__":
    main()
