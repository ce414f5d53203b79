"""The special action, the skills and the Plant step.

Special action (ISH-SPECIAL): the icon of the tile placed this turn offers an assistant (on that
icon's space), a skill (2 gems on a free skill), either (wild), or nothing; skill B turns every
icon its owner places into a wild one. A skill is paid gem by gem (the ``pay`` step), then
unlocked; a lower skill acts at once (ISH-SKILL-07): F takes 2 gems from the stock, G and H lay
a blooming token, I reserves a display card, J reserves a face-up pile top, and I and J each free
one blocked assistant.

Plant (ISH-TREE): buy affordable cards with a marker (display or own reservation) one at a time,
put each tree on empty grass, then end the turn; the display is refilled at the end of the step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from games.base import JSON, Choice, Event
from games.ishtar import state as st
from games.ishtar.edition import COLOURS, LOWER, UPPER
from games.ishtar.state import Player, State
from games.ishtar.turn import as_hex, check_trigger, end_turn, hx

LOWER_OF: Final = dict(zip(UPPER, LOWER, strict=True))
"""The lower skill each upper skill needs first, unlocked on an earlier turn (ISH-SKILL-05)."""
TOKEN_SIZE: Final = {"G": 2, "H": 1}
"""Spaces of the blooming token each skill lays."""


# --------------------------------------------------------------------------- special action


def token_for(state: State, skill: str) -> str | None:
    size = TOKEN_SIZE[skill]
    for tid in state.tokens:
        if len(state.edition.tokens[tid].offsets) == size:
            return tid
    return None


def skill_open(state: State, player: Player, skill: str) -> bool:
    """May ``player`` unlock ``skill`` now, gems aside (ISH-SKILL-04/-05, ISH-OPEN-10)."""
    if skill in player.skills:
        return False
    if skill in LOWER_OF:
        lower = LOWER_OF[skill]
        return lower in player.skills and player.skills[lower] < state.turn_no
    if skill in TOKEN_SIZE:
        return token_for(state, skill) is not None and state.veg.can_bloom(TOKEN_SIZE[skill])
    if skill == "I":
        return bool(state.display)
    if skill == "J":
        return any(p and up for p, up in zip(state.piles, state.top_up, strict=True))
    return True


def icon_cell(state: State) -> tuple[int, int]:
    placed = state.turn.placed
    assert placed is not None
    cells = state.veg.tile_at
    tile = state.edition.tiles[cells[placed[0]]]
    assert tile.icon_space is not None
    return placed[tile.icon_space]


def special_choices(state: State) -> list[Choice]:
    player, icon = state.player, state.turn.icon
    out: list[Choice] = []
    if icon in ("assistant", "wild") and player.assistants > 0:
        cell = icon_cell(state)
        if state.veg.assistant_problem(cell) is None:
            out.append({"kind": "assistant", "at": hx(cell)})
    if icon in ("skill", "wild") and sum(player.gems.values()) >= 2:
        out.extend(
            {"kind": "skill", "skill": s} for s in UPPER + LOWER if skill_open(state, player, s)
        )
    out.append({"kind": "pass"})
    return out


def apply_special(state: State, choice: Choice) -> list[Event]:
    seat, player, turn = state.current, state.player, state.turn
    kind = choice["kind"]
    if kind == "assistant":
        cell = as_hex(choice["at"])
        player.assistants -= 1
        player.placed += 1
        state.veg.add_assistant(cell, seat)
        state.laid.append({"assistant": seat, "at": hx(cell)})
        turn.step = st.PLANT
        return [Event("assistant_placed", {"seat": seat, "at": hx(cell)})]
    if kind == "skill":
        skill = choice["skill"]
        assert isinstance(skill, str)
        turn.skill, turn.step, turn.pay_for, turn.pay_left = skill, st.PAY, "skill", 2
        return [Event("skill_chosen", {"seat": seat, "skill": skill})]
    turn.step = st.PLANT
    return [Event("special_declined", {"seat": seat})]


def unlock(state: State) -> list[Event]:
    """The 2 gems are on the skill: record it and start its effect."""
    seat, player, turn = state.current, state.player, state.turn
    skill = turn.skill
    assert skill is not None
    player.skills[skill] = state.turn_no
    events = [
        Event(
            "skill_unlocked",
            {"seat": seat, "skill": skill, "gems": list(player.skill_gems[skill])},
        )
    ]
    turn.step = st.PLANT
    if skill == "F":
        turn.take_left = int(state.edition.skills["F"].params.get("gems", 2))
        if sum(state.stock.values()):
            turn.step = st.TAKE_GEM
    elif skill in TOKEN_SIZE:
        turn.step = st.BLOOM
    elif skill == "I":
        turn.step = st.RESERVE_TREE
    elif skill == "J":
        turn.step = st.RESERVE_TILE
    return events


def _free_assistant(state: State) -> list[Event]:
    player = state.player
    if not player.blocked:
        return []
    player.blocked -= 1
    player.assistants += 1
    return [Event("assistant_freed", {"seat": state.current})]


def choices_take_gem(state: State) -> list[Choice]:
    return [{"kind": "take_gem", "colour": c} for c in COLOURS if state.stock[c] > 0]


def apply_take_gem(state: State, choice: Choice) -> list[Event]:
    colour = choice["colour"]
    assert isinstance(colour, str)
    state.stock[colour] -= 1
    state.player.gems[colour] += 1
    state.turn.take_left -= 1
    if state.turn.take_left == 0 or not sum(state.stock.values()):
        state.turn.step = st.PLANT
    return [Event("gem_taken", {"seat": state.current, "colour": colour})]


def choices_bloom(state: State) -> list[Choice]:
    skill = state.turn.skill
    assert skill is not None
    token = token_for(state, skill)
    assert token is not None
    return [
        {"kind": "bloom", "token": token, "cells": [hx(c) for c in cells]}
        for cells in state.veg.bloom_spots(TOKEN_SIZE[skill])
    ]


def apply_bloom(state: State, choice: Choice) -> list[Event]:
    token = choice["token"]
    raw = choice["cells"]
    assert isinstance(token, str) and isinstance(raw, list)
    cells = [as_hex(c) for c in raw]
    state.veg.bloom(token, cells, state.edition.tokens[token].flowers)
    state.tokens.remove(token)
    state.laid.append({"token": token, "cells": [hx(c) for c in cells]})
    state.turn.step = st.PLANT
    return [Event("bloom_placed", {"seat": state.current, "token": token, "cells": raw})]


def choices_reserve_tree(state: State) -> list[Choice]:
    return [{"kind": "reserve_tree", "card": card} for card in state.display]


def apply_reserve_tree(state: State, choice: Choice) -> list[Event]:
    card = choice["card"]
    assert isinstance(card, str)
    i = state.display.index(card)
    state.display.pop(i)
    state.reserved_marker[state.current] = state.display_marker.pop(i)
    state.player.reserved_tree = card
    state.turn.step = st.PLANT
    return [Event("tree_reserved", {"seat": state.current, "card": card}), *_free_assistant(state)]


def choices_reserve_tile(state: State) -> list[Choice]:
    return [
        {"kind": "reserve_tile", "pile": i, "tile": pile[-1]}
        for i, pile in enumerate(state.piles)
        if pile and state.top_up[i]
    ]


def apply_reserve_tile(state: State, choice: Choice) -> list[Event]:
    pile = choice["pile"]
    assert isinstance(pile, int)
    tile = state.piles[pile].pop()
    state.player.reserved_tile = tile
    events = [Event("tile_reserved", {"seat": state.current, "pile": pile, "tile": tile})]
    state.top_up[pile] = bool(state.piles[pile])  # ISH-OPEN-4: the new top is turned at once
    if state.piles[pile]:
        events.append(Event("tile_revealed", {"pile": pile, "tile": state.piles[pile][-1]}))
    events.extend(check_trigger(state))
    events.extend(_free_assistant(state))
    state.turn.step = st.PLANT
    return events


# --------------------------------------------------------------------------- plant


def affordable(gems: Mapping[str, int], cost: Mapping[str, int]) -> bool:
    """Exact payment colour by colour (ISH-TREE-03): no substitution between colours."""
    return all(gems[c] >= n for c, n in cost.items())


def choices_plant(state: State) -> list[Choice]:
    player = state.player
    out: list[Choice] = []
    if state.veg.empty_grass:
        trees = state.edition.trees
        for card, marker in zip(state.display, state.display_marker, strict=True):
            if marker and affordable(player.gems, trees[card].cost):
                out.append({"kind": "buy", "card": card})
        reserved = player.reserved_tree
        if (
            reserved is not None
            and state.reserved_marker[player.seat]
            and affordable(player.gems, trees[reserved].cost)
        ):
            out.append({"kind": "buy", "card": reserved})
    out.append({"kind": "end_turn"})
    return out


def apply_plant(state: State, choice: Choice) -> list[Event]:
    if choice["kind"] == "end_turn":
        return end_turn(state)
    player, card = state.player, choice["card"]
    assert isinstance(card, str)
    if card == player.reserved_tree:
        player.reserved_tree = None
        state.reserved_marker[player.seat] = False
    else:
        i = state.display.index(card)
        state.display.pop(i)
        state.display_marker.pop(i)
    cost = state.edition.trees[card].cost
    for colour, n in cost.items():
        player.gems[colour] -= n
        state.stock[colour] += n
    player.planted.append(card)
    state.turn.buying, state.turn.step = card, st.TREE
    paid: dict[str, JSON] = {c: cost[c] for c in COLOURS}
    return [
        Event("tree_bought", {"seat": state.current, "paid": paid}, {state.current: {"card": card}})
    ]


def choices_tree(state: State) -> list[Choice]:
    card = state.turn.buying
    assert card is not None
    return [
        {"kind": "tree", "card": card, "at": hx(c)}
        for c in sorted(state.veg.empty_grass, key=lambda h: (h[1], h[0]))
    ]


def apply_tree(state: State, choice: Choice) -> list[Event]:
    seat, card = state.current, state.turn.buying
    assert card is not None
    cell = as_hex(choice["at"])
    state.veg.plant(cell, seat)
    state.laid.append({"tree": seat, "at": hx(cell)})
    state.turn.buying, state.turn.step = None, st.PLANT
    points = state.edition.trees[card].points
    return [
        Event(
            "tree_planted", {"seat": seat, "at": hx(cell)}, {seat: {"card": card, "points": points}}
        )
    ]


def refill(state: State) -> list[Event]:
    """Reveal cards until the display shows 5 again, a marker on each while markers last."""
    shown: list[str] = []
    while len(state.display) < state.edition.display_size and state.deck:
        card = state.deck.pop()
        marker = state.markers > 0
        state.markers -= int(marker)
        state.display.append(card)
        state.display_marker.append(marker)
        shown.append(card)
    return [Event("display_refilled", {"cards": list(shown)})] if shown else []
