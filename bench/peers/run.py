"""Oasis beside boardgame.io and Colyseus on the tests' tiny card game: the peer comparison.

    .venv/bin/python bench/run.py peers --quick     # a few minutes: 2 repetitions, short windows
    .venv/bin/python bench/run.py peers             # 3 repetitions, 6 s windows (about 10 min)
    .venv/bin/python bench/peers/run.py --quick     # the same, on its own

Four servers, each started here on 127.0.0.1 and stopped by this run: Oasis (``bench/serve.py``
with the tiny game registered in that process, uvloop) with the in-memory store and with the
Redis log on (a private redis-server, as ``bench/procs.py`` starts it), each twice: its clients
setting the next match up with requests (``oasis/memory``, ``oasis/redis``) or by ``rematch``
(``oasis/memory/rematch``, ``oasis/redis/rematch``); boardgame.io
(``bench/peers/bgio_server.mjs``) and Colyseus (``bench/peers/colyseus_server.mjs``). Every one
is driven by the same Node.js load generator (``bench/peers/loadgen.mjs``, two processes,
``--rooms`` rooms of 4 seats + 2 spectators between them) speaking that server's own client
protocol. Per server session: paced at 200 rooms (one choice per room every 250 ms), saturation
with 50 and with 200 rooms; then every viewer's view is checked (``check`` in the load
generator). Sessions rotate at each repetition, so a noisy neighbour hits every server alike;
each figure is the median of the repetitions.

Figures: actions/s; latency from a choice to the last of the room's six viewers (p50/p95/p99);
server CPU (``/proc/PID/stat``: % of one core, CPU time per action, actions per second per core
of server CPU), Redis's CPU per action; server RSS per room (``/proc/PID/statm``, after the rooms
are set up, above the empty server's); bytes of the frame that brings a viewer an update
(median and mean) and every byte the viewers received per action (updates, answers, match set-up);
the load generators' CPU, and the share of the window in which some task of the machine waited
for a CPU (``/proc/pressure/cpu``: how much a shared machine got in the way).
Matches of the tiny game are short (12 to 16 choices), so rooms finish and new ones start all
the time: CPU per action includes that work, done the way each framework's clients do it
(bench/peers/README.md). The Node dependencies are installed with ``npm ci`` when missing.
Results go to ``bench/results/peers-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import procs
from bench.baseline import raise_fd_limit
from bench.probe import DUMP_SECONDS
from bench.probe import window as probe_window
from bench.procs import ROOT, Server, Worker, cpu_seconds, cpu_split, rss_bytes, stop_process
from bench.run import (
    HARNESS_FIELDS,
    Phase,
    counter_median,
    fmt,
    harness,
    machine,
    median,
    ms,
    percentile,
    phase_rank,
    phases,
    print_harness,
)
from tests.services import free_port, wait_for_port

PEERS = ROOT / "bench" / "peers"
RESULTS = ROOT / "bench" / "results"
NODE = shutil.which("node") or "node"
LOADGEN = [NODE, str(PEERS / "loadgen.mjs")]
WORKERS = 2
TINY = "tests.games.tiny:TINY"
TARGETS = (
    "oasis/memory",
    "oasis/redis",
    "oasis/memory/rematch",
    "oasis/redis/rematch",
    "boardgame.io",
    "colyseus",
    "colyseus/rematch",
)
VERSIONS = (
    "boardgame.io",
    "socket.io",
    "socket.io-client",
    "rfc6902",
    "@colyseus/core",
    "@colyseus/schema",
    "@colyseus/ws-transport",
    "@colyseus/sdk",
    "ws",
    "@msgpack/msgpack",
    "fast-json-patch",
)
TARGET_US_MEMORY = 120.0
TARGET_US_REDIS = 180.0
TARGET_X_BGIO = 2.0
TARGET_X_COLYSEUS = 0.8
TARGET_P99_MS = 10.0


# Node -------------------------------------------------------------------------------------


def ensure_node_modules() -> None:
    """``npm ci`` in bench/peers when node_modules is missing or older than the lock file."""
    installed = PEERS / "node_modules" / ".package-lock.json"
    lock = PEERS / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    if shutil.which("npm") is None:
        raise SystemExit("bench/peers needs Node.js and npm (Debian: apt-get install nodejs npm)")
    print("bench/peers: installing the Node dependencies (npm ci) ...", flush=True)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PEERS, check=True)


def versions() -> dict[str, str]:
    out = {"node": subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout}
    out["node"] = out["node"].strip()
    for name in VERSIONS:
        path = PEERS / "node_modules" / name / "package.json"
        out[name] = json.loads(path.read_text())["version"] if path.exists() else "missing"
    return out


@dataclass
class NodeServer:
    """boardgame.io or Colyseus: one Node.js process (the same face as ``procs.Server``)."""

    kind: str
    """``boardgame.io``, ``colyseus`` or ``colyseus/rematch`` (the same server)."""
    loop: str = "node"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None
    workdir: Path | None = None
    redis_pid: int | None = None

    @property
    def label(self) -> str:
        return self.kind

    @property
    def script(self) -> Path:
        return PEERS / ("bgio_server.mjs" if self.kind == "boardgame.io" else "colyseus_server.mjs")

    @property
    def url(self) -> str:
        scheme = "http" if self.kind == "boardgame.io" else "ws"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 60.0) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="oasis-peers-"))
        self.port = free_port()
        self.log = (self.workdir / "server.log").open("wb")
        command = [NODE, str(self.script), "--port", str(self.port)]
        # Production mode, as deployed: development mode adds checks and logs (immer's
        # auto-freeze and boardgame.io's per-action log lines among them).
        env = {**os.environ, "NODE_ENV": "production"}
        self.process = subprocess.Popen(
            command, stdout=self.log, stderr=subprocess.STDOUT, cwd=PEERS, env=env
        )
        try:
            wait_for_port(self.port, timeout)
        except TimeoutError:
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"{self.label} did not start: {tail}") from None

    def log_tail(self, size: int = 2000) -> str:
        if self.workdir is None:
            return ""
        path = self.workdir / "server.log"
        return path.read_text(errors="replace")[-size:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None
        if self.log is not None:
            self.log.close()
            self.log = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


PROBE: dict[str, Path] = {}
"""``--probe``: Oasis runs with ``bench/probe.py``, its file here (``path``)."""


def server_for(target: str) -> Server | NodeServer:
    if target.startswith("oasis/"):
        env = {"OASIS_BENCH_PROBE": str(PROBE["path"])} if PROBE else {}
        store = target.split("/")[1]
        return Server("oasis", "uvloop", store, games=[TINY], env=env)
    return NodeServer(target)


def driver(target: str) -> str:
    """The load generator's ``--kind`` for a server under test."""
    kinds = {"boardgame.io": "bgio", "colyseus": "colyseus", "colyseus/rematch": "colyseus-rematch"}
    if target.startswith("oasis/"):
        return "oasis-rematch" if target.endswith("/rematch") else "oasis"
    return kinds[target]


