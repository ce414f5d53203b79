"""Oasis against the raw websockets limit, side by side: the benchmark runner.

    .venv/bin/python bench/run.py --quick          # the comparison table (< 5 min), JSON too
    .venv/bin/python bench/run.py compare          # the same, longer windows, 3 repetitions
    .venv/bin/python bench/run.py idle             # idle sockets: how many, memory each
    .venv/bin/python bench/run.py rules            # per revision: rules, views, hashes, diffs
    .venv/bin/python bench/run.py persistence      # Redis on vs off (MemoryStore)
    .venv/bin/python bench/run.py recovery         # restart time with 1,000 live rooms in Redis
    .venv/bin/python bench/run.py profile          # py-spy on Oasis under saturation
    .venv/bin/python bench/run.py attacks          # issue 14's floods at the default limits
    .venv/bin/python bench/run.py peers --quick    # beside boardgame.io and Colyseus (bench/peers)
    .venv/bin/python bench/run.py tail --quick     # issue 21's paced tail (about 1.5 min)
    .venv/bin/python bench/run.py all --quick      # every one of them but peers

The comparison starts every server under test itself on 127.0.0.1 (the baseline of
``bench/baseline.py``; Oasis through ``bench/serve.py`` with a private redis-server, once per
game), on the asyncio and the uvloop event loop, and drives it with two bot processes
(``bench/loadgen.py``) holding 200 rooms of 4 seats + 2 spectators. Per server session, the
phases are: paced, 200 rooms (one choice per room every 250 ms; ``--paced-rooms`` sets other
counts), saturation with 50 rooms, saturation with 200 rooms. Sessions alternate (baseline,
each game, then the other loop, the order rotated at each repetition), so a noisy neighbour hits
every server alike; each figure is the median of the repetitions and each ratio is taken within
one repetition.

Figures: actions/s; latency from a choice to the last viewer's patch (p50/p95/p99); patch frame
bytes (median) and its ratio to the full view of the same audience; server CPU (from
``/proc/PID/stat``, % of one core and CPU time per action), Redis's and the bots' CPU; server
RSS (``/proc/PID/statm``) per room and per socket, above the idle server's. Results go to
``bench/results/<what>-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import procs
from bench.procs import OASIS_ENV, ROOT, Server, Worker, cpu_seconds, rss_bytes

RESULTS = ROOT / "bench" / "results"
SEATS_AND_SPECTATORS = 6
WORKERS = 2
TARGET_RATIO = 0.5
TARGET_P99_MS = 10.0
TARGET_IDLE_SOCKETS = 10_000
TARGET_IDLE_KIB = 20.0
TARGET_PATCH_BYTES = 150
TARGET_PATCH_SHARE = 0.05


@dataclass(frozen=True)
class Phase:
    name: str
    mode: str
    rooms: int
    warmup: float
    seconds: float
    interval: float = 0.25
    carry: bool = False
    """Paced: a slot that falls while a room sets its next match up waits for the match (the
    harness before issue 21's item 4) instead of being dropped."""
    stagger: int = 0
    """Paced: each room first plays a random number of choices below this at once, unmeasured,
    so that matches dealt together do not all end (and restart) together (0: none)."""
    finishers: int = 0
    """Paced: this many rooms (of all the workers) play on at once, unmeasured, to a revision
    drawn from ``finish`` before their schedule starts, so that their matches end and restart
    inside the window."""
    finish: tuple[int, int] = (0, 0)

    def wire(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "rooms": self.rooms // WORKERS,
            "warmup": self.warmup,
            "seconds": self.seconds,
            "interval": self.interval,
            "carry": self.carry,
            "stagger": self.stagger,
        }

    def prelude(self) -> dict[str, Any]:
        """The unmeasured step before a ``paced-finish`` phase (``bench/loadgen.py``)."""
        return {
            "mode": "prelude",
            "rooms": self.rooms // WORKERS,
            "finishers": self.finishers // WORKERS,
            "finish": list(self.finish),
            "warmup": 0,
            "seconds": 0,
        }


def phases(
    warmup: float, seconds: float, rooms: int, paced: tuple[int, ...] = (200,)
) -> list[Phase]:
    """Paced first (lightest load first), so that no saturation backlog is still draining when
    a paced phase is timed; saturation at 50 and 200 rooms (the targets'), and at ``rooms``."""
    saturated = sorted({n for n in (50, 200) if n <= rooms} | {rooms})
    return [
        *(Phase(f"paced-{n}", "paced", n, warmup, seconds) for n in sorted(paced)),
        *(Phase(f"saturation-{n}", "saturation", n, warmup, seconds) for n in saturated),
    ]


def phase_rank(name: str) -> tuple[int, int]:
    mode, _, rooms = name.rpartition("-")
    order = {"saturation": 0, "paced": 1, "paced-finish": 2}.get(mode, 3)
    return (order, int(rooms) if rooms.isdigit() else 0)


FINISH_ROOMS = 40
"""How many rooms' matches finish in a ``paced-finish`` window (a fifth of 200 rooms: 40 matches
ending and 40 set up in 6 s, about three times the rate of 200 paced Yspahan rooms)."""


def match_lengths(game: str, matches: int = 8) -> tuple[int, int]:
    """The fewest and the most choices of ``matches`` random 4-seat matches of ``game`` (in
    process, seeded, the bots' uniform choice): where a finisher's head start stops short of."""
    from games import registry
    from games.base import Match
    from games.rng import Rng

    engine = registry.get(game)
    lengths = []
    for seed in range(matches):
        match = Match.new(engine, 4, {}, seed)
        chooser = Rng.from_seed(seed ^ 0x5EED)
        n = 0
        while (decision := match.decision) is not None:
            match.act(decision.seat, chooser.below(len(decision.choices)))
            n += 1
        lengths.append(n)
    return min(lengths), max(lengths)


def finish_phase(game: str, warmup: float, seconds: float, rooms: int) -> Phase:
    """Paced, with a quarter of the rooms a few choices short of their match's end when the window
    opens (``paced-finish-N``): their matches finish, and the next ones are set up and start,
    inside the window, as they do all the time on a busy server (the real games' matches last
    minutes at one choice per 250 ms, so ``paced-N`` never sees one end). Before it, a prelude
    (unmeasured) plays those rooms on at once to a revision a window's worth of choices short of
    a match's length (drawn between the shortest and the longest of ``match_lengths``; a room
    whose match is longer than that finishes after the window), the others idle."""
    interval = 0.25
    shortest, longest = match_lengths(game)
    first = int(warmup / interval) + 1  # the first slot in the window
    last = int((warmup + seconds) / interval)
    finishers = min(rooms, FINISH_ROOMS) // WORKERS * WORKERS
    return Phase(
        f"paced-finish-{rooms}",
        "paced",
        rooms,
        warmup,
        seconds,
        interval,
        finishers=finishers,
        finish=(max(0, shortest - last), max(1, longest - first)),
    )


def games() -> list[str]:
    """The registered games among ours (Ishtar joins when it imports)."""
    try:
        from games import registry

        names = set(registry.names())
    except Exception:  # a game being rewritten must not stop the benchmark of the others
        names = {"yspahan"}
    return [g for g in ("yspahan", "ishtar") if g in names]


# Measuring ---------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def counter_median(counts: Counter[int]) -> float | None:
    total = sum(counts.values())
    if not total:
        return None
    seen = 0
    for size in sorted(counts):
        seen += counts[size]
        if seen * 2 >= total:
            return float(size)
    return None


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def ms(value: float | None) -> float | None:
    return None if value is None else value * 1e3


HARNESS_FIELDS = (
    "p99_in_match_ms",
    "carried_samples",
    "p99_carried_ms",
    "wait_p99_ms",
    "setups",
    "setup_p50_ms",
    "setup_p99_ms",
    "dropped_slots",
    "gc_max_ms",
    "loop_lag_p99_ms",
    "loop_lag_max_ms",
    "head_starts_unfinished",
)


def harness(outs: list[dict[str, Any]]) -> dict[str, Any]:
    """What the load generators say of themselves over a window (bench/README.md, "The paced
    tail"): the p99 without the choices whose slot fell in a match's set-up and with them
    only, how long a slot waited in the generator before its choice was sent, the set-ups'
    durations, the slots dropped in set-ups, the generators' event-loop delay and GC pauses."""
    own: list[float] = []
    carried: list[float] = []
    waits: list[float] = []
    for o in outs:
        tags = o.get("carried", [])
        for i, x in enumerate(o["latencies"]):
            (carried if i < len(tags) and tags[i] else own).append(x)
        waits.extend(o.get("waits", []))
    setups = [x for o in outs for x in o.get("setups", [])]
    pauses = [x for o in outs for x in o.get("gc_pauses", [])]
    lags = [o["loop_lag"] for o in outs if "loop_lag" in o]
    return {
        "p99_in_match_ms": ms(percentile(own, 0.99)),
        "carried_samples": len(carried),
        "p99_carried_ms": ms(percentile(carried, 0.99)),
        "wait_p50_ms": ms(percentile(waits, 0.50)),
        "wait_p99_ms": ms(percentile(waits, 0.99)),
        "setups": len(setups),
        "setup_p50_ms": ms(percentile(setups, 0.50)),
        "setup_p99_ms": ms(percentile(setups, 0.99)),
        "dropped_slots": sum(o.get("dropped", 0) for o in outs),
        "gc_pauses": len(pauses),
        "gc_max_ms": ms(max(pauses) if pauses else None),
        "gc_total_ms": ms(sum(pauses)),
        "loop_lag_p99_ms": ms(max(x["p99"] for x in lags) if lags else None),
        "loop_lag_max_ms": ms(max(x["max"] for x in lags) if lags else None),
        "head_starts_unfinished": sum(o.get("head_starts_unfinished", 0) for o in outs),
    }


def merge(outs: list[dict[str, Any]]) -> dict[str, Any]:
    """One phase's results from every worker, as one set of figures."""
    latencies = [x for o in outs for x in o["latencies"]]
    sizes: Counter[int] = Counter()
    for o in outs:
        sizes.update({int(k): v for k, v in o["patch_sizes"].items()})
    errors: Counter[str] = Counter()
    messages: dict[str, str] = {}
    for o in outs:
        errors.update(o["errors"])
        for code, text in o.get("error_messages", {}).items():
            messages.setdefault(code, text)
    ratios = [x for o in outs for x in o["ratios"]]
    views = [float(x) for o in outs for x in o["view_sizes"]]
    frames = sum(sizes.values())
    return {
        **harness(outs),
        "actions": sum(o["actions"] for o in outs),
        "actions_per_s": sum(o["actions"] / o["seconds"] for o in outs if o["seconds"] > 0),
        "p50_ms": ms(percentile(latencies, 0.50)),
        "p95_ms": ms(percentile(latencies, 0.95)),
        "p99_ms": ms(percentile(latencies, 0.99)),
        "max_ms": ms(max(latencies) if latencies else None),
        "samples": len(latencies),
        "patch_median_bytes": counter_median(sizes),
        "patch_mean_bytes": (sum(k * v for k, v in sizes.items()) / frames) if frames else None,
        "view_median_bytes": median(views),
        "patch_view_ratio_median": median(ratios),
        "errors": dict(errors),
        "error_messages": messages,
        "late": sum(o["late"] for o in outs),
        "matches_restarted": sum(o["matches"] for o in outs),
    }


def session(
    server: Server, game: str, plan: list[Phase], rooms: int, seed: int
) -> list[dict[str, Any]]:
    """One server process: set ``rooms`` rooms up, then run each phase; one row per phase."""
    server.start()
    workers: list[Worker] = []
    rows: list[dict[str, Any]] = []
    try:
        time.sleep(0.3)
        rss_empty = rss_bytes(server.pid)
        per = rooms // WORKERS
        for i in range(WORKERS):
            args = ["--url", server.url, "--kind", server.kind, "--game", game]
            args += ["--rooms", str(per), "--first", str(i * per), "--seed", str(seed)]
            workers.append(Worker(args))
        readies = [w.expect("ready", 180) for w in workers]
        rss_ready = rss_bytes(server.pid)
        joined = [float(v) for r in readies for v in r.get("joined_views", [])]
        setup_errors = [e for r in readies for e in r.get("setup_errors", [])]
        if setup_errors:
            print(f"  {len(setup_errors)} room set-up(s) refused and retried: {setup_errors[0]}")
        for phase in plan:
            prelude = None
            if phase.finishers:
                for w in workers:
                    w.send("go " + json.dumps(phase.prelude()))
                prelude = [w.expect("result", 180) for w in workers]
            for w in workers:
                w.send("go " + json.dumps(phase.wire()))
            time.sleep(phase.warmup)
            pids = {"server": server.pid, "redis": server.redis_pid}
            cpu0 = {k: cpu_seconds(p) for k, p in pids.items() if p}
            bots0 = sum(cpu_seconds(w.pid) for w in workers)
            t0 = time.perf_counter()
            m0 = time.monotonic()
            time.sleep(phase.seconds)
            m1 = time.monotonic()
            cpu1 = {k: cpu_seconds(p) for k, p in pids.items() if p}
            bots1 = sum(cpu_seconds(w.pid) for w in workers)
            window = time.perf_counter() - t0
            outs = [w.expect("result", phase.warmup + phase.seconds + 60) for w in workers]
            rss_end = rss_bytes(server.pid)
            row = merge(outs)
            probe_file = server.env.get("OASIS_BENCH_PROBE")
            if probe_file:
                from bench.probe import DUMP_SECONDS
                from bench.probe import window as probe_window

                time.sleep(2 * DUMP_SECONDS)
                row["probe"] = probe_window(Path(probe_file), m0, m1)
            server_cpu = cpu1["server"] - cpu0["server"]
            grown = max(0, rss_end - rss_empty)
            row.update(
                {
                    "server": server.label,
                    "kind": server.kind,
                    "game": game if server.kind == "oasis" else "-",
                    "loop": server.loop,
                    "phase": phase.name,
                    "mode": phase.mode,
                    "rooms": phase.rooms,
                    "rooms_set_up": rooms,
                    "window_s": window,
                    "server_cpu_pct": 100 * server_cpu / window,
                    "server_cpu_us_per_action": (
                        1e6 * server_cpu / (row["actions_per_s"] * window)
                        if row["actions_per_s"]
                        else None
                    ),
                    "redis_cpu_pct": (
                        100 * (cpu1["redis"] - cpu0["redis"]) / window if "redis" in cpu1 else None
                    ),
                    "bots_cpu_pct": 100 * (bots1 - bots0) / window,
                    "rss_empty_mib": rss_empty / 2**20,
                    "rss_ready_mib": rss_ready / 2**20,
                    "rss_end_mib": rss_end / 2**20,
                    "rss_per_room_kib": grown / rooms / 1024,
                    "rss_per_socket_kib": grown / (rooms * SEATS_AND_SPECTATORS) / 1024,
                    "joined_view_median_bytes": median(joined),
                    "setup_errors": setup_errors,
                    "prelude": prelude,
                }
            )
            rows.append(row)
    finally:
        for w in workers:
            w.stop()
        server.stop()
    return rows


# The comparison ----------------------------------------------------------------------------


def targets(game_list: list[str]) -> list[tuple[str, str]]:
    return [("baseline", "-"), *(("oasis", g) for g in game_list)]


def compare(args: argparse.Namespace) -> dict[str, Any]:
    plan = [
        p
        for p in phases(args.warmup, args.seconds, args.rooms, args.paced_rooms)
        if p.mode in args.modes
    ]
    game_list = games() if not args.games else args.games.split(",")
    loops = args.loops.split(",")
    paced_rooms = max(args.paced_rooms)
    finishing = {g: finish_phase(g, args.warmup, args.seconds, paced_rooms) for g in game_list}
    runs: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    started = time.monotonic()
    for rep in range(args.reps):
        order = targets(game_list)
        order = order[rep % len(order) :] + order[: rep % len(order)]
        loop_order = loops if rep % 2 == 0 else loops[::-1]
        for loop in loop_order:
            for kind, game in order:
                label = kind if kind == "baseline" else f"oasis {game}"
                print(f"[{time.monotonic() - started:5.0f} s] rep {rep + 1} {loop} {label}")
                server = Server(kind, loop, "redis", env=probe_env(args, kind))
                steps = [*plan]
                if kind == "oasis" and "paced" in args.modes and args.finish:
                    # after the paced phases, before saturation
                    steps.insert(sum(1 for p in plan if p.mode == "paced"), finishing[game])
                try:
                    rows = session(server, game, steps, args.rooms, seed=1000 * rep + 1)
                except (RuntimeError, TimeoutError) as exc:  # one bad session is not the run
                    print(f"  session failed: {str(exc)[:1500]}")
                    failures.append({"rep": rep, "loop": loop, "target": label, "error": str(exc)})
                    continue
                for row in rows:
                    row["rep"] = rep
                    runs.append(row)
    summary = summarise(runs)
    print_compare(summary)
    if failures:
        print(f"{len(failures)} session(s) failed; see 'failures' in the JSON")
    return {"runs": runs, "summary": summary, "failures": failures}


def probe_env(args: argparse.Namespace, kind: str) -> dict[str, str]:
    """``--probe``: Oasis's environment that loads ``bench/probe.py`` (its file in a temp dir)."""
    if not getattr(args, "probe", False) or kind != "oasis":
        return {}
    import tempfile

    return {"OASIS_BENCH_PROBE": str(Path(tempfile.mkdtemp(prefix="oasis-probe-")) / "p.json")}


def key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (row["phase"], row["loop"], row["kind"], row["game"])


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median over repetitions; the ratio to the baseline of the same repetition first."""
    baseline = {
        (r["phase"], r["loop"], r["rep"]): r["actions_per_s"]
        for r in runs
        if r["kind"] == "baseline"
    }
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for r in runs:
        base = baseline.get((r["phase"], r["loop"], r["rep"]))
        throughput = r["mode"] == "saturation"  # paced rooms ask for a fixed rate
        r["ratio_to_baseline"] = r["actions_per_s"] / base if base and throughput else None
        groups.setdefault(key(r), []).append(r)
    fields = [
        "actions_per_s",
        "ratio_to_baseline",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "patch_median_bytes",
        "view_median_bytes",
        "patch_view_ratio_median",
        "server_cpu_pct",
        "server_cpu_us_per_action",
        "redis_cpu_pct",
        "bots_cpu_pct",
        "rss_per_room_kib",
        "rss_per_socket_kib",
        "matches_restarted",
        "samples",
        "late",
        *HARNESS_FIELDS,
    ]
    out: list[dict[str, Any]] = []
    for k in sorted(groups, key=lambda k: (phase_rank(k[0]), k[1], k[2] != "baseline", k)):
        rows = groups[k]
        item: dict[str, Any] = {
            "phase": k[0],
            "loop": k[1],
            "server": rows[0]["server"],
            "game": k[3],
            "reps": len(rows),
            "errors": sum(sum(r["errors"].values()) for r in rows),
        }
        for f in fields:
            values = [r[f] for r in rows if r.get(f) is not None]
            item[f] = median(values)
        out.append(item)
    return out


def fmt(value: Any, spec: str = ".0f", none: str = "-") -> str:
    if value is None:
        return none
    return format(value, spec)


def print_compare(summary: list[dict[str, Any]]) -> None:
    print()
    header = (
        f"{'phase':<17}{'loop':<8}{'server':<15}{'game':<8}{'act/s':>8}{'x base':>8}"
        f"{'p50ms':>7}{'p95ms':>7}{'p99ms':>7}{'patchB':>7}{'viewB':>7}{'p/view':>7}"
        f"{'CPU%':>6}{'us/act':>7}{'redis%':>7}{'bots%':>6}{'KiB/room':>9}{'KiB/sock':>9}"
        f"{'err':>6}"
    )
    print(header)
    print("-" * len(header))
    for s in summary:
        print(
            f"{s['phase']:<17}{s['loop']:<8}{s['server']:<15}{s['game']:<8}"
            f"{fmt(s['actions_per_s']):>8}{fmt(s['ratio_to_baseline'], '.2f'):>8}"
            f"{fmt(s['p50_ms'], '.1f'):>7}{fmt(s['p95_ms'], '.1f'):>7}{fmt(s['p99_ms'], '.1f'):>7}"
            f"{fmt(s['patch_median_bytes']):>7}{fmt(s['view_median_bytes']):>7}"
            f"{fmt(s['patch_view_ratio_median'], '.1%'):>7}"
            f"{fmt(s['server_cpu_pct']):>6}{fmt(s['server_cpu_us_per_action']):>7}"
            f"{fmt(s['redis_cpu_pct']):>7}{fmt(s['bots_cpu_pct']):>6}"
            f"{fmt(s['rss_per_room_kib'], '.1f'):>9}{fmt(s['rss_per_socket_kib'], '.1f'):>9}"
            f"{s['errors']:>6}"
        )
    print()
    print_harness(summary, lambda s: f"{s['server']} {s['loop']} {s['game']}")
    print_targets(summary)


def print_harness(summary: list[dict[str, Any]], name: Callable[[dict[str, Any]], str]) -> None:
    """The paced phases as the load generators saw them (bench/README.md, "The paced tail"):
    how many latency samples the p99 is over, the p99 of the choices whose slot fell in a
    match's set-up ("carried", the harness before issue 21's item 4 only) and of the others,
    how long a slot waited in the generator for the previous choice, the set-ups, the slots
    dropped in them, the matches started, and the generators' own event-loop delay and GC."""
    rows = [s for s in summary if s["phase"].startswith("paced")]

    def matches(s: dict[str, Any]) -> Any:
        return s.get("matches_started", s.get("matches_restarted"))

    if not rows:
        return
    header = (
        f"{'phase':<17}{'server':<24}{'samples':>8}{'p99ms':>7}{'inmatch':>8}{'carried':>8}"
        f"{'carr99':>7}{'late':>6}{'wait99':>7}{'setups':>7}{'set50':>7}{'set99':>7}"
        f"{'dropped':>8}{'matches':>8}{'lag99':>6}{'lagmax':>7}{'gcmax':>6}"
    )
    print(header)
    print("-" * len(header))
    for s in rows:
        print(
            f"{s['phase']:<17}{name(s):<24}{fmt(s['samples']):>8}{fmt(s['p99_ms'], '.1f'):>7}"
            f"{fmt(s['p99_in_match_ms'], '.1f'):>8}{fmt(s['carried_samples']):>8}"
            f"{fmt(s['p99_carried_ms'], '.0f'):>7}{fmt(s['late']):>6}"
            f"{fmt(s['wait_p99_ms'], '.1f'):>7}{fmt(s['setups']):>7}"
            f"{fmt(s['setup_p50_ms'], '.0f'):>7}{fmt(s['setup_p99_ms'], '.0f'):>7}"
            f"{fmt(s['dropped_slots']):>8}{fmt(matches(s)):>8}{fmt(s['loop_lag_p99_ms'], '.1f'):>6}"
            f"{fmt(s['loop_lag_max_ms'], '.0f'):>7}{fmt(s['gc_max_ms'], '.0f'):>6}"
        )
    print()


