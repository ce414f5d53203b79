"""Server CPU per action through the whole server, per game, and where it goes (cProfile, perf).

Issue 21 measures the framework's cost per action as the server process's CPU time over a
saturated window divided by the actions in it (and, apart, the part of it the kernel spent:
system time, the socket reads and writes above all). This runs exactly that, small enough for a
shared machine: one real server (``bench/serve.py``, uvloop, the in-memory store unless
``--store redis``), one load generator process (``bench/loadgen.py``) with ``--rooms`` rooms of
4 seats + 2 spectators, a saturation window per session, for the tests' tiny game (registered in
the server process only) and both real games. CPU time comes from ``/proc`` (user + system), so
other processes on the machine disturb it far less than wall-clock figures.

    .venv/bin/python bench/cost.py                        # 3 sessions per game, us per action
    .venv/bin/python bench/cost.py --games ishtar --reps 5
    .venv/bin/python bench/cost.py --profile              # one cProfiled session per game
    .venv/bin/python bench/cost.py --profile --keep DIR   # and keep DIR/<game>.prof (pstats)
    .venv/bin/python bench/cost.py --perf --reps 1        # wall time by part, under perf

``--profile`` runs each server under cProfile (``bench/serve.py --cprofile``) and prints, per
game, the functions with the most *self* time and the share of each part of the stack (the
games, ``protocol/``, ``server/``, websockets, asyncio and uvloop, the encoders): cProfile slows
the server down about twofold, so its figures are shares, each also given in us per revision of
the profiled run (its whole life: set-up and warm-up included; a revision is an action).

``--perf`` attaches ``perf record`` (Debian's ``linux-perf``; the stacks unwound from DWARF) to
each server for its window instead: where the wall time goes, the kernel's side of the socket
writes included, by part of the stack and by compiled function (:mod:`bench.perfstacks`). Run
it from a compiled tree (``scripts/build-compiled``): interpreted Python shows only as the
interpreter's loop. ``--keep DIR`` keeps each game's ``perf script`` text.

The JSON goes to ``bench/results/cost-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import json
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import perfstacks
from bench.procs import ROOT, Server, Worker, add_server_env, cpu_seconds, cpu_split, server_env

TINY = "tests.games.tiny:TINY"
GAMES = ("tiny", "yspahan", "ishtar")
TOP = 30
SERVER_ENV: dict[str, str] = {}
"""More environment for the measured server (``--server-env``: ``PYTHONMALLOC=malloc``)."""


def session(
    game: str,
    store: str,
    rooms: int,
    warmup: float,
    seconds: float,
    seed: int,
    cprofile: str = "",
    watch: Callable[[int, float], None] | None = None,
    rematch: bool = False,
) -> dict[str, Any]:
    """One server, one load generator: server CPU per action over one saturated window
    (``watch(pid, seconds)``: what watches the server during the window, returning at its end;
    the window is slept through without one; ``rematch``: the bots start each next match by
    ``rematch``, protocol 1.5, instead of leaving and setting a new room up request by
    request)."""
    server = Server(
        "oasis", "uvloop", store, games=[TINY] if game == "tiny" else [], env=dict(SERVER_ENV)
    )
    server.cprofile = cprofile
    server.start()
    worker: Worker | None = None
    try:
        args = ["--url", server.url, "--kind", "oasis", "--game", game]
        args += ["--rooms", str(rooms), "--seed", str(seed)]
        if rematch:
            args.append("--rematch")
        worker = Worker(args)
        worker.expect("ready", 180)
        phase = {"mode": "saturation", "rooms": rooms, "warmup": warmup, "seconds": seconds}
        worker.send("go " + json.dumps(phase))
        time.sleep(warmup)
        pid = server.pid
        (user0, sys0), bots0, t0 = cpu_split(pid), cpu_seconds(worker.pid), time.perf_counter()
        if watch is None:
            time.sleep(seconds)
        else:
            watch(pid, seconds)
        (user1, sys1), bots1 = cpu_split(pid), cpu_seconds(worker.pid)
        window = time.perf_counter() - t0
        cpu0, cpu1 = user0 + sys0, user1 + sys1
        out = worker.expect("result", warmup + seconds + 60)
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
    rate = out["actions"] / out["seconds"] if out["seconds"] > 0 else 0.0
    actions = rate * window
    return {
        "game": game,
        "store": store,
        "rooms": rooms,
        "window_s": window,
        "actions": actions,
        "actions_per_s": rate,
        "server_cpu_pct": 100 * (cpu1 - cpu0) / window,
        "bots_cpu_pct": 100 * (bots1 - bots0) / window,
        "us_per_action": 1e6 * (cpu1 - cpu0) / actions if actions else None,
        "us_system_per_action": 1e6 * (sys1 - sys0) / actions if actions else None,
        "matches_restarted": out["matches"],
        "by_rematch": out["rematches"],
        "errors": out["errors"],
    }


def run(
    game: str,
    args: argparse.Namespace,
    seed: int,
    *,
    cprofile: str = "",
    watch: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """:func:`session` with the command line's store, rooms, window and ``--rematch``."""
    return session(
        game,
        args.store,
        args.rooms,
        args.warmup,
        args.seconds,
        seed,
        cprofile,
        watch,
        args.rematch,
    )


