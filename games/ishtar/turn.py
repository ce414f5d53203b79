"""A turn as a sequence of small decisions: the choose, place and end-of-turn steps.

Each step is a pair of functions: ``choices_<step>(state)`` lists the legal choices in a stable
order, and ``apply_<step>(state, choice)`` performs a legal one (trusted) and moves the turn to
its next step. The special action, skills and trees live in :mod:`games.ishtar.actions`.

Placement is split in two decisions so both lists stay short: ``position`` (where the tile's
space 0, its anchor, goes; only anchors with at least one legal rotation are offered, each with
the list of its legal ``rotations`` so a client can let the player pick both before sending) and
then ``rotation`` (one of those). A tile that fits nowhere offers a single
``discard`` choice (ISH-OPEN-2).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any, cast, overload

from games.base import JSON, Choice, Event
from games.ishtar import state as st
from games.ishtar.edition import COLOURS, Tile
from games.ishtar.garden import rotations, tile_cells
from games.ishtar.hexes import Hex
from games.ishtar.state import State


def hx(h: Hex) -> list[JSON]:
    """A space as it travels in choices, events and views: ``[q, r]``."""
    return [h[0], h[1]]


def as_hex(raw: Any) -> Hex:
    """A ``[q, r]`` from a (trusted, already legal) choice back to a space."""
    return (int(raw[0]), int(raw[1]))


def shape_rotations(state: State, tile: Tile) -> tuple[tuple[Hex, ...], ...]:
    """The tile's shape offsets in its 6 rotations (memoised per shape)."""
    return _rotations(state.edition.shapes[tile.shape])


@functools.cache
def _rotations(offsets: tuple[Hex, ...]) -> tuple[tuple[Hex, ...], ...]:
    return rotations(offsets)


def gem_total(gems: dict[str, int]) -> int:
    return sum(gems.values())


# --------------------------------------------------------------------------- choose


def choices_choose(state: State) -> list[Choice]:
    """Piles the can may stop on, with their cost (ISH-CHOOSE-03..-07, ISH-OPEN-1/-3)."""
    out: list[Choice] = []
    piles, can = state.piles, state.can
    if can is None:
        out = [{"kind": "pile", "pile": i, "cost": 0} for i, p in enumerate(piles) if p]
    else:
        budget = gem_total(state.player.gems)
        cost = 0
        for step in range(1, len(piles)):
            i = (can + step) % len(piles)
            if not piles[i]:
                continue
            if cost > budget:
                break
            out.append({"kind": "pile", "pile": i, "cost": cost})
            cost += 1
        if not out and piles[can]:
            out.append({"kind": "pile", "pile": can, "cost": 0})
    reserved = state.player.reserved_tile
    if reserved is not None:
        out.append({"kind": "reserved", "tile": reserved})
    if not out:
        out.append({"kind": "skip"})
    return out


def apply_choose(state: State, choice: Choice) -> list[Event]:
    seat, turn = state.current, state.turn
    kind = choice["kind"]
    if kind == "reserved":
        tile = state.player.reserved_tile
        assert tile is not None
        state.player.reserved_tile = None
        turn.tile, turn.step = tile, st.POSITION
        return [Event("reserved_tile_taken", {"seat": seat, "tile": tile})]
    if kind == "skip":
        turn.step = st.PLANT
        return [Event("no_tile", {"seat": seat})]
    pile, cost = choice["pile"], choice["cost"]
    assert isinstance(pile, int) and isinstance(cost, int)
    if cost:
        turn.step, turn.pay_for, turn.pay_left, turn.target = st.PAY, "can", cost, pile
        return [Event("can_aimed", {"seat": seat, "pile": pile, "cost": cost})]
    return take_from_pile(state, pile)


def take_from_pile(state: State, pile: int) -> list[Event]:
    """Move the can, take the top tile, reveal the pile left behind (ISH-CHOOSE-09/-10)."""
    seat, left = state.current, state.can
    tile = state.piles[pile].pop()
    state.top_up[pile] = False
    state.can = pile
    events = [
        Event("can_moved", {"seat": seat, "from": left, "to": pile}),
        Event("tile_taken", {"seat": seat, "pile": pile, "tile": tile}),
    ]
    if left is not None and left != pile and state.piles[left] and not state.top_up[left]:
        state.top_up[left] = True
        events.append(Event("tile_revealed", {"pile": left, "tile": state.piles[left][-1]}))
    events.extend(check_trigger(state))
    state.turn.tile, state.turn.step = tile, st.POSITION
    return events


