"""``bench/attacks.py`` runs end to end (a short run: every attack for a second against 100
rooms); its figures are BENCHMARKS.md's business, so nothing here is timed. What is checked is
what the run must show whatever the machine: the paced match kept being acknowledged through
every flood, and each flood met the limit meant for it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

EXPECTED = {
    "list_flood": "list_per_address",
    "room_fill": "create_per_address",
    "bot_matches": "create_per_address",
    "replay_flood": "replay_per_address",
    "half_open": "half_open_per_address",
    "chat_flood": "room_chat_per_minute",
}


@pytest.mark.slow  # 19 s: every attack of bench/attacks.py against a real node
def test_every_attack_runs_and_meets_its_limit(tmp_path: Path) -> None:
    out = tmp_path / "attacks.json"
    command = [sys.executable, str(ROOT / "bench" / "attacks.py"), "--out", str(out)]
    command += ["--seconds", "1", "--rooms", "100", "--settle", "0.5", "--recovery", "0.5"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert set(figures["attacks"]) == set(EXPECTED) | {"quiet", "unknown_quick"}
    for kind, row in figures["attacks"].items():
        assert row["acks"] > 0, f"the paced match got no ack during {kind}"
        assert kind in done.stdout
    for kind, limit in EXPECTED.items():
        assert figures["attacks"][kind]["refused"].get(limit, 0) > 0, (
            kind,
            figures["attacks"][kind],
        )
