"""The attacks of issue 14, re-run against one node holding 2,000 public rooms and a paced match.

One real ``oasis-server`` (``bench/serve.py``, uvloop, its private redis-server, the default
quotas and limits) restores 2,000 open public Yspahan rooms written straight into Redis. This
process plays a paced match on it from 127.0.0.1 (one seat against a server bot, a choice every
``PACE`` seconds, act -> ack timed) and probes ``/healthz`` every 50 ms on a new TCP connection.
Each attack runs in a child process (``--attacker KIND``, so the attacker's own CPU does not
slow the measurer's loop) from another loopback address, 127.0.0.66, so that the per-address
limits it meets are its own and not the paced player's:

- ``list_flood``: 32 connections, each a ``list_rooms`` 39 times a second (under the frame rate);
- ``room_fill``: 32 connections creating rooms at 39 a second each;
- ``bot_matches``: 32 connections creating all-bot matches (``create`` with every seat a bot,
  then ``start``) at 39 frames a second each;
- ``replay_flood``: 32 connections asking ``replay`` of a finished match at interval 0;
- ``unknown_quick``: 32 connections sending ``quick`` for a game the server does not have;
- ``half_open``: as many TCP connections as it can open (up to 4,000) that never send a byte;
- ``chat_flood``: 32 connections spectating the paced room and chatting 39 lines a second each.

A first window, ``quiet``, runs no attack: the same figures with nothing but the paced match,
what the machine gives at that moment (on a shared machine, the reference for the others).
Per attack it prints the paced match's act -> ack p50 / p99 / max during the flood, the room
pauses the server logged, ``/healthz`` p99 and max, the server's worst event-loop lag probe
(``oasis_loop_lag_seconds``, read from ``/metrics`` every 200 ms), the refusals per limit, and
the recovery: the paced p99 and ``/healthz`` p99 in the 3 s after the flood stopped.

    .venv/bin/python bench/attacks.py [--seconds 10] [--rooms 2000] [--only list_flood,...]
    .venv/bin/python bench/attacks.py --quick        # 2 s per attack, 200 rooms: a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.procs import OASIS_ENV, PYTHON, ROOT, Server, cpu_seconds
from protocol.codec import Limits, decode, encode
from protocol.patch import apply
from tests.services import RedisServer

ATTACKS = (
    "quiet",
    "list_flood",
    "room_fill",
    "bot_matches",
    "replay_flood",
    "unknown_quick",
    "half_open",
    "chat_flood",
)
ATTACKER = "127.0.0.66"
CONNECTIONS = 32
RATE = 39.0
PACE = 0.1
HALF_OPEN_MAX = 4000
_LIMITS = Limits(max_frame_bytes=1 << 30, max_depth=64, max_container=1 << 20, max_str=1 << 24)


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f}"


# The rooms ------------------------------------------------------------------------------------


async def populate(url: str, rooms: int) -> None:
    """``rooms`` open public 2-seat Yspahan rooms, written as the lobby writes a new room."""
    from server.store.redis import RedisStore

    store = RedisStore(url, timeout=5.0)
    await store.start()
    gate = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        room = f"pub{i:05d}"
        meta = {
            "room": room,
            "game": "yspahan",
            "players": 2,
            "options": {},
            "public": True,
            "state": "open",
            "rev": 0,
            "seats": [{"seat": s, "name": "", "taken": False} for s in range(2)],
            "spectators": 0,
            "spectator_delay": 0.0,
            "spectator_chat": True,
            "paused": False,
            "tokens": ["", ""],
            "quick": False,
            "host": "",
            "bot": "random",
            "seed": 1000 + i,
        }
        async with gate:
            await store.create_room(room, meta)

    await asyncio.gather(*(one(i) for i in range(rooms)))
    await store.close()


# A small client ---------------------------------------------------------------------------------


class Peer:
    """One WebSocket client: sends frames, reads every answer in the background."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.views: dict[str, Any] = {}
        self.revs: dict[str, int] = {}
        self.changed = asyncio.Event()
        self.frames = 0
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str, local: str | None = None) -> Peer:
        kwargs: dict[str, Any] = {"local_addr": (local, 0)} if local else {}
        ws = await connect(url, max_size=None, open_timeout=10, compression=None, **kwargs)
        peer = cls(ws)
        await peer.request({"type": "hello", "version": 1, "client": "attacks"})
        return peer

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                self.frames += 1
                frame = decode(data, _LIMITS)  # type: ignore[arg-type]
                kind = frame.get("type")
                if kind in ("joined", "state") and frame.get("view") is not None:
                    self.views[frame["room"]] = frame["view"]
                    self.revs[frame["room"]] = frame["rev"]
                elif kind == "patch" and frame["room"] in self.views:
                    self.views[frame["room"]] = apply(self.views[frame["room"]], frame["ops"])
                    self.revs[frame["room"]] = frame["rev"]
                rid = frame.get("id")
                future = self.waiting.pop(rid, None) if isinstance(rid, int) else None
                if future is not None and not future.done():
                    future.set_result(frame)
                self.changed.set()
        except ConnectionClosed:
            pass
        finally:
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))

    async def send(self, frame: dict[str, Any]) -> int:
        self.next_id += 1
        await self.ws.send(encode({**frame, "id": self.next_id}))
        return self.next_id

    async def request(self, frame: dict[str, Any], wait: float = 10.0) -> dict[str, Any]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        await self.ws.send(encode({**frame, "id": self.next_id}))
        return await asyncio.wait_for(future, wait)

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


