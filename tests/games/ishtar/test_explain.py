"""Refusal reasons (games/ishtar/explain.py): every branch, each with an answer whose true
reason is known, checked through :meth:`Match.act` (the path a client's answer takes).

Three reasons the outside audit found false (issue 22, item 6) have their own tests first.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.base import Match
from games.errors import IllegalChoice
from games.ishtar import GAME
from games.ishtar import state as st
from games.ishtar.garden import NOT_EMPTY_GRASS, OFF_BOARD, TWO_ASSISTANTS
from games.ishtar.state import State
from tests.games.ishtar.helpers import (
    choices,
    empty_pile,
    in_hand,
    lay,
    new_match,
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

NONE = {"purple": 0, "red": 0, "white": 0}
TWO = {"purple": 2, "red": 0, "white": 0}
STRIP = terrain(".........", "F.......F", ".........")


def refused(match: Match[State], answer: dict[str, Any]) -> str:
    """The message of the refusal of ``answer`` (the state must not change)."""
    before = GAME.dump(match.state)
    decision = match.decision
    assert decision is not None
    with pytest.raises(IllegalChoice) as info:
        match.act(decision.seat, answer)
    assert GAME.dump(match.state) == before
    return info.value.message


def second_turn(gems: dict[str, int]) -> Match[State]:
    """The second player's choose step: the can on pile 0, every pile full."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    play_turn(match)
    match.state.player.gems = dict(gems)
    return refresh(match)


def unlocked(skill: str, prepare: Any = None) -> Match[State]:
    """The bloom (or other) step right after unlocking the lower ``skill`` with 2 gems."""
    match = special_after("straight-05", gems=TWO, prepare=prepare)
    pick(match, "skill", skill=skill)
    pick(match, "gem", colour="purple")
    pick(match, "gem", colour="purple")
    return match


# --------------------------------------------------------------------------- the audit's three


def test_ish_choose_06_07_a_wrong_cost_is_named_not_a_lack_of_gems() -> None:
    """ISH-CHOOSE-06, ISH-CHOOSE-07: «move the Watering Can to the pile of your choice,
    spending one Gem for each extra advancement». From pile 0 with 3 gems, pile 3 costs 2: an
    answer with cost 0 is refused for the cost it sends, not for a lack of gems."""
    match = second_turn({"purple": 3, "red": 0, "white": 0})
    assert {"kind": "pile", "pile": 3, "cost": 2} in choices(match)
    why = refused(match, {"kind": "pile", "pile": 3, "cost": 0})
    assert why.startswith("moving the can to pile 3 costs 2, not 0")
    assert "more than" not in why


def test_ish_special_05_an_assistant_off_the_icon_is_told_to_cover_it() -> None:
    """ISH-SPECIAL-05: «you may immediately place an Assistant on that Tile to cover that
    icon». Another space of the new tile is refused because the assistant must cover the icon
    (its flowerbed has no assistant, so that is not the reason)."""
    match = special_after("straight-03", gems=NONE)
    (listed,) = choices(match, "assistant")
    placed = match.state.turn.placed
    assert placed is not None and listed["at"] == list(placed[0])
    why = refused(match, {"kind": "assistant", "at": list(placed[2])})
    assert why == f"the assistant goes on the icon of the tile just placed, at {listed['at']}"


def _two_beds(state: State) -> None:
    """Two one-flower beds with an assistant each, (1, 1) and (3, 1), grass (2, 1) between."""
    on_terrain(state, STRIP)
    lay(state.veg, tile("1 g 1"), (1, 1))
    state.veg.add_assistant((1, 1), 0)
    state.veg.add_assistant((3, 1), 1)