def part(file: str, name: str) -> str:
    """Which part of the stack a profiled function belongs to."""
    where = file.replace("\\", "/")
    for prefix in ("games/", "protocol/", "server/", "tests/games/"):
        if f"{ROOT}/{prefix}" in where or where.startswith(prefix):
            return "games" if prefix == "tests/games/" else prefix.rstrip("/")
    if "websockets" in where:
        return "websockets"
    if "asyncio" in where or "uvloop" in where or "selectors" in where:
        return "asyncio/uvloop"
    if "prometheus_client" in where:
        return "prometheus_client"
    if "structlog" in where or "/logging/" in where:
        return "logging"
    if file == "~":
        if "msgpack" in name or "ormsgpack" in name:
            return "msgpack/ormsgpack"
        if "blake2b" in name or "hexdigest" in name:
            return "hashing"
        if "uvloop" in name or "socket" in name or "send" in name or "write" in name:
            return "asyncio/uvloop"
        return "builtins"
    return "other"


def short(file: str, line: int, name: str) -> str:
    if file == "~":
        return name
    where = file.replace(str(ROOT) + "/", "")
    for marker in ("site-packages/", "/lib/python3.11/"):
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where}:{line})"


IDLE = ("run_forever", "select", "poll", "epoll")
"""Builtins whose self time is the event loop waiting for I/O (cProfile's clock is wall time)."""


def read_profile(path: str) -> dict[str, Any]:
    """Self time per function and per part of the stack, per revision of the profiled run (a
    revision is one call of :meth:`server.views.Views.advance`: one action; where the server's
    views run compiled, which cProfile does not see, one call of :meth:`games.base.Match.push`,
    the engine's step of every action, which stays Python)."""
    stats = pstats.Stats(path)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]

    def calls_of(method: str, module: str) -> int:
        return sum(
            calls
            for (file, _line, name), (_cc, calls, *_rest) in raw.items()
            if name == method and file.endswith(module)
        )

    revisions = calls_of("advance", "server/views.py") or calls_of("push", "games/base.py")
    rows = []
    parts: Counter[str] = Counter()
    total = idle = 0.0
    for (file, line, name), (_cc, calls, tottime, cumtime, _callers) in raw.items():
        if file == "~" and any(word in name for word in IDLE):
            idle += tottime
            continue
        total += tottime
        parts[part(file, name)] += tottime
        rows.append((tottime, cumtime, calls, short(file, line, name), part(file, name)))
    rows.sort(reverse=True)
    per = 1e6 / revisions if revisions else 0.0
    return {
        "revisions": revisions,
        "idle_s": idle,
        "profiled_cpu_s": total,
        "profiled_us_per_action": total * per,
        "parts": {k: {"share": v / total, "us": v * per} for k, v in parts.most_common()},
        "self": [
            {
                "function": name,
                "part": where,
                "share": tottime / total,
                "self_us": tottime * per,
                "cum_us": cumtime * per,
                "calls_per_action": calls / revisions if revisions else 0.0,
            }
            for tottime, cumtime, calls, name, where in rows[:TOP]
        ],
        "cumulative_project": [
            {"function": name, "cum_us": cumtime * per, "calls_per_action": calls / revisions}
            for _t, cumtime, calls, name, where in sorted(rows, key=lambda r: -r[1])
            if where in ("games", "protocol", "server") and revisions
        ][:TOP],
    }


def profile_run(game: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="oasis-cost-") as tmp:
        path = str(Path(tmp) / "server.prof")
        row = run(game, args, 1, cprofile=path)
        for _ in range(100):  # written when the server process ends
            if Path(path).exists():
                break
            time.sleep(0.1)
        result = read_profile(path)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, args.keep / f"{game}.prof")
    result.update(row)
    print(
        f"\n{game} under cProfile: {row['us_per_action']:.0f} us of server CPU per action in the "
        f"window ({row['actions_per_s']:.0f} actions/s, server at {row['server_cpu_pct']:.0f} %); "
        f"the whole run: {result['revisions']} revisions, "
        f"{result['profiled_us_per_action']:.0f} us profiled per revision"
    )
    print("  by part of the stack (self time, us per revision):")
    for name, figures in result["parts"].items():
        print(f"    {figures['share'] * 100:5.1f} %  {figures['us']:7.1f} us  {name}")
    print(f"  top {TOP} functions by self time (us per revision, calls per revision):")
    for r in result["self"]:
        print(
            f"    {r['share'] * 100:5.1f} %  {r['self_us']:6.1f} us  "
            f"{r['calls_per_action']:6.1f}x  {r['function']}"
        )
    print("  project functions by cumulative time:")
    for r in result["cumulative_project"][:20]:
        print(f"    {r['cum_us']:7.1f} us  {r['calls_per_action']:6.1f}x  {r['function']}")
    return result