# The measurer: a paced match, /healthz, the metrics -------------------------------------------


class Measurer:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.acks: list[tuple[float, float]] = []
        """(time, act -> ack seconds)."""
        self.health: list[tuple[float, float]] = []
        self.lag: list[tuple[float, float]] = []
        self.refused: dict[str, float] = {}
        self.requests: dict[str, tuple[float, float]] = {}
        """Request type -> (seconds, count) the server spent on it so far."""
        self.stopping = False
        self.room = ""

    async def paced(self) -> None:
        peer = await Peer.open(self.server.url)
        while not self.stopping:
            ack = await peer.request(
                {"type": "create", "game": "yspahan", "players": 2, "bots": 1, "public": False}
            )
            room = self.room = ack["room"]
            await peer.request({"type": "join", "room": room, "name": "paced"})
            await peer.request({"type": "start", "room": room})
            while not self.stopping:
                view = peer.views.get(room)
                if view is not None and view["shared"].get("result") is not None:
                    break
                choices = (view or {}).get("own", {}) or {}
                if not choices.get("choices"):
                    peer.changed.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(peer.changed.wait(), 5.0)
                    continue
                await asyncio.sleep(PACE)
                rev = peer.revs[room]
                started = time.perf_counter()
                answer = await peer.request(
                    {"type": "act", "room": room, "rev": rev, "choice": 0}, wait=30.0
                )
                if answer["type"] == "ack":
                    self.acks.append((time.monotonic(), time.perf_counter() - started))
                elif answer.get("code") != "stale_rev":
                    await asyncio.sleep(PACE)
        await peer.close()

    async def _get(self, path: str) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.server.port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = await reader.read()
        writer.close()
        return data

    async def healthz(self) -> None:
        while not self.stopping:
            started = time.perf_counter()
            try:
                await asyncio.wait_for(self._get("/healthz"), 10.0)
                took = time.perf_counter() - started
            except (OSError, TimeoutError):
                took = 10.0
            self.health.append((time.monotonic(), took))
            await asyncio.sleep(0.05)

    async def metrics(self) -> None:
        while not self.stopping:
            try:
                body = (await asyncio.wait_for(self._get("/metrics"), 10.0)).decode()
            except (OSError, TimeoutError):
                await asyncio.sleep(0.2)
                continue
            found = re.search(r"^oasis_loop_lag_seconds (\S+)$", body, re.M)
            if found:
                self.lag.append((time.monotonic(), float(found.group(1))))
            sums = dict(
                re.findall(r'^oasis_request_seconds_sum\{type="(\w+)"\} (\S+)$', body, re.M)
            )
            counts = re.findall(r'^oasis_request_seconds_count\{type="(\w+)"\} (\S+)$', body, re.M)
            for kind, count in counts:
                self.requests[kind] = (float(sums.get(kind, 0)), float(count))
            for limit, value in re.findall(
                r'^oasis_refused_total\{limit="(\w+)"\} (\S+)$', body, re.M
            ):
                self.refused[limit] = float(value)
            await asyncio.sleep(0.2)

    def pauses(self) -> int:
        assert self.server.workdir is not None
        path = self.server.workdir / "server.log"
        return path.read_text(errors="replace").count("room_paused") if path.exists() else 0


FLOODED = {
    "list_flood": "list_rooms",
    "room_fill": "create",
    "bot_matches": "create",
    "replay_flood": "replay",
    "unknown_quick": "quick",
    "chat_flood": "chat",
}
"""The request type each flood sends (the server's time per request of it is printed)."""


def _per_request(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]], kind: str | None
) -> float | None:
    """Microseconds the server's shell spent per ``kind`` request between two scrapes."""
    if kind is None or kind not in after:
        return None
    seconds = after[kind][0] - before.get(kind, (0.0, 0.0))[0]
    count = after[kind][1] - before.get(kind, (0.0, 0.0))[1]
    return seconds / count * 1e6 if count > 0 else None


