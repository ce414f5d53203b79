"""Instructions per append of the Redis store's write path, counted by valgrind: what the Redis
log costs the server process, as a figure other processes on the machine cannot move.

``bench/store_writes.py`` gives the same path's CPU time, which a shared machine moves by a
third between runs; and the whole server's count with the Redis log on
(``bench/server_instructions.py --store redis``) moves with how the group commit happens to
batch under valgrind, by 5 to 10 % between runs of one tree. Here one process (this checkout's
``server``, or ``--tree DIR``'s) runs a :class:`~server.store.redis.RedisStore` on a private
``redis-server`` (a free port, no persistence) under ``valgrind --tool=callgrind``, twice per
mode, for the smaller and the larger count of appends, so that start-up cancels out:

- ``lone``: one room's appends one after the other, each its own round trip (a quiet server);
- ``batched``: 50 rooms' appends at once, the group commit sending all but the first in one
  batch (a busy one). Each append is a task of ``asyncio.gather`` here, as it is a room's task
  in the server: their cost is part of the figure.

    .venv/bin/python bench/store_instructions.py [--tree DIR] [--modes lone,batched]

Needs valgrind and redis-server; about a minute per mode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = 50
COUNTS = {"lone": (200, 1200), "batched": (10, 50)}
"""Appends (lone) or rounds of ``ROOMS`` appends (batched) of the two runs per mode."""


async def play(url: str, mode: str, count: int) -> None:
    """The child's side: the appends of one run."""
    from server.store import Action
    from server.store.redis import RedisStore

    store = RedisStore(url, timeout=2.0, probe_interval=60.0, allow_volatile=True)
    await store.start()
    rooms = [f"w{i}" for i in range(ROOMS if mode == "batched" else 1)]
    for room in rooms:
        meta = {"room": room, "game": "tiny", "players": 4, "state": "open", "seats": [], "rev": 0}
        await store.create_room(room, meta)
    try:
        for rev in range(1, count + 1):
            choice = {"kind": "play", "card": rev % 13}
            if mode == "lone":  # (awaited by this task, as a room's task awaits its append)
                await store.append(rooms[0], Action(rev, rev % 4, choice))
            else:
                await asyncio.gather(
                    *(store.append(r, Action(rev, rev % 4, choice)) for r in rooms)
                )
    finally:
        await store.close()


def count(tree: Path, url: str, mode: str, n: int) -> int:
    """Instructions of one child run, the store's data emptied first."""
    subprocess.run(["redis-cli", "-u", url, "FLUSHALL"], check=True, capture_output=True)
    done = subprocess.run(
        [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            sys.executable, str(Path(__file__).resolve()), "--play", mode, str(n), url,
        ],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no count from valgrind: {done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose store runs")
    parser.add_argument("--modes", default="lone,batched")
    parser.add_argument("--play", nargs=3, metavar=("MODE", "N", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play:
        import uvloop

        mode, n, url = args.play
        uvloop.run(play(url, mode, int(n)))
        return 0
    sys.path.insert(0, str(ROOT))
    from tests.services import RedisServer

    with tempfile.TemporaryDirectory() as directory:
        redis = RedisServer(Path(directory), appendonly=False)
        redis.start()
        try:
            print(f"store of {args.tree}, redis-server without persistence, valgrind")
            for mode in args.modes.split(","):
                few, many = COUNTS[mode]
                per = 1 if mode == "lone" else ROOMS
                a, b = (
                    count(args.tree, redis.url, mode, few),
                    count(args.tree, redis.url, mode, many),
                )
                appends = (many - few) * per
                print(f"{mode:8} {(b - a) / appends:10,.0f} instructions per append", flush=True)
        finally:
            redis.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
