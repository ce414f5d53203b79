"""Spectator fan-out: one paced match watched by N spectator sockets (issue 20).

One Yspahan match of two seats (the CLI client's :class:`~clients.connection.Session`, in this
process) plays one choice every ``--interval`` seconds on node 0; N spectators (lean sockets,
``bench/wsclient.py``, spread over ``--workers`` load-generator processes) watch it, all on node
0 (``--nodes 1``) or spread over every node (``--nodes 3``: nodes 1 and 2 relay the room through
Redis pub/sub, :mod:`server.relay`). Printed per run:

- choice -> last spectator: from the instant a seat sends ``act`` to the arrival of that
  revision's patch at the last of the N spectators (p50, p99, max over the revisions); the
  clock is ``time.perf_counter`` (CLOCK_MONOTONIC, the same in every process of the machine);
- the seats' act -> ack p50/p99 meanwhile;
- each node's CPU (share of one core) during the paced phase, split into user and system
  time, and per spectator per revision (us), and its RSS growth per spectator (RSS after the
  spectators joined minus before, over that node's spectators); the machine's load average;
- convergence: every spectator's last (rev, hash) must be the owner's spectators' (printed as
  the number of distinct final views per node, 1 when they agree, and whether they match).

    .venv/bin/python bench/fanout.py --spectators 1000,5000,10000 --nodes 1 --seconds 20
    .venv/bin/python bench/fanout.py --spectators 3000 --nodes 3 --workers 3 --seconds 20
    .venv/bin/python bench/fanout.py --spectators 2000 --seconds 10 --cprofile /tmp/fanout.prof

``--cprofile PATH`` runs node 0 under cProfile and writes ``PATH.<spectators>`` (read it with
``pstats``); its timings are then the profiler's, not the server's.

Mind the open-file limit: each spectator is one socket in a worker and one in a server
(``bench/serve.py`` raises the server's soft limit to the hard one; workers do the same).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msgpack import Unpacker

from bench.procs import OASIS_ENV, PYTHON, ROOT, Server, Worker, cpu_seconds, rss_bytes
from bench.wsclient import LeanSocket, connect
from clients.connection import Session
from protocol.codec import map_header, pack, unpack
from tests.services import RedisServer


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process so far (``/proc/PID/stat`` fields 14, 15)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0, 0.0
    fields = text[text.rindex(")") + 2 :].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ints(data: bytes, offset: int) -> Unpacker:
    unpacker = Unpacker()
    unpacker.feed(data[offset : offset + 9])
    return unpacker


# The worker ------------------------------------------------------------------------------------


class Watcher:
    """What one worker's spectators saw: per rev the latest arrival and how many got it."""

    def __init__(self) -> None:
        self.arrivals: dict[int, float] = {}
        self.counts: dict[int, int] = {}
        self.joined = 0
        self.states = 0
        self.errors: dict[str, int] = {}
        self.last: dict[int, tuple[int, str]] = {}
        self.raw: dict[int, bytes] = {}
        """Per socket, its last patch if it came after the last full view."""
        self.prefix = b""

    def finals(self) -> dict[str, int]:
        for index, data in self.raw.items():
            frame = unpack(data)
            self.last[index] = (int(frame["rev"]), str(frame["hash"]))
        self.raw.clear()
        out: dict[str, int] = {}
        for rev, digest in self.last.values():
            key = f"{rev}:{digest}"
            out[key] = out.get(key, 0) + 1
        return out

    def handler(self, index: int) -> Any:
        """Patches are not decoded (a load generator that decodes 10,000 of them per revision
        on a shared machine measures itself): the rev is read at its fixed place; the last
        frame is kept and its hash read at the report."""
        prefix = self.prefix

        def on_message(data: bytes, arrived: float) -> None:
            if data.startswith(prefix):
                rev = int(next(iter(_ints(data, len(prefix)))))
                if arrived > self.arrivals.get(rev, 0.0):
                    self.arrivals[rev] = arrived
                self.counts[rev] = self.counts.get(rev, 0) + 1
                self.raw[index] = data
                return
            frame = unpack(data)
            kind = frame.get("type")
            if kind == "patch":  # (another room's: none here)
                return
            self.raw.pop(index, None)
            if kind == "joined":
                self.joined += 1
                if frame.get("hash") is not None:
                    self.last[index] = (int(frame["rev"]), str(frame["hash"]))
            elif kind == "state":
                self.states += 1
                self.last[index] = (int(frame["rev"]), str(frame["hash"]))
            elif kind == "error":
                code = str(frame.get("code"))
                self.errors[code] = self.errors.get(code, 0) + 1

        return on_message