def _window(samples: list[tuple[float, float]], start: float, end: float) -> list[float]:
    return [v for t, v in samples if start <= t < end]


# The attackers (child processes) --------------------------------------------------------------


async def _flood(url: str, frames: Any, seconds: float, connections: int = CONNECTIONS) -> None:
    """``connections`` connections from the attacker's address, each sending ``frames(peer)`` at
    ``RATE`` a second (awaiting nothing), reconnecting when closed."""
    deadline = time.monotonic() + seconds

    async def one(index: int) -> None:
        while time.monotonic() < deadline:
            try:
                peer = await Peer.open(url, ATTACKER)
            except (OSError, InvalidHandshake, TimeoutError, ConnectionError):
                await asyncio.sleep(0.2)
                continue
            try:
                await frames(peer, index, setup=True)
                while time.monotonic() < deadline:
                    await frames(peer, index, setup=False)
                    await asyncio.sleep(1.0 / RATE)
            except (ConnectionClosed, ConnectionError, TimeoutError):
                pass
            finally:
                await peer.close()

    await asyncio.gather(*(one(i) for i in range(connections)))


async def attack(kind: str, url: str, seconds: float, room: str, archived: str) -> None:
    if kind == "quiet":
        await asyncio.sleep(seconds)
        return
    if kind == "half_open":
        held: list[Any] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(held) < HALF_OPEN_MAX:
                try:
                    _, port = url.rsplit(":", 1)
                    conn = await asyncio.wait_for(
                        asyncio.open_connection(
                            "127.0.0.1", int(port.strip("/")), local_addr=(ATTACKER, 0)
                        ),
                        1.0,
                    )
                    held.append(conn)
                    continue
                except (OSError, TimeoutError):
                    pass
            await asyncio.sleep(0.01)
        for _, writer in held:
            writer.close()
        return

    async def frames(peer: Peer, index: int, *, setup: bool) -> None:
        if kind == "list_flood":
            if not setup:
                await peer.send({"type": "list_rooms"})
        elif kind == "room_fill":
            if not setup:
                await peer.send({"type": "create", "game": "yspahan", "players": 2})
        elif kind == "bot_matches":
            if setup:
                return
            answer = await peer.request(
                {"type": "create", "game": "yspahan", "players": 2, "bots": 2}, wait=10.0
            )
            if answer["type"] == "ack":
                await peer.send({"type": "start", "room": answer["room"]})
        elif kind == "replay_flood":
            if not setup:
                await peer.send({"type": "replay", "room": archived, "interval": 0})
        elif kind == "unknown_quick":
            if not setup:
                await peer.send(
                    {"type": "quick", "game": f"nope{random.randrange(99)}", "players": 2}
                )
        elif kind == "chat_flood":
            if setup:
                await peer.request({"type": "spectate", "room": room})
            else:
                await peer.send({"type": "chat", "room": room, "text": f"spam {index}"})

    await _flood(url, frames, seconds)


async def archive_one(url: str) -> str:
    """A finished all-bot match (from 127.0.0.1), for the replay flood."""
    peer = await Peer.open(url)
    ack = await peer.request({"type": "create", "game": "yspahan", "players": 2, "bots": 2})
    room = str(ack["room"])
    await peer.request({"type": "spectate", "room": room})
    await peer.request({"type": "start", "room": room})
    while (peer.views.get(room) or {}).get("shared", {}).get("result") is None:
        peer.changed.clear()
        await asyncio.wait_for(peer.changed.wait(), 30.0)
    await asyncio.sleep(0.5)  # the archive is written after the last patch
    await peer.close()
    return room


