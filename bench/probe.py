"""What the server's own process does over a benchmark window (issue 21, the paced tail).

Loaded into the server by ``bench/serve.py`` when ``OASIS_BENCH_PROBE=PATH`` is set (the
runners set it with ``--probe``); nothing of it runs otherwise. It records, with the
timestamps of ``time.monotonic()`` (the same clock in every process of the machine, so a runner
can cut out its window):

- every pause of the garbage collector (``gc.callbacks``): start, duration, generation;
- the event loop's lag: a task that sleeps ``PROBE_SECONDS`` and notes how late it woke, every
  wake-up later than ``LATE_SECONDS`` kept with its time;
- where the loop's thread is while the loop is stalled: a watchdog thread looks every
  ``WATCH_SECONDS`` and, when the lag task has not run for ``STALL_SECONDS``, takes the main
  thread's stack (``sys._current_frames``); the innermost frames of the server's own code are
  counted per stall sample (the time a stall spends there, in ``WATCH_SECONDS`` units);
- how long each awaited call of the store took (``append``, ``create_room``, ``archive``, ...),
  from the call to its return: the Redis round trip, the group commit's wait and the loop's
  queue together.

A thread writes it all to PATH as JSON every ``DUMP_SECONDS`` (and the runner reads the file
once its window is over). The probe costs the server a wake-up per millisecond and a
``perf_counter`` pair per store call and per collection: its figures are for finding where a
tail comes from, not for the CPU-per-action tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBE_SECONDS = 0.001
LATE_SECONDS = 0.002
DUMP_SECONDS = 0.5
WATCH_SECONDS = 0.005
STALL_SECONDS = 0.015
STORE_CALLS = (
    "append",
    "create_room",
    "update_room",
    "finish",
    "archive",
    "snapshot",
    "delete",
    "append_chat",
)


class Probe:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.gc: list[tuple[float, float, int]] = []
        self.late: list[tuple[float, float]] = []
        self.wakes = 0
        self.calls: dict[str, list[tuple[float, float]]] = {}
        self.trims: list[tuple[float, float]] = []
        self._gc_started = 0.0
        self._loop_task: asyncio.Task[None] | None = None
        self.beat = 0.0
        self.main = threading.get_ident()
        self.stacks: list[tuple[float, str]] = []
        """(time, the stack's frames innermost first) of each watchdog sample in a stall."""

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.monotonic()
        else:
            ended = time.monotonic()
            self.gc.append((self._gc_started, ended - self._gc_started, int(info["generation"])))

    async def lag(self) -> None:
        while True:
            armed = time.monotonic()
            await asyncio.sleep(PROBE_SECONDS)
            woke = time.monotonic()
            self.beat = woke
            self.wakes += 1
            late = woke - armed - PROBE_SECONDS
            if late > LATE_SECONDS:
                self.late.append((armed + PROBE_SECONDS, late))

    def in_loop(self) -> None:
        """From inside the running loop (the store's ``start``): start the lag task."""
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self.lag())

    def timed(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        calls = self.calls.setdefault(name, [])

        @functools.wraps(method)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.monotonic()
            try:
                return await method(*args, **kwargs)
            finally:
                calls.append((began, time.monotonic() - began))

        return wrapper

    def dump(self) -> None:
        data = {
            "gc": list(self.gc),
            "late": list(self.late),
            "wakes": self.wakes,
            "calls": {k: list(v) for k, v in self.calls.items()},
            "trims": list(self.trims),
            "stacks": list(self.stacks),
            "at": time.monotonic(),
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.path)

    def watchdog(self) -> None:
        while True:
            time.sleep(WATCH_SECONDS)
            now = time.monotonic()
            if not self.beat or now - self.beat < STALL_SECONDS:
                continue
            frame = sys._current_frames().get(self.main)
            if frame is None:
                continue
            self.stacks.append((now, stack(frame)))

    def dumper(self) -> None:
        while True:
            time.sleep(DUMP_SECONDS)
            with contextlib.suppress(Exception):  # a probe never takes the server down
                self.dump()


def install(path: str) -> Probe:
    """Hook the collector, the stores' calls and (at the store's start) the loop."""
    from server.store.memory import MemoryStore
    from server.store.redis import RedisStore

    probe = Probe(Path(path))
    gc.callbacks.append(probe.on_gc)
    for cls in (RedisStore, MemoryStore):
        for name in STORE_CALLS:
            if hasattr(cls, name):
                setattr(cls, name, probe.timed(name, getattr(cls, name)))
        start = cls.start

        @functools.wraps(start)
        async def started(self: Any, _start: Callable[..., Any] = start) -> Any:
            probe.in_loop()
            return await _start(self)

        cls.start = started  # type: ignore[method-assign]
    import server.trim

    make_trim = server.trim._malloc_trim

    def timed_trim() -> Callable[[], object] | None:
        trim = make_trim()
        if trim is None:
            return None

        def run() -> object:
            began = time.monotonic()
            try:
                return trim()
            finally:
                probe.trims.append((began, time.monotonic() - began))

        return run

    server.trim._malloc_trim = timed_trim
    threading.Thread(target=probe.watchdog, name="bench-watchdog", daemon=True).start()
    threading.Thread(target=probe.dumper, name="bench-probe", daemon=True).start()
    return probe


def stack(frame: Any, depth: int = 12) -> str:
    """``frame``'s stack as ``file:line:function`` lines, innermost first, the project's own
    frames (not the stdlib's or a library's) up to ``depth``, after the innermost frame."""
    root = str(Path(__file__).resolve().parents[1])
    out: list[str] = []
    first = True
    while frame is not None and len(out) < depth:
        code = frame.f_code
        name = code.co_filename
        if first or (name.startswith(root) and "/.venv/" not in name):
            short = name[len(root) + 1 :] if name.startswith(root) else name.rsplit("/", 2)[-1]
            out.append(f"{short}:{frame.f_lineno}:{code.co_name}")
        first = False
        frame = frame.f_back
    return " < ".join(out)


def window(path: Path, start: float, end: float) -> dict[str, Any]:
    """The probe's figures for ``[start, end]`` (``time.monotonic()``), from its file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}

    def inside(t: float) -> bool:
        return start <= t <= end

    pauses = [(d, g) for t, d, g in data["gc"] if inside(t)]
    late = [d for t, d in data["late"] if inside(t)]
    out: dict[str, Any] = {
        "gc_pauses": len(pauses),
        "gc_total_ms": 1e3 * sum(d for d, _ in pauses),
        "gc_max_ms": 1e3 * max((d for d, _ in pauses), default=0.0),
        "gc_by_generation": {
            str(g): [sum(1 for _, x in pauses if x == g), 1e3 * sum(d for d, x in pauses if x == g)]
            for g in (0, 1, 2)
        },
        "lag_over_2ms": len(late),
        "lag_over_10ms": sum(1 for d in late if d > 0.010),
        "lag_over_50ms": sum(1 for d in late if d > 0.050),
        "lag_max_ms": 1e3 * max(late, default=0.0),
        "lag_total_ms": 1e3 * sum(late),
    }
    calls: dict[str, Any] = {}
    for name, items in data["calls"].items():
        durations = sorted(d for t, d in items if inside(t))
        if not durations:
            continue
        n = len(durations)
        calls[name] = {
            "n": n,
            "p50_ms": 1e3 * durations[n // 2],
            "p99_ms": 1e3 * durations[min(n - 1, int(0.99 * n))],
            "max_ms": 1e3 * durations[-1],
        }
    out["store_calls"] = calls
    trims = [d for t, d in data.get("trims", []) if inside(t)]
    out["malloc_trims"] = len(trims)
    out["malloc_trim_max_ms"] = 1e3 * max(trims, default=0.0)
    # The loop stalls, each with what overlapped it (a collection, a malloc_trim).
    stalls = []
    for t, d in data["late"]:
        if not inside(t) or d < 0.020:
            continue
        begin = t - d
        with_gc = any(g < t and g + x > begin for g, x, _ in data["gc"])
        with_trim = any(g < t and g + x > begin for g, x in data.get("trims", []))
        stalls.append([round(t - start, 3), round(1e3 * d, 1), with_gc, with_trim])
    out["stalls_over_20ms"] = stalls[:40]
    samples = Counter(s for t, s in data.get("stacks", []) if inside(t))
    out["stall_samples"] = sum(samples.values())
    out["stall_stacks"] = samples.most_common(25)
    return out
