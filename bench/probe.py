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
- with ``OASIS_BENCH_GC_CENSUS=1`` also what each young collection promotes (:class:`Census`):
  the survivors by type and shape, per 1,000 actions (store appends) in the window; it walks
  generation 1 at each young collection, so its run's latencies are not the server's;
- how long each awaited call of the store took (``append``, ``create_room``, ``archive``, ...),
  from the call to its return: the Redis round trip, the group commit's wait and the loop's
  queue together.

A thread appends to PATH, every ``DUMP_SECONDS``, one JSON line of what was recorded since
the line before (and the runner reads the file once its window is over): a dump costs what is
new, not the whole run. (Dumping everything every time held the GIL for 20 to 55 ms every half
second late in a window, stalls of the server's loop that were the probe's own and made the
paced tail of ``--probe`` runs about three times what runs without it measured: BENCHMARKS.md,
"The probe's own stalls".) The probe costs the server a wake-up per millisecond and a
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
        self.census: Census | None = Census() if os.environ.get("OASIS_BENCH_GC_CENSUS") else None
        self._dumped: dict[str, int] = {}
        """How many items of each list the file has (:meth:`dump`)."""

    def on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.monotonic()
        else:
            ended = time.monotonic()
            self.gc.append((self._gc_started, ended - self._gc_started, int(info["generation"])))
            if self.census is not None:
                self.census.after(int(info["generation"]), ended, self.appends())

    def appends(self) -> int:
        """The store's appends so far (one per accepted choice: the actions)."""
        return len(self.calls.get("append", ()))

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
        """Append one line: the records made since the last dump (module doc)."""
        census = self.census
        line = {
            "gc": self._new("gc", self.gc),
            "late": self._new("late", self.late),
            "wakes": self.wakes,
            "calls": {k: self._new(f"calls.{k}", v) for k, v in list(self.calls.items())},
            "trims": self._new("trims", self.trims),
            "stacks": self._new("stacks", self.stacks),
            "census": None if census is None else self._new("census", census.rows),
            "at": time.monotonic(),
        }
        with self.path.open("a") as out:
            out.write(json.dumps(line) + "\n")

    def _new(self, key: str, items: list[Any]) -> list[Any]:
        """The items of ``items`` added since the last dump (the lists only ever grow)."""
        done, now = self._dumped.get(key, 0), len(items)
        self._dumped[key] = now
        return items[done:now]

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


class Census:
    """What each young collection finds alive and promotes (``OASIS_BENCH_GC_CENSUS=1``).

    After every collection of generation 0 the objects in generation 1 that were not there
    after the previous one are its survivors (a collection of an older generation empties
    generation 1); they are counted by type, and dicts by their keys, tuples and lists by
    their items' types, with the actions (store appends) between the two collections. It
    walks generation 1 at every young collection: for finding what survives, not for timing.
    """

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.rows: list[tuple[float, int, int, list[tuple[str, int]]]] = []
        """(time, survivors, actions since the previous one, the survivors' commonest shapes)
        per young collection."""
        self.last_appends = -1

    def after(self, generation: int, at: float, appends: int) -> None:
        if generation > 0:
            self.seen = set()
            self.last_appends = appends
            return
        enabled = gc.isenabled()
        gc.disable()  # (a collection started from inside the callback crashes the process)
        try:
            objects = gc.get_objects(generation=1)
            new = [o for o in objects if id(o) not in self.seen]
            self.seen = {id(o) for o in objects}
            del objects
            if self.last_appends < 0:  # the first one: no interval to charge it to
                self.last_appends = appends
                return
            actions = appends - self.last_appends
            self.last_appends = appends
            shapes = Counter(shape(o) for o in new)
            del new
            self.rows.append((at, sum(shapes.values()), actions, shapes.most_common(60)))
        finally:
            if enabled:
                gc.enable()


def shape(o: object) -> str:
    """A short description of a container: a dict's keys, a list's item types, a tuple's length
    (not its items: a tuple being filled when the collection started has empty slots)."""
    t = type(o).__qualname__
    try:
        if type(o) is dict:
            return f"dict{sorted(map(str, o))[:6]}"
        if type(o) is tuple:
            return f"tuple[{len(o)}]"
        if type(o) is list:
            items = sorted({type(x).__qualname__ for x in o[:8]})
            return f"{t}[{len(o)}]{items}"
        module = type(o).__module__
        if hasattr(o, "__dict__") or module not in ("builtins",):
            return f"{module}.{t}"
    except Exception:  # a probe never takes the server down
        pass
    return t


def install(path: str) -> Probe:
    """Hook the collector, the stores' calls and (at the store's start) the loop."""
    from server.store.memory import MemoryStore
    from server.store.redis import RedisStore

    probe = Probe(Path(path))
    probe.path.write_text("")  # (this server's lines only)
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


def load(path: Path) -> dict[str, Any] | None:
    """Everything the probe recorded, its file's lines put together (None: no file, or
    nothing in it yet; a line being written is left out)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    data: dict[str, Any] = {"gc": [], "late": [], "trims": [], "stacks": [], "calls": {}}
    census: list[Any] | None = None
    seen = False
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        seen = True
        for key in ("gc", "late", "trims", "stacks"):
            data[key] += line[key]
        for name, items in line["calls"].items():
            data["calls"].setdefault(name, []).extend(items)
        if line["census"] is not None:  # (OASIS_BENCH_GC_CENSUS: every line has its list)
            census = [] if census is None else census
            census.extend(line["census"])
        data["wakes"], data["at"] = line["wakes"], line["at"]
    data["census"] = census
    return data if seen else None


def window(path: Path, start: float, end: float) -> dict[str, Any]:
    """The probe's figures for ``[start, end]`` (``time.monotonic()``), from its file."""
    data = load(path)
    if data is None:
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
    census = data.get("census")
    if census is not None:  # OASIS_BENCH_GC_CENSUS: the young collections in the window
        rows = [r for r in census if inside(r[0])]
        actions = sum(r[2] for r in rows)
        per = 1e3 / actions if actions else 0.0
        shapes: Counter[str] = Counter()
        for r in rows:
            shapes.update(dict(r[3]))
        out["census"] = {
            "young_collections": len(rows),
            "actions": actions,
            "survivors": [r[1] for r in rows],
            "survivors_per_1000_actions": round(per * sum(r[1] for r in rows)),
            "shapes_per_1000_actions": [(k, round(n * per)) for k, n in shapes.most_common(50)],
        }
    return out
