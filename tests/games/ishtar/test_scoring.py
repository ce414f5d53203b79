"""Final scoring (ISH-SCORE), with the rulebook's example rebuilt as a position."""

from __future__ import annotations

from typing import Any

from games.ishtar.garden import Vegetation
from games.ishtar.scoring import CATEGORIES, score_position, winners
from games.ishtar.state import Player
from games.ishtar.views import shared_view
from tests.games.ishtar.helpers import EDITION, lay, terrain, tile
from tests.harness import play_random

# Row 1 holds four fountains: purple (0,1), red (12,1), purple (20,1), white (30,1).
GROUND = terrain(
    ".....................T.T.T......",
    "F...........F.......F.........F.",
    "......................T.........",
)
POINTS = {(0, 1): 4, (12, 1): 6, (20, 1): 4, (30, 1): 8}


def _player(seat: int, **kw: object) -> Player:
    p = Player(seat, ("yellow", "blue")[seat], {"purple": 0, "red": 0, "white": 0}, 0, 0)
    for k, v in kw.items():
        setattr(p, k, v)
    p.skill_gems = {s: ["purple", "purple"] for s in p.skills}
    return p


def rulebook_example() -> tuple[Vegetation, list[Player]]:
    veg = Vegetation(GROUND)
    lay(veg, tile("2a 2 2"), (1, 1))  # Yellow's bed: 2+2+2 ...
    lay(veg, tile("1 1 g"), (4, 1))  # ... +1+1 = 8 flowers on 5 spaces
    lay(veg, tile("g g g"), (1, 0))  # grass for Yellow's two trees
    lay(veg, tile("1a 1 g"), (7, 1))  # Blue: 2 spaces at the same purple fountain
    lay(veg, tile("2a 2 2"), (21, 1))  # Blue: 12 flowers on 6 spaces at the other purple
    lay(veg, tile("2 2 2"), (24, 1))
    lay(veg, tile("g g g"), (24, 2))  # grass for three trees next to Blue's bed
    veg.add_assistant((1, 1), 0)
    veg.add_assistant((7, 1), 1)
    veg.add_assistant((21, 1), 1)
    for cell in [(1, 0), (2, 0)]:
        veg.plant(cell, 0)
    for cell in [(24, 2), (25, 2), (26, 2)]:
        veg.plant(cell, 1)
    yellow = _player(
        0,
        planted=["tree-19", "tree-14"],
        gems={"purple": 3, "red": 0, "white": 0},
        assistants=2,
        placed=1,
        blocked=1,
        skills={"G": 1, "H": 2, "J": 3, "B": 4, "C": 5, "E": 6},
    )
    blue = _player(
        1,
        planted=["tree-15", "tree-10", "tree-05"],
        gems={"purple": 1, "red": 2, "white": 0},
        placed=2,
        skills={"F": 1, "I": 2, "A": 3, "D": 4},
    )
    return veg, [yellow, blue]


def _score(veg: Vegetation, players: list[Player]) -> list[dict[str, int]]:
    return score_position(EDITION, GROUND, veg, POINTS, players)


def test_ish_score_19_rulebook_example_yellow_61_blue_51() -> None:
    veg, players = rulebook_example()
    yellow, blue = _score(veg, players)
    assert yellow == {
        "trees": 19, "flowers": 8, "fountains": 4,
        "A": 0, "B": 7, "C": 9, "D": 0, "E": 14, "total": 61,
    }  # fmt: skip
    assert blue == {
        "trees": 19, "flowers": 14, "fountains": 4,
        "A": 8, "D": 6, "B": 0, "C": 0, "E": 0, "total": 51,
    }  # fmt: skip
    assert winners([yellow, blue]) == (0,)


def test_ish_score_01_02_planted_cards_score_a_reserved_one_does_not() -> None:
    """Also ISH-SCORE-02."""
    veg, players = rulebook_example()
    players[0].reserved_tree = "tree-26"
    assert _score(veg, players)[0]["trees"] == 19


def test_ish_score_03_04_flowers_of_controlled_beds_tokens_included() -> None:
    """ISH-OPEN-12 too: the flowers under the assistant (its icon space) count.

    Also ISH-SCORE-04.
    """
    veg, players = rulebook_example()
    lay(veg, tile("3 3 3"), (13, 1))  # a bed with no assistant scores for no one
    rows = _score(veg, players)
    assert rows[0]["flowers"] == 8 and rows[1]["flowers"] == 14
    veg.bloom("bloom-single-1", [(3, 0)], (2,))  # a token on grass beside Yellow's bed
    assert _score(veg, players)[0]["flowers"] == 10


