"""The packaged component data: every published count, checked in one place."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

from games.yspahan import data


def test_ysp_setup_08_four_quarters_matching_the_goods_floors() -> None:
    """YSP-SETUP-08: 4 quarters, each one goods floor of the tower; souks carry VP values."""
    assert data.QUARTERS == ("sacks", "barrels", "chests", "vases")
    assert [data.FLOORS[f] for f in data.GOODS_FLOORS] == list(data.QUARTERS)
    assert all(s.vp > 0 for s in data.SOUKS)


def test_ysp_setup_09_souks_shops_and_values() -> None:
    """YSP-SETUP-09: souk sizes and values per quarter; 14 souks and 47 shops."""
    table = {
        q: sorted((len(s.shops), s.vp) for s in data.SOUKS if data.QUARTERS[s.quarter] == q)
        for q in data.QUARTERS
    }
    assert table == {
        "sacks": [(3, 3), (4, 4), (5, 6), (6, 8)],
        "barrels": [(2, 3), (3, 4), (4, 6), (5, 8)],
        "chests": [(2, 4), (3, 6), (4, 8)],
        "vases": [(1, 4), (2, 6), (3, 12)],
    }
    assert len(data.SOUKS) == 14
    assert len(data.SHOP_IDS) == 47
    assert list(data.SHOP_SOUK) == sorted(data.SHOP_SOUK)


def test_ysp_setup_10_the_path_is_a_cross_of_29_squares() -> None:
    """YSP-SETUP-10: centre C plus arms of 10 (west), 7 (east), 4 (north), 7 (south)."""
    arms = Counter(sq.arm for sq in data.SQUARES)
    assert arms == {"centre": 1, "west": 10, "east": 7, "north": 4, "south": 7}
    assert len(data.SQUARES) == 29
    assert data.SQUARES[data.CENTRE].id == "C"
    # The distance table agrees with the adjacency list of the data file.
    for sq in data.SQUARES:
        neighbours = {data.SQUARE_INDEX[n] for n in data.ADJACENCY[sq.id]}
        assert neighbours == {
            o.index for o in data.SQUARES if data.DISTANCE[sq.index][o.index] == 1
        }


def test_ysp_steward_09_squares_face_the_published_shops() -> None:
    """YSP-STEWARD-09: E1 and S1 face two shops, C none, others one; 20 shops face no square."""
    faces = {sq.id: [data.SHOP_IDS[s] for s in sq.faces] for sq in data.SQUARES}
    assert faces["E1"] == ["br2.0", "va1.0"]
    assert faces["S1"] == ["sk3.1", "br2.0"]
    assert faces["C"] == []
    assert faces["W10"] == ["ch3.0"] and faces["N4"] == ["ch4.1"] and faces["S7"] == ["br5.0"]
    assert all(len(f) == 1 for sid, f in faces.items() if sid not in ("C", "E1", "S1"))
    faced = {s for sq in data.SQUARES for s in sq.faces}
    assert len(data.SHOP_IDS) - len(faced) == 20


def test_ysp_tower_02_floors_bottom_to_top() -> None:
    """YSP-TOWER-02: camels, sacks, barrels, chests, vases, gold."""
    assert data.FLOORS == ("camels", "sacks", "barrels", "chests", "vases", "gold")


def test_ysp_setup_11_build_04_the_six_buildings_and_prices() -> None:
    """YSP-SETUP-11, YSP-BUILD-04: the same 6 buildings; prices in camels + gold."""
    prices = {b.id: (b.camels, b.gold) for b in data.BUILDINGS}
    assert prices == {
        "pen": (2, 0),
        "stall": (2, 2),
        "hammam": (2, 2),
        "caravanserai": (3, 3),
        "bazaar": (4, 4),
        "crane": (4, 4),
    }
    assert [b.fr for b in data.BUILDINGS] == [
        "Enclos",
        "Echoppe",
        "Hammam",
        "Caravanserail",
        "Bazar",
        "Palan",
    ]
    assert data.BUILDING_VP == (0, 0, 5, 5, 5, 10)


def test_ysp_setup_06_nine_kinds_of_card_two_of_each() -> None:
    """YSP-SETUP-06: 18 cards, 9 kinds, 2 of each."""
    assert len(data.DECK) == 18
    assert Counter(data.DECK) == dict.fromkeys(data.CARD_KINDS, 2)
    assert set(data.CARD_KINDS) == {
        "3_camels",
        "3_gold",
        "no_camels",
        "no_gold",
        "place_caravan",
        "place_board",
        "score_gold",
        "score_camels",
        "swap_camels_gold",
    }


def test_ysp_caravan_02_03_04_06_caravan_sizes_and_printed_points() -> None:
    """YSP-CARAVAN-02, -03, -04, YSP-CARAVAN-06: rows of 4/3/2; 2, 1, 0 VP; rows worth 1-3."""
    assert data.CARAVAN_ROWS == 3
    assert data.CARAVAN_PER_ROW == {4: 4, 3: 3, 2: 2}
    assert data.CARAVAN_PLACE_VP == (2, 1, 0)
    assert data.CARAVAN_ROW_VALUE == (1, 2, 3)


def test_dice_and_calendar_counts() -> None:
    """YSP-TOWER-03, YSP-TOWER-04, YSP-SETUP-13: 9 white dice (8 with 2), 3 yellow, 3 x 7 days."""
    assert data.WHITE_DICE == {2: 8, 3: 9, 4: 9}
    assert data.YELLOW_MAX == 3 and data.YELLOW_COST == 1
    assert (data.WEEKS, data.DAYS_PER_WEEK) == (3, 7)


def test_packaged_data_is_the_shared_file() -> None:
    """The package ships an exact copy of shared/data/yspahan.json."""
    # (Through the package: a compiled data module's __file__ does not lie beside it.)
    ours = resources.files("games.yspahan").joinpath("yspahan.json")
    shared = Path(__file__).resolve().parents[4] / "shared" / "data" / "yspahan.json"
    if shared.exists():
        assert json.loads(ours.read_text()) == json.loads(shared.read_text())
