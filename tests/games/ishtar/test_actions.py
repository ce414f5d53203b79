"""Collecting gems, the special action and the skills (ISH-GEMS, ISH-SPECIAL, ISH-SKILL)."""

from __future__ import annotations

from typing import Any

from games.base import Match
from games.ishtar import state as st
from games.ishtar.garden import TWO_ASSISTANTS, Vegetation
from games.ishtar.state import State
from tests.games.ishtar.helpers import (
    EDITION,
    choices,
    gem_totals,
    in_hand,
    lay,
    on_terrain,
    pick,
    place,
    play_turn,
    refresh,
    special_after,
    step,
    terrain,
    tile,
)

GEMS3 = {"purple": 1, "red": 1, "white": 1}
NONE = {"purple": 0, "red": 0, "white": 0}


# --------------------------------------------------------------------------- gems


def test_ish_gems_01_covered_rocks_give_their_gems() -> None:
    match = in_hand("straight-12", NONE)
    state = match.state
    before = dict(state.rock_gems)
    place(match, rocks=True)
    cells = [c for c in before if c not in state.rock_gems]
    assert cells
    got = {c: sum(before[x] == c for x in cells) for c in ("purple", "red", "white")}
    assert state.player.gems == got


def test_ish_gems_02_no_rock_no_gem() -> None:
    match = in_hand("straight-12", GEMS3)
    place(match, rocks=False)
    assert match.state.player.gems == GEMS3


def test_ish_gems_04_skill_gems_leave_the_supply_for_good() -> None:
    match = special_after("straight-05", gems={"purple": 2, "red": 1, "white": 0})
    state = match.state
    total = gem_totals(state)
    stock = dict(state.stock)
    pick(match, "skill", skill="H")
    pick(match, "gem", colour="red")
    pick(match, "gem", colour="purple")
    assert state.player.skill_gems == {"H": ["red", "purple"]}
    assert state.player.gems == {"purple": 1, "red": 0, "white": 0}
    assert state.stock == stock and gem_totals(state) == total
    for _ in range(4):
        play_turn(match)
    assert state.players[state.first].skill_gems["H"] == ["red", "purple"]


def test_ish_gems_05_skill_f_takes_only_what_the_stock_has() -> None:
    def scarce(state: State) -> None:
        state.stock = {"purple": 0, "red": 1, "white": 0}

    match = special_after("straight-05", gems={"purple": 2, "red": 0, "white": 0}, prepare=scarce)
    pick(match, "skill", skill="F")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    assert choices(match) == [{"kind": "take_gem", "colour": "red"}]
    pick(match, "take_gem", colour="red")
    assert step(match) == st.PLANT
    assert match.state.player.gems == {"purple": 0, "red": 1, "white": 0}


# --------------------------------------------------------------------------- special action

STRIP = terrain(".........", "F.......F", ".........")


def place_at(match: Match[State], at: tuple[int, int], rotation: int) -> list[Any]:
    pick(match, "position", at=list(at))
    return pick(match, "rotation", rotation=rotation)


def test_ish_special_01_no_icon_no_special_action() -> None:
    match = special_after("straight-12", gems=GEMS3)
    assert step(match) == st.PLANT
    match = special_after("straight-05", gems=GEMS3)
    assert step(match) == st.SPECIAL


def test_ish_special_02_03_declined_and_lost() -> None:
    """Also ISH-SPECIAL-03."""
    match = special_after("straight-01", gems=GEMS3)
    seat = match.state.current
    assert choices(match)[-1] == {"kind": "pass"}
    pick(match, "pass")
    assert step(match) == st.PLANT
    assert match.state.player.assistants == 2
    pick(match, "end_turn")
    assert match.state.current != seat and step(match) == st.CHOOSE


def test_ish_special_04_only_this_turns_tile_counts() -> None:
    match = special_after("straight-01", gems=GEMS3)
    pick(match, "pass")
    pick(match, "end_turn")
    state = match.state
    pick(match, "pile", pile=1)
    state.turn.tile = "straight-12"  # no icon, even though an icon tile lies on the board
    match = refresh(match)
    place(match, rocks=None)
    assert step(match) == st.PLANT