def print_targets(summary: list[dict[str, Any]]) -> None:
    """The issue's targets, against the uvloop figures (the production loop)."""
    print("targets (uvloop):")
    for s in summary:
        if s["loop"] != "uvloop" or s["server"] == "baseline":
            continue
        if s["phase"].startswith("saturation") and s["ratio_to_baseline"] is not None:
            ok = s["ratio_to_baseline"] >= TARGET_RATIO
            print(
                f"  {s['game']:<8} {s['phase']:<15} actions/s {s['ratio_to_baseline']:.0%} of "
                f"baseline (target >= {TARGET_RATIO:.0%}): {'met' if ok else 'NOT met'}"
            )
        if s["phase"] == "paced-200" and s["p99_ms"] is not None:
            ok = s["p99_ms"] < TARGET_P99_MS
            print(
                f"  {s['game']:<8} paced-200       p99 {s['p99_ms']:.1f} ms "
                f"(target < {TARGET_P99_MS:.0f} ms): {'met' if ok else 'NOT met'}"
            )
    # Patch size: from the phase with the most patches (saturation at the most rooms) that has
    # both figures.
    shown: set[str] = set()
    for s in sorted(summary, key=lambda s: phase_rank(s["phase"]), reverse=True):
        patch, share = s["patch_median_bytes"], s["patch_view_ratio_median"]
        if s["loop"] != "uvloop" or s["server"] == "baseline" or s["game"] in shown:
            continue
        if patch is None or share is None or not s["phase"].startswith("saturation"):
            continue
        shown.add(s["game"])
        ok = patch <= TARGET_PATCH_BYTES and share <= TARGET_PATCH_SHARE
        print(
            f"  {s['game']:<8} median patch {patch:.0f} B, {share:.1%} of the view "
            f"({s['phase']}; target <= {TARGET_PATCH_BYTES} B and <= {TARGET_PATCH_SHARE:.0%}): "
            f"{'met' if ok else 'NOT met'}"
        )


