"""Memory after abandoned rooms: RSS before, with and after 2,000 rooms that everyone left.

Issue 14's acceptance: *RSS after creating and abandoning 2,000 rooms returns within 10 % of
where it started once the rooms are reaped.* One real ``oasis-server`` (uvloop, its private
Redis, ``OASIS_ROOM_IDLE_TTL`` and ``OASIS_FINISHED_ROOM_TTL`` short so that the run takes a
minute, ``OASIS_TAKEOVER_GRACE`` left at its 60 s, longer than the idle time, which used to keep
every abandoned room in memory a minute after it closed). Each round opens rooms over real
sockets, a third of each kind:

- two people join, start, play a few choices and drop (abandoned mid-match: archived as such);
- one person and a bot, started, dropped (a stand-in is due in 60 s);
- created and never started, then left (deleted).

(Finished all-bot matches are freed as promptly, which ``tests/server/test_memory.py`` proves;
they are left out here because hundreds of them playing flat out at once measure the CPU of a
shared 2-core machine, not memory.)

Half of the rooms are Yspahan and half Ishtar. Two baselines, both printed, because "where it
started" has two honest readings:

- **cold**: the server just started (it has loaded both engines before listening, see
  ``server.warmup.load_engines``) and never held a room;
- **warmed**: after ``--warmup`` rooms (default one, made, played a little, left and reaped), so
  that what a first room loads once (the Redis pool's first connections, caches of the codec and
  the views, the metrics' label sets) is in the baseline. One room: a warm-up of hundreds would
  hide a real growth behind it.

Then ``--bursts`` rounds (default two) of ``--rooms`` rooms each: the peak RSS while they live,
and the RSS once the lobby (``oasis_rooms`` in ``/metrics``) is empty again, the lowest over
``--settle`` seconds. A real leak grows with every burst; the allocator's high-water mark does
not (the second burst's figure tells them apart). Prints one JSON line per phase, then the
verdict against the acceptance's 10 % from each baseline (the exit status: 0 when the first
burst comes back within 10 % of the warmed baseline, 3 when it does not; 1 is a failed run)::

    .venv/bin/python bench/memory.py                 # 2 x 2,000 rooms (about two minutes)
    .venv/bin/python bench/memory.py --rooms 500     # quicker
    .venv/bin/python bench/memory.py --pymalloc malloc   # the server on glibc's malloc
    .venv/bin/python bench/memory.py --pymalloc malloc --server-env MALLOC_ARENA_MAX=2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from websockets.asyncio.client import ClientConnection, connect

from bench import procs
from bench.procs import Server, rss_bytes
from protocol.codec import Limits, decode, encode

GAMES = ("yspahan", "ishtar")
KINDS = ("abandoned", "standin", "unstarted")
_LIMITS = Limits(max_frame_bytes=1 << 28, max_depth=64, max_container=1 << 20, max_str=1 << 24)


class Conn:
    """One bot connection: requests with ids, everything else read and dropped."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.views: dict[str, int] = {}
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, url: str) -> Conn:
        conn = cls(await connect(url, max_size=None, compression=None))
        await conn.request({"type": "hello", "version": 1, "client": "bench-memory"})
        return conn

    async def _read(self) -> None:
        async for data in self.ws:
            frame = decode(data, _LIMITS)  # type: ignore[arg-type]
            rid = frame.get("id")
            if isinstance(rid, int) and rid in self.waiting:
                self.waiting.pop(rid).set_result(frame)

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.ids] = future
        await self.ws.send(encode({**frame, "id": self.ids}))
        async with asyncio.timeout(30):
            return await future

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


NOT_WITHIN = 3
"""The exit status of a run whose first burst did not come back within 10 % (a verdict, not
a failure: an uncaught error exits with 1)."""


class Refused(Exception):
    """The server answered a request with an error frame (its code is the message)."""


async def _ok(conn: Conn, frame: dict[str, Any]) -> dict[str, Any]:
    answer = await conn.request(frame)
    if answer.get("type") == "error":
        raise Refused(f"{frame['type']}: {answer.get('code')}")
    return answer