def test_ish_special_05_08_assistant_covers_the_icon_and_controls_its_bed() -> None:
    """Also ISH-SPECIAL-08."""
    match = special_after("straight-03", gems=NONE)
    state = match.state
    (choice,) = choices(match, "assistant")
    cell = tuple(choice["at"])
    assert state.turn.placed is not None
    assert cell == state.turn.placed[0]  # the icon is on space 0 of straight-03
    pick(match, "assistant")
    assert state.veg.assistants[cell] == state.current
    assert state.veg.bed_owner[state.veg.bed_of[cell]] == state.current
    assert (state.player.assistants, state.player.placed) == (1, 1)


def test_ish_special_06_blocked_assistants_cannot_be_placed() -> None:
    def no_supply(state: State) -> None:
        state.player.assistants = 0

    match = special_after("straight-01", gems=GEMS3, prepare=no_supply)
    assert step(match) == st.PLANT  # nothing possible: the step is skipped


def test_ish_special_07_not_into_a_bed_that_has_an_assistant() -> None:
    def bed(state: State) -> None:
        on_terrain(state, STRIP)
        lay(state.veg, tile("g g 2a"), (1, 1))
        state.veg.add_assistant((3, 1), 1 - state.current)

    match = in_hand("straight-01", NONE, prepare=bed)
    events = place_at(match, (4, 1), 0)  # its icon (4,1) joins the bed of (3,1)
    assert "special_unavailable" in [e.kind for e in events]
    assert step(match) == st.PLANT
    match = in_hand("straight-01", NONE, prepare=bed)
    place_at(match, (6, 1), 3)  # icon on (6,1), apart
    assert choices(match, "assistant") == [{"kind": "assistant", "at": [6, 1]}]


def grassy(state: State) -> None:
    on_terrain(state, STRIP)
    lay(state.veg, tile("g g g"), (1, 1))


def test_ish_special_09_skill_icon_offers_skills() -> None:
    match = special_after("straight-05", gems=GEMS3, prepare=grassy)
    kinds = {c["kind"] for c in choices(match)}
    assert kinds == {"skill", "pass"}
    assert [c["skill"] for c in choices(match, "skill")] == ["F", "G", "H", "I", "J"]


def test_ish_special_10_wild_is_either_never_both() -> None:
    match = special_after("straight-08", gems=GEMS3)
    kinds = [c["kind"] for c in choices(match)]
    assert "assistant" in kinds and "skill" in kinds
    pick(match, "assistant")
    assert step(match) == st.PLANT


# --------------------------------------------------------------------------- skills


def test_ish_skill_01_two_gems_of_any_colours_needed() -> None:
    match = special_after("straight-05", gems={"purple": 1, "red": 0, "white": 0})
    assert step(match) == st.PLANT  # one gem: no skill, nothing else: skipped
    match = special_after("straight-05", gems={"purple": 0, "red": 1, "white": 1})
    pick(match, "skill", skill="F")
    assert match.state.turn.pay_left == 2
    pick(match, "gem", colour="white")
    pick(match, "gem", colour="red")
    assert match.state.player.skill_gems["F"] == ["white", "red"]


def test_ish_skill_02_03_04_one_skill_a_turn_each_once() -> None:
    """Also ISH-SKILL-03 ISH-SKILL-04."""
    match = special_after("straight-05", gems={"purple": 4, "red": 0, "white": 0})
    state = match.state
    seat = state.current
    pick(match, "skill", skill="H")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    assert step(match) == st.BLOOM
    match.act(seat, 0)
    assert step(match) == st.PLANT  # no second skill this turn
    pick(match, "end_turn")
    play_turn(match)
    pick(match, "pile", pile=2)
    state.turn.tile = "straight-06"
    state.player.gems = dict(GEMS3)
    match = refresh(match)
    place(match, rocks=None)
    offered = [c["skill"] for c in choices(match, "skill")]
    assert "H" not in offered and "C" in offered
    assert state.player.skill_gems["H"] == ["purple", "purple"]


def test_ish_skill_05_06_upper_needs_its_lower_from_an_earlier_turn() -> None:
    """Also ISH-SKILL-06."""
    match = special_after("straight-05", gems={"purple": 6, "red": 0, "white": 0})
    state = match.state
    assert not any(c["skill"] in "ABCDE" for c in choices(match, "skill"))
    state.player.skills = {"F": state.turn_no, "G": state.turn_no - 1}
    state.player.skill_gems = {"F": ["purple", "purple"], "G": ["purple", "purple"]}
    match = refresh(match)
    offered = [c["skill"] for c in choices(match, "skill")]
    assert "B" in offered and "A" not in offered  # F only this turn
    assert "C" not in offered and "D" not in offered and "E" not in offered
    assert {u: EDITION.skills[u].requires for u in "ABCDE"} == dict(
        zip("ABCDE", "FGHIJ", strict=True)
    )