# Further runs ------------------------------------------------------------------------------


def persistence(args: argparse.Namespace) -> dict[str, Any]:
    """Oasis with Redis vs the MemoryStore, same game and loop, alternating."""
    plan = [p for p in phases(args.warmup, args.seconds, args.rooms) if p.mode == "saturation"]
    game = (args.games or "yspahan").split(",")[0]
    loop = args.loops.split(",")[-1]
    runs: list[dict[str, Any]] = []
    for rep in range(args.reps):
        stores = ["redis", "memory"] if rep % 2 == 0 else ["memory", "redis"]
        for store in stores:
            print(f"rep {rep + 1} {loop} oasis {game} store={store}")
            for row in session(Server("oasis", loop, store), game, plan, args.rooms, 7 + rep):
                row["rep"], row["store"] = rep, store
                runs.append(row)
    print()
    print(f"{'phase':<16}{'store':<8}{'act/s':>8}{'CPU%':>6}{'us/act':>8}{'redis%':>8}{'p50ms':>7}")
    table: list[dict[str, Any]] = []
    for phase in plan:
        per_store: dict[str, float | None] = {}
        for store in ("memory", "redis"):
            rows = [r for r in runs if r["phase"] == phase.name and r["store"] == store]
            item: dict[str, Any] = {
                "phase": phase.name,
                "store": store,
                "actions_per_s": median([r["actions_per_s"] for r in rows]),
                "server_cpu_pct": median([r["server_cpu_pct"] for r in rows]),
                "server_cpu_us_per_action": median(
                    [r["server_cpu_us_per_action"] for r in rows if r["server_cpu_us_per_action"]]
                ),
                "redis_cpu_pct": median([r["redis_cpu_pct"] for r in rows if r["redis_cpu_pct"]]),
                "p50_ms": median([r["p50_ms"] for r in rows if r["p50_ms"] is not None]),
            }
            per_store[store] = item["actions_per_s"]
            table.append(item)
            print(
                f"{phase.name:<16}{store:<8}{fmt(item['actions_per_s']):>8}"
                f"{fmt(item['server_cpu_pct']):>6}{fmt(item['server_cpu_us_per_action']):>8}"
                f"{fmt(item['redis_cpu_pct']):>8}{fmt(item['p50_ms'], '.1f'):>7}"
            )
        on, off = per_store.get("redis"), per_store.get("memory")
        if on and off:
            print(f"  {phase.name}: Redis on runs at {on / off:.0%} of the MemoryStore's actions/s")
    return {"runs": runs, "summary": table}


