"""Ishtar's spaces on the terminal: named as the server names them, typed back either way."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from clients.hexgrid import Grid
from tests.clients.samples import samples

TERRAIN = [
    {"r": -2, "q": 3, "cells": ".", "names": ["d1"]},
    {"r": 0, "q": 0, "cells": "..", "names": ["b3", "c3"]},
    {"r": 1, "q": -1, "cells": "..", "names": ["a4", "b4"]},
]


def test_the_names_are_the_server_s_and_the_rulers_read_them() -> None:
    grid = Grid.of_terrain(TERRAIN)
    assert grid.name((3, -2)) == "d1" and grid.name((0, 0)) == "b3"
    assert grid.name((-1, 1)) == "a4" and grid.name((0, 1)) == "b4"
    assert (grid.rows, grid.columns) == (4, 4)
    assert [grid.column_label(c) for c in (1, 2, 3, 4)] == ["a", "b", "c", "d"]
    assert [grid.row_label(r) for r in (0, 1, 2, 3)] == ["1", "", "3", "4"]


def test_a_server_s_other_names_are_shown_as_sent() -> None:
    renamed = [{**row, "names": [n.upper() + "x" for n in row["names"]]} for row in TERRAIN]
    grid = Grid.of_terrain(renamed)
    assert grid.name((0, 0)) == "b3x"
    assert grid.parse("B3X") == (0, 0)


def test_what_a_person_types_finds_the_space() -> None:
    grid = Grid.of_terrain(TERRAIN)
    assert grid.parse("b3") == grid.parse("B3") == (0, 0)
    assert grid.parse("c3") == (1, 0) and grid.parse("a4") == (-1, 1)
    assert grid.parse("1,0") == grid.parse("(1, 0)") == grid.parse("1 0") == (1, 0)
    assert grid.parse("z9") is None and grid.parse("5,5") is None
    assert grid.looks_like_a_space("z9") and not grid.looks_like_a_space("hello")


def test_a_terrain_without_names_is_named_by_its_coordinates() -> None:
    grid = Grid.of_terrain([{k: v for k, v in row.items() if k != "names"} for row in TERRAIN])
    assert grid.name((-1, 1)) == "-1,1"
    assert grid.parse("-1,1") == (-1, 1) and grid.parse("a4") is None
    assert grid.column_label(1) == "" and grid.row_label(0) == ""


@given(st.sampled_from([s for s in samples("ishtar") if s.decision == "over"]))
def test_every_space_of_real_terrains_has_the_server_s_name_and_round_trips(sample: Any) -> None:
    terrain = sample.view["shared"]["game"]["terrain"]
    grid = Grid.of_terrain(terrain)
    sent = {
        (row["q"] + i, row["r"]): name
        for row in terrain
        for i, name in enumerate(row["names"])
        if name is not None
    }
    assert {at: grid.name(at) for at in grid.spaces} == sent
    for at in grid.spaces:
        assert grid.parse(grid.name(at)) == at
