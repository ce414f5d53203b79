"""The packaged edition: its counts, and the validation that refuses a broken edition file."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from games.errors import EditionError
from games.ishtar.edition import COLOURS, SHAPES, default_edition, load_edition, parse_edition
from games.ishtar.hexes import rotate

ED = default_edition()


def _raw() -> Any:
    text = resources.files("games.ishtar").joinpath("ishtar-edition.json").read_text("utf-8")
    return json.loads(text)


SHARED_EDITION = Path(__file__).resolve().parents[4] / "shared" / "data" / "ishtar-edition.json"


@pytest.mark.skipif(not SHARED_EDITION.exists(), reason="no shared/ beside the repository")
def test_packaged_edition_is_the_shared_one() -> None:
    """The shipped copy is the one shared/data/ validates (CI has shared/ beside the repo)."""
    assert json.loads(SHARED_EDITION.read_text("utf-8")) == _raw()


def test_ish_setup_06_six_double_sided_boards_twelve_faces() -> None:
    assert len(ED.boards) == 6
    assert len(ED.faces) == 12
    assert {side for _, side in ED.faces} == {"A", "B"}


def test_ish_setup_07_faces_are_43_spaces_with_one_fountain_tablets_and_rocks() -> None:
    assert len(ED.board_spaces) == 43
    for face in ED.faces.values():
        assert face.fountain in ED.board_spaces
        assert 3 <= len(face.tablets) <= 4
        assert 7 <= len(face.rocks) <= 9
        sand = set(ED.board_spaces) - {face.fountain} - face.tablets - set(face.rocks)
        assert len(sand) == 43 - 1 - len(face.tablets) - len(face.rocks)


def test_ish_setup_08_gem_rarity_per_face_and_no_two_faces_alike() -> None:
    signatures = set()
    for face in ED.faces.values():
        gems = Counter(face.rocks.values())
        assert gems["white"] < gems["red"] <= gems["purple"]
        kinds = {face.fountain: "F", **dict.fromkeys(face.tablets, "T"), **face.rocks}
        for k in range(6):
            sig = frozenset((rotate(h, k), v) for h, v in kinds.items())
            assert sig not in signatures
        signatures.add(frozenset(kinds.items()))


def test_ish_setup_15_42_tiles_14_per_shape_12_basic_2_starting() -> None:
    """Also ISH-SETUP-42."""
    assert len(ED.tiles) == 42
    for shape in SHAPES:
        group = [t for t in ED.tiles.values() if t.shape == shape]
        assert len(group) == 14
        assert sum(t.starting for t in group) == 2


def test_ish_setup_15_shapes_are_the_three_hex_trominoes() -> None:
    straight, triangle, chevron = (ED.shapes[s] for s in SHAPES)
    assert straight == ((0, 0), (1, 0), (2, 0))
    assert triangle == ((0, 0), (1, 0), (0, 1))
    assert chevron == ((0, 0), (1, 0), (2, -1))


def test_ish_setup_16_spaces_are_grass_or_1_to_4_flowers() -> None:
    for tile in ED.tiles.values():
        assert len(tile.spaces) == 3
        assert all(0 <= sp.flowers <= 4 for sp in tile.spaces)
        assert 0 <= sum(sp.flowers for sp in tile.spaces) <= 8


def test_ish_setup_17_icons_on_flower_spaces_of_basic_tiles_only() -> None:
    for shape in SHAPES:
        icons: Counter[str] = Counter()
        for tile in ED.tiles.values():
            if tile.shape != shape:
                continue
            marked = [sp for sp in tile.spaces if sp.icon]
            assert len(marked) <= 1
            assert all(sp.flowers >= 1 for sp in marked)
            if tile.starting:
                assert not marked and tile.icon is None
            icons.update(sp.icon for sp in marked if sp.icon)
        assert 3 <= icons["assistant"] <= 5 and 2 <= icons["skill"] <= 4 and 1 <= icons["wild"] <= 2


def test_ish_setup_18_blooming_tokens() -> None:
    kinds = Counter((len(t.offsets), t.flowers) for t in ED.tokens.values())
    assert kinds == Counter({(1, (2,)): 4, (2, (2, 1)): 4})


def test_ish_setup_20_tree_cards_costs_and_points() -> None:
    assert len(ED.trees) == 26
    costs = []
    for card in ED.trees.values():
        assert 1 <= sum(card.cost.values()) <= 4
        costs.append(dict(card.cost))
    assert {"purple": 0, "red": 2, "white": 1} in costs
    points = Counter(c.points for c in ED.trees.values())
    assert points[4] >= 1 and points[7] >= 1 and points[8] >= 2 and points[11] >= 1
    for a in ED.trees.values():
        for b in ED.trees.values():
            if all(a.cost[c] <= b.cost[c] for c in COLOURS) and a.cost != b.cost:
                assert a.points < b.points, (a.id, b.id)


def test_ish_setup_24_every_player_board_has_the_same_ten_skills() -> None:
    assert list(ED.skills) == list("ABCDEFGHIJ")
    assert [s.upper for s in ED.skills.values()] == [True] * 5 + [False] * 5


def _broken(change: Any) -> str:
    raw = _raw()
    change(raw)
    with pytest.raises(EditionError) as info:
        parse_edition(raw)
    return info.value.message


def test_ish_setup_25_edition_counts_are_validated_with_clear_errors() -> None:
    assert "42" in _broken(lambda r: r["vegetation_tiles"].pop())
    assert "26" in _broken(lambda r: r["tree_cards"].pop())
    assert "want 6" in _broken(lambda r: r["terrain_boards"].pop())
    assert "fountains" in _broken(lambda r: r["fountains"].pop())
    assert "gem_stock" in _broken(lambda r: r["gem_stock"].update(purple=49))
    assert "markers" in _broken(lambda r: r["components"].update(tree_markers=19))
    assert "blooming" in _broken(lambda r: r["blooming_tokens"].pop())
    assert "cups" in _broken(lambda r: r["cups"].pop())
    assert "missing field 'fountain'" in _broken(
        lambda r: r["terrain_boards"][0]["faces"][0].pop("fountain")
    )
    assert "icon" in _broken(
        lambda r: r["vegetation_tiles"][12]["spaces"][0].update(icon="assistant")
    )


def test_ish_setup_25_preset_layouts_are_validated() -> None:
    def overlap(raw: Any) -> None:
        raw["layouts"]["presets"][0]["boards"][1]["macro"] = [0, 0]

    assert "macro hex" in _broken(overlap)


def test_edition_text_that_is_not_json_is_refused() -> None:
    with pytest.raises(EditionError, match="not JSON"):
        load_edition("{")
    with pytest.raises(EditionError):
        load_edition("[]")


def test_edition_is_data_not_code_a_changed_file_changes_the_game() -> None:
    raw = _raw()
    raw = copy.deepcopy(raw)
    raw["tree_cards"][0]["points"] = 2
    assert parse_edition(raw).trees["tree-01"].points == 2