def test_ish_skill_16_a_token_joining_two_assistants_names_that_rule() -> None:
    """ISH-SKILL-16: «Il est interdit ... de regrouper plusieurs assistants sur un même parterre
    de fleurs» (French summary, §Placement; ishtar.md (d)6 applies it to blooming tokens). The
    grass space between two assistants' beds is empty grass: the reason is the one-assistant
    rule, not "empty grass spaces only"."""
    match = unlocked("H", prepare=_two_beds)
    assert step(match) == st.BLOOM
    spots = [c["cells"] for c in choices(match, "bloom")]
    assert [[2, 1]] not in spots and spots
    assert (2, 1) in match.state.veg.empty_grass
    token = choices(match, "bloom")[0]["token"]
    why = refused(match, {"kind": "bloom", "token": token, "cells": [[2, 1]]})
    assert why == TWO_ASSISTANTS


# --------------------------------------------------------------------------- choose and pay


def test_ish_choose_06_07_too_few_gems_for_the_pile() -> None:
    """ISH-CHOOSE-07: the can may not go further than the supply pays for."""
    match = second_turn(NONE)
    why = refused(match, {"kind": "pile", "pile": 3, "cost": 2})
    assert why == "moving the can to pile 3 costs 2 gems, more than the 0 you have"


def test_ish_choose_04_open_1_the_can_must_move_on() -> None:
    """ISH-CHOOSE-04, ISH-OPEN-1: the can moves on; it may not stay or go all the way round."""
    match = second_turn({"purple": 9, "red": 0, "white": 0})
    why = refused(match, {"kind": "pile", "pile": 0, "cost": 5})
    assert why == "the watering can must move on to another pile"


def test_ish_choose_05_no_such_pile_and_empty_piles() -> None:
    """ISH-CHOOSE-05: the can never stops on an empty pile."""
    match = second_turn(TWO)
    assert refused(match, {"kind": "pile", "pile": 8, "cost": 0}).startswith("no pile 8")
    assert refused(match, {"kind": "pile", "pile": "1", "cost": 0}).startswith("no pile '1'")
    empty_pile(match.state, 2)
    match = refresh(match)
    assert refused(match, {"kind": "pile", "pile": 2, "cost": 1}) == "pile 2 is empty"


def test_ish_choose_11_reserved_tile_and_skip() -> None:
    """ISH-CHOOSE-11: only a reserved tile may be taken instead; ISH-OPEN-3: skip only when no
    tile can be taken."""
    match = second_turn(TWO)
    assert refused(match, {"kind": "reserved", "tile": "straight-01"}) == (
        "you hold no reserved tile"
    )
    match.state.player.reserved_tile = "straight-02"
    match = refresh(match)
    why = refused(match, {"kind": "reserved", "tile": "straight-01"})
    assert why == "your reserved tile is straight-02"
    why = refused(match, {"kind": "skip"})
    assert why == "a tile can be taken, so the choose step cannot be skipped"


def test_a_listed_pile_with_a_stray_field_is_refused_without_a_false_reason() -> None:
    match = second_turn(TWO)
    why = refused(match, {"kind": "pile", "pile": 1, "cost": 0, "extra": 1})
    assert why == "not a legal choose choice now"


def test_ish_choose_06_gems_paid_for_the_can() -> None:
    """ISH-CHOOSE-06, ISH-CHOOSE-07: the gems paid come from the supply, of any colour in it."""
    match = second_turn({"purple": 0, "red": 2, "white": 0})
    pick(match, "pile", pile=2, cost=1)
    assert step(match) == st.PAY
    assert refused(match, {"kind": "gem", "colour": "purple"}) == "you have no purple gem"
    assert refused(match, {"kind": "gem", "colour": "gold"}).startswith("no gem colour 'gold'")


# --------------------------------------------------------------------------- position, rotation


