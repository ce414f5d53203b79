"""Start the real Oasis server with an event loop and a store chosen by the benchmark.

``oasis-server`` (``server/main.py``) always runs on uvloop when it is installed, and without
``REDIS_URL`` it starts a private ``redis-server``: the benchmark can ask it neither for the default
asyncio loop nor for the in-memory store (persistence off). This launcher runs the very same
``server.main.run`` coroutine (store, restore of the rooms, the App, graceful stop on SIGTERM)
and only chooses those two things:

    .venv/bin/python bench/serve.py --loop asyncio --store redis -- --port 8765 --redis-url URL
    .venv/bin/python bench/serve.py --loop uvloop --store memory -- --port 8765

Everything after ``--`` is ``oasis-server``'s own flags. With ``--store memory`` the server runs
on :class:`server.store.MemoryStore` whatever the environment says.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.baseline import raise_fd_limit
from server import logging as oasis_logging
from server import main as server_main
from server.app import App
from server.config import Config, parse_args
from server.store import MemoryStore


async def run_memory(config: Config) -> None:
    """The store-less ``run`` of a server whose ``run`` takes no URL (before issue 6)."""
    app = App(config, MemoryStore())
    await app.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await app.stop()


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ours, theirs = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :])
        if "--" in argv
        else (
            argv,
            [],
        )
    )
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop")
    parser.add_argument("--store", choices=("redis", "memory"), default="redis")
    args = parser.parse_args(ours)
    config = parse_args(theirs)
    if args.store == "redis" and not config.redis_url:
        parser.error("--store redis needs --redis-url (or REDIS_URL)")
    raise_fd_limit()
    oasis_logging.configure(config.log_format, config.log_level)
    url = config.redis_url if args.store == "redis" else None
    run: Any = server_main.run
    if len(inspect.signature(run).parameters) >= 2:  # run(config, url): None means memory
        coro = run(config, url)
    else:
        coro = run(config) if url else run_memory(config)
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(coro)
    else:
        asyncio.run(coro)


if __name__ == "__main__":
    main()