async def _open_room(a: Conn, b: Conn, index: int, rng: random.Random) -> None:
    game = GAMES[index % 2]
    kind = KINDS[(index // 2) % len(KINDS)]
    create: dict[str, Any] = {"type": "create", "game": game, "players": 2, "public": False}
    if kind == "standin":
        room = (await _ok(a, {**create, "bots": 1}))["room"]
        await _ok(a, {"type": "join", "room": room})
        await _ok(a, {"type": "start", "room": room})
        return
    room = (await _ok(a, create))["room"]
    joined = [await _ok(a, {"type": "join", "room": room})]
    if kind == "unstarted":
        return
    joined.append(await _ok(b, {"type": "join", "room": room}))
    await _ok(a, {"type": "start", "room": room})
    for _ in range(3):  # a few choices, so that the room holds a real match
        view = (await _ok(a, {"type": "sync", "room": room}))["view"]
        seat = (view["shared"]["turn"] or {}).get("seat")
        mover = a if seat == joined[0]["seat"] else b
        state = await _ok(mover, {"type": "sync", "room": room})
        choices = state["view"]["own"]["choices"]
        if not choices:
            break
        act = {
            "type": "act",
            "room": room,
            "rev": state["rev"],
            "choice": rng.randrange(len(choices)),
        }
        await _ok(mover, act)


async def _round(url: str, rooms: int, parallel: int, seed: int) -> dict[str, int]:
    """Open ``rooms`` rooms over ``parallel`` pairs of connections, then drop every one.

    A request refused (a room paused while a loaded Redis is slow, say) ends that room's part
    there: it is left as it is, like the others; the refusals are counted and returned."""
    rng = random.Random(seed)
    pairs = [(await Conn.open(url), await Conn.open(url)) for _ in range(parallel)]
    refused: dict[str, int] = {}

    async def pair_work(k: int) -> None:
        a, b = pairs[k]
        for index in range(k, rooms, parallel):
            try:
                await _open_room(a, b, index, rng)
            except Refused as exc:
                refused[str(exc)] = refused.get(str(exc), 0) + 1

    await asyncio.gather(*(pair_work(k) for k in range(parallel)))
    for a, b in pairs:
        await a.close()
        await b.close()
    return refused


def _rooms_in_memory(port: int) -> int:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    total = 0.0
    for line in body.splitlines():
        if line.startswith("oasis_rooms{"):
            total += float(line.rsplit(" ", 1)[1])
    return round(total)


def _until_empty(server: Server, within: float) -> float:
    started = time.monotonic()
    while _rooms_in_memory(server.port) > 0:
        if time.monotonic() - started > within:
            raise TimeoutError(f"rooms still in memory after {within} s")
        time.sleep(0.25)
    return time.monotonic() - started


def _settled_rss(pid: int, seconds: float = 3.0) -> int:
    """The RSS once it stops falling (the collector and the allocator give back late)."""
    low = rss_bytes(pid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.25)
        low = min(low, rss_bytes(pid))
    return low


def _log_events(server: Server) -> dict[str, int]:
    """How many lines of each event the server logged at warning and above."""
    counts: dict[str, int] = {}
    path = server.workdir / "server.log" if server.workdir is not None else None
    if path is None or not path.exists():
        return counts
    for line in path.read_text(errors="replace").splitlines():
        try:
            event = str(json.loads(line).get("event"))
        except (ValueError, AttributeError):
            continue
        counts[event] = counts.get(event, 0) + 1
    return counts


def _say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def _percent(after: int, base: int) -> float:
    return round(100 * (after - base) / base, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rooms", type=int, default=2000, help="rooms per burst")
    parser.add_argument("--bursts", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1, help="rooms before the warmed baseline")
    parser.add_argument("--parallel", type=int, default=8, help="pairs of connections")
    parser.add_argument("--idle-ttl", type=float, default=5.0)
    parser.add_argument("--loop", default="uvloop")
    parser.add_argument("--settle", type=float, default=12.0, help="seconds of RSS sampling")
    parser.add_argument(
        "--pymalloc",
        choices=("pymalloc", "malloc"),
        default="pymalloc",
        help="the server's PYTHONMALLOC (malloc: every object from glibc, which trims it all)",
    )
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="more environment for the server (glibc's MALLOC_ARENA_MAX=2, say)",
    )
    args = parser.parse_args()
    env = {
        "OASIS_ROOM_IDLE_TTL": str(args.idle_ttl),
        "OASIS_FINISHED_ROOM_TTL": "1",
        "OASIS_TAKEOVER_GRACE": "60",
        "PYTHONMALLOC": args.pymalloc,
    }
    for item in args.server_env:
        name, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--server-env {item!r}: NAME=VALUE")
        env[name] = value
    # The server's own Redis pool (512), not the load runs' 4,096: 2,000 rooms reaped at once
    # would otherwise open 2,000 connections to Redis together and time out.
    procs.REDIS_POOL = 0
    server = Server("oasis", args.loop, "redis", env=env)
    server.start()
    try:
        url = server.url
        cold = _settled_rss(server.pid, args.settle)
        _say(phase="cold", rooms=0, rss_mib=round(cold / 2**20, 1))
        if args.warmup:
            asyncio.run(_round(url, args.warmup, min(args.parallel, args.warmup), 1))
            _until_empty(server, 10 * args.idle_ttl + 60)
        warm = _settled_rss(server.pid, args.settle)
        _say(phase="warmed", rooms=0, after_rooms=args.warmup, rss_mib=round(warm / 2**20, 1))
        reaped: list[int] = []
        for burst in range(1, args.bursts + 1):
            t0 = time.monotonic()
            refused = asyncio.run(_round(url, args.rooms, args.parallel, 1 + burst))
            made = time.monotonic() - t0
            live = _rooms_in_memory(server.port)
            peak = rss_bytes(server.pid)
            _say(
                phase="created_and_left",
                burst=burst,
                rooms=args.rooms,
                seconds=round(made, 1),
                still_in_memory=live,
                rss_mib=round(peak / 2**20, 1),
                refused=refused,
            )
            waited = _until_empty(server, 10 * args.idle_ttl + 120)
            after = _settled_rss(server.pid, args.settle)
            came_back = 0
            for _ in range(5):  # rooms back in memory (restored by the node): wait them out
                now = _rooms_in_memory(server.port)
                if now == 0:
                    break
                came_back = max(came_back, now)
                waited += _until_empty(server, 10 * args.idle_ttl + 120)
                after = _settled_rss(server.pid, args.settle)
            reaped.append(after)
            _say(
                phase="reaped",
                burst=burst,
                rooms=0,
                waited_seconds=round(waited, 1),
                came_back=came_back,
                rss_mib=round(after / 2**20, 1),
                from_cold_percent=_percent(after, cold),
                from_warmed_percent=_percent(after, warm),
                peak_over_warmed_mib=round((peak - warm) / 2**20, 1),
            )
        _say(phase="server_log", events=_log_events(server))
        for burst, after in enumerate(reaped, 1):
            print(
                f"burst {burst} of {args.rooms} rooms, once reaped: {after / 2**20:.1f} MiB, "
                f"{_percent(after, cold):+.1f} % from cold ({cold / 2**20:.1f} MiB), "
                f"{_percent(after, warm):+.1f} % from warmed ({warm / 2**20:.1f} MiB, "
                f"{args.warmup} room)"
            )
        if len(reaped) > 1:
            print(
                f"each burst after the first: {(reaped[-1] - reaped[0]) / 2**20:+.1f} MiB "
                f"over {len(reaped) - 1} (a leak grows with every burst)"
            )
        ok = bool(reaped) and reaped[0] <= warm * 1.10
        print(
            "acceptance (first burst, warmed baseline): "
            + ("within 10 %" if ok else "NOT within 10 %")
        )
        return 0 if ok else NOT_WITHIN
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
