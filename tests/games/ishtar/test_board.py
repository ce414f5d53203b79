"""Layouts on the macro grid: presets, custom layouts and their validation."""

from __future__ import annotations

from typing import Any

import pytest

from games.errors import OptionsError
from games.ishtar import GAME
from games.ishtar.board import build_terrain, preset_touching
from tests.games.ishtar.helpers import EDITION, new_match


def _custom(n: int, macros: list[list[int]] | None = None) -> list[dict[str, Any]]:
    macros = macros or [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]][:n]
    return [
        {"board": f"board-{i + 1}", "side": "AB"[i % 2], "rotation": (2 * i) % 6, "macro": m}
        for i, m in enumerate(macros)
    ]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_02_players_plus_two_boards(players: int) -> None:
    state = new_match(players).state
    assert len(state.layout) == players + 2
    assert len(set(state.terrain.board_of.values())) == players + 2
    assert len(state.terrain.kind) == 43 * (players + 2)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_03_boards_share_edges_on_one_grid(players: int) -> None:
    ground = new_match(players).state.terrain
    board_of = ground.board_of
    links = {
        (board_of[h], board_of[n])
        for h, ns in ground.adjacent.items()
        for n in ns
        if board_of[h] != board_of[n]
    }
    boards = set(board_of.values())
    reach, todo = {0}, [0]
    while todo:
        b = todo.pop()
        for x, y in links:
            if x == b and y not in reach:
                reach.add(y)
                todo.append(y)
    assert reach == boards
    assert EDITION.macro_basis == ((6, 1), (-1, 7))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_ish_setup_04_compact_presets_each_board_touches_two(players: int) -> None:
    layout = EDITION.presets[players]
    assert min(preset_touching(layout)) >= 2
    assert new_match(players).state.layout == layout


def test_ish_setup_05_custom_layout_accepted_and_used() -> None:
    options = {"layout": _custom(4)}
    match = new_match(2, options=options)
    assert [p.macro for p in match.state.layout] == [(0, 0), (1, 0), (2, 0), (0, 1)]
    assert GAME.check_options(2, options) == options


@pytest.mark.parametrize(
    ("layout", "reason"),
    [
        (_custom(3), "want 4"),
        (_custom(4, [[0, 0], [1, 0], [2, 0], [5, 5]]), "not all connected"),
        (_custom(4, [[0, 0], [1, 0], [1, 0], [0, 1]]), "macro hex"),
        ([*_custom(3), {**_custom(1)[0], "macro": [0, 1]}], "used twice"),
        ([{"board": "board-9", "side": "A", "rotation": 0, "macro": [0, 0]}] * 4, "no board"),
        ([{**e, "rotation": 6} for e in _custom(4)], "rotation"),
        ([{**e, "extra": 1} for e in _custom(4)], "must be"),
        ("compact", "list"),
    ],
)
def test_ish_setup_05_bad_custom_layouts_are_refused(layout: Any, reason: str) -> None:
    with pytest.raises(OptionsError, match=reason):
        GAME.check_options(2, {"layout": layout})


def test_ish_setup_06_any_face_in_any_rotation() -> None:
    for side in "AB":
        for rotation in range(6):
            layout = [{**e, "side": side, "rotation": rotation} for e in _custom(4)]
            GAME.check_options(2, {"layout": layout})
    a = build_terrain(EDITION, EDITION.presets[2])
    assert a.fountain_cells and len(a.fountain_cells) == 4


def test_unknown_options_are_refused() -> None:
    with pytest.raises(OptionsError, match="unknown options"):
        GAME.check_options(2, {"speed": 1})
