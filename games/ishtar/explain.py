"""Why a well-formed choice is refused: readable reasons for the common mistakes.

Only called on the error path (Match found no equal legal choice), so it may recompute freely.
It never mutates the state.
"""

from __future__ import annotations

from typing import Any

from games.base import Choice
from games.ishtar import state as st
from games.ishtar.actions import affordable, skill_open
from games.ishtar.garden import NOT_EMPTY_GRASS, tile_cells
from games.ishtar.state import State
from games.ishtar.turn import gem_total, shape_rotations


def _hex(raw: Any) -> tuple[int, int] | None:
    if isinstance(raw, list) and len(raw) == 2 and all(type(v) is int for v in raw):
        return (raw[0], raw[1])
    return None


def why_illegal(state: State, choice: Choice) -> str | None:
    step, kind, player = state.turn.step, choice.get("kind"), state.player
    if kind in ("position", "rotation") and step in (st.POSITION, st.ROTATION):
        if choice.get("tile") != state.turn.tile:
            return "that is not the tile in hand"
        at = _hex(choice.get("at"))
        if at is None:
            return "'at' must be a [q, r] pair of integers"
        tile = state.edition.tiles[state.turn.tile or ""]
        rots = shape_rotations(state, tile)
        ks = [choice["rotation"]] if kind == "rotation" else list(range(6))
        reasons = []
        for k in ks:
            if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < 6:
                return "rotation must be 0..5"
            reasons.append(state.veg.placement_problem(tile, tile_cells(at, rots[k])))
        if kind == "rotation" and state.turn.anchor is not None and at != state.turn.anchor:
            return "the rotation must be for the position already chosen"
        if kind == "position" and any(r is None for r in reasons):
            return "send the position as listed (with its rotations), or its index"
        return next((r for r in reasons if r), None)
    if kind == "pile" and step == st.CHOOSE:
        pile = choice.get("pile")
        if not isinstance(pile, int) or not 0 <= pile < len(state.piles):
            return "no such pile"
        if not state.piles[pile]:
            return "that pile is empty"
        if pile == state.can:
            return "the watering can must move on to another pile"
        return f"moving the can there costs more gems than the {gem_total(player.gems)} you have"
    if kind == "skill" and step == st.SPECIAL:
        skill = choice.get("skill")
        if state.turn.icon not in ("skill", "wild"):
            return "this tile offers no skill"
        if gem_total(player.gems) < 2:
            return "a skill costs 2 gems"
        if not isinstance(skill, str) or skill not in state.edition.skills:
            return "no such skill"
        if skill in player.skills:
            return "each skill is unlocked only once"
        if not skill_open(state, player, skill):
            return "that skill is not available now (an upper skill needs its lower skill first)"
    if kind == "assistant" and step == st.SPECIAL:
        if state.turn.icon not in ("assistant", "wild"):
            return "this tile offers no assistant"
        if player.assistants == 0:
            return "you have no assistant in your supply"
        return "that flowerbed already has an assistant"
    if kind == "buy" and step == st.PLANT:
        card = choice.get("card")
        if not isinstance(card, str) or card not in state.edition.trees:
            return "no such tree card"
        if card not in state.display and card != player.reserved_tree:
            return "that card is neither on display nor reserved by you"
        if not affordable(player.gems, state.edition.trees[card].cost):
            return "you cannot pay for that card"
        if not state.veg.empty_grass:
            return "no empty grass space is left for a tree"
        return "that card has no tree marker left"
    if kind in ("tree", "bloom"):
        return NOT_EMPTY_GRASS
    if kind == "gem" and step == st.PAY:
        return "you have no gem of that colour"
    return None