def idle(args: argparse.Namespace) -> dict[str, Any]:
    """Connected, silent sockets (Oasis: after ``hello``): how many, server memory each."""
    out: list[dict[str, Any]] = []
    for kind in ("baseline", "oasis"):
        server = Server(kind, args.loops.split(",")[-1], "redis")
        server.start()
        workers: list[Worker] = []
        try:
            time.sleep(0.3)
            before = rss_bytes(server.pid)
            per = args.sockets // WORKERS
            t0 = time.perf_counter()
            for i in range(WORKERS):
                workers.append(
                    Worker(
                        [
                            *("--url", server.url, "--kind", kind, "--mode", "idle"),
                            *("--sockets", str(per), "--first", str(i * per)),
                        ]
                    )
                )
            opened = 0
            failures: list[str] = []
            for w in workers:
                try:
                    opened += int(w.expect("ready", 300)["sockets"])
                except (TimeoutError, RuntimeError) as exc:
                    failures.append(str(exc)[:300])
            elapsed = time.perf_counter() - t0
            time.sleep(0.5)
            after = rss_bytes(server.pid)
            item = {
                "server": server.label if kind == "oasis" else "baseline",
                "loop": server.loop,
                "sockets_asked": per * WORKERS,
                "sockets_open": opened,
                "seconds_to_open": elapsed,
                "rss_before_mib": before / 2**20,
                "rss_after_mib": after / 2**20,
                "kib_per_socket": (after - before) / max(1, opened) / 1024,
                "failures": failures,
            }
            out.append(item)
            print(
                f"{item['server']:<12} {opened:>6} idle sockets open (of {per * WORKERS}) in "
                f"{elapsed:.1f} s; server RSS {before / 2**20:.0f} -> {after / 2**20:.0f} MiB: "
                f"{item['kib_per_socket']:.1f} KiB per socket"
            )
        finally:
            for w in workers:
                w.stop()
            server.stop()
    return {"idle": out}


