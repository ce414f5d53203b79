"""The peer comparison (``bench/peers``): its JavaScript rules against the tests' tiny game, and a
short run of every server that must converge and give figures (the ``slow`` tier: it needs
Node.js and the bench's Node dependencies, which the run installs with ``npm ci``)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.peers.run import TARGETS, compare_peers
from games.base import Match
from tests.games.tiny import TINY

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node") or "node"

REPLAY = """
import * as tiny from "./bench/peers/tiny.mjs";
let text = "";
for await (const chunk of process.stdin) text += chunk;
const cases = JSON.parse(text);
const out = cases.map(({ start, picks }) => {
  const state = structuredClone(start);
  const steps = [];
  for (const pick of picks) {
    const choices = tiny.choices(state);
    const choice = choices[pick];
    const refused = tiny.refusal(state, state.toMove, choice);
    tiny.apply(state, choice);
    steps.push({ choices, refused, state: structuredClone(state), over: tiny.over(state) });
  }
  return steps;
});
process.stdout.write(JSON.stringify(out));
"""


def js_state(dump: dict[str, Any]) -> dict[str, Any]:
    return {
        "deck": dump["deck"],
        "hands": dump["hands"],
        "scores": dump["scores"],
        "toMove": dump["to_move"],
        "turns": dump["turns"],
    }


@pytest.mark.slow
def test_the_javascript_rules_play_the_tiny_game_choice_for_choice() -> None:
    cases: list[dict[str, Any]] = []
    expected: list[list[dict[str, Any]]] = []
    for seed in range(200):
        match = Match.new(TINY, 2 + seed % 3, {}, seed)
        start = js_state(TINY.dump(match.state))
        chooser = random.Random(seed)
        picks: list[int] = []
        steps: list[dict[str, Any]] = []
        while (decision := match.decision) is not None:
            pick = chooser.randrange(len(decision.choices))
            choices = [dict(c) for c in decision.choices]
            match.act(decision.seat, pick)
            picks.append(pick)
            state = js_state(TINY.dump(match.state))
            steps.append({"choices": choices, "state": state, "over": match.decision is None})
        cases.append({"start": start, "picks": picks})
        expected.append(steps)
    replayed = subprocess.run(
        [NODE, "--input-type=module", "-e", REPLAY],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    got = json.loads(replayed.stdout)
    for case, (mine, theirs) in enumerate(zip(expected, got, strict=True)):
        assert len(mine) == len(theirs), case
        for step, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert b["refused"] is None, (case, step)
            assert b["choices"] == a["choices"], (case, step)
            assert b["state"] == a["state"], (case, step)
            assert b["over"] == a["over"], (case, step)


@pytest.mark.slow
def test_every_server_plays_converges_and_gives_figures() -> None:
    report = compare_peers(reps=1, warmup=0.5, seconds=2.0, rooms=10, paced=(10,))
    assert report["failures"] == []
    assert {c["server"] for c in report["checks"]} == set(TARGETS)
    for check in report["checks"]:
        assert check["rooms"] == 10, check
        assert check["problems"] == 0, check
    rows = report["runs"]
    assert {(r["server"], r["phase"]) for r in rows} == {
        (t, p) for t in TARGETS for p in ("paced-10", "saturation-10")
    }
    for row in rows:
        label = (row["server"], row["phase"])
        assert row["actions"] > 0, label
        assert row["errors"] == {}, (label, row["errors"])
        assert row["p99_ms"] is not None and row["p99_ms"] > 0, label
        assert row["server_cpu_us_per_action"] is not None, label
        assert row["server_cpu_us_per_action"] > 0, label
        # (system time in clock ticks of 10 ms: a light paced window may not reach one)
        kernel = row["server_kernel_us_per_action"]
        assert kernel is not None and 0 <= kernel < row["server_cpu_us_per_action"], label
        if row["phase"].startswith("saturation"):
            assert kernel > 0, label
        assert row["rss_per_room_kib"] > 0, label
        assert row["update_median_bytes"] is not None and row["update_median_bytes"] > 0, label
        assert row["wire_bytes_per_action"] > 0, label
        if row["server"] == "oasis/redis":
            assert row["redis_cpu_us_per_action"] is not None, label
    saturated = [r for r in rows if r["phase"] == "saturation-10"]
    assert all(r["matches_started"] > 0 for r in saturated), "no match finished and restarted"
