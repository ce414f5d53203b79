"""The Redis store's client CPU per append: what the Redis log costs the server process itself.

One process, one :class:`~server.store.redis.RedisStore` on a private ``redis-server`` (a free
port, no persistence: the server's side is not what this measures), 50 live rooms; then
appends with a clock room's meta beside them (as a room writes them), 50 rooms at once (the
group commit batches them) and one room at a time (each a lone round trip). The figure is this
process's CPU time (user + system, ``time.process_time``) over the appends: it holds the
client's packing, parsing, the event loop's part and the socket calls, and other processes on
a shared machine disturb it far less than wall-clock figures. Run it from the checkout to
measure (its own ``server`` package is imported):

    .venv/bin/python bench/store_writes.py
    (cd ../base && .venv/bin/python bench/store_writes.py)   # the same for another checkout
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())  # the checkout run from (see the module doc)

from server.store import Action
from server.store.redis import RedisStore

ROOMS = 50


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def measure(url: str, rounds: int) -> tuple[float, float]:
    """CPU us per append: 50 rooms at once, then one room at a time."""
    store = RedisStore(url, allow_volatile=True)
    await store.start()
    rooms = [f"w{i}" for i in range(ROOMS)]
    for room in rooms:
        meta = {"room": room, "game": "tiny", "players": 4, "state": "open", "seats": [], "rev": 0}
        await store.create_room(room, meta)
    rev = dict.fromkeys(rooms, 0)

    async def one(room: str) -> None:
        rev[room] += 1
        n = rev[room]
        choice = {"kind": "play", "card": n % 13}
        await store.append(room, Action(n, n % 4, choice), {"clock_state": {"t": n}})

    try:
        for _ in range(10):  # warm-up
            await asyncio.gather(*(one(room) for room in rooms))
        started = time.process_time()
        for _ in range(rounds):
            await asyncio.gather(*(one(room) for room in rooms))
        batched = (time.process_time() - started) / (rounds * ROOMS) * 1e6
        started = time.process_time()
        for _ in range(rounds // 2):
            for room in rooms:
                await one(room)
        lone = (time.process_time() - started) / (rounds // 2 * ROOMS) * 1e6
    finally:
        await store.close()
    return batched, lone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=100, help="appends per room, batched")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="oasis-writes-") as tmp:
        command = [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", tmp]
        redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            print(f"{Path.cwd().name}: client CPU us per append ({ROOMS} rooms)")
            for rep in range(args.reps):
                url = f"redis://127.0.0.1:{port}/{rep}"
                batched, lone = asyncio.run(measure(url, args.rounds))
                print(f"  rep {rep + 1}: {ROOMS} at once {batched:6.1f}, one at a time {lone:6.1f}")
        finally:
            redis.terminate()
            redis.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