RULES_LEVELS: tuple[str, ...] = ("rules only", "+ game views", "+ encoded, hashed", "rules + views")
"""What ``rules`` measures per revision, each level doing all the one before it does:

- ``rules only``: ``Match.act`` (the server's checked path: the engine's apply, the next
  decision's legal choices listed);
- ``+ game views``: the game's shared part of the view and every seat's own part
  (``server.views.own_view``: labels, prompts, ``undo``), as the room asks for them;
- ``+ encoded, hashed``: what SPEC section 4 asks of any server for those views, the plain way:
  the shared part encoded canonically once, each seat's own part once, and every audience's
  document (the four seats' and the spectators') hashed under rule 1, whole, spliced from
  those bytes (``protocol.hashing.DocumentHasher``, as the room does); the hashes alone are
  timed apart on the documents of this level, under both rules (``hash_us``: rule 1, five
  BLAKE2b passes over each revision's shared part, what a server owes clients that ask for
  no rule; ``hash2_us``: rule 2, one pass and a short chained hash per seat);
- ``rules + views``: Oasis's ``Views.advance`` instead, every seat's frame under rule 2, what
  Oasis's clients ask for (the same views, plus the diffs against the last views, the patches
  and one frame per audience; it encodes only the fields that changed, so it may encode less
  than the level before).

What comes before ``rules + views`` is owed to the rules and the protocol's hash, whoever
serves them; the rest is the diffs and frames."""