def check_trigger(state: State) -> list[Event]:
    """The end is triggered once a second pile is empty (ISH-END-01/-04)."""
    if state.triggered or sum(not p for p in state.piles) < 2:
        return []
    state.triggered = True
    return [Event("end_triggered", {"seat": state.current})]


def choices_pay(state: State) -> list[Choice]:
    gems = state.player.gems
    return [{"kind": "gem", "colour": c} for c in COLOURS if gems[c] > 0]


def apply_pay(state: State, choice: Choice) -> list[Event]:
    from games.ishtar.actions import unlock

    player, turn = state.player, state.turn
    colour = choice["colour"]
    assert isinstance(colour, str)
    player.gems[colour] -= 1
    if turn.pay_for == "can":
        state.stock[colour] += 1
    else:
        assert turn.skill is not None
        player.skill_gems.setdefault(turn.skill, []).append(colour)
    turn.pay_left -= 1
    events = [Event("gem_paid", {"seat": state.current, "colour": colour, "for": turn.pay_for})]
    if turn.pay_left == 0:
        if turn.pay_for == "can":
            events.extend(take_from_pile(state, turn.target))
        else:
            events.extend(unlock(state))
    return events


# --------------------------------------------------------------------------- place


def placements(state: State) -> list[tuple[Hex, int]]:
    """Legal (anchor, rotation) pairs of the tile in hand, cached until the next move."""
    found: list[tuple[Hex, int]] | None = state.cache.get("placements")
    if found is None:
        assert state.turn.tile is not None
        tile = state.edition.tiles[state.turn.tile]
        found = state.cache["placements"] = state.veg.placements(tile, shape_rotations(state, tile))
    return found


class Positions(Sequence[Choice]):
    """The legal choices of a position decision, ``{"kind": "position", "tile", "at",
    "rotations"}`` in the order of :meth:`Vegetation.positions`, each map made when it is first
    asked for (and the same map every time after).

    A position decision lists a hundred choices or more, and a match uses one of them (the
    server answers by index): the maps are not all made with the decision and freed with it.
    The labelled choices the deciding seat is shown are made from ``anchors`` and
    ``rotations`` directly (:func:`games.ishtar.labels.describe`). ``anchors`` and
    ``rotations`` are :meth:`Vegetation.positions`' own lists, shared and never changed."""

    __slots__ = ("_made", "anchors", "rotations", "tile")

    def __init__(self, tile: str, anchors: list[list[int]], rotations: list[list[int]]) -> None:
        self.tile = tile
        self.anchors = anchors
        self.rotations = rotations
        self._made: dict[int, Choice] = {}

    def __len__(self) -> int:
        return len(self.anchors)

    @overload
    def __getitem__(self, index: int) -> Choice: ...

    @overload
    def __getitem__(self, index: slice) -> list[Choice]: ...

    def __getitem__(self, index: int | slice) -> Choice | list[Choice]:
        if isinstance(index, slice):
            return [self._choice(i) for i in range(len(self.anchors))[index]]
        return self._choice(index)

    def __iter__(self) -> Iterator[Choice]:
        for i in range(len(self.anchors)):
            yield self._choice(i)

    def __repr__(self) -> str:
        return f"Positions({list(self)!r})"

    def _choice(self, index: int) -> Choice:
        i = range(len(self.anchors))[index]  # (a negative index counts from the end)
        found = self._made.get(i)
        if found is None:
            found = self._made[i] = {
                "kind": "position",
                "tile": self.tile,
                "at": cast(list[JSON], self.anchors[i]),
                "rotations": cast(list[JSON], self.rotations[i]),
            }
        return found


def choices_position(state: State) -> Sequence[Choice]:
    """Every anchor with a legal rotation (ISH-PLACE-02..-08), each with those rotations
    (:class:`Positions`), or the one ``discard`` where the tile fits nowhere (ISH-OPEN-2)."""
    tile = state.turn.tile
    assert tile is not None
    found = state.edition.tiles[tile]
    anchors, legal = state.veg.positions(found, shape_rotations(state, found))
    if not anchors:
        return [{"kind": "discard", "tile": tile}]
    return Positions(tile, anchors, legal)


