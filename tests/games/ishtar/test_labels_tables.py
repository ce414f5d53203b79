"""Labels read from the tables kept by games/ishtar/labels.py say what they say written afresh:
position labels (kept per space and number of rotations) and tile texts (kept per tile)."""

from __future__ import annotations

from games.base import Match
from games.ishtar import GAME
from games.ishtar import labels as words
from games.ishtar.labels import tile_text
from games.rng import Rng
from tests.games.ishtar.helpers import EDITION, new_match


def test_position_labels_from_the_table_read_as_written_afresh() -> None:
    positions = 0
    for seed in range(3):
        match = Match.new(GAME, 4, {}, 70 + seed)
        chooser = Rng.from_seed(seed)
        while (decision := match.decision) is not None:
            if decision.kind == "position":
                state = match.state
                for _ in range(2):  # (the second time every label comes from the table)
                    for legal, shown in zip(
                        decision.choices, GAME.describe(state, decision), strict=True
                    ):
                        if legal["kind"] != "position":
                            continue
                        cell, rotations = legal["at"], legal["rotations"]
                        assert isinstance(cell, list) and isinstance(rotations, list)
                        assert shown["label"] == words._position_text(state, cell, len(rotations))
                        assert shown == {**legal, "label": shown["label"]}
                        positions += 1
            match.act(decision.seat, chooser.below(len(decision.choices)))
    assert positions > 1000


def test_a_position_off_the_table_is_labelled_all_the_same() -> None:
    """A space outside the terrain's box, or more rotations than the table holds, is written
    each time (no engine lists them: the fallback of the table)."""
    state = new_match(2).state
    table = words._position_labels(state)
    assert table.label(state, [99, -99], 2) == (
        "put the tile's first space on (99,-99) (2 ways to turn it)"
    )
    q, r = next(iter(state.terrain.names))
    name = state.terrain.names[(q, r)]
    assert (
        table.label(state, [q, r], 9) == f"put the tile's first space on {name} (9 ways to turn it)"
    )
    assert (
        table.label(state, [q, r], 1) == f"put the tile's first space on {name} (1 way to turn it)"
    )


def test_tile_texts_from_the_table_read_as_written_afresh() -> None:
    state = new_match(3).state
    for tid, tile in EDITION.tiles.items():
        assert words._tile(state, tid) == tile_text(tile)
        assert words._tile(state, tid) == tile_text(tile)


def test_matches_on_one_layout_share_the_position_labels_and_the_tile_texts() -> None:
    """The label tables read only the terrain's names and the edition's tiles: two matches on
    the same layout share one position table, two on another layout do not, and a match on the
    same edition reads the tile texts another one wrote."""
    first, second = new_match(4, 1).state, new_match(4, 2).state
    other = new_match(2, 1).state
    assert first.terrain is second.terrain and other.terrain is not first.terrain
    table = words._position_labels(first)
    assert words._position_labels(second) is table
    assert words._position_labels(other) is not table
    tid = next(iter(EDITION.tiles))
    text = words._tile(first, tid)
    assert words._tile_texts(EDITION)[tid] is text
    assert words._tile(other, tid) is text


def test_spaces_are_named_from_the_table_as_the_terrain_names_them() -> None:
    """``at`` reads a space's name from the terrain's flat table: the name the terrain gives
    every space, as a listed ``[q, r]`` or a space, and ``(q,r)`` off the terrain."""
    for players in (2, 3, 4):
        state = new_match(players).state
        names = state.terrain.names
        for (q, r), name in names.items():
            assert words.at(state, [q, r]) == name
            assert words.at(state, (q, r)) == name
        assert words.at(state, [99, -99]) == "(99,-99)"
        q, r = next(iter(names))
        assert words.at(state, [float(q), r]) == names[(q, r)]