def test_ish_place_01_position_refusals() -> None:
    """ISH-PLACE-01: the tile in hand, on the boards, in one of its rotations; ISH-OPEN-2: a tile
    is discarded only when it fits nowhere."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    tile_id = match.state.turn.tile
    assert refused(match, {"kind": "position", "tile": "nope", "at": [0, 0]}) == (
        f"that is not the tile in hand ({tile_id})"
    )
    assert refused(match, {"kind": "position", "tile": tile_id, "at": [0]}) == (
        "'at' must be a [q, r] pair of integers"
    )
    assert refused(match, {"kind": "position", "tile": tile_id, "at": [500, 500]}) == (
        f"the tile fits at [500, 500] in no rotation: {OFF_BOARD}"
    )
    assert refused(match, {"kind": "discard", "tile": tile_id}) == (
        "the tile fits somewhere: a tile is discarded only when it fits nowhere"
    )
    assert refused(match, {"kind": "discard", "tile": "nope"}) == (
        f"that is not the tile in hand ({tile_id})"
    )
    first = choices(match, "position")[0]
    why = refused(match, {**first, "rotation": first["rotations"][0], "kind": "rotation"})
    assert why.startswith("choose the position first")


def test_ish_place_01_a_position_with_a_wrong_rotations_list_says_so() -> None:
    """ISH-PLACE-01: a position sent with ``rotations`` must list them exactly."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    first = choices(match, "position")[0]
    wrong = [k for k in range(6) if k not in first["rotations"]][:1] + first["rotations"]
    why = refused(match, {**first, "rotations": wrong})
    assert why == (
        f"the rotations that fit at {first['at']} are {first['rotations']}: send them as listed,"
        " or leave 'rotations' out"
    )


def _at_rotation_step() -> tuple[Match[State], dict[str, Any]]:
    """The rotation step at an anchor where some rotation does not fit."""
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    position = next(c for c in choices(match, "position") if len(c["rotations"]) < 6)
    match.act(match.state.current, {k: v for k, v in position.items() if k != "rotations"})
    return match, position


def test_ish_place_01_rotation_refusals() -> None:
    """ISH-PLACE-01: the rotation of the chosen position, 0 to 5, where the tile fits."""
    match, position = _at_rotation_step()
    at, tile_id = position["at"], position["tile"]
    good = choices(match, "rotation")[0]
    assert refused(match, dict(position)) == (
        f"the position is chosen ({at}): now choose the rotation there"
    )
    assert refused(match, {**good, "tile": "nope"}) == f"that is not the tile in hand ({tile_id})"
    assert refused(match, {**good, "at": "here"}) == "'at' must be a [q, r] pair of integers"
    other = [at[0] + 1, at[1]]
    assert refused(match, {**good, "at": other}) == (
        f"the rotation must be for the position already chosen, {at}"
    )
    for bad in (6, -1, "1"):
        why = refused(match, {"kind": "rotation", "tile": tile_id, "at": at, "rotation": bad})
        assert why == "'rotation' must be an integer from 0 to 5"
    missing = next(k for k in range(6) if k not in position["rotations"])
    state = match.state
    from games.ishtar.garden import tile_cells
    from games.ishtar.turn import shape_rotations

    t = state.edition.tiles[tile_id]
    cells = tile_cells(tuple(at), shape_rotations(state, t)[missing])
    reason = state.veg.placement_problem(t, cells)
    assert reason
    why = refused(match, {"kind": "rotation", "tile": tile_id, "at": at, "rotation": missing})
    assert why == reason
    wrong_cells = list(reversed(good["cells"]))
    why = refused(match, {**good, "cells": wrong_cells})
    assert why == (
        f"rotation {good['rotation']} at {at} covers {good['cells']}: send the cells as listed,"
        " or leave 'cells' out"
    )


# --------------------------------------------------------------------------- special action


def test_ish_special_01_05_06_assistant_refusals() -> None:
    """ISH-SPECIAL-01, ISH-SPECIAL-05, ISH-SPECIAL-06: only an assistant or wild icon offers an
    assistant, and only from the supply."""
    match = special_after("straight-05", gems=TWO)  # a skill icon
    cell = match.state.turn.placed
    assert cell is not None
    why = refused(match, {"kind": "assistant", "at": list(cell[0])})
    assert why == "this tile offers no assistant"

    def no_supply(state: State) -> None:
        state.player.assistants = 0

    match = special_after("straight-08", gems=TWO, prepare=no_supply)  # wild: skills remain
    placed = match.state.turn.placed
    assert placed is not None
    why = refused(match, {"kind": "assistant", "at": list(placed[1])})
    assert why == "you have no assistant in your supply"


