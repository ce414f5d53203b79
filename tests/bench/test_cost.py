"""``bench/cost.py`` end to end on a real server and real bots, short: the tiny game with each
next match started by ``rematch`` (``--rematch``, through ``bench/loadgen.py``). Its figures are
BENCHMARKS.md's business; what is checked is that the window counted actions, the matches went
on by rematch, and no bot saw an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_the_cost_bench_measures_matches_that_go_on_by_rematch(tmp_path: Path) -> None:
    out = tmp_path / "cost.json"
    command = [sys.executable, str(ROOT / "bench" / "cost.py"), "--games", "tiny", "--reps", "1"]
    command += ["--rooms", "4", "--warmup", "0.5", "--seconds", "1.5", "--rematch"]
    command += ["--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["args"]["rematch"] is True
    (row,) = result["games"]["tiny"]
    assert row["errors"] == {}  # (per error code)
    assert row["actions"] > 0 and row["us_per_action"] > 0
    # a tiny match is 12 to 16 choices: every room went on to further matches, by rematch
    assert row["matches_restarted"] >= 4
    assert row["by_rematch"] == row["matches_restarted"]
