"""The paced tail's bookkeeping in the runners (issue 21, item 4), without servers: what a paced
phase asks of the load generators and how their own figures are merged."""

from __future__ import annotations

from bench.run import WORKERS, finish_phase, harness, match_lengths, phases


def test_the_generators_figures_split_the_carried_samples_from_the_others() -> None:
    outs = [
        {
            "latencies": [0.001, 0.002, 0.9],
            "carried": [0, 0, 1],
            "waits": [0.0, 0.0, 0.8],
            "setups": [0.01, 0.03],
            "dropped": 2,
            "gc_pauses": [0.004],
            "loop_lag": {"p50": 0.0, "p99": 0.002, "max": 0.005, "mean": 0.001},
        },
        {"latencies": [0.003], "carried": [0], "waits": [0.001], "setups": [], "dropped": 1},
    ]
    got = harness(outs)
    assert got["carried_samples"] == 1
    assert got["p99_carried_ms"] == 900.0
    assert got["p99_in_match_ms"] == 3.0
    assert got["setups"] == 2 and got["dropped_slots"] == 3
    assert got["gc_max_ms"] == 4.0 and got["loop_lag_max_ms"] == 5.0


def test_a_paced_finish_phase_stops_its_rooms_a_window_short_of_a_match() -> None:
    shortest, longest = match_lengths("yspahan")
    assert 0 < shortest <= longest
    phase = finish_phase("yspahan", 2.0, 6.0, 200)
    lo, hi = phase.finish
    # the last choices of a match as long as the shortest fall in the window at the latest ...
    assert lo == shortest - int((2.0 + 6.0) / 0.25)
    # ... and those of the longest after its first slot
    assert hi == longest - (int(2.0 / 0.25) + 1)
    prelude = phase.prelude()
    assert prelude["mode"] == "prelude" and prelude["finishers"] * WORKERS == phase.finishers
    assert phase.wire()["mode"] == "paced"


def test_paced_phases_drop_set_up_slots_unless_told_to_carry_them() -> None:
    paced = [p for p in phases(1.0, 2.0, 200) if p.mode == "paced"]
    assert paced and all(not p.wire()["carry"] for p in paced)