def apply_position(state: State, choice: Choice) -> list[Event]:
    turn = state.turn
    if choice["kind"] == "discard":
        assert turn.tile is not None
        state.discarded.append(turn.tile)
        event = Event("tile_discarded", {"seat": state.current, "tile": turn.tile})
        turn.tile, turn.step = None, st.PLANT
        return [event]
    turn.anchor = as_hex(choice["at"])
    turn.step = st.ROTATION
    rotations = choice.get("rotations")
    if type(rotations) is list:  # (the legal choice lists them: kept for the rotation step)
        state.cache["rotations"] = rotations
    return []


def rotations_at(state: State, anchor: Hex) -> list[int]:
    tile = state.edition.tiles[state.turn.tile or ""]
    rots = shape_rotations(state, tile)
    return [
        k
        for k in range(6)
        if state.veg.placement_problem(tile, tile_cells(anchor, rots[k])) is None
    ]


def choices_rotation(state: State) -> list[Choice]:
    """The legal rotations at the anchor chosen, with the spaces each covers.

    They are the ``rotations`` of the position choice just applied (listed on this very state,
    which choosing a position does not change), kept by :func:`apply_position` until the next
    move; computed again only where that choice is not at hand (a loaded snapshot).
    """
    anchor, tile = state.turn.anchor, state.turn.tile
    assert anchor is not None and tile is not None
    rots = shape_rotations(state, state.edition.tiles[tile])
    legal: list[int] | None = state.cache.get("rotations")
    if legal is None:
        legal = rotations_at(state, anchor)
    return [
        {
            "kind": "rotation",
            "tile": tile,
            "at": hx(anchor),
            "rotation": k,
            "cells": [hx(cell) for cell in tile_cells(anchor, rots[k])],
        }
        for k in legal
    ]


def apply_rotation(state: State, choice: Choice) -> list[Event]:
    """Lay the tile, collect the gems it covers, then offer its special action."""
    from games.ishtar.actions import special_choices

    seat, turn, player = state.current, state.turn, state.player
    assert turn.tile is not None and turn.anchor is not None
    tile = state.edition.tiles[turn.tile]
    rotation = choice["rotation"]
    assert isinstance(rotation, int)
    cells = tile_cells(turn.anchor, shape_rotations(state, tile)[rotation])
    state.veg.place(tile, cells)
    state.laid.append({"tile": tile.id, "at": hx(turn.anchor), "rotation": rotation})
    events = [
        Event(
            "tile_placed",
            {
                "seat": seat,
                "tile": tile.id,
                "at": hx(turn.anchor),
                "rotation": rotation,
                "cells": [hx(c) for c in cells],
            },
        )
    ]
    gained = dict.fromkeys(COLOURS, 0)
    for c in cells:
        colour = state.rock_gems.pop(c, None)
        if colour is not None:
            gained[colour] += 1
            player.gems[colour] += 1
    if any(gained.values()):
        events.append(Event("gems_collected", {"seat": seat, "gems": dict(gained)}))
    turn.placed, turn.tile, turn.anchor = list(cells), None, None
    icon = tile.icon
    if icon is not None and "B" in player.skills:
        icon = "wild"
    turn.icon = icon
    turn.step = st.SPECIAL if icon is not None else st.PLANT
    if turn.step == st.SPECIAL and len(special_choices(state)) == 1:
        events.append(Event("special_unavailable", {"seat": seat, "icon": icon}))
        turn.step = st.PLANT
    return events


# --------------------------------------------------------------------------- end of turn


def end_turn(state: State) -> list[Event]:
    """Refill the display, then pass to the left or end the game (ISH-TREE-10, ISH-END-02)."""
    from games.ishtar.actions import refill

    seat = state.current
    events = refill(state)
    events.append(Event("turn_ended", {"seat": seat}))
    state.turns_played += 1
    nxt = (seat + 1) % len(state.players)
    if state.triggered and nxt == state.first:
        state.turn = st.Turn(step=st.OVER)
        return events
    state.current = nxt
    state.turn_no += 1
    state.turn = st.Turn()
    return events
