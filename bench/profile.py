"""Where Oasis spends its CPU under saturation: py-spy on the server, hot spots as a table.

The server (``bench/serve.py``, Redis on) runs under ``py-spy record`` (so py-spy is its
parent and may read its memory); the bots play every room as fast as they can; then the server
is stopped, py-spy writes its collapsed stacks, and this module sums them per function: *self*
time (the function was on top of the stack) and *total* time (anywhere on the stack), in % of
the samples. py-spy is a development tool, not a dependency: ``.venv/bin/pip install py-spy``.

    .venv/bin/python bench/run.py profile [--games yspahan] [--seconds 10] [--rooms 200]
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.procs import ROOT, Server, Worker

TOP = 25


def frame_name(frame: str) -> str:
    """``func (path/to/file.py:123)`` -> ``func (path/to/file.py)``, paths made short."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/lib/python3.11/", str(ROOT) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{name} ({path})"


def summarise(collapsed: Path) -> dict[str, Any]:
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [frame_name(f) for f in stack.split(";") if f]
        if not frames:
            continue
        samples += count
        own[frames[-1]] += count
        for name in set(frames):
            total[name] += count
    return {
        "samples": samples,
        "self": [(n, 100 * c / samples) for n, c in own.most_common(TOP)] if samples else [],
        "total": [(n, 100 * c / samples) for n, c in total.most_common(TOP * 2)] if samples else [],
    }


def run_profile(game: str, loop: str, rooms: int, seconds: float) -> dict[str, Any]:
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed: .venv/bin/pip install py-spy")
        return {"error": "py-spy missing"}
    out = ROOT / "bench" / "results" / f"profile-{game}-{time.strftime('%Y%m%dT%H%M%S')}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    wrap = [spy, "record", "--format", "raw", "--rate", "200", "--nonblocking", "-o", str(out)]
    server = Server("oasis", loop, "redis", wrap=[*wrap, "--"])
    server.start()
    workers: list[Worker] = []
    try:
        per = rooms // 2
        for i in range(2):
            args = ["--url", server.url, "--kind", "oasis", "--game", game]
            args += ["--rooms", str(per), "--first", str(i * per)]
            workers.append(Worker(args))
        for w in workers:
            w.expect("ready", 180)
        phase = {"mode": "saturation", "rooms": per, "warmup": 0.5, "seconds": seconds}
        for w in workers:
            w.send("go " + json.dumps(phase))
        actions = sum(w.expect("result", seconds + 60)["actions"] for w in workers)
    finally:
        for w in workers:
            w.stop()
        server.stop()
    if not out.exists():
        print(f"py-spy wrote nothing: {server.log_tail()}")
        return {"error": "no profile"}
    result = summarise(out)
    result.update({"game": game, "loop": loop, "rooms": rooms, "actions": actions, "raw": str(out)})
    print(f"py-spy, oasis {game} on {loop}, saturation {rooms} rooms: {result['samples']} samples")
    print(f"{'self %':>7}  function")
    for name, share in result["self"][:20]:
        print(f"{share:7.1f}  {name}")
    print(f"{'total %':>7}  function (project code)")
    shown = 0
    for name, share in result["total"]:
        if any(p in name for p in ("(server/", "(protocol/", "(games/")) and shown < 20:
            print(f"{share:7.1f}  {name}")
            shown += 1
    return result