def test_ish_special_07_the_icons_bed_already_has_an_assistant() -> None:
    """ISH-SPECIAL-07: not into a flowerbed that already holds an assistant."""

    def bed(state: State) -> None:
        on_terrain(state, STRIP)
        lay(state.veg, tile("g 2 2"), (1, 1))
        state.veg.add_assistant((3, 1), 1 - state.current)

    match = in_hand("straight-08", TWO, prepare=bed)  # wild icon on space 1
    pick(match, "position", at=[6, 1])
    pick(match, "rotation", rotation=3)  # (6,1) g, (5,1) icon, (4,1) flower: the bed of (3,1)
    placed = match.state.turn.placed
    assert placed is not None
    icon = list(placed[1])
    assert not choices(match, "assistant")
    why = refused(match, {"kind": "assistant", "at": icon})
    assert why == "that flowerbed already has an assistant"


def test_ish_skill_01_04_05_skill_refusals() -> None:
    """ISH-SKILL-01 (2 gems), ISH-SKILL-04 (once), ISH-SKILL-05 (upper after lower, earlier)."""
    match = special_after("straight-03", gems=TWO)  # an assistant icon
    assert refused(match, {"kind": "skill", "skill": "F"}) == "this tile offers no skill"
    match = special_after("straight-08", gems=NONE)  # wild, no gems
    assert refused(match, {"kind": "skill", "skill": "F"}) == "a skill costs 2 gems and you have 0"

    def some_skills(state: State) -> None:
        state.player.skills = {"F": 0, "G": state.turn_no}
        state.player.skill_gems = {"F": ["red", "red"], "G": ["red", "red"]}

    match = special_after("straight-05", gems=TWO, prepare=some_skills)
    assert refused(match, {"kind": "skill", "skill": "Z"}).startswith("no skill 'Z'")
    assert refused(match, {"kind": "skill", "skill": "F"}) == (
        "skill F is already unlocked: each skill is unlocked only once"
    )
    assert refused(match, {"kind": "skill", "skill": "C"}) == (
        "skill C needs skill H, below it, unlocked first"
    )
    assert refused(match, {"kind": "skill", "skill": "B"}) == (
        "skill B needs skill G unlocked on an earlier turn"
    )


def test_ish_open_10_skills_that_cannot_act_say_why() -> None:
    """ISH-OPEN-10: G, H, I and J are refused when they could not act, for that reason."""

    def no_tokens(state: State) -> None:
        grassy(state)
        state.tokens = [t for t in state.tokens if "double" not in t]

    match = special_after("straight-05", gems=TWO, prepare=no_tokens)
    assert refused(match, {"kind": "skill", "skill": "G"}) == (
        "no blooming token of 2 spaces is left"
    )
    match = special_after("straight-07", gems=TWO, prepare=one_grass)  # 2 1 g: one grass space
    assert refused(match, {"kind": "skill", "skill": "G"}) == (
        "no two adjacent empty grass spaces are left for the token"
    )

    def no_grass(state: State) -> None:
        one_grass(state)
        state.turn.tile = "straight-01"

    match = special_after("straight-12", gems=TWO, prepare=one_grass)  # all grass, no icon
    assert step(match) == st.PLANT
    match = in_hand("straight-05", TWO, prepare=one_grass)
    place(match, rocks=None)
    state = match.state
    for cell in list(state.veg.empty_grass):
        state.veg.plant(cell, 0)
    match = refresh(match)
    assert refused(match, {"kind": "skill", "skill": "H"}) == (
        "no empty grass space is left for a blooming token"
    )

    def walled(state: State) -> None:
        _two_beds(state)

    match = special_after("straight-07", gems=TWO, prepare=walled)
    state = match.state
    for cell in list(state.veg.empty_grass):
        if cell != (2, 1):
            state.veg.plant(cell, 0)
    match = refresh(match)
    assert refused(match, {"kind": "skill", "skill": "H"}) == (
        f"every empty grass spot for the token is refused: {TWO_ASSISTANTS}"
    )
    state.display.clear()
    state.display_marker.clear()
    match = refresh(match)
    assert refused(match, {"kind": "skill", "skill": "I"}) == (
        "no tree card is on display to reserve"
    )
    state.top_up[:] = [False] * len(state.top_up)
    match = refresh(match)
    assert refused(match, {"kind": "skill", "skill": "J"}) == (
        "no pile shows a face-up tile to reserve"
    )