def test_ish_score_05_06_fountain_counts_flower_spaces_not_flowers() -> None:
    """Also ISH-SCORE-06."""
    veg, players = rulebook_example()
    lay(veg, tile("4 4 g"), (8, 2))  # Blue's bed there: 4 spaces, 10 flowers (Yellow: 5, 8)
    rows = _score(veg, players)
    assert rows[1]["flowers"] == 14 + 8
    assert rows[0]["fountains"] == 4 and rows[1]["fountains"] == 4


def test_ish_score_07_tied_players_all_control() -> None:
    """ISH-OPEN-15: the English rule (ties all control) is followed, not the French summary."""
    veg, players = rulebook_example()
    lay(veg, tile("1 1 1"), (8, 2))  # Blue's bed there grows to 5 spaces: 5 against 5
    rows = _score(veg, players)
    assert rows[0]["fountains"] == 4 and rows[1]["fountains"] == 8


def test_ish_score_08_09_uncontrolled_fountains_and_values() -> None:
    """Also ISH-SCORE-09."""
    veg, players = rulebook_example()
    rows = _score(veg, players)
    assert rows[0]["fountains"] + rows[1]["fountains"] == 8  # red and white: no one
    lay(veg, tile("1a g g"), (13, 1))  # a bed at the red fountain with Yellow's assistant
    veg.add_assistant((13, 1), 0)
    assert _score(veg, players)[0]["fountains"] == 4 + 6
    lay(veg, tile("g g 1a"), (29, 0))  # and at the white fountain, Blue's
    veg.add_assistant((31, 0), 1)
    assert _score(veg, players)[1]["fountains"] == 4 + 8


def test_ish_score_10_lower_skills_score_nothing() -> None:
    veg, players = rulebook_example()
    players[1].skills = {s: 1 for s in "FGHIJ"}
    row = _score(veg, players)[1]
    assert all(row[k] == 0 for k in "ABCDE")


def test_ish_score_11_a_tablet_counts_once_per_player() -> None:
    """The tablet (22,2) touches two spaces of Blue's bed and counts once: 4 tablets, 8 VP."""
    veg, players = rulebook_example()
    assert (22, 2) in GROUND.adjacent[(22, 1)] and (22, 2) in GROUND.adjacent[(23, 1)]
    assert _score(veg, players)[1]["A"] == 8


def test_ish_score_12_13_b_is_seven_c_counts_the_supply_only() -> None:
    """ISH-OPEN-13: gems on the skill board do not count for C.

    Also ISH-SCORE-13.
    """
    veg, players = rulebook_example()
    players[0].gems = {"purple": 1, "red": 2, "white": 3}
    row = _score(veg, players)[0]
    assert row["B"] == 7 and row["C"] == 3 + 4 + 3


def test_ish_score_14_d_counts_any_players_trees_once() -> None:
    """ISH-OPEN-14: trees planted by others count too; (25,2) touches two bed spaces, once."""
    veg, players = rulebook_example()
    veg.trees[(24, 2)] = 0  # Yellow's tree now
    assert _score(veg, players)[1]["D"] == 6


def test_ish_score_15_e_counts_assistants_in_supply_only() -> None:
    veg, players = rulebook_example()
    players[0].assistants, players[0].blocked = 1, 2
    assert _score(veg, players)[0]["E"] == 7


def test_ish_score_16_17_18_totals_winners_and_ties() -> None:
    """Also ISH-SCORE-17 ISH-SCORE-18."""
    veg, players = rulebook_example()
    rows = _score(veg, players)
    for row in rows:
        assert row["total"] == sum(row[k] for k in CATEGORIES)
    rows[1]["total"] = rows[0]["total"]
    assert winners(rows) == (0, 1)


def test_ish_score_16_final_view_gives_the_breakdown() -> None:
    from games.ishtar import GAME

    out = play_random(GAME, 3, 8)
    assert out.match is not None
    view: Any = shared_view(out.match.state)
    result = out.match.result()
    assert result is not None
    assert view["scores"] == [dict(b) for b in result.breakdown]
    assert all(set(row) == {*CATEGORIES, "total"} for row in view["scores"])
    assert result.winners == winners(view["scores"])