def rules(args: argparse.Namespace) -> dict[str, Any]:
    """In-process, no sockets: random 4-seat matches through ``Match.act`` (the server's checked
    path), then the same with more of a revision's work each time (:data:`RULES_LEVELS`): the
    ceiling of one core before any I/O, and how much of it the rules and the protocol's view
    hash leave to the server. ``--games tiny`` adds the tests' tiny card game (the peer
    comparison's)."""
    from games import registry
    from games.base import Match, shared_part
    from games.rng import Rng
    from protocol.codec import canonical
    from server.views import Views, own_view

    if "tiny" in args.games.split(",") and "tiny" not in registry.names():
        from tests.games.tiny import TINY

        registry.register(TINY)
    nothing = canonical(None)
    out: list[dict[str, Any]] = []
    documents: list[tuple[bytes, list[bytes]]] = []
    """Level 2's encoded views (up to 1,000 revisions), to time the hashes alone."""
    for game_name in games() if not args.games else args.games.split(","):
        game = registry.get(game_name)
        for level, what in enumerate(RULES_LEVELS):
            decisions, matches, seed = 0, 0, 0
            start, cpu_start = time.perf_counter(), time.process_time()
            deadline = start + args.rules_seconds
            while time.perf_counter() < deadline and matches < 10_000:
                seed += 1
                match = Match.new(game, 4, {}, seed)
                views = Views("bench", match, 4) if level == 3 else None
                chooser = Rng.from_seed(seed ^ 0x5EED)
                rev = 0
                while (decision := match.decision) is not None:
                    events = match.act(decision.seat, chooser.below(len(decision.choices)))
                    rev += 1
                    if views is not None:
                        views.advance(rev, events, None, RULE_2)
                    elif level:
                        now = match.decision
                        shared = shared_part(game, match.state, now)
                        owns = [own_view(match, seat, now) for seat in range(4)]
                        if level == 2:
                            shared_enc = canonical(shared)
                            own_encs = [canonical(own) for own in owns]
                            _hash_audiences(shared_enc, own_encs, nothing)
                            if len(documents) < 1_000:
                                documents.append((shared_enc, own_encs))
                    decisions += 1
                    if decisions % 64 == 0 and time.perf_counter() > deadline:
                        break
                matches += 1
            # CPU time of this process, not wall time: the machine is shared.
            cpu = max(1e-9, time.process_time() - cpu_start)
            item = {
                "game": game_name,
                "what": what,
                "decisions_per_s": decisions / cpu,
                "us_per_decision": 1e6 * cpu / max(1, decisions),
                "matches": matches,
                "cpu_seconds": cpu,
                "wall_seconds": time.perf_counter() - start,
            }
            hashes = ""
            if documents:
                item["hash_us"] = _hashes_alone(documents, nothing, 1)
                item["hash2_us"] = _hashes_alone(documents, nothing, 2)
                item["shared_bytes"] = statistics.mean(len(s) for s, _ in documents)
                hashes = (
                    f"; of which the hashes {item['hash_us']:.0f} us under rule 1, "
                    f"{item['hash2_us']:.0f} us under rule 2, over a shared part of "
                    f"{item['shared_bytes']:,.0f} B"
                )
                documents.clear()
            out.append(item)
            print(
                f"{game_name:<8} {item['what']:<17} {item['decisions_per_s']:>8,.0f} decisions/s "
                f"per CPU second ({item['us_per_decision']:.0f} us each, {matches} matches{hashes})"
            )
    return {"rules": out}