# The run ---------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    redis = RedisServer(Path(os.environ.get("TMPDIR", "/tmp")) / f"attacks-redis-{os.getpid()}")
    redis.start()
    server = Server("oasis", "uvloop", "redis", redis_url=redis.url)
    results: dict[str, Any] = {"rooms": args.rooms, "seconds": args.seconds, "attacks": {}}
    try:
        started = time.perf_counter()
        await populate(redis.url, args.rooms)
        results["populate_s"] = time.perf_counter() - started
        # The default quotas and limits (not the other benches' lifted ones), but the rooms
        # restored above must not be reaped mid-run.
        server.env.update(_default_env())
        server.start(timeout=120)
        m = Measurer(server)
        archived = await archive_one(server.url)
        tasks = [asyncio.create_task(c) for c in (m.paced(), m.healthz(), m.metrics())]
        await asyncio.sleep(args.settle)
        chosen = [a for a in ATTACKS if not args.only or a in args.only.split(",")]
        for kind in chosen:
            before = dict(m.refused)
            spent = dict(m.requests)
            pauses = m.pauses()
            cpu0 = cpu_seconds(server.pid)
            t0 = time.monotonic()
            command = [PYTHON, str(Path(__file__)), "--attacker", kind, "--url", server.url]
            command += ["--seconds", str(args.seconds), "--room", m.room, "--archived", archived]
            child = subprocess.Popen(command, cwd=ROOT)  # noqa: ASYNC220 (waited in a thread)
            await asyncio.to_thread(child.wait, args.seconds + 60)
            t1 = time.monotonic()
            cpu = (cpu_seconds(server.pid) - cpu0) / (t1 - t0)
            await asyncio.sleep(args.recovery)
            t2 = time.monotonic()
            acks = _window(m.acks, t0, t1)
            health = _window(m.health, t0, t1)
            row = {
                "acks": len(acks),
                "paced_p50_ms": (_pct(acks, 0.5) or 0) * 1000,
                "paced_p99_ms": (_pct(acks, 0.99) or 0) * 1000,
                "paced_max_ms": max(acks, default=0) * 1000,
                "pauses": m.pauses() - pauses,
                "healthz_p99_ms": (_pct(health, 0.99) or 0) * 1000,
                "healthz_max_ms": max(health, default=0) * 1000,
                "loop_lag_max_ms": max(_window(m.lag, t0, t1), default=0) * 1000,
                "server_cpu": cpu,
                "us_per_request": _per_request(spent, m.requests, FLOODED.get(kind)),
                "refused": {
                    k: v - before.get(k, 0) for k, v in m.refused.items() if v > before.get(k, 0)
                },
                "after_paced_p99_ms": (_pct(_window(m.acks, t1, t2), 0.99) or 0) * 1000,
                "after_healthz_p99_ms": (_pct(_window(m.health, t1, t2), 0.99) or 0) * 1000,
            }
            results["attacks"][kind] = row
            _print_row(kind, row)
        m.stopping = True
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        server.stop()
        redis.stop()
    return results


def _default_env() -> dict[str, str]:
    """Every limit and quota at its default (the other benches lift them in ``OASIS_ENV``)."""
    import dataclasses

    from server.config import Config

    lifted = set(OASIS_ENV)
    env = {
        "OASIS_" + f.name.upper(): str(f.default)
        for f in dataclasses.fields(Config)
        if "OASIS_" + f.name.upper() in lifted
    }
    env["OASIS_ROOM_IDLE_TTL"] = "3600"  # the restored rooms stay for the whole run
    env["OASIS_LOG_LEVEL"] = "warning"
    return env


HEADER = (
    f"{'attack':<14} {'acks':>5} {'p50':>6} {'p99':>6} {'max':>7} {'pauses':>6} "
    f"{'hz p99':>7} {'hz max':>7} {'lag max':>7} {'cpu':>4} {'us/req':>6} {'after p99':>9} "
    f"{'after hz':>8}  refused"
)


def _print_row(kind: str, row: dict[str, Any]) -> None:
    refused = ", ".join(f"{k} {v:.0f}" for k, v in sorted(row["refused"].items())) or "-"
    print(
        f"{kind:<14} {row['acks']:>5} {row['paced_p50_ms']:>6.1f} {row['paced_p99_ms']:>6.1f} "
        f"{row['paced_max_ms']:>7.1f} {row['pauses']:>6} {row['healthz_p99_ms']:>7.1f} "
        f"{row['healthz_max_ms']:>7.1f} {row['loop_lag_max_ms']:>7.1f} "
        f"{row['server_cpu'] * 100:>3.0f}% "
        f"{'-' if row['us_per_request'] is None else format(row['us_per_request'], '.0f'):>6} "
        f"{row['after_paced_p99_ms']:>9.1f} {row['after_healthz_p99_ms']:>8.1f}  {refused}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s per attack, 200 rooms")
    parser.add_argument("--seconds", type=float, default=10.0, help="per attack")
    parser.add_argument("--rooms", type=int, default=2000)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--recovery", type=float, default=3.0)
    parser.add_argument("--only", default="", help="comma-separated attacks")
    parser.add_argument("--out", type=Path, help="JSON file of the figures")
    parser.add_argument("--attacker", choices=ATTACKS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--room", default="", help=argparse.SUPPRESS)
    parser.add_argument("--archived", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.attacker:
        asyncio.run(attack(args.attacker, args.url, args.seconds, args.room, args.archived))
        return 0
    if args.quick:
        args.seconds, args.rooms, args.settle, args.recovery = 2.0, 200, 1.0, 1.0
    print(f"{args.rooms} public rooms, {args.seconds:.0f} s per attack; times in ms")
    print(HEADER)
    results = asyncio.run(run(args))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
