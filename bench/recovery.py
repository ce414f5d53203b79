"""Recovery time: how long a restarted ``oasis-server`` takes to bring 1,000 live rooms back.

The rooms are written straight through :class:`server.store.redis.RedisStore` (the path a room
uses: ``create_room``, one ``append`` per choice, a ``snapshot`` every 50 revisions as the
server's default ``snapshot_every``), each at a random revision of a seeded random 4-seat match,
so recovery replays between 0 and 49 choices per room after its snapshot (a match that would
end before its drawn revision stops one choice short: every room is live). Then:

- the cost of the log append per choice (sequential appends, median and p99 wait);
- in process: :func:`server.recovery.restore_all` (the batched Redis read, then the rebuild);
- the real server (``bench/serve.py``, uvloop, that Redis): the time from the process start to
  its port accepting connections (it listens only once every room is back), against the same
  start on an empty Redis; the server's ``rooms_restored`` log line gives the counts.

    .venv/bin/python bench/run.py recovery [--recovery-rooms 1000] [--games yspahan]
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.procs import Server
from tests.services import RedisServer

SNAPSHOT_EVERY = 50
CONCURRENCY = 32


def room_meta(room: str, game: str, seed: int) -> dict[str, Any]:
    """What ``Room.meta()`` stores for a started room of 4 seats (token digests, no tokens)."""
    return {
        "room": room,
        "game": game,
        "players": 4,
        "options": {},
        "public": True,
        "state": "playing",
        "rev": 0,
        "seats": [
            {"seat": i, "name": f"b{i}", "taken": True, "bot": False, "connected": False}
            for i in range(4)
        ],
        "spectators": 0,
        "spectator_delay": 0.0,
        "spectator_chat": True,
        "tokens": [f"{seed:016x}{i:048x}" for i in range(4)],
        "quick": False,
        "host": "",
        "seed": seed,
    }


async def populate(url: str, rooms: int, games: list[str], seed: int) -> dict[str, Any]:
    from games import registry
    from games.base import Match
    from server.store import Action
    from server.store.redis import RedisStore

    store = RedisStore(url, timeout=5.0)
    await store.start()
    gate = asyncio.Semaphore(CONCURRENCY)
    revs: list[int] = []
    rng = random.Random(seed)
    plans = [(f"rec{i:05d}", games[i % len(games)], rng.randrange(1, 200)) for i in range(rooms)]

    async def one(index: int, room: str, game_name: str, target: int) -> None:
        async with gate:
            game = registry.get(game_name)
            match_seed = seed * 100_003 + index
            match = Match.new(game, 4, {}, match_seed)
            chooser = random.Random(match_seed)
            plan: list[tuple[int, Any]] = []  # the choices, chosen first: every room stays live
            while len(plan) < target and (decision := match.decision) is not None:
                choice = decision.choices[chooser.randrange(len(decision.choices))]
                plan.append((decision.seat, choice))
                match.act(decision.seat, choice)
            if match.over:
                plan.pop()
            match = Match.new(game, 4, {}, match_seed)
            await store.create_room(room, room_meta(room, game_name, match_seed))
            rev = 0
            for seat, choice in plan:
                await store.append(room, Action(rev + 1, seat, choice))
                match.act(seat, choice)
                rev += 1
                if rev % SNAPSHOT_EVERY == 0 and match.decision is not None:
                    await store.snapshot(room, rev, game.dump(match.state))
            revs.append(rev)

    started = time.perf_counter()
    await asyncio.gather(*(one(i, *plan) for i, plan in enumerate(plans)))
    await store.close()
    return {
        "rooms": rooms,
        "games": games,
        "choices_stored": sum(revs),
        "median_rev": statistics.median(revs),
        "tail_to_replay_median": statistics.median(r % SNAPSHOT_EVERY for r in revs),
        "seconds_to_populate": time.perf_counter() - started,
    }


async def append_cost(url: str, choices: int = 2000) -> dict[str, Any]:
    """What the log append adds to a choice: ``choices`` appends of real choices (random Yspahan
    matches, a new room when one ends), one at a time, each awaited as a room awaits it before
    its ack. Latency is the wait; CPU is this process's (the server's share of the cost)."""
    from games import registry
    from games.base import Match
    from server.store import Action
    from server.store.redis import RedisStore

    store = RedisStore(url, timeout=5.0)
    await store.start()
    game = registry.get("yspahan")
    chooser = random.Random(0)
    waits: list[float] = []
    cpu = 0.0
    try:
        match, room, rev = None, "", 0
        while len(waits) < choices:
            if match is None or match.decision is None:
                room, rev = f"append{len(waits)}", 0
                match = Match.new(game, 4, {}, len(waits))
                await store.create_room(room, room_meta(room, "yspahan", len(waits)))
            decision = match.decision
            assert decision is not None
            choice = decision.choices[chooser.randrange(len(decision.choices))]
            match.act(decision.seat, choice)
            rev += 1
            c0, t0 = time.process_time(), time.perf_counter()
            await store.append(room, Action(rev, decision.seat, choice))
            waits.append(time.perf_counter() - t0)
            cpu += time.process_time() - c0
    finally:
        await store.close()
    waits.sort()
    return {
        "appends": len(waits),
        "median_ms": statistics.median(waits) * 1000,
        "p99_ms": waits[int(len(waits) * 0.99)] * 1000,
        "client_cpu_us": cpu / len(waits) * 1e6,
    }


def _on_uvloop(main: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


async def restore_in_process(url: str) -> dict[str, Any]:
    from server.recovery import rebuild
    from server.store.redis import RedisStore

    store = RedisStore(url, timeout=10.0)
    await store.start()
    try:
        t0 = time.perf_counter()
        rooms = await store.unfinished_rooms()
        loaded = await store.load_rooms(rooms)
        t1 = time.perf_counter()
        rebuilt = 0
        for record in loaded.values():
            if record is not None and not isinstance(record, Exception):
                rebuild(record)
                rebuilt += 1
        t2 = time.perf_counter()
    finally:
        await store.close()
    return {
        "rooms_listed": len(rooms),
        "rooms_rebuilt": rebuilt,
        "redis_read_s": t1 - t0,
        "rebuild_s": t2 - t1,
        "total_s": t2 - t0,
    }


def server_start(url: str, tries: int) -> tuple[list[float], dict[str, Any]]:
    """Seconds from process start to listening, per try, and the last ``rooms_restored`` line."""
    times: list[float] = []
    restored: dict[str, Any] = {}
    for _ in range(tries):
        server = Server("oasis", "uvloop", "redis", redis_url=url, env={"OASIS_LOG_LEVEL": "info"})
        t0 = time.perf_counter()
        server.start(timeout=600)
        times.append(time.perf_counter() - t0)
        for line in server.log_tail(200_000).splitlines():
            if "rooms_restored" in line:
                try:
                    restored = json.loads(line)
                except ValueError:
                    restored = {"line": line}
        server.stop()
    return times, restored


async def measure(rooms: int, games: str) -> dict[str, Any]:
    game_list = [g for g in games.split(",") if g]
    with tempfile.TemporaryDirectory(prefix="oasis-recovery-") as tmp:
        redis = RedisServer(Path(tmp) / "redis")
        redis.start()
        try:
            empty, _ = await asyncio.to_thread(server_start, redis.url, 2)
            filled = await populate(redis.url, rooms, game_list, seed=1)
            in_process = await restore_in_process(redis.url)
            full, restored = await asyncio.to_thread(server_start, redis.url, 2)
            # Last (its rooms must not be restored), on the server's default loop (uvloop).
            append = await asyncio.to_thread(_on_uvloop, append_cost(redis.url))
        finally:
            redis.stop()
    result = {
        "append": append,
        "populated": filled,
        "in_process": in_process,
        "start_empty_s": min(empty),
        "start_with_rooms_s": min(full),
        "recovery_s": min(full) - min(empty),
        "server_log": {k: restored.get(k) for k in ("restored", "failed")},
    }
    print(
        f"log append (uvloop), {append['appends']} choices one at a time: median "
        f"{append['median_ms']:.3f} ms (p99 {append['p99_ms']:.3f} ms), client CPU "
        f"{append['client_cpu_us']:.0f} us per append"
    )
    print(
        f"{rooms} rooms ({','.join(game_list)}; {filled['choices_stored']} choices, median tail "
        f"to replay {filled['tail_to_replay_median']:.0f}) written in "
        f"{filled['seconds_to_populate']:.1f} s"
    )
    print(
        f"in process: Redis read {in_process['redis_read_s']:.2f} s + rebuild "
        f"{in_process['rebuild_s']:.2f} s = {in_process['total_s']:.2f} s "
        f"({in_process['rooms_rebuilt']} rooms)"
    )
    print(
        f"server start to listening: {result['start_with_rooms_s']:.2f} s with the rooms, "
        f"{result['start_empty_s']:.2f} s empty: recovery {result['recovery_s']:.2f} s; "
        f"server log: {result['server_log']}"
    )
    return result