RULE_2: Final = (2, 2, 2, 2)
"""Every seat's frame under the view hash's rule 2 (SPEC section 4), as Oasis's clients ask."""


def _hashes_alone(documents: list[tuple[bytes, list[bytes]]], nothing: bytes, rule: int) -> float:
    """CPU microseconds per revision of every audience's view hash under ``rule``, from its
    encoded parts (best of five passes over ``documents``)."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for shared_enc, own_encs in documents:
            _hash_audiences(shared_enc, own_encs, nothing, rule)
        best = min(best, time.process_time() - started)
    return 1e6 * best / len(documents)


def _hash_audiences(
    shared_enc: bytes, own_encs: list[bytes], nothing: bytes, rule: int = 1
) -> list[str]:
    """Every audience's view hash of one revision under ``rule`` (the seats', then the
    spectators'), spliced from the encoded parts as the room does: rule 1 with
    ``protocol.hashing.DocumentHasher``, rule 2 chained on the spectators' hash."""
    from protocol.hashing import DocumentHasher, chained_hash, document_hash

    if rule == 2:
        spectators = document_hash({"shared": shared_enc, "own": nothing})
        return [*(chained_hash(spectators, own_enc) for own_enc in own_encs), spectators]
    hasher = DocumentHasher({"shared": shared_enc}, "own")
    return [hasher.hash(own_enc) for own_enc in [*own_encs, nothing]]


def recovery(args: argparse.Namespace) -> dict[str, Any]:
    """Restart time of a server with ``--recovery-rooms`` live rooms in Redis."""
    from bench.recovery import measure

    result = asyncio.run(measure(args.recovery_rooms, args.games or "yspahan,ishtar"))
    return {"recovery": result}


def peers(args: argparse.Namespace) -> dict[str, Any]:
    """The tiny card game on Oasis, boardgame.io and Colyseus (``bench/peers/run.py``)."""
    from bench.peers.run import compare_peers

    return compare_peers(
        args.reps, args.warmup, args.seconds, args.rooms, modes=args.modes, paced=args.paced_rooms
    )


def tail(args: argparse.Namespace) -> dict[str, Any]:
    """Issue 21's paced tail (BENCHMARKS.md, "The paced tail"): the tiny game on Oasis in memory
    and with the Redis log, paced at 200 rooms with the harness as it was (``--old-pacing``:
    every match dealt at once, set-up slots charged to the next choice) and as it is; then
    Yspahan and Ishtar with the Redis log on uvloop, ``paced-200`` and ``paced-finish-200``
    (matches ending and starting inside the window), beside the baseline."""
    import copy

    from bench.peers.run import compare_peers

    out: dict[str, Any] = {}
    for old in (True, False):
        print(f"\n-- the tiny game, {'the old pacing' if old else 'the pacing now'} --")
        # The old pacing at the default lengths (2 s + 6 s): its matches, all dealt at the
        # phase's start, end 3 to 4 s in, so a shorter phase would see no match end at all.
        out["tiny_old_pacing" if old else "tiny"] = compare_peers(
            args.reps,
            max(args.warmup, 2.0) if old else args.warmup,
            max(args.seconds, 6.0) if old else args.seconds,
            args.rooms,
            targets=("oasis/memory", "oasis/redis"),
            modes=("paced",),
            paced=args.paced_rooms,
            old_pacing=old,
        )
    print("\n-- the real games, Redis log, uvloop --")
    games_args = copy.copy(args)
    games_args.modes = ("paced",)
    games_args.loops = "uvloop"
    out["games"] = compare(games_args)
    return out