# One session ------------------------------------------------------------------------------


def merge(outs: list[dict[str, Any]]) -> dict[str, Any]:
    """One phase's results from every worker, as one set of figures."""
    latencies = [x for o in outs for x in o["latencies"]]
    sizes: Counter[int] = Counter()
    for o in outs:
        sizes.update({int(k): v for k, v in o["patch_sizes"].items()})
    errors: Counter[str] = Counter()
    for o in outs:
        errors.update(o["errors"])
    frames = sum(sizes.values())
    actions = sum(o["actions"] for o in outs)
    return {
        **harness(outs),
        "actions": actions,
        "actions_per_s": sum(o["actions"] / o["seconds"] for o in outs if o["seconds"] > 0),
        "p50_ms": ms(percentile(latencies, 0.50)),
        "p95_ms": ms(percentile(latencies, 0.95)),
        "p99_ms": ms(percentile(latencies, 0.99)),
        "max_ms": ms(max(latencies) if latencies else None),
        "samples": len(latencies),
        "update_median_bytes": counter_median(sizes),
        "update_mean_bytes": (sum(k * v for k, v in sizes.items()) / frames) if frames else None,
        "wire_bytes_per_action": (sum(o["bytes_in"] for o in outs) / actions if actions else None),
        "frames_per_action": sum(o["frames_in"] for o in outs) / actions if actions else None,
        "errors": dict(errors),
        "requests": [o.get("steps") for o in outs],
        "late": sum(o["late"] for o in outs),
        "matches_started": sum(o["matches"] for o in outs),
    }


