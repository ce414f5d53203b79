"""The names of Ishtar's spaces (games/ishtar/names.py): one notation, ``f7``, for every text.

Not a rule of the rulebook (a notation for the table's talk): the tests hold the names to the
drawing of ``protocol/games/ishtar.md`` ("Names of spaces") on every preset layout.
"""

from __future__ import annotations

import re

import pytest

from games.ishtar.board import build_terrain
from games.ishtar.hexes import DIRECTIONS, add
from games.ishtar.names import column_letters, space_names
from games.ishtar.static import static_data
from tests.games.ishtar.helpers import EDITION


def test_columns_are_lettered_like_spreadsheet_columns() -> None:
    assert [column_letters(i) for i in (0, 1, 25, 26, 27, 51, 52)] == [
        "a", "b", "z", "aa", "ab", "az", "ba",
    ]  # fmt: skip


def test_the_drawing_of_the_reference_names_its_spaces() -> None:
    spaces = [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (-1, 2), (0, 2)]
    names = space_names(spaces)
    assert names[(0, 0)] == "a1" and names[(1, 0)] == "b1" and names[(2, 0)] == "c1"
    assert names[(0, 1)] == "a2" and names[(1, 1)] == "b2"
    assert names[(-1, 2)] == "a3" and names[(0, 2)] == "b3"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_space_of_a_preset_has_one_name_that_reads_as_a_grid(players: int) -> None:
    terrain = build_terrain(EDITION, EDITION.presets[players])
    names = terrain.names
    assert set(names) == set(terrain.kind)
    assert len(set(names.values())) == len(names), "two spaces share a name"
    parsed = {}
    for h, name in names.items():
        found = re.fullmatch(r"([a-z]+)([1-9][0-9]*)", name)
        assert found, name
        parsed[h] = (found[1], int(found[2]))
    top = min(r for _, r in names)
    for (q, r), (letters, row) in parsed.items():
        assert row == r - top + 1
        east = add((q, r), DIRECTIONS[0])
        if east in parsed:
            assert parsed[east] == (column_letters(_index(letters) + 1), row)
        for d in DIRECTIONS[1:3]:  # NE and NW: the row above, one of them in this column
            above = add((q, r), d)
            if above in parsed:
                assert parsed[above][1] == row - 1
                assert _index(parsed[above][0]) - _index(letters) in (-1, 0, 1)


def _index(letters: str) -> int:
    n = 0
    for letter in letters:
        n = n * 26 + ord(letter) - ord("a") + 1
    return n - 1


def test_the_static_data_and_the_view_give_the_same_names() -> None:
    data = static_data(EDITION, "Ishtar", (2, 4))
    listed = data["space_names"]
    assert isinstance(listed, dict)
    for players, preset in EDITION.presets.items():
        terrain = build_terrain(EDITION, preset)
        assert {(q, r): n for q, r, n in listed[str(players)]} == dict(terrain.names)
        for row in terrain.rows_json():
            for i, code in enumerate(row["cells"]):
                at = (row["q"] + i, row["r"])
                assert row["names"][i] == (None if code == " " else terrain.names[at])