def profile(args: argparse.Namespace) -> dict[str, Any]:
    from bench.profile import run_profile

    game = (args.games or "yspahan").split(",")[0]
    return {"profile": run_profile(game, args.loops.split(",")[-1], args.rooms, args.seconds)}


# Main --------------------------------------------------------------------------------------


def attacks(args: argparse.Namespace) -> dict[str, Any]:
    """The floods of issue 14 against 2,000 public rooms and a paced match (bench/attacks.py):
    10 s per attack, or with ``--quick`` 2 s against 200 rooms."""
    from bench.attacks import HEADER
    from bench.attacks import run as run_attacks

    quick = args.quick
    settings = argparse.Namespace(
        seconds=2.0 if quick else 10.0,
        rooms=200 if quick else 2000,
        settle=1.0 if quick else 3.0,
        recovery=1.0 if quick else 3.0,
        only="",
    )
    print(HEADER)
    return {"attacks": asyncio.run(run_attacks(settings))}


def machine() -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib.metadata import PackageNotFoundError, version

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "missing"

    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "websockets": of("websockets"),
        "uvloop": of("uvloop"),
        "msgpack": of("msgpack"),
        "redis_py": of("redis"),
    }


WHAT = (
    "compare",
    "idle",
    "rules",
    "persistence",
    "recovery",
    "profile",
    "attacks",
    "peers",
    "tail",
    "all",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", nargs="?", default="compare", choices=WHAT)
    parser.add_argument("--quick", action="store_true", help="short windows, 2 repetitions")
    parser.add_argument("--reps", type=int, help="repetitions (quick 2, else 3)")
    parser.add_argument("--warmup", type=float, help="seconds before each window")
    parser.add_argument("--seconds", type=float, help="measured seconds per phase")
    parser.add_argument("--rooms", type=int, default=200, help="rooms set up per server")
    parser.add_argument("--games", default="", help="comma-separated (default: every game)")
    parser.add_argument("--loops", default="asyncio,uvloop")
    parser.add_argument(
        "--paced-rooms",
        default="",
        help="comma-separated room counts of the paced phases (default 200, at most --rooms)",
    )
    parser.add_argument(
        "--modes",
        default="paced,saturation",
        help="which phases of the comparison to run (e.g. paced alone, to study its latency)",
    )
    parser.add_argument(
        "--no-finish",
        dest="finish",
        action="store_false",
        help="compare: leave out the paced-finish phase (matches ending inside the window)",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="Oasis with bench/probe.py (GC pauses, loop stalls, store call times per window)",
    )
    parser.add_argument("--sockets", type=int, default=TARGET_IDLE_SOCKETS, help="idle run")
    parser.add_argument("--rules-seconds", type=float, default=3.0)
    parser.add_argument("--recovery-rooms", type=int, default=1000)
    parser.add_argument(
        "--redis-pool",
        type=int,
        default=procs.REDIS_POOL,
        help="max_connections in Oasis's Redis URL (0: redis-py's default, 100 in redis-py 8)",
    )
    procs.add_server_env(
        parser, "extra environment for Oasis (e.g. OASIS_REDIS_TIMEOUT=1, the server's default)"
    )
    parser.add_argument("--out", type=Path, help="JSON file (default bench/results/...)")
    args = parser.parse_args(argv)
    if args.what == "tail":  # a short command (the lead re-runs it on a quiet machine)
        args.reps = args.reps or (1 if args.quick else 2)
    args.reps = args.reps or (2 if args.quick else 3)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if args.quick else 2.0)
    args.seconds = args.seconds if args.seconds is not None else (2.5 if args.quick else 6.0)
    if args.rooms < 50 or args.rooms % WORKERS:
        parser.error(f"--rooms must be an even number >= 50 (got {args.rooms})")
    args.paced_rooms = tuple(int(n) for n in args.paced_rooms.split(",") if n) or (
        min(200, args.rooms),
    )
    if any(n > args.rooms or n % WORKERS for n in args.paced_rooms):
        parser.error("--paced-rooms: even counts, none above --rooms")

    args.modes = tuple(m for m in args.modes.split(",") if m)
    if not args.modes or set(args.modes) - {"paced", "saturation"}:
        parser.error("--modes: paced, saturation or both")
    procs.REDIS_POOL = args.redis_pool
    OASIS_ENV.update(procs.server_env(parser, args.server_env))
    report: dict[str, Any] = {
        "machine": machine(),
        "settings": vars(args) | {"out": None, "oasis_env": dict(OASIS_ENV)},
    }
    print(f"{report['machine']['date']}  {report['machine']['cpu']}  x{report['machine']['cores']}")
    steps = {
        "compare": compare,
        "idle": idle,
        "rules": rules,
        "persistence": persistence,
        "recovery": recovery,
        "profile": profile,
        "attacks": attacks,
        "peers": peers,
        "tail": tail,
    }
    # ``all`` leaves the peer comparison (and the tail, a part of it) out: it needs Node.js and
    # takes as long again.
    chosen = [s for s in steps if s not in ("peers", "tail")] if args.what == "all" else [args.what]
    started = time.monotonic()
    for name in chosen:
        print(f"\n== {name} ==")
        report[name] = steps[name](args)
    report["elapsed_s"] = time.monotonic() - started
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or RESULTS / f"{args.what}-{stamp}.json"
    out.write_text(json.dumps(report, indent=1, default=str))
    print(f"\n{report['elapsed_s']:.0f} s; JSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
