"""The parts of Ishtar's shared view kept between revisions (games/ishtar/views.py) show what a
fresh count shows: the provisional scores, kept until a flowerbed with an assistant, a tree
next to one or a player's scoring facts change, equal the rulebook's scoring of the position at
every step (ISH-SCORE-03..-16, without the face-down tree cards)."""

from __future__ import annotations

from typing import Any

from games.ishtar import GAME
from games.ishtar.scoring import CATEGORIES, final_scores
from tests.games.ishtar.helpers import game_view
from tests.harness import play_random


def _fresh(state: Any) -> list[dict[str, int]]:
    """The provisional scores counted afresh: the final scoring without the trees."""
    out = []
    for row in final_scores(state):
        shown = {k: row[k] for k in CATEGORIES if k != "trees"}
        shown["total"] = row["total"] - row["trees"]
        out.append(shown)
    return out


def test_ish_score_03_16_provisional_scores_equal_a_fresh_count_at_every_step() -> None:
    """ISH-SCORE-03..-16: flowers, fountains and skills A to E as the final scoring counts
    them, after every step of seeded games (one with undos); skill D with trees on the terrain
    and skills C and E are among the positions checked."""
    seen = {"D with trees": 0, "C": 0, "E": 0}

    def check(m: Any) -> None:
        state = m.state
        if state.over:
            return
        assert game_view(state)["provisional"] == _fresh(state)
        skills = {s for p in state.players for s in p.skills}
        if "D" in skills and state.veg.trees:
            seen["D with trees"] += 1
        for s in ("C", "E"):
            seen[s] += s in skills

    for players, seed in ((3, 9), (2, 18), (2, 21)):  # (seeds whose players take D, C, E)
        play_random(GAME, players, seed, on_step=check)
    play_random(GAME, 4, 5, on_step=check, undo=0.2)
    assert all(seen.values()), seen


def test_provisional_scores_are_the_same_object_while_nothing_they_count_changes() -> None:
    """A view asked for again without a step in between hands out the very same provisional
    scores, beds and fountains (kept fields: the server skips them by identity)."""
    steps = 0

    def check(m: Any) -> None:
        nonlocal steps
        state = m.state
        if state.over:
            return
        first, again = game_view(state), game_view(state)
        for name in ("provisional", "beds", "fountains", "terrain", "players", "piles"):
            assert again[name] is first[name], name
        steps += 1

    play_random(GAME, 4, 7, on_step=check)
    assert steps > 100


def test_ish_score_14_a_tree_planted_next_to_a_bed_of_a_player_with_skill_d_counts_at_once() -> (
    None
):
    """ISH-SCORE-14: a tree planted on the grass next to a flowerbed controlled by a player with
    skill D adds to that player's provisional D score in the very next view, though no bed
    changed."""
    found: list[tuple[Any, int, Any]] = []

    def look(m: Any) -> None:
        state = m.state
        if found or state.over:
            return
        veg = state.veg
        for p in state.players:
            if "D" not in p.skills:
                continue
            for bed, seat in veg.bed_owner.items():
                if seat != p.seat:
                    continue
                for c in veg.beds[bed]:
                    for n in state.terrain.adjacent[c]:
                        if n in veg.empty_grass:
                            found.append((GAME.load(GAME.dump(state)), p.seat, n))
                            return

    play_random(GAME, 3, 9, on_step=look)
    assert found
    state, seat, cell = found[0]
    before = game_view(state)["provisional"][seat]["D"]
    state.veg.plant(cell, seat)
    after = game_view(state)["provisional"]
    assert after == _fresh(state)
    assert after[seat]["D"] > before