def test_ish_skill_07_11_f_gives_two_gems_of_any_colours_at_once() -> None:
    """Also ISH-SKILL-11."""
    match = special_after("straight-05", gems={"purple": 2, "red": 0, "white": 0})
    state = match.state
    pick(match, "skill", skill="F")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    assert step(match) == st.TAKE_GEM
    pick(match, "take_gem", colour="white")
    pick(match, "take_gem", colour="white")
    assert state.player.gems == {"purple": 0, "red": 0, "white": 2}
    assert step(match) == st.PLANT


def test_ish_skill_08_letters_and_their_effects() -> None:
    effects = {s.id: s for s in EDITION.skills.values()}
    assert effects["A"].params == {"points_per_tablet": 2}
    assert effects["B"].params == {"points": 7}
    assert effects["D"].params == {"points_per_tree": 2}
    assert effects["E"].params == {"points_per_assistant": 7}
    assert effects["F"].params == {"gems": 2}
    steps = {"G": st.BLOOM, "H": st.BLOOM, "I": st.RESERVE_TREE, "J": st.RESERVE_TILE}
    for skill, want in steps.items():
        match = _unlock(skill, prepare=grassy)
        assert step(match) == want


def _with_lowers(state: State) -> None:
    state.player.skills = {s: 0 for s in "FGHIJ"}
    state.player.skill_gems = {s: ["purple", "purple"] for s in "FGHIJ"}


def test_ish_skill_09_scoring_skills_do_nothing_in_play() -> None:
    for skill in "ACDE":
        match = special_after(
            "straight-05", gems={"purple": 2, "red": 0, "white": 0}, prepare=_with_lowers
        )
        state = match.state
        pick(match, "skill", skill=skill)
        pick(match, "gem", colour="purple")
        pick(match, "gem", colour="purple")
        assert step(match) == st.PLANT and skill in state.player.skills
        assert (state.player.assistants, state.player.blocked) == (2, 2)


def test_ish_skill_10_b_makes_every_icon_wild() -> None:
    def with_b(state: State) -> None:
        _with_lowers(state)
        state.player.skills["B"] = 0
        state.player.skill_gems["B"] = ["red", "red"]

    match = special_after("straight-01", gems=GEMS3, prepare=with_b)  # an assistant icon
    kinds = {c["kind"] for c in choices(match)}
    assert {"assistant", "skill"} <= kinds
    assert match.state.turn.icon == "wild"
    match = special_after("straight-12", gems=GEMS3, prepare=with_b)  # no icon: nothing
    assert step(match) == st.PLANT


def test_ish_skill_12_15_g_double_token_on_two_adjacent_empty_grass() -> None:
    """Also ISH-SKILL-15."""
    match = special_after("straight-05", gems={"purple": 2, "red": 0, "white": 0}, prepare=grassy)
    state = match.state
    pick(match, "skill", skill="G")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    spots = choices(match, "bloom")
    assert spots and all(len(c["cells"]) == 2 for c in spots)
    for c in spots:
        a, b = (tuple(x) for x in c["cells"])
        assert b in state.terrain.adjacent[a]
        assert a in state.veg.empty_grass and b in state.veg.empty_grass
    token = spots[0]["token"]
    assert EDITION.tokens[token].flowers == (2, 1)
    a, b = (tuple(x) for x in spots[0]["cells"])
    pick(match, "bloom", cells=spots[0]["cells"])
    assert state.veg.space[a].flowers == 2 and state.veg.space[b].flowers == 1
    assert a in state.veg.bed_of and token not in state.tokens


def test_ish_skill_13_14_h_single_token_on_empty_grass_only() -> None:
    """Also ISH-SKILL-14."""
    match = special_after("straight-05", gems={"purple": 2, "red": 0, "white": 0}, prepare=grassy)
    state = match.state
    grass = sorted(state.veg.empty_grass, key=lambda h: (h[1], h[0]))
    state.veg.plant(grass[0], 1)  # a tree makes the grass not empty
    pick(match, "skill", skill="H")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    spots = [tuple(c["cells"][0]) for c in choices(match, "bloom")]
    assert spots == grass[1:]
    pick(match, "bloom", cells=[list(grass[1])])
    assert state.veg.space[grass[1]].flowers == 2