async def worker(url: str, room: str, count: int, nice: int) -> None:
    raise_nofile()
    os.nice(nice)  # the server first: on one machine, the load generators compete with it
    watcher = Watcher()
    # A patch frame begins so (protocol.frames.encode_patch: type, room, then rev).
    watcher.prefix = b"".join(
        (map_header(6), pack("type"), pack("patch"), pack("room"), pack(room), pack("rev"))
    )
    sockets: list[LeanSocket] = []

    async def one(i: int) -> None:
        for attempt in range(5):
            try:
                s = await connect(url, watcher.handler(i))
                break
            except (OSError, TimeoutError, Exception):
                await asyncio.sleep(0.2 * (attempt + 1))
        else:
            return
        sockets.append(s)
        s.send(pack({"type": "hello", "version": 1, "client": "fanout", "id": 1}))
        s.send(pack({"type": "spectate", "room": room, "id": 2}))

    for start in range(0, count, 200):
        await asyncio.gather(*(one(i) for i in range(start, min(count, start + 200))))
    deadline = time.monotonic() + 60
    while watcher.joined < len(sockets) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    print("ready " + json.dumps({"sockets": len(sockets), "joined": watcher.joined}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or line.startswith("quit"):
            break
        if line.startswith("report"):
            finals = watcher.finals()
            report = {
                "arrivals": watcher.arrivals,
                "counts": watcher.counts,
                "states": watcher.states,
                "errors": watcher.errors,
                "finals": finals,
                "open": sum(1 for s in sockets if s.open),
            }
            print("report " + json.dumps(report), flush=True)
    for s in sockets:
        s.abort()


# The run ---------------------------------------------------------------------------------------


async def seats(url: str) -> tuple[str, list[Session]]:
    host = await Session(url, "seat0").open()
    created = await host.request(
        {"type": "create", "game": "yspahan", "players": 2, "seed": 2020, "public": False}
    )
    room = str(created["room"])
    guest = await Session(url, "seat1").open()
    await host.join({"type": "join", "room": room, "seat": 0, "name": "a"})
    await guest.join({"type": "join", "room": room, "seat": 1, "name": "b"})
    await host.request({"type": "start", "room": room})
    return room, [host, guest]


async def play(
    room: str, players: list[Session], seconds: float, interval: float, rng: random.Random
) -> tuple[dict[int, float], list[float]]:
    """One choice every ``interval`` s (open loop); the send instant of each rev, acks' times."""
    sent: dict[int, float] = {}
    acks: list[float] = []
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        n += 1
        due = start + n * interval
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        mover = next((s for s in players if s.rooms[room].choices), None)
        if mover is None:
            if all(s.rooms[room].over for s in players):
                break
            continue
        mirror = mover.rooms[room]
        rev = mirror.rev
        choice = mirror.choices[rng.randrange(len(mirror.choices))]
        t0 = time.perf_counter()
        answer = await mover.request({"type": "act", "room": room, "rev": rev, "choice": choice})
        acks.append(time.perf_counter() - t0)
        if answer.get("type") == "ack":
            sent[rev + 1] = t0
        await mover.wait(lambda: mirror.rev > rev, patience=10)  # noqa: B023 (awaited here)
    return sent, acks


def node_env(name: str) -> dict[str, str]:
    return {
        **OASIS_ENV,
        "OASIS_NODE_ID": name,
        "OASIS_ALLOW_SEED": "1",
        "OASIS_SPECTATORS_PER_ROOM": "1000000",
        "OASIS_LEASE_TTL": "5",
        "OASIS_IDLE_TIMEOUT": "3600",
    }


async def run_one(
    spectators: int,
    nodes: int,
    workers: int,
    seconds: float,
    interval: float,
    loop: str,
    nice: int = 10,
    cprofile: str = "",
) -> dict[str, Any]:
    redis = RedisServer(Path(tempfile.mkdtemp(prefix="oasis-fanout-")))
    redis.start()
    servers = [
        Server("oasis", loop, redis_url=redis.url, env=node_env(f"n{i}")) for i in range(nodes)
    ]
    if cprofile:
        servers[0].cprofile = f"{cprofile}.{spectators}"
    pool: list[Worker] = []
    players: list[Session] = []
    try:
        for server in servers:
            server.start()
        room, players = await seats(servers[0].url)
        await asyncio.sleep(0.5)
        rss0 = [rss_bytes(s.pid) for s in servers]
        per_node = [0] * nodes
        for w in range(workers):
            target = w % nodes
            count = spectators // workers + (1 if w < spectators % workers else 0)
            per_node[target] += count
            args = ["--worker", "--url", servers[target].url, "--room", room, "--count", str(count)]
            args += ["--nice", str(nice)]
            pool.append(Worker(args, command=[PYTHON, str(ROOT / "bench" / "fanout.py")]))
        joined = 0
        for worker_ in pool:
            joined += int(worker_.expect("ready", 300)["joined"])
        await asyncio.sleep(1.0)
        rss1 = [rss_bytes(s.pid) for s in servers]
        cpu0 = [cpu_seconds(s.pid) for s in servers]
        split0 = [cpu_split(s.pid) for s in servers]
        t0 = time.perf_counter()
        sent, acks = await play(room, players, seconds, interval, random.Random(20))
        took = time.perf_counter() - t0
        cpu1 = [cpu_seconds(s.pid) for s in servers]
        split1 = [cpu_split(s.pid) for s in servers]
        await asyncio.sleep(2.0)
        reports = []
        for worker_ in pool:
            worker_.send("report")
            reports.append(worker_.expect("report", 60))
        arrivals: dict[int, float] = {}
        counts: dict[int, int] = {}
        finals_by_node: list[dict[str, int]] = [{} for _ in range(nodes)]
        states = 0
        errors: dict[str, int] = {}
        for w, report in enumerate(reports):
            for rev, at in report["arrivals"].items():
                arrivals[int(rev)] = max(arrivals.get(int(rev), 0.0), float(at))
            for rev, c in report["counts"].items():
                counts[int(rev)] = counts.get(int(rev), 0) + int(c)
            for key, c in report["finals"].items():
                finals = finals_by_node[w % nodes]
                finals[key] = finals.get(key, 0) + int(c)
            states += int(report["states"])
            for code, c in report["errors"].items():
                errors[code] = errors.get(code, 0) + int(c)
        latencies = [arrivals[r] - at for r, at in sent.items() if counts.get(r) == joined]
        incomplete = sum(1 for r in sent if counts.get(r, 0) != joined)
        owner_final = max(finals_by_node[0].items(), key=lambda kv: kv[1])[0]
        agree = all(set(f) == {owner_final} for f in finals_by_node)
        return {
            "spectators": spectators,
            "joined": joined,
            "nodes": nodes,
            "revisions": len(sent),
            "incomplete_revisions": incomplete,
            "p50_ms": _ms(percentile(latencies, 0.5)),
            "p99_ms": _ms(percentile(latencies, 0.99)),
            "max_ms": _ms(max(latencies) if latencies else None),
            "seat_p50_ms": _ms(percentile(acks, 0.5)),
            "seat_p99_ms": _ms(percentile(acks, 0.99)),
            "cpu": [round((b - a) / took, 3) for a, b in zip(cpu0, cpu1, strict=True)],
            "cpu_user_sys": [
                [round((b[0] - a[0]) / took, 3), round((b[1] - a[1]) / took, 3)]
                for a, b in zip(split0, split1, strict=True)
            ],
            "cpu_us_per_spectator_revision": [
                round((b - a) / max(1, len(sent)) / max(1, n) * 1e6, 1)
                for a, b, n in zip(cpu0, cpu1, per_node, strict=True)
            ],
            "load_average": round(os.getloadavg()[0], 1),
            "kib_per_spectator": [
                round((r1 - r0) / 1024 / max(1, n), 1)
                for r0, r1, n in zip(rss0, rss1, per_node, strict=True)
            ],
            "spectators_per_node": per_node,
            "final_views_per_node": [len(f) for f in finals_by_node],
            "converged": agree,
            "state_frames": states,
            "errors": errors,
        }
    finally:
        for s in players:
            s.reconnect = False
            await s.close()
        for worker_ in pool:
            worker_.send("quit")
            worker_.stop()
        for server in servers:
            server.stop()
        redis.stop()


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", default="")
    parser.add_argument("--room", default="")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--spectators", default="1000,5000,10000")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--loop", default="uvloop")
    parser.add_argument(
        "--nice", type=int, default=10, help="the load generators' niceness (0: as the server)"
    )
    parser.add_argument(
        "--cprofile",
        default="",
        metavar="PATH",
        help="write a cProfile of node 0 to PATH.<spectators> (its figures are then not ours)",
    )
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(args.url, args.room, args.count, args.nice))
        return
    raise_nofile()
    for n in (int(x) for x in args.spectators.split(",")):
        result = asyncio.run(
            run_one(
                n,
                args.nodes,
                args.workers,
                args.seconds,
                args.interval,
                args.loop,
                args.nice,
                args.cprofile,
            )
        )
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