def grassy(state: State) -> None:
    on_terrain(state, STRIP)
    lay(state.veg, tile("g g g"), (1, 1))


def one_grass(state: State) -> None:
    on_terrain(state, terrain("F...", "...."))


# --------------------------------------------------------------------------- lower skills


def test_ish_skill_11_take_gem_refusals() -> None:
    """ISH-SKILL-11: F takes what the stock has, of the colours chosen."""

    def scarce(state: State) -> None:
        state.stock = {"purple": 0, "red": 3, "white": 3}

    match = unlocked("F", prepare=scarce)
    assert step(match) == st.TAKE_GEM
    why = refused(match, {"kind": "take_gem", "colour": "purple"})
    assert why == "the stock has no purple gem left"
    assert refused(match, {"kind": "take_gem", "colour": "jade"}).startswith("no gem colour")


def test_ish_skill_12_13_14_bloom_refusals() -> None:
    """ISH-SKILL-12/-13 (the token and its spaces), ISH-SKILL-14 (empty grass only)."""
    match = unlocked("G", prepare=grassy)
    assert step(match) == st.BLOOM
    spot = choices(match, "bloom")[0]
    token, (a, b) = spot["token"], spot["cells"]
    assert refused(match, {**spot, "token": "bloom-single-1"}) == f"the token to place is {token}"
    assert refused(match, {**spot, "cells": [a, "b"]}) == (
        "'cells' must be a list of [q, r] pairs of integers"
    )
    assert refused(match, {**spot, "cells": [a]}) == "this token covers 2 spaces"
    far = [a[0] + 3, a[1]]
    assert refused(match, {**spot, "cells": [a, far]}) == (
        "the two spaces of the token must be adjacent"
    )
    placed = match.state.turn.placed
    assert placed is not None
    flower = list(placed[0])  # the skill icon's flower space
    near = next(
        list(n) for n in match.state.terrain.adjacent[placed[0]] if list(n) != list(placed[1])
    )
    why = refused(match, {**spot, "cells": [flower, near]})
    assert why == NOT_EMPTY_GRASS
    assert b


def test_ish_skill_17_20_reservation_refusals() -> None:
    """ISH-SKILL-17 (a display card), ISH-SKILL-20 (a face-up pile top)."""
    match = unlocked("I")
    state = match.state
    assert refused(match, {"kind": "reserve_tree", "card": state.deck[0]}) == (
        "that card is not on display"
    )
    match = unlocked("J")
    state = match.state
    assert refused(match, {"kind": "reserve_tile", "pile": 9, "tile": "x"}).startswith("no pile 9")
    down = state.can
    assert down is not None and not state.top_up[down]
    top = state.piles[down][-1]
    assert refused(match, {"kind": "reserve_tile", "pile": down, "tile": top}) == (
        f"the top tile of pile {down} is face down"
    )
    up = next(i for i, p in enumerate(state.piles) if p and state.top_up[i])
    assert refused(match, {"kind": "reserve_tile", "pile": up, "tile": "x"}) == (
        f"the top tile of pile {up} is {state.piles[up][-1]}"
    )
    other = next(i for i in range(len(state.piles)) if i not in (up, down))
    empty_pile(state, other)
    match = refresh(match)
    assert refused(match, {"kind": "reserve_tile", "pile": other, "tile": "x"}) == (
        f"pile {other} is empty"
    )


# --------------------------------------------------------------------------- plant


def _plant_step(prepare: Any = None) -> Match[State]:
    match = in_hand("straight-12", NONE, prepare=prepare)  # no icon: straight to Plant
    place(match, rocks=False)
    assert step(match) == st.PLANT
    return match