def test_ish_skill_16_token_never_joins_two_assistants() -> None:
    veg = Vegetation(STRIP)
    lay(veg, tile("1a g 1a"), (1, 1))
    veg.add_assistant((1, 1), 0)
    veg.add_assistant((3, 1), 1)
    assert veg.bloom_problem([(2, 1)]) == TWO_ASSISTANTS
    assert [(2, 1)] not in veg.bloom_spots(1)


def _unlock(skill: str, **kw: Any) -> Match[State]:
    match = special_after("straight-05", gems={"purple": 2, "red": 0, "white": 0}, **kw)
    pick(match, "skill", skill=skill)
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    return match


def test_ish_skill_17_19_i_reserves_a_display_card_and_frees_an_assistant() -> None:
    """Also ISH-SKILL-19."""
    match = _unlock("I")
    state = match.state
    display = list(state.display)
    assert [c["card"] for c in choices(match)] == display  # ISH-OPEN-5: display only
    events = pick(match, "reserve_tree", card=display[2])
    assert state.player.reserved_tree == display[2]
    assert display[2] not in state.player.planted
    assert (state.player.assistants, state.player.blocked) == (3, 1)
    assert "assistant_freed" in [e.kind for e in events]
    assert state.reserved_marker[state.current]  # ISH-OPEN-7: its marker goes with it
    assert len(state.display) == 4 and state.markers == 15  # ISH-OPEN-6: refill at the end
    pick(match, "end_turn")
    assert len(state.display) == 5 and state.display_marker == [True] * 5
    assert state.markers == 14


def test_ish_skill_18_reserved_card_planted_the_same_turn() -> None:
    """ISH-OPEN-8 too: the Plant step of the reservation's own turn may plant it."""
    match = _unlock("I")
    state = match.state
    card = state.display[0]
    pick(match, "reserve_tree", card=card)
    state.player.gems = dict(EDITION.trees[card].cost)
    match = refresh(match)
    assert {"kind": "buy", "card": card} in choices(match)
    pick(match, "buy", card=card)
    match.act(state.current, 0)
    assert state.player.planted == [card] and state.player.reserved_tree is None
    assert state.player.gems == NONE


def test_ish_skill_19_20_j_reserves_a_face_up_top_and_frees_an_assistant() -> None:
    """Also ISH-SKILL-20."""
    match = _unlock("J")
    state = match.state
    offered = [c["pile"] for c in choices(match)]
    assert state.can not in offered  # its new top is face down
    assert offered == [i for i in range(6) if state.piles[i] and state.top_up[i]]
    pile = offered[0]
    top = state.piles[pile][-1]
    below = state.piles[pile][-2]
    events = pick(match, "reserve_tile", pile=pile)
    assert state.player.reserved_tile == top
    assert (state.player.assistants, state.player.blocked) == (3, 1)
    assert state.top_up[pile] and state.piles[pile][-1] == below  # ISH-OPEN-4
    assert any(e.kind == "tile_revealed" and e.data["tile"] == below for e in events)


def test_ish_open_10_g_and_h_not_offered_without_a_spot() -> None:
    def no_grass(state: State) -> None:
        on_terrain(state, terrain("F...", "...."))

    match = special_after("straight-07", gems={"purple": 2, "red": 0, "white": 0}, prepare=no_grass)
    # straight-07 is 2 1 g: one grass space, no pair of grass spaces
    offered = [c["skill"] for c in choices(match, "skill")]
    assert "G" not in offered and "H" in offered


def test_ish_open_11_g_token_may_straddle_two_tiles() -> None:
    def two_tiles(state: State) -> None:
        on_terrain(state, STRIP)
        lay(state.veg, tile("1 1 g"), (1, 1))  # grass (3,1)
        lay(state.veg, tile("g 1 1"), (4, 1))  # grass (4,1)

    match = special_after(
        "straight-05", gems={"purple": 2, "red": 0, "white": 0}, prepare=two_tiles
    )
    pick(match, "skill", skill="G")
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    spots = [c["cells"] for c in choices(match, "bloom")]
    assert [[3, 1], [4, 1]] in spots
