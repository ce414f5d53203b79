"""Shared test helpers: scripted moves, hand-made terrains and tiles, and the game invariants."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from games.base import Event, Match, audience_view
from games.ishtar import GAME
from games.ishtar.board import FOUNTAIN, ROCK, SAND, TABLET, Terrain, terrain_from
from games.ishtar.edition import COLOURS, Space, Tile, make_tile
from games.ishtar.garden import Vegetation, tile_cells
from games.ishtar.hexes import Hex, rotate
from games.ishtar.state import State
from games.ishtar.turn import placements, shape_rotations

EDITION = GAME.edition


def new_match(
    players: int = 2, seed: int = 0, options: dict[str, Any] | None = None
) -> Match[State]:
    return Match.new(GAME, players, options or {}, seed)


def choices(match: Match[State], kind: str | None = None) -> list[dict[str, Any]]:
    """The legal choices (of ``kind``), loosely typed for terse assertions."""
    decision = match.decision
    assert decision is not None
    return [dict(c) for c in decision.choices if kind is None or c["kind"] == kind]


def game_view(state: State, seat: int | None = None) -> Any:
    """The game's part of an audience's shared view, loosely typed for terse assertions."""
    return audience_view(GAME, state, seat).shared["game"]


def pick(match: Match[State], kind: str, **fields: Any) -> list[Event]:
    """Act with the first legal choice of ``kind`` whose fields match ``fields``."""
    decision = match.decision
    assert decision is not None
    for c in decision.choices:
        if c["kind"] == kind and all(c.get(k) == v for k, v in fields.items()):
            return match.act(decision.seat, c)
    raise AssertionError(f"no {kind} {fields} among {list(decision.choices)[:8]}...")


def step(match: Match[State]) -> str:
    decision = match.decision
    assert decision is not None
    return decision.kind


def play_turn(match: Match[State]) -> None:
    """Finish the current turn with the first choice each time, declining what can be declined."""
    seat = match.state.current
    turns = match.state.turns_played
    while match.decision is not None and match.state.turns_played == turns:
        kinds = [c["kind"] for c in choices(match)]
        for wanted in ("pass", "end_turn"):
            if wanted in kinds:
                pick(match, wanted)
                break
        else:
            match.act(seat, 0)


def in_hand(
    tile_id: str,
    gems: dict[str, int] | None = None,
    prepare: Callable[[State], None] | None = None,
    seed: int = 0,
) -> Match[State]:
    """A 2-player match whose current player holds ``tile_id``, ready to place it."""
    match = new_match(2, seed)
    pick(match, "pile", pile=0)
    state = match.state
    state.turn.tile = tile_id
    if gems is not None:
        state.player.gems = dict(gems)
    if prepare is not None:
        prepare(state)
    return refresh(match)


def place(match: Match[State], rocks: bool | None = False) -> Match[State]:
    """Place the tile in hand: on a spot covering no rock (False), some rock (True), or any."""
    state = match.state
    tile_ = EDITION.tiles[state.turn.tile or ""]
    rots = shape_rotations(state, tile_)
    for anchor, k in placements(state):
        cells = [(anchor[0] + q, anchor[1] + r) for q, r in rots[k]]
        covers = any(c in state.rock_gems for c in cells)
        if rocks is None or covers == rocks:
            pick(match, "position", at=list(anchor))
            pick(match, "rotation", rotation=k)
            return match
    raise AssertionError("no such spot")


def special_after(tile_id: str, **kw: Any) -> Match[State]:
    return place(in_hand(tile_id, **kw))


# --------------------------------------------------------------------------- hand-made positions

_CODES = {".": SAND, "F": FOUNTAIN, "T": TABLET, "p": ROCK, "r": ROCK, "w": ROCK}
_COLOUR = {"p": "purple", "r": "red", "w": "white"}


def terrain(*rows: str) -> Terrain:
    """A terrain from text: row i is r = i, column j is q = j; blanks are no space."""
    kind: dict[Hex, str] = {}
    colour: dict[Hex, str] = {}
    fountains: list[Hex] = []
    for r, row in enumerate(rows):
        for q, ch in enumerate(row):
            if ch == " ":
                continue
            kind[(q, r)] = _CODES[ch]
            if ch in _COLOUR:
                colour[(q, r)] = _COLOUR[ch]
            if ch == "F":
                fountains.append((q, r))
    return terrain_from(kind, colour, fountains)


def tile(spec: str, shape: str = "straight", tid: str = "t") -> Tile:
    """A tile from text, one word per space: 'g' grass, '2' two flowers, '2a' / '2s' / '2w' with
    an assistant / skill / wild icon."""
    spaces = []
    for word in spec.split():
        if word == "g":
            spaces.append(Space(0))
        else:
            icon = {"a": "assistant", "s": "skill", "w": "wild"}.get(word[-1])
            spaces.append(Space(int(word[0]), icon))
    return make_tile(tid, shape, EDITION.shapes[shape], spaces)


def cells_of(shape: str, at: Hex, rotation: int) -> tuple[Hex, ...]:
    return tile_cells(at, [rotate(o, rotation) for o in EDITION.shapes[shape]])


def lay(veg: Vegetation, t: Tile, at: Hex, rotation: int = 0) -> tuple[Hex, ...]:
    """Lay a tile where it is legal (fails the test otherwise)."""
    cells = cells_of(t.shape, at, rotation)
    why = veg.placement_problem(t, cells)
    assert why is None, why
    veg.place(t, cells)
    return cells


def on_terrain(state: State, ground: Terrain, fountains: list[str] | None = None) -> State:
    """Put a state on a hand-made terrain (for scripted positions; not for snapshots)."""
    state.terrain = ground
    state.veg = Vegetation(ground)
    state.rock_gems = dict(ground.rock_colour)
    state.fountains = fountains or ["fountain-purple-1"] * len(ground.fountain_cells)
    state.laid = []
    state.cache.clear()
    return state


# --------------------------------------------------------------------------- invariants


def gem_totals(state: State) -> Counter[str]:
    total: Counter[str] = Counter(state.rock_gems.values())
    total.update(state.stock)
    for p in state.players:
        total.update(p.gems)
        for gems in p.skill_gems.values():
            total.update(gems)
    return total


def tile_list(state: State) -> list[str]:
    tiles = [*state.cut, *state.discarded, *(t for p in state.piles for t in p)]
    tiles += [item["tile"] for item in state.laid if "tile" in item]
    tiles += [p.reserved_tile for p in state.players if p.reserved_tile]
    if state.turn.tile:
        tiles.append(state.turn.tile)
    return tiles


def _components(cells: set[Hex], adjacent: dict[Hex, tuple[Hex, ...]]) -> list[set[Hex]]:
    todo, out = set(cells), []
    while todo:
        start = todo.pop()
        group, stack = {start}, [start]
        while stack:
            for n in adjacent[stack.pop()]:
                if n in todo:
                    todo.remove(n)
                    group.add(n)
                    stack.append(n)
        out.append(group)
    return out


def board_invariants(state: State) -> None:
    """From scratch: tiles on sand/rock only, each garden on one fountain, <= 1 assistant a bed."""
    veg, ground = state.veg, state.terrain
    covered = set(veg.space)
    assert covered <= ground.coverable
    laid = [i for i in state.laid if "tile" in i]
    assert len(covered) == 3 * len(laid), "two tiles share a space"
    for garden in _components(covered, dict(ground.adjacent)):
        fountains = {n for c in garden for n in ground.adjacent[c] if n in ground.fountain_cells}
        assert len(fountains) == 1, f"a garden reaches {len(fountains)} fountains"
    flowers = {c for c, sp in veg.space.items() if sp.flowers}
    for bed in _components(flowers, dict(ground.adjacent)):
        assert sum(c in veg.assistants for c in bed) <= 1, "two assistants in one flowerbed"


def invariants(state: State, board: bool = True) -> None:
    """Checked after every step of random games (the board part from scratch if ``board``)."""
    edition = state.edition
    assert gem_totals(state) == Counter(edition.gem_stock), "gems not conserved"
    assert min(state.stock.values()) >= 0
    assert Counter(tile_list(state)) == Counter(list(edition.tiles)), "tiles not conserved"
    for p in state.players:
        assert p.assistants + p.blocked + p.placed == 4
        assert p.placed == sum(seat == p.seat for seat in state.veg.assistants.values()) <= 4
        assert all(state.players[p.seat].gems[c] >= 0 for c in COLOURS)
    markers = state.markers + sum(state.display_marker) + sum(state.reserved_marker)
    markers += state.turn.buying is not None  # bought, its tree not yet placed
    assert markers + len(state.veg.trees) == edition.markers, "tree markers not conserved"
    cards = [*state.deck, *state.display, *(c for p in state.players for c in p.planted)]
    cards += [p.reserved_tree for p in state.players if p.reserved_tree]
    assert len(cards) == len(set(cards)) and set(cards) <= set(edition.trees)
    if board:
        board_invariants(state)


def invariant_checker() -> Any:
    """``invariants`` for one game, re-checking the board from scratch only when it grew."""
    seen = {"laid": -1}

    def check(state: State) -> None:
        grew = len(state.laid) != seen["laid"]
        seen["laid"] = len(state.laid)
        invariants(state, board=grew)

    return check


def refresh(match: Match[State]) -> Match[State]:
    """A Match over the same state after a test edited it by hand (drops cached decisions)."""
    match.state.cache.clear()
    return Match(GAME, match.state)


def empty_pile(state: State, pile: int) -> None:
    """Move a pile's tiles out of the game (test set-up only)."""
    state.cut.extend(state.piles[pile])
    state.piles[pile] = []
