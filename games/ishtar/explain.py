"""Why a well-formed choice is refused: a true reason, named in the rules' terms.

Only called on the error path (:meth:`~games.base.Match.resolve` found no legal choice that the
answer names), so it may recompute freely; it never mutates the state. One explainer per turn
step, looked up in ``_STEPS`` like the game's step table; each checks the answer against the
rules in the order a player would meet them and returns the first rule broken. ``None`` means
no rule is broken by the fields it knows: the answer differs from the legal choice in a field
that is not a rule's business (the base then says "not a legal choice now").

Every branch is tested with an answer whose true reason is known
(``tests/games/ishtar/test_explain.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games.base import JSON, Choice, same
from games.ishtar import state as st
from games.ishtar.actions import LOWER_OF, TOKEN_SIZE, affordable, icon_cell, token_for
from games.ishtar.edition import COLOURS
from games.ishtar.garden import TWO_ASSISTANTS, tile_cells
from games.ishtar.hexes import DIRECTIONS, Hex
from games.ishtar.state import State
from games.ishtar.turn import choices_choose, gem_total, hx, placements, shape_rotations

Explainer = Callable[[State, Choice], str | None]


def why_illegal(state: State, choice: Choice) -> str | None:
    """The rule a refused answer breaks, or None (see the module docstring)."""
    explain = _STEPS.get(state.turn.step)
    return None if explain is None else explain(state, choice)


def _hex(raw: Any) -> Hex | None:
    if isinstance(raw, list) and len(raw) == 2 and all(type(v) is int for v in raw):
        return (raw[0], raw[1])
    return None


def _int(raw: Any) -> int | None:
    return raw if type(raw) is int else None


def _gems(n: int) -> str:
    return f"{n} gem{'s' if n != 1 else ''}"


# --------------------------------------------------------------------------- choose, pay


def _choose(state: State, choice: Choice) -> str | None:
    kind, player = choice.get("kind"), state.player
    if kind == "pile":
        pile = _int(choice.get("pile"))
        if pile is None or not 0 <= pile < len(state.piles):
            return f"no pile {choice.get('pile')!r}: the piles are 0 to {len(state.piles) - 1}"
        if not state.piles[pile]:
            return f"pile {pile} is empty"
        listed = next((c for c in choices_choose(state) if c.get("pile") == pile), None)
        if listed is not None:
            cost = listed["cost"]
            if not same(cost, choice.get("cost")):
                return (
                    f"moving the can to pile {pile} costs {cost}, not {choice.get('cost')!r}:"
                    " send the cost as listed"
                )
            return None
        if pile == state.can:
            return "the watering can must move on to another pile"
        need = _can_cost(state, pile)
        have = gem_total(player.gems)
        return f"moving the can to pile {pile} costs {_gems(need)}, more than the {have} you have"
    if kind == "reserved":
        if player.reserved_tile is None:
            return "you hold no reserved tile"
        if choice.get("tile") != player.reserved_tile:
            return f"your reserved tile is {player.reserved_tile}"
        return None
    if kind == "skip" and {"kind": "skip"} not in choices_choose(state):
        return "a tile can be taken, so the choose step cannot be skipped"
    return None


def _can_cost(state: State, pile: int) -> int:
    """Gems to move the can from its pile to ``pile``: the first non-empty pile on is free."""
    assert state.can is not None
    passed = 0
    for step in range(1, len(state.piles)):
        i = (state.can + step) % len(state.piles)
        if state.piles[i]:
            if i == pile:
                return passed
            passed += 1
    return passed


def _pay(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "gem":
        return None
    colour = choice.get("colour")
    if colour not in COLOURS:
        return f"no gem colour {colour!r}: the colours are {', '.join(COLOURS)}"
    if state.player.gems[str(colour)] == 0:
        return f"you have no {colour} gem"
    return None


# --------------------------------------------------------------------------- place


def _tile_and_at(state: State, choice: Choice) -> tuple[str | None, Hex | None]:
    if choice.get("tile") != state.turn.tile:
        return f"that is not the tile in hand ({state.turn.tile})", None
    at = _hex(choice.get("at"))
    if at is None:
        return "'at' must be a [q, r] pair of integers", None
    return None, at


def _position(state: State, choice: Choice) -> str | None:
    kind = choice.get("kind")
    if kind == "rotation":
        return "choose the position first (kind 'position'); its rotation is the next decision"
    if kind not in ("position", "discard"):
        return None
    if kind == "discard":
        if choice.get("tile") != state.turn.tile:
            return f"that is not the tile in hand ({state.turn.tile})"
        if placements(state):
            return "the tile fits somewhere: a tile is discarded only when it fits nowhere"
        return None
    problem, at = _tile_and_at(state, choice)
    if at is None:
        return problem
    tile = state.edition.tiles[state.turn.tile or ""]
    rots = shape_rotations(state, tile)
    reasons = [state.veg.placement_problem(tile, tile_cells(at, r)) for r in rots]
    if all(reasons):
        distinct = sorted({r for r in reasons if r})
        return f"the tile fits at {hx(at)} in no rotation: {'; '.join(distinct)}"
    fitting: list[JSON] = [k for k, r in enumerate(reasons) if r is None]
    if "rotations" in choice and not same(fitting, choice["rotations"]):
        return (
            f"the rotations that fit at {hx(at)} are {fitting}:"
            " send them as listed, or leave 'rotations' out"
        )
    return None


def _rotation(state: State, choice: Choice) -> str | None:
    kind = choice.get("kind")
    anchor = state.turn.anchor
    assert anchor is not None
    if kind == "position":
        return f"the position is chosen ({hx(anchor)}): now choose the rotation there"
    if kind != "rotation":
        return None
    problem, at = _tile_and_at(state, choice)
    if at is None:
        return problem
    if at != anchor:
        return f"the rotation must be for the position already chosen, {hx(anchor)}"
    k = _int(choice.get("rotation"))
    if k is None or not 0 <= k < 6:
        return "'rotation' must be an integer from 0 to 5"
    tile = state.edition.tiles[state.turn.tile or ""]
    cells = tile_cells(at, shape_rotations(state, tile)[k])
    reason = state.veg.placement_problem(tile, cells)
    if reason:
        return reason
    listed: list[JSON] = [hx(c) for c in cells]
    if "cells" in choice and not same(listed, choice["cells"]):
        return (
            f"rotation {k} at {hx(at)} covers {listed}: send the cells as listed, or leave"
            " 'cells' out"
        )
    return None


# --------------------------------------------------------------------------- special action


def _special(state: State, choice: Choice) -> str | None:
    kind, player, icon = choice.get("kind"), state.player, state.turn.icon
    if kind == "assistant":
        if icon not in ("assistant", "wild"):
            return "this tile offers no assistant"
        if player.assistants == 0:
            return "you have no assistant in your supply"
        at = _hex(choice.get("at"))
        cell = icon_cell(state)
        if at != cell:
            return f"the assistant goes on the icon of the tile just placed, at {hx(cell)}"
        return state.veg.assistant_problem(cell)
    if kind == "skill":
        return _skill(state, choice.get("skill"))
    return None


def _skill(state: State, skill: object) -> str | None:
    player, icon = state.player, state.turn.icon
    if icon not in ("skill", "wild"):
        return "this tile offers no skill"
    if not isinstance(skill, str) or skill not in state.edition.skills:
        return f"no skill {skill!r}: the skills are {', '.join(state.edition.skills)}"
    if skill in player.skills:
        return f"skill {skill} is already unlocked: each skill is unlocked only once"
    gems = gem_total(player.gems)
    if gems < 2:
        return f"a skill costs 2 gems and you have {gems}"
    if skill in LOWER_OF:
        lower = LOWER_OF[skill]
        if lower not in player.skills:
            return f"skill {skill} needs skill {lower}, below it, unlocked first"
        if player.skills[lower] >= state.turn_no:
            return f"skill {skill} needs skill {lower} unlocked on an earlier turn"
    if skill in TOKEN_SIZE:
        size = TOKEN_SIZE[skill]
        if token_for(state, skill) is None:
            return f"no blooming token of {size} space{'s' if size > 1 else ''} is left"
        if not state.veg.bloom_spots(size):
            return _no_bloom_spot(state, size)
    if skill == "I" and not state.display:
        return "no tree card is on display to reserve"
    if skill == "J" and not any(p and up for p, up in zip(state.piles, state.top_up, strict=True)):
        return "no pile shows a face-up tile to reserve"
    return None


def _no_bloom_spot(state: State, size: int) -> str:
    grass = state.veg.empty_grass
    if not grass:
        return "no empty grass space is left for a blooming token"
    if size == 2 and not any(
        (a[0] + dq, a[1] + dr) in grass for a in grass for dq, dr in DIRECTIONS
    ):
        return "no two adjacent empty grass spaces are left for the token"
    return f"every empty grass spot for the token is refused: {TWO_ASSISTANTS}"


def _take_gem(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "take_gem":
        return None
    colour = choice.get("colour")
    if colour not in COLOURS:
        return f"no gem colour {colour!r}: the colours are {', '.join(COLOURS)}"
    if state.stock[str(colour)] == 0:
        return f"the stock has no {colour} gem left"
    return None


def _bloom(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "bloom":
        return None
    skill = state.turn.skill or ""
    token, size = token_for(state, skill), TOKEN_SIZE[skill]
    if choice.get("token") != token:
        return f"the token to place is {token}"
    raw = choice.get("cells")
    cells = [_hex(c) for c in raw] if isinstance(raw, list) else [None]
    if any(c is None for c in cells):
        return "'cells' must be a list of [q, r] pairs of integers"
    spaces = [c for c in cells if c is not None]
    if len(spaces) != size:
        return f"this token covers {size} space{'s' if size > 1 else ''}"
    if size == 2:
        (a, b) = spaces
        if (b[0] - a[0], b[1] - a[1]) not in DIRECTIONS:
            return "the two spaces of the token must be adjacent"
    return state.veg.bloom_problem(spaces)


def _reserve_tree(state: State, choice: Choice) -> str | None:
    if choice.get("kind") == "reserve_tree" and choice.get("card") not in state.display:
        return "that card is not on display"
    return None


def _reserve_tile(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "reserve_tile":
        return None
    pile = _int(choice.get("pile"))
    if pile is None or not 0 <= pile < len(state.piles):
        return f"no pile {choice.get('pile')!r}: the piles are 0 to {len(state.piles) - 1}"
    if not state.piles[pile]:
        return f"pile {pile} is empty"
    if not state.top_up[pile]:
        return f"the top tile of pile {pile} is face down"
    top = state.piles[pile][-1]
    if choice.get("tile") != top:
        return f"the top tile of pile {pile} is {top}"
    return None


# --------------------------------------------------------------------------- plant


def _plant(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "buy":
        return None
    player, card = state.player, choice.get("card")
    if not isinstance(card, str) or card not in state.edition.trees:
        return f"no tree card {card!r}"
    if card == player.reserved_tree:
        marker = state.reserved_marker[player.seat]
    elif card in state.display:
        marker = state.display_marker[state.display.index(card)]
    else:
        return "that card is neither on display nor reserved by you"
    if not affordable(player.gems, state.edition.trees[card].cost):
        cost = ", ".join(f"{n} {c}" for c, n in state.edition.trees[card].cost.items() if n)
        return f"you cannot pay for that card ({cost})"
    if not state.veg.empty_grass:
        return "no empty grass space is left for a tree"
    if not marker:
        return "that card has no tree marker left"
    return None


def _tree(state: State, choice: Choice) -> str | None:
    if choice.get("kind") != "tree":
        return None
    card = state.turn.buying
    if choice.get("card") != card:
        return f"the tree to place is that of card {card}"
    at = _hex(choice.get("at"))
    if at is None:
        return "'at' must be a [q, r] pair of integers"
    veg = state.veg
    if at in veg.trees:
        return "that space already has a tree"
    if at in veg.bed_of:
        return "a tree goes on a grass space, not on flowers or a blooming token"
    if at not in veg.space:
        return "a tree goes on a grass space of a tile in play"
    return None


_STEPS: dict[str, Explainer] = {
    st.CHOOSE: _choose,
    st.PAY: _pay,
    st.POSITION: _position,
    st.ROTATION: _rotation,
    st.SPECIAL: _special,
    st.TAKE_GEM: _take_gem,
    st.BLOOM: _bloom,
    st.RESERVE_TREE: _reserve_tree,
    st.RESERVE_TILE: _reserve_tile,
    st.PLANT: _plant,
    st.TREE: _tree,
}