def test_ish_tree_02_03_07_buy_refusals() -> None:
    """ISH-TREE-02 (display or own reservation), ISH-TREE-03 (pay exactly), ISH-TREE-07 (an
    empty grass space for its tree), ISH-OPEN-9 (a card without marker)."""
    match = _plant_step()
    state = match.state
    assert refused(match, {"kind": "buy", "card": "tree-99"}) == "no tree card 'tree-99'"
    assert refused(match, {"kind": "buy", "card": state.deck[0]}) == (
        "that card is neither on display nor reserved by you"
    )
    card = state.display[0]
    assert refused(match, {"kind": "buy", "card": card}).startswith(
        "you cannot pay for that card ("
    )
    state.player.gems = {"purple": 9, "red": 9, "white": 9}
    state.display_marker[0] = False
    match = refresh(match)
    assert refused(match, {"kind": "buy", "card": card}) == "that card has no tree marker left"
    state.player.reserved_tree = state.deck.pop()
    state.reserved_marker[state.current] = False
    match = refresh(match)
    assert refused(match, {"kind": "buy", "card": state.player.reserved_tree}) == (
        "that card has no tree marker left"
    )
    for cell in list(state.veg.empty_grass):
        state.veg.plant(cell, 1)
    match = refresh(match)
    assert refused(match, {"kind": "buy", "card": state.display[1]}) == (
        "no empty grass space is left for a tree"
    )


def test_ish_tree_05_06_tree_space_refusals() -> None:
    """ISH-TREE-05 (an empty grass space of a tile in play), ISH-TREE-06 (never on flowers or
    on another tree)."""

    def board(state: State) -> None:
        on_terrain(state, STRIP)
        lay(state.veg, tile("2 g g"), (1, 1))

    match = _plant_step(prepare=board)
    state = match.state
    state.player.gems = {"purple": 9, "red": 9, "white": 9}
    match = refresh(match)
    card = state.display[0]
    pick(match, "buy", card=card)
    assert step(match) == st.TREE
    assert refused(match, {"kind": "tree", "card": "x", "at": [2, 1]}) == (
        f"the tree to place is that of card {card}"
    )
    assert refused(match, {"kind": "tree", "card": card, "at": None}) == (
        "'at' must be a [q, r] pair of integers"
    )
    assert refused(match, {"kind": "tree", "card": card, "at": [1, 1]}) == (
        "a tree goes on a grass space, not on flowers or a blooming token"
    )
    sand = next(c for c in sorted(state.terrain.coverable) if c not in state.veg.space)
    assert refused(match, {"kind": "tree", "card": card, "at": list(sand)}) == (
        "a tree goes on a grass space of a tile in play"
    )
    state.veg.plant((2, 1), 1)
    match = refresh(match)
    assert refused(match, {"kind": "tree", "card": card, "at": [2, 1]}) == (
        "that space already has a tree"
    )


# --------------------------------------------------------------------------- no false reasons


@pytest.mark.parametrize("seed", range(3))
def test_a_listed_choice_with_a_stray_field_gets_no_invented_reason(seed: int) -> None:
    """At every decision of random matches, a legal choice with one field too many is refused
    without a reason (no rule is broken: only the map is wrong), and with an integer sent as a
    float it is refused for its types. The reason given must never be a rule it does not break.
    """
    from games.rng import Rng

    match = new_match(2 + seed % 3, 40 + seed)
    rng = Rng.from_seed(seed)
    while (decision := match.decision) is not None:
        legal = dict(rng.choice(list(decision.choices)))
        why = refused(match, {**legal, "stray": 1})
        assert why == f"not a legal {decision.kind} choice now", (legal, why)
        ints = [k for k, v in legal.items() if type(v) is int]
        if ints:
            why = refused(match, {**legal, ints[0]: float(legal[ints[0]])})
            assert why.startswith("true, 1 and 1.0 are different answers"), (legal, why)
        match.act(decision.seat, legal)
