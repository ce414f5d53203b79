"""Load run: R rooms of bot clients over real sockets against an ``oasis-server``.

Prints actions per second, the p50/p99 latency from a choice being sent to the last viewer of
its room (every seat and spectator) receiving that revision's patch, and bytes per patch frame.
The seat clients pick a random legal choice from their own view, as any frontend would; they
know nothing of the rules. A finished room is replaced by a new one until the time is up.

    .venv/bin/python bench/load.py --rooms 20 --game yspahan --seconds 10
    .venv/bin/python bench/load.py --server ws://host:8765/ --rooms 100

Without ``--server`` it starts ``oasis-server`` as a child process on a free port (uvloop when
installed) so clients and server do not share an event loop; the clients use uvloop too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocol.codec import Limits, decode, encode
from protocol.patch import apply

_LIMITS = Limits(max_frame_bytes=1 << 30, max_depth=64, max_container=1 << 20, max_str=1 << 24)


@dataclass
class Stats:
    actions: int = 0
    latencies: list[float] = field(default_factory=list)
    patch_bytes: int = 0
    patches: int = 0
    matches: int = 0
    errors: int = 0


@dataclass
class RoomClock:
    """Per room: when each revision's choice was sent, and how many viewers have it."""

    viewers: int
    sent: dict[int, float] = field(default_factory=dict)
    seen: dict[int, int] = field(default_factory=dict)

    def received(self, rev: int, now: float, stats: Stats) -> None:
        count = self.seen.get(rev, 0) + 1
        self.seen[rev] = count
        if count == self.viewers:
            del self.seen[rev]
            started = self.sent.pop(rev, None)
            if started is not None:
                stats.latencies.append(now - started)


class BotClient:
    """One connection: applies patches when it plays, only counts them when it watches."""

    def __init__(self, ws: ClientConnection, stats: Stats, rng: random.Random) -> None:
        self.ws = ws
        self.stats = stats
        self.rng = rng
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0
        self.view: Any = None
        self.rev = -1
        self.room = ""
        self.clock: RoomClock | None = None
        self.playing = False
        self.changed = asyncio.Event()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for data in self.ws:
            assert isinstance(data, bytes)
            now = time.perf_counter()
            frame = decode(data, _LIMITS)
            kind = frame["type"]
            rid = frame.get("id")
            if rid is not None and rid in self.pending:
                self.pending.pop(rid).set_result(frame)
            if frame.get("room") != self.room:
                continue
            if kind == "patch":
                self.stats.patch_bytes += len(data)
                self.stats.patches += 1
                if self.clock is not None:
                    self.clock.received(frame["rev"], now, self.stats)
                if self.playing and frame["rev"] == self.rev + 1:
                    self.view = apply(self.view, frame["ops"])
                self.rev = frame["rev"]
                self.changed.set()
            elif kind in ("joined", "state") and frame.get("view") is not None:
                self.view, self.rev = frame["view"], frame["rev"]
                self.changed.set()
            elif kind == "error":
                self.stats.errors += 1

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.ws.send(encode({**frame, "id": self.next_id}))
        return await asyncio.wait_for(future, 30)

    async def play(self, deadline: float) -> None:
        """Act whenever the own view lists choices, until the match ends."""
        while True:
            view = self.view
            if view["shared"]["result"] is not None:
                return
            choices = view["own"]["choices"]
            if choices and self.clock is not None:
                rev = self.rev
                self.clock.sent[rev + 1] = time.perf_counter()
                self.changed.clear()
                answer = await self.request(
                    {
                        "type": "act",
                        "room": self.room,
                        "rev": rev,
                        "choice": self.rng.randrange(len(choices)),
                    }
                )
                if answer["type"] == "ack":
                    self.stats.actions += 1
                continue
            self.changed.clear()
            await self.changed.wait()


async def open_client(url: str, stats: Stats, rng: random.Random) -> BotClient:
    ws = await connect(url, max_size=None, compression=None)
    client = BotClient(ws, stats, rng)
    await client.request({"type": "hello", "version": 1, "client": "bench", "hash_rule": 2})
    return client


async def run_room(
    url: str, game: str, players: int, spectators: int, deadline: float, stats: Stats, seed: int
) -> None:
    rng = random.Random(seed)
    seats = [await open_client(url, stats, rng) for _ in range(players)]
    watchers = [await open_client(url, stats, rng) for _ in range(spectators)]
    while time.perf_counter() < deadline:
        created = await seats[0].request({"type": "create", "game": game, "players": players})
        if created["type"] != "ack":
            raise SystemExit(f"create failed: {created}")
        room = created["room"]
        clock = RoomClock(players + spectators)
        for i, seat in enumerate(seats):
            seat.room, seat.clock, seat.playing, seat.view = room, clock, True, None
            await seat.request({"type": "join", "room": room, "name": f"bot{i}"})
        for watcher in watchers:
            watcher.room, watcher.clock = room, clock
            await watcher.request({"type": "spectate", "room": room})
        await seats[0].request({"type": "start", "room": room})
        await asyncio.gather(*(seat.play(deadline) for seat in seats))
        stats.matches += 1
        for client in seats + watchers:
            await client.request({"type": "leave", "room": room})
    for client in seats + watchers:
        await client.ws.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    script = shutil.which("oasis-server", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "server.main"]
    env = {**os.environ, "OASIS_LOG_LEVEL": "warning", "OASIS_RATE_PER_SECOND": "100000",
           "OASIS_RATE_BURST": "100000", "OASIS_MAX_CONNECTIONS_PER_IP": "100000"}  # fmt: skip
    process = subprocess.Popen([*command, "--port", str(port)], env=env)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("oasis-server did not start")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main_async(args: argparse.Namespace, url: str) -> Stats:
    stats = Stats()
    started = time.perf_counter()
    deadline = started + args.seconds
    await asyncio.gather(
        *(
            run_room(url, args.game, args.players, args.spectators, deadline, stats, i)
            for i in range(args.rooms)
        )
    )
    stats_elapsed = time.perf_counter() - started
    print(
        f"rooms {args.rooms} x ({args.players} seats + {args.spectators} spectators), {args.game}"
    )
    print(f"elapsed {stats_elapsed:.1f} s, matches finished {stats.matches}, errors {stats.errors}")
    print(f"actions/s {stats.actions / stats_elapsed:,.0f} ({stats.actions} actions)")
    lat = stats.latencies
    print(
        f"choice -> last viewer's patch: p50 {percentile(lat, 0.5) * 1e3:.2f} ms, "
        f"p99 {percentile(lat, 0.99) * 1e3:.2f} ms, mean "
        f"{(statistics.fmean(lat) if lat else float('nan')) * 1e3:.2f} ms ({len(lat)} samples)"
    )
    per_patch = stats.patch_bytes / stats.patches if stats.patches else float("nan")
    print(f"bytes per patch frame {per_patch:,.0f} ({stats.patches} frames)")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", help="ws:// URL of a running server (default: start one)")
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--spectators", type=int, default=2)
    parser.add_argument("--game", default="yspahan")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    process = None
    url = args.server
    if url is None:
        port = free_port()
        process = start_server(port)
        url = f"ws://127.0.0.1:{port}/"
    try:
        try:
            import uvloop
        except ImportError:
            asyncio.run(main_async(args, url))
        else:
            uvloop.run(main_async(args, url))
    finally:
        if process is not None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=15)


if __name__ == "__main__":
    main()