PERF_HZ = 999
"""Samples per second of ``perf record`` (each copies 16 KiB of the server's stack to unwind)."""


def perf_run(game: str, args: argparse.Namespace) -> dict[str, Any]:
    """One session with ``perf record`` attached to the server for the window; where its time
    went (:mod:`bench.perfstacks`)."""
    perf = shutil.which("perf")
    if perf is None:
        raise SystemExit("--perf needs perf (Debian's linux-perf)")
    with tempfile.TemporaryDirectory(prefix="oasis-perf-") as tmp:
        data = Path(tmp) / "perf.data"

        def watch(pid: int, seconds: float) -> None:
            command = [perf, "record", "-q", "-F", str(PERF_HZ), "--call-graph", "dwarf,16384"]
            command += ["-p", str(pid), "-o", str(data), "--", "sleep", str(seconds)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0 or not data.exists():  # (the session stops its processes)
                raise SystemExit(f"perf record failed: {done.stderr.strip()[-800:]}")

        row = run(game, args, 1, watch=watch)
        script = subprocess.run(
            [perf, "script", "-i", str(data)], capture_output=True, text=True, errors="replace"
        )
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / f"{game}.perf.txt").write_text(script.stdout)
    profile = perfstacks.parse(script.stdout.splitlines())
    us = row["us_per_action"] or 0.0
    parts = profile.parts()
    inclusive = profile.inclusive()[:TOP]
    leaves = profile.leaves()[:TOP]
    print(
        f"\n{game} under perf: {us:.0f} us of server CPU per action in the window "
        f"({row['actions_per_s']:.0f} actions/s, server at {row['server_cpu_pct']:.0f} %, "
        f"{profile.samples} samples)"
    )
    if not inclusive:
        print(
            "  (no compiled function in the samples: interpreted Python shows only as the "
            "interpreter's loop; run it from a compiled tree, scripts/build-compiled)"
        )
    print("  by part (each sample once; us per action of that window):")
    for name, share in parts.items():
        print(f"    {share * 100:5.1f} %  {share * us:6.1f} us  {name}")
    print(f"  top {TOP} compiled functions by inclusive share:")
    for name, share in inclusive:
        print(f"    {share * 100:5.1f} %  {name}")
    print(f"  top {TOP} functions by self share:")
    for name, share in leaves:
        print(f"    {share * 100:5.1f} %  {name}")
    return row | {
        "samples": profile.samples,
        "parts": parts,
        "inclusive": inclusive,
        "self": leaves,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--store", choices=("memory", "redis"), default="memory")
    parser.add_argument("--rooms", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--rematch",
        action="store_true",
        help="the bots start each next match by rematch (protocol 1.5) instead of requests",
    )
    parser.add_argument("--profile", action="store_true", help="one cProfiled session per game")
    parser.add_argument(
        "--perf",
        action="store_true",
        help="one session per game under perf record: wall-time shares, the kernel's included",
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="--profile: keep each game's pstats file there; --perf: its perf script text",
    )
    add_server_env(
        parser, "more environment for the server (PYTHONMALLOC=malloc, GLIBC_TUNABLES=...)"
    )
    args = parser.parse_args(argv)
    SERVER_ENV.update(server_env(parser, args.server_env))
    games = [g for g in args.games.split(",") if g]
    result: dict[str, Any] = {"args": vars(args) | {"out": str(args.out or "")}, "games": {}}
    if args.profile:
        for game in games:
            result["games"][game] = profile_run(game, args)
    elif args.perf:
        for game in games:
            result["games"][game] = perf_run(game, args)
    else:
        runs: dict[str, list[dict[str, Any]]] = {g: [] for g in games}
        for rep in range(args.reps):
            for game in games if rep % 2 == 0 else games[::-1]:
                row = run(game, args, rep + 1)
                runs[game].append(row)
                print(
                    f"rep {rep + 1} {game}: {row['us_per_action']:.0f} us per action, "
                    f"{row['us_system_per_action']:.0f} of it in the kernel "
                    f"({row['actions_per_s']:.0f} actions/s, server {row['server_cpu_pct']:.0f} %,"
                    f" bots {row['bots_cpu_pct']:.0f} %)",
                    flush=True,
                )
        print(f"\nserver CPU us per action, saturation {args.rooms} rooms, {args.store} store:")
        print(f"{'game':<8} {'min':>6} {'median':>7} {'kernel':>7}  runs")
        for game, rows in runs.items():
            figures = [r["us_per_action"] for r in rows if r["us_per_action"]]
            kernel = [r["us_system_per_action"] for r in rows if r["us_per_action"]]
            if figures:
                print(
                    f"{game:<8} {min(figures):6.0f} {statistics.median(figures):7.0f} "
                    f"{statistics.median(kernel):7.0f}  " + " / ".join(f"{f:.0f}" for f in figures)
                )
            result["games"][game] = rows
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or ROOT / "bench" / "results" / f"cost-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"\n{out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
