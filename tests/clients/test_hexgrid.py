"""Ishtar's spaces by name: column letter, row number, both ways, and the axial form too."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clients.hexgrid import Grid, column_name
from tests.clients.samples import samples


def test_column_names_go_on_past_z() -> None:
    assert [column_name(i) for i in (0, 1, 25, 26, 27)] == ["a", "b", "z", "aa", "ab"]


def test_spaces_are_named_by_the_column_and_row_of_the_drawing() -> None:
    grid = Grid.of([(0, 0), (1, 0), (0, 1), (-1, 1), (3, -2)])
    # r = -2 is row 1; x = 2q + r: (3,-2) -> 4, (0,0) -> 0, (-1,1) -> -1 (column a starts at -2)
    assert grid.name((3, -2)) == "d1"
    assert grid.name((0, 0)) == "b3"
    assert grid.name((-1, 1)) == "a4"
    assert grid.name((0, 1)) == "b4"
    assert (grid.rows, grid.columns) == (4, 4)


def test_what_a_person_types_finds_the_space() -> None:
    grid = Grid.of([(0, 0), (1, 0), (0, 1)])
    assert grid.parse("a1") == grid.parse("A1") == (0, 0)
    assert grid.parse("b1") == (1, 0) and grid.parse("a2") == (0, 1)
    assert grid.parse("1,0") == grid.parse("(1, 0)") == grid.parse("1 0") == (1, 0)
    assert grid.parse("z9") is None and grid.parse("5,5") is None
    assert grid.looks_like_a_space("z9") and not grid.looks_like_a_space("hello")


@given(st.sampled_from([s for s in samples("ishtar") if s.decision == "over"]))
def test_every_space_of_real_terrains_round_trips_through_its_name(sample: object) -> None:
    view = sample.view
    grid = Grid.of_terrain(view["shared"]["game"]["terrain"])
    names = {grid.name(at) for at in grid.spaces}
    assert len(names) == len(grid.spaces)
    for at in grid.spaces:
        assert grid.parse(grid.name(at)) == at