def session(
    target: str, plan: list[Phase], rooms: int, seed: int, check: bool = True
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One server process: set ``rooms`` rooms up, run each phase, check the views."""
    server = server_for(target)
    server.start()
    workers: list[Worker] = []
    rows: list[dict[str, Any]] = []
    checked: dict[str, Any] = {}
    try:
        time.sleep(0.5)
        rss_empty = rss_bytes(server.pid)
        per = rooms // WORKERS
        for i in range(WORKERS):
            args = ["--kind", driver(target), "--url", server.url, "--rooms", str(per)]
            args += ["--first", str(i * per), "--seed", str(seed)]
            workers.append(Worker(args, command=LOADGEN))
        readies = [w.expect("ready", 300) for w in workers]
        time.sleep(0.5)
        rss_ready = rss_bytes(server.pid)
        setup_errors = [e for r in readies for e in r.get("setup_errors", [])]
        if setup_errors:
            print(f"  {len(setup_errors)} room set-up(s) failed and retried: {setup_errors[0]}")
        for phase in plan:
            for w in workers:
                w.send("go " + json.dumps(phase.wire()))
            time.sleep(phase.warmup)
            redis = server.redis_pid
            split0 = cpu_split(server.pid)  # (the server's user and kernel time, apart)
            redis0 = cpu_seconds(redis) if redis else 0.0
            bots0 = sum(cpu_seconds(w.pid) for w in workers)
            stall0 = cpu_stall_us()
            t0 = time.perf_counter()
            m0 = time.monotonic()
            time.sleep(phase.seconds)
            m1 = time.monotonic()
            split1 = cpu_split(server.pid)
            redis1 = cpu_seconds(redis) if redis else 0.0
            bots1 = sum(cpu_seconds(w.pid) for w in workers)
            stall1 = cpu_stall_us()
            window = time.perf_counter() - t0
            outs = [w.expect("result", phase.warmup + phase.seconds + 60) for w in workers]
            row = merge(outs)
            if PROBE and target.startswith("oasis/"):
                time.sleep(2 * DUMP_SECONDS)
                row["probe"] = probe_window(PROBE["path"], m0, m1)
            server_cpu = sum(split1) - sum(split0)
            kernel = split1[1] - split0[1]
            redis_cpu = redis1 - redis0 if redis else None
            done = row["actions_per_s"] * window
            row.update(
                {
                    "server": target,
                    "phase": phase.name,
                    "mode": phase.mode,
                    "rooms": phase.rooms,
                    "rooms_set_up": rooms,
                    "window_s": window,
                    "server_cpu_pct": 100 * server_cpu / window,
                    "server_cpu_us_per_action": 1e6 * server_cpu / done if done else None,
                    "server_kernel_us_per_action": 1e6 * kernel / done if done else None,
                    "actions_per_core_s": done / server_cpu if server_cpu > 0 else None,
                    "redis_cpu_pct": 100 * redis_cpu / window if redis_cpu is not None else None,
                    "redis_cpu_us_per_action": (
                        1e6 * redis_cpu / done if redis_cpu is not None and done else None
                    ),
                    "bots_cpu_pct": 100 * (bots1 - bots0) / window,
                    "cpu_stall_pct": (
                        (stall1 - stall0) / 1e4 / window
                        if stall0 is not None and stall1 is not None
                        else None
                    ),
                    "rss_empty_mib": rss_empty / 2**20,
                    "rss_ready_mib": rss_ready / 2**20,
                    "rss_end_mib": rss_bytes(server.pid) / 2**20,
                    "rss_per_room_kib": max(0, rss_ready - rss_empty) / rooms / 1024,
                    "setup_s": max(r["setup"] for r in readies),
                    "setup_errors": setup_errors,
                }
            )
            rows.append(row)
        if check:
            for w in workers:
                w.send("check")
            results = [w.expect("checked", 120) for w in workers]
            checked = {
                "rooms": sum(r["rooms"] for r in results),
                "problems": sum(r["count"] for r in results),
                "first": [p for r in results for p in r["problems"]][:10],
            }
    finally:
        for w in workers:
            w.stop()
        server.stop()
    return rows, checked


# The comparison ---------------------------------------------------------------------------

STAGGER = 12
"""Paced: each room's head start, a random number of choices below this (the shortest match of
the tiny game), so that the 200 matches dealt together at the start end spread over a match's
length instead of in one burst of 200 set-ups."""
PACED_WARMUP = 2.0
"""Paced: the least warm-up (the head starts are played in it)."""


def paced_phase(phase: Phase, old: bool) -> Phase:
    """A paced phase as the harness runs it since issue 21's item 4 (bench/peers/README.md,
    "The paced tail"): staggered matches, slots that fall in a match's set-up dropped; ``old``:
    as before (every match dealt at once, those slots waiting for the set-up)."""
    if old:
        return replace(phase, carry=True, stagger=0)
    return replace(phase, stagger=STAGGER, warmup=max(phase.warmup, PACED_WARMUP))


def compare_peers(
    reps: int,
    warmup: float,
    seconds: float,
    rooms: int,
    targets: tuple[str, ...] = TARGETS,
    modes: tuple[str, ...] = ("paced", "saturation"),
    paced: tuple[int, ...] = (200,),
    old_pacing: bool = False,
) -> dict[str, Any]:
    ensure_node_modules()
    raise_fd_limit()  # inherited by the Node servers and load generators (1,200 sockets each)
    plan = [
        paced_phase(p, old_pacing) if p.mode == "paced" else p
        for p in phases(warmup, seconds, rooms, paced)
        if p.mode in modes
    ]
    report: dict[str, Any] = {
        "versions": versions(),
        "lscpu": lscpu(),
        "load_before": os.getloadavg(),
        "uptime_before": uptime(),
    }
    print(f"versions: {report['versions']}")
    print(f"uptime: {report['uptime_before']}")
    runs: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    started = time.monotonic()
    for rep in range(reps):
        order = list(targets[rep % len(targets) :] + targets[: rep % len(targets)])
        for target in order:
            print(f"[{time.monotonic() - started:5.0f} s] rep {rep + 1} {target}", flush=True)
            try:
                rows, checked = session(target, plan, rooms, seed=1000 * rep + 1)
            except (RuntimeError, TimeoutError) as exc:  # one bad session is not the run
                print(f"  session failed: {str(exc)[:1500]}")
                failures.append({"rep": rep, "target": target, "error": str(exc)})
                continue
            for row in rows:
                row["rep"] = rep
                runs.append(row)
            checks.append({"rep": rep, "server": target, **checked})
            if checked.get("problems"):
                print(f"  views do not converge: {checked['first'][:3]}")
    summary = summarise(runs)
    report.update(
        {
            "runs": runs,
            "summary": summary,
            "checks": checks,
            "failures": failures,
            "load_after": os.getloadavg(),
            "uptime_after": uptime(),
        }
    )
    print_table(summary)
    print_harness(summary, lambda s: str(s["server"]))
    report["targets"] = print_targets(summary)
    print(
        f"views checked: {sum(c.get('rooms', 0) for c in checks)} rooms, "
        f"{sum(c.get('problems', 0) for c in checks)} problems"
    )
    print(f"uptime: {report['uptime_after']}")
    if failures:
        print(f"{len(failures)} session(s) failed; see 'failures' in the JSON")
    return report


FIELDS = (
    "actions_per_s",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "server_cpu_pct",
    "server_cpu_us_per_action",
    "server_kernel_us_per_action",
    "actions_per_core_s",
    "redis_cpu_pct",
    "redis_cpu_us_per_action",
    "bots_cpu_pct",
    "cpu_stall_pct",
    "rss_per_room_kib",
    "update_median_bytes",
    "update_mean_bytes",
    "wire_bytes_per_action",
    "frames_per_action",
    "matches_started",
    "samples",
    "late",
    *HARNESS_FIELDS,
)


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The median of the repetitions, per phase and server."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in runs:
        groups.setdefault((r["phase"], r["server"]), []).append(r)
    rank = {name: i for i, name in enumerate(TARGETS)}
    out: list[dict[str, Any]] = []
    for (phase, server), rows in sorted(
        groups.items(), key=lambda kv: (phase_rank(kv[0][0]), rank.get(kv[0][1], 99))
    ):
        item: dict[str, Any] = {
            "phase": phase,
            "server": server,
            "reps": len(rows),
            "errors": sum(sum(r["errors"].values()) for r in rows),
        }
        for f in FIELDS:
            values = [r[f] for r in rows if r.get(f) is not None]
            item[f] = median(values)
        item["server_cpu_us_per_action_all"] = [r["server_cpu_us_per_action"] for r in rows]
        out.append(item)
    return out


def print_table(summary: list[dict[str, Any]]) -> None:
    print()
    header = (
        f"{'phase':<15}{'server':<21}{'act/s':>7}{'p50ms':>7}{'p95ms':>7}{'p99ms':>7}"
        f"{'CPU%':>6}{'us/act':>7}{'kern':>6}{'act/core':>9}{'redis us':>9}{'KiB/room':>9}"
        f"{'updB':>6}{'meanB':>6}{'wireB/act':>10}{'matches':>8}{'bots%':>6}{'stall%':>7}"
        f"{'err':>5}"
    )
    print(header)
    print("-" * len(header))
    for s in summary:
        print(
            f"{s['phase']:<15}{s['server']:<21}{fmt(s['actions_per_s']):>7}"
            f"{fmt(s['p50_ms'], '.1f'):>7}{fmt(s['p95_ms'], '.1f'):>7}{fmt(s['p99_ms'], '.1f'):>7}"
            f"{fmt(s['server_cpu_pct']):>6}{fmt(s['server_cpu_us_per_action']):>7}"
            f"{fmt(s['server_kernel_us_per_action']):>6}{fmt(s['actions_per_core_s']):>9}"
            f"{fmt(s['redis_cpu_us_per_action']):>9}"
            f"{fmt(s['rss_per_room_kib'], '.1f'):>9}{fmt(s['update_median_bytes']):>6}"
            f"{fmt(s['update_mean_bytes']):>6}{fmt(s['wire_bytes_per_action']):>10}"
            f"{fmt(s['matches_started']):>8}{fmt(s['bots_cpu_pct']):>6}"
            f"{fmt(s['cpu_stall_pct']):>7}{s['errors']:>5}"
        )
    print()


def markdown(report: dict[str, Any]) -> str:
    """The summary of a run as the Markdown table of BENCHMARKS.md."""
    columns = (
        ("phase", "phase", "{}"),
        ("server", "server", "{}"),
        ("act/s", "actions_per_s", "{:,.0f}"),
        ("p50 ms", "p50_ms", "{:.1f}"),
        ("p95 ms", "p95_ms", "{:.1f}"),
        ("p99 ms", "p99_ms", "{:.1f}"),
        ("server CPU %", "server_cpu_pct", "{:.0f}"),
        ("CPU us/action", "server_cpu_us_per_action", "{:,.0f}"),
        ("of it kernel", "server_kernel_us_per_action", "{:,.0f}"),
        ("actions/s per core", "actions_per_core_s", "{:,.0f}"),
        ("Redis us/action", "redis_cpu_us_per_action", "{:.0f}"),
        ("KiB/room", "rss_per_room_kib", "{:.0f}"),
        ("update B (median)", "update_median_bytes", "{:.0f}"),
        ("update B (mean)", "update_mean_bytes", "{:.0f}"),
        ("wire B/action", "wire_bytes_per_action", "{:,.0f}"),
        ("bots CPU %", "bots_cpu_pct", "{:.0f}"),
        ("CPU stall %", "cpu_stall_pct", "{:.0f}"),
    )
    lines = [
        "| " + " | ".join(c[0] for c in columns) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(columns))) + "|",
    ]
    for s in report["summary"]:
        cells = ["-" if s.get(k) is None else f.format(s[k]) for _, k, f in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_targets(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 21's targets against this run (saturation at 200 rooms, paced at 200 rooms)."""
    by = {(s["phase"], s["server"]): s for s in summary}
    out: list[dict[str, Any]] = []

    def say(what: str, value: float | None, target: str, ok: bool | None) -> None:
        verdict = "-" if ok is None else ("met" if ok else "NOT met")
        shown = "-" if value is None else f"{value:.2f}"
        print(f"  {what:<72} {shown:>9} (target {target}): {verdict}")
        out.append({"what": what, "value": value, "target": target, "met": ok})

    print("targets (issue 21):")
    sat = "saturation-200"
    for server, limit in (
        ("oasis/memory", TARGET_US_MEMORY),
        ("oasis/redis", TARGET_US_REDIS),
        ("oasis/memory/rematch", TARGET_US_MEMORY),
        ("oasis/redis/rematch", TARGET_US_REDIS),
    ):
        us = by.get((sat, server), {}).get("server_cpu_us_per_action")
        say(
            f"{server} server CPU us per action ({sat})",
            us,
            f"<= {limit:.0f}",
            None if us is None else us <= limit,
        )
    for mine, peer, factor in (
        ("oasis/redis", "boardgame.io", TARGET_X_BGIO),
        ("oasis/redis", "colyseus", TARGET_X_COLYSEUS),
        ("oasis/redis", "colyseus/rematch", TARGET_X_COLYSEUS),
        ("oasis/redis/rematch", "colyseus/rematch", TARGET_X_COLYSEUS),
    ):
        ours = by.get((sat, mine), {}).get("actions_per_core_s")
        theirs = by.get((sat, peer), {}).get("actions_per_core_s")
        ratio = ours / theirs if ours and theirs else None
        say(
            f"{mine} actions/s per core / {peer}'s ({sat})",
            ratio,
            f">= {factor}",
            None if ratio is None else ratio >= factor,
        )
    for server in ("oasis/redis", "oasis/redis/rematch"):
        p99 = by.get(("paced-200", server), {}).get("p99_ms")
        say(
            f"{server} paced-200 p99 ms",
            p99,
            f"< {TARGET_P99_MS:.0f}",
            None if p99 is None else p99 < TARGET_P99_MS,
        )
    return out


