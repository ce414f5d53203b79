"""``bench/probe.py``'s file: each dump appends only what was recorded since the one before, and
:func:`bench.probe.load` (what :func:`bench.probe.window` reads) puts the lines back together as
if one dump had written everything. No server and no timing: the probe's records are made by
hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.probe import Census, Probe, load, window  # noqa: E402


def test_each_dump_appends_what_is_new_and_load_puts_the_lines_together(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    probe = Probe(path)
    probe.gc.append((1.0, 0.004, 0))
    probe.late.append((1.1, 0.003))
    probe.calls.setdefault("append", []).extend([(1.2, 0.001), (1.3, 0.002)])
    probe.dump()
    probe.dump()  # nothing new: a line with empty lists
    probe.gc.append((2.09, 0.030, 1))
    probe.late.append((2.1, 0.025))
    probe.calls["append"].append((2.2, 0.003))
    probe.calls.setdefault("archive", []).append((2.3, 0.010))
    probe.wakes = 7
    probe.dump()

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3
    assert [len(line["calls"].get("append", [])) for line in lines] == [2, 0, 1]
    assert lines[1]["gc"] == [] and lines[1]["late"] == []

    data = load(path)
    assert data is not None
    assert data["gc"] == [[1.0, 0.004, 0], [2.09, 0.030, 1]]
    assert data["late"] == [[1.1, 0.003], [2.1, 0.025]]
    assert data["calls"] == {
        "append": [[1.2, 0.001], [1.3, 0.002], [2.2, 0.003]],
        "archive": [[2.3, 0.010]],
    }
    assert data["wakes"] == 7 and data["census"] is None

    later = window(path, 1.5, 3.0)  # the second dump's records only
    assert later["gc_pauses"] == 1 and later["store_calls"]["append"]["n"] == 1
    assert later["stalls_over_20ms"] == [[0.6, 25.0, True, False]]  # (the collection overlaps)


def test_a_line_being_written_is_left_out_and_an_empty_or_no_file_is_none(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    assert load(path) is None
    path.write_text("")  # (what install leaves before the first dump)
    assert load(path) is None
    probe = Probe(path)
    probe.late.append((1.0, 0.005))
    probe.dump()
    with path.open("a") as out:
        out.write('{"gc": [')  # the dumper thread mid-line
    data = load(path)
    assert data is not None and data["late"] == [[1.0, 0.005]]


def test_the_census_rows_of_every_line_are_put_together(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    probe = Probe(path)
    probe.census = Census()
    probe.census.rows.append((1.0, 10, 5, [("dict", 3)]))
    probe.dump()
    probe.census.rows.append((2.0, 20, 6, [("list", 4)]))
    probe.dump()
    data = load(path)
    assert data is not None
    assert data["census"] == [[1.0, 10, 5, [["dict", 3]]], [2.0, 20, 6, [["list", 4]]]]