def cpu_stall_us() -> int | None:
    """Microseconds that some runnable task of this machine has waited for a CPU so far
    (``/proc/pressure/cpu``, ``some``): over a window, how much other work got in the way."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(line.rsplit("total=", 1)[1])


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


def lscpu() -> str:
    try:
        return subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return ""


# Main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="short windows, 2 repetitions")
    parser.add_argument("--reps", type=int, help="repetitions (quick 2, else 3)")
    parser.add_argument("--warmup", type=float, help="seconds before each window")
    parser.add_argument("--seconds", type=float, help="measured seconds per phase")
    parser.add_argument("--rooms", type=int, default=200, help="rooms set up per server")
    parser.add_argument(
        "--servers", default=",".join(TARGETS), help=f"comma-separated, of {', '.join(TARGETS)}"
    )
    parser.add_argument("--modes", default="paced,saturation", help="paced, saturation or both")
    parser.add_argument(
        "--old-pacing",
        action="store_true",
        help="paced as before issue 21's item 4: matches dealt at once, set-up slots carried",
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="Oasis with bench/probe.py: GC pauses, loop stalls, store call times per window",
    )
    parser.add_argument(
        "--redis-aof",
        choices=("yes", "no"),
        default="yes",
        help="oasis/redis: its private Redis with the append-only file (as shipped) or without",
    )
    parser.add_argument("--out", type=Path, help="JSON file (default bench/results/...)")
    parser.add_argument(
        "--markdown", type=Path, metavar="JSON", help="print a result's table as Markdown, no run"
    )
    args = parser.parse_args(argv)
    if args.markdown is not None:
        report = json.loads(args.markdown.read_text())
        print(markdown(report.get("peers", report)))
        return 0
    targets = tuple(t for t in args.servers.split(",") if t)
    if set(targets) - set(TARGETS):
        parser.error(f"--servers: of {', '.join(TARGETS)}")
    if args.rooms < 50 or args.rooms % WORKERS:
        parser.error(f"--rooms must be an even number >= 50 (got {args.rooms})")
    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or set(modes) - {"paced", "saturation"}:
        parser.error("--modes: paced, saturation or both")
    procs.REDIS_APPENDONLY = args.redis_aof == "yes"
    if args.probe:
        PROBE["path"] = Path(tempfile.mkdtemp(prefix="oasis-probe-")) / "probe.json"
    reps = args.reps or (2 if args.quick else 3)
    warmup = args.warmup if args.warmup is not None else (1.0 if args.quick else 2.0)
    seconds = args.seconds if args.seconds is not None else (2.5 if args.quick else 6.0)
    return write(
        compare_peers(
            reps,
            warmup,
            seconds,
            args.rooms,
            targets,
            modes,
            (min(200, args.rooms),),
            args.old_pacing,
        ),
        vars(args) | {"out": None, "reps": reps, "warmup": warmup, "seconds": seconds},
        args.out,
    )


def write(report: dict[str, Any], settings: dict[str, Any], out: Path | None) -> int:
    report = {"machine": machine(), "settings": settings, **report}
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out or RESULTS / f"peers-{stamp}.json"
    path.write_text(json.dumps(report, indent=1, default=str))
    print(f"JSON: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
