"""Placing tiles: covering, touching, gardens of one fountain, flowerbeds and their assistants.

Most positions are hand-made terrains (row i is r = i, column j is q = j) with hand-made tiles,
so each test shows exactly the situation of the rule it cites.
"""

from __future__ import annotations

from games.ishtar import GAME
from games.ishtar import state as st
from games.ishtar.garden import (
    COVERED,
    NOT_COVERABLE,
    NOT_TOUCHING,
    OFF_BOARD,
    TWO_ASSISTANTS,
    TWO_FOUNTAINS,
    Vegetation,
    rotations,
)
from games.ishtar.hexes import connected
from tests.games.ishtar.helpers import (
    EDITION,
    cells_of,
    choices,
    lay,
    new_match,
    on_terrain,
    pick,
    refresh,
    step,
    terrain,
    tile,
)
from tests.harness import play_random

STRIP = terrain(".........", "F.......F", ".........")
GRASS = tile("g g g")


def _rots(shape: str) -> list[tuple[tuple[int, int], ...]]:
    return [tuple(r) for r in rotations(EDITION.shapes[shape])]


def test_ish_place_01_six_rotations_never_flipped() -> None:
    for shape in ("straight", "triangle", "chevron"):
        assert len(_rots(shape)) == 6
    for shape in ("triangle", "chevron"):
        # A flip would reverse the turning sense of space 0 -> 1 -> 2; rotations never do.
        senses = set()
        for cells in _rots(shape):
            (q0, r0), (q1, r1), (q2, r2) = cells
            ax, ay = (q1 - q0) + (r1 - r0) / 2, r1 - r0
            bx, by = (q2 - q0) + (r2 - r0) / 2, r2 - r0
            senses.add(ax * by - ay * bx > 0)
        assert len(senses) == 1
    spans = {frozenset(cells_of("chevron", (0, 0), k)) for k in range(6)}
    assert len(spans) == 6


def test_ish_place_01_no_part_off_the_boards() -> None:
    veg = Vegetation(STRIP)
    assert veg.placement_problem(GRASS, cells_of("straight", (-1, 1), 0)) == OFF_BOARD
    assert all(
        all(c in STRIP.kind for c in cells_of("straight", at, k))
        for at, k in veg.placements(GRASS, rotations(EDITION.shapes["straight"]))
    )


def test_ish_place_02_only_sand_or_rock_never_fountain_tablet_or_tile() -> None:
    ground = terrain("..T..", "F.p..", ".....")
    veg = Vegetation(ground)
    assert veg.placement_problem(GRASS, cells_of("straight", (0, 1), 0)) == NOT_COVERABLE
    assert veg.placement_problem(GRASS, cells_of("straight", (0, 0), 0)) == NOT_COVERABLE
    lay(veg, GRASS, (1, 1))  # sand, rock (p) and sand
    assert veg.placement_problem(GRASS, cells_of("straight", (3, 1), 3)) == COVERED


def test_ish_place_03_must_touch_a_fountain_or_a_tile() -> None:
    veg = Vegetation(STRIP)
    assert veg.placement_problem(GRASS, cells_of("straight", (3, 0), 0)) == NOT_TOUCHING
    assert veg.placement_problem(GRASS, cells_of("straight", (1, 1), 0)) is None
    lay(veg, GRASS, (1, 1))
    assert veg.placement_problem(GRASS, cells_of("straight", (4, 1), 0)) is None


def test_ish_place_03_adjacency_crosses_board_edges() -> None:
    """In random games tiles straddle boards and touch tiles of other boards."""
    crossing = 0
    for seed in range(3):
        out = play_random(GAME, 2, seed)
        assert out.match is not None
        state = out.match.state
        board_of = state.terrain.board_of
        for c in state.veg.space:
            for n in state.terrain.adjacent[c]:
                if n in state.veg.space and board_of[n] != board_of[c]:
                    crossing += 1
    assert crossing > 0


def test_ish_place_04_rulebook_example_two_fountains_gardens() -> None:
    veg = Vegetation(STRIP)
    lay(veg, GRASS, (1, 1))  # garden of the west fountain
    lay(veg, GRASS, (5, 1))  # garden of the east fountain
    bridge = cells_of("straight", (4, 0), 5)  # (4,0) (4,1) (4,2): (4,1) touches both
    assert veg.placement_problem(GRASS, bridge) == TWO_FOUNTAINS
    legal = veg.placements(GRASS, rotations(EDITION.shapes["straight"]))
    assert ((4, 0), 5) not in legal
    assert all(
        len(
            {
                veg.fountain_of[n]
                for c in cells_of("straight", a, k)
                for n in STRIP.adjacent[c]
                if n in veg.fountain_of
            }
        )
        <= 1
        for a, k in legal
    )


def test_ish_place_05_touching_two_fountains_directly_is_illegal() -> None:
    ground = terrain("F.F", "...")
    veg = Vegetation(ground)
    assert (
        veg.placement_problem(tile("g g g", "triangle"), [(1, 0), (1, 1), (0, 1)]) == TWO_FOUNTAINS
    )


def test_ish_place_06_several_gardens_per_fountain_then_joined() -> None:
    ground = terrain(".......", "...F...", ".......")
    veg = Vegetation(ground)
    west = lay(veg, GRASS, (0, 1))  # (0,1)(1,1)(2,1)
    east = lay(veg, GRASS, (4, 1))  # (4,1)(5,1)(6,1)
    assert not connected({*west, *east}), "two gardens of the same fountain"
    top = cells_of("straight", (2, 0), 0)  # (2,0)(3,0)(4,0): touches both gardens
    assert veg.placement_problem(GRASS, top) is None
    veg.place(GRASS, top)
    assert connected({*west, *east, *top})


def test_ish_place_07_flowerbeds_span_tiles_and_tokens_cut_by_grass() -> None:
    veg = Vegetation(STRIP)
    lay(veg, tile("g 1 1"), (1, 1))  # flowers on (2,1) (3,1)
    lay(veg, tile("2 g 3"), (4, 1))  # (4,1) joins the bed; (6,1) is a second bed
    assert veg.bed_of[(2, 1)] == veg.bed_of[(4, 1)] != veg.bed_of[(6, 1)]
    assert len(veg.beds) == 2, "one garden, several flowerbeds"
    veg.bloom("bloom-single-1", [(5, 1)], (2,))  # the token fills the grass between
    assert veg.bed_of[(2, 1)] == veg.bed_of[(6, 1)] == veg.bed_of[(5, 1)]
    assert len(veg.beds) == 1


def _two_assistants(same_player: bool = False) -> Vegetation:
    veg = Vegetation(STRIP)
    lay(veg, tile("g g 2a"), (1, 1))  # bed {(3,1)}
    lay(veg, tile("g 2a g"), (4, 1))  # bed {(5,1)}
    veg.add_assistant((3, 1), 0)
    veg.add_assistant((5, 1), 0 if same_player else 1)
    return veg


def test_ish_place_08_rulebook_tile_a_two_assistants_in_one_bed() -> None:
    spot = cells_of("straight", (3, 0), 0)  # (3,0) (4,0) (5,0) touch both beds
    for same in (False, True):
        veg = _two_assistants(same)
        assert veg.placement_problem(tile("1 1 1"), spot) == TWO_ASSISTANTS
        assert ((3, 0), 0) not in veg.placements(
            tile("1 1 1"), rotations(EDITION.shapes["straight"])
        )


def test_ish_place_09_rulebook_tile_b_grass_keeps_the_beds_apart() -> None:
    veg = _two_assistants()
    spot = cells_of("straight", (3, 0), 0)
    assert veg.placement_problem(tile("1 1 g"), spot) is None
    veg.place(tile("1 1 g"), spot)
    assert veg.bed_of[(3, 1)] != veg.bed_of[(5, 1)]


def test_ish_place_10_merging_beds_with_one_assistant() -> None:
    veg = Vegetation(STRIP)
    lay(veg, tile("g g 2a"), (1, 1))
    veg.add_assistant((3, 1), 1)
    lay(veg, tile("g 4 g", "straight"), (3, 2))  # (4,2)? keep apart: (3,2) grass
    lay(veg, tile("1 3 g"), (4, 1))  # (4,1) joins the assistant's bed
    bed = veg.bed_of[(3, 1)]
    assert veg.bed_of[(4, 1)] == veg.bed_of[(5, 1)] == bed
    assert veg.bed_owner[bed] == 1
    assert sum(veg.space[c].flowers for c in veg.beds[bed]) == 2 + 1 + 3 + 4


def test_ish_place_08_two_beds_joined_through_a_third_bed() -> None:
    """Each flower group of the tile touches one assistant, but both touch a shared bed Z, so
    the merged bed would hold two assistants."""
    veg = Vegetation(terrain(".......", "F......", "......."))
    lay(veg, tile("g 1 1"), (1, 0))  # Z = {(2,0), (3,0)}, no assistant
    lay(veg, tile("g 1a g"), (0, 2))  # X = {(1,2)}
    lay(veg, tile("1a g g"), (3, 2))  # Y = {(3,2)}
    veg.add_assistant((1, 2), 0)
    veg.add_assistant((3, 2), 1)
    split = tile("1 g 1")
    assert split.flower_groups == ((0,), (2,))
    assert veg.placement_problem(split, cells_of("straight", (1, 1), 0)) == TWO_ASSISTANTS
    assert veg.placement_problem(tile("1 g g"), cells_of("straight", (1, 1), 0)) is None


def test_ish_place_11_flowers_belong_to_the_bed_controller_not_the_placer() -> None:
    from games.ishtar.scoring import score_position

    match = new_match(2)
    state = on_terrain(match.state, STRIP)
    lay(state.veg, tile("g g 2a"), (1, 1))
    state.veg.add_assistant((3, 1), 1)
    lay(state.veg, tile("3 g g"), (4, 1))  # "placed by seat 0": nobody owns tiles
    rows = score_position(EDITION, state.terrain, state.veg, {}, state.players)
    assert rows[1]["flowers"] == 5 and rows[0]["flowers"] == 0


def test_ish_place_12_assistants_never_move() -> None:
    history: dict[tuple[int, int], int] = {}

    def check(m: object) -> None:
        state = m.state  # type: ignore[attr-defined]
        for cell, seat in history.items():
            assert state.veg.assistants[cell] == seat
        history.update(state.veg.assistants)

    for seed in range(3):
        history.clear()
        play_random(GAME, 3, seed, on_step=check)


def test_ish_open_2_a_tile_that_fits_nowhere_is_discarded() -> None:
    match = new_match(2, 3)
    on_terrain(match.state, terrain("F.", "T."))
    match = refresh(match)
    pick(match, "pile", pile=0)
    tid = match.state.turn.tile
    assert choices(match) == [{"kind": "discard", "tile": tid}]
    pick(match, "discard")
    assert match.state.discarded == [tid]
    assert step(match) == st.PLANT


def _brute_force(state: st.State) -> list[tuple[tuple[int, int], int]]:
    """Legal placements recomputed from scratch, with none of the incremental structures."""
    from tests.games.ishtar.helpers import _components

    ground, veg = state.terrain, state.veg
    t = EDITION.tiles[state.turn.tile or ""]
    adjacent = dict(ground.adjacent)
    fountains = set(ground.fountain_cells)
    out = []
    for anchor in sorted(ground.kind, key=lambda h: (h[1], h[0])):
        for k in range(6):
            cells = cells_of(t.shape, anchor, k)
            if not all(c in ground.coverable and c not in veg.space for c in cells):
                continue
            if not any(n in veg.space or n in fountains for c in cells for n in adjacent[c]):
                continue
            covered = set(veg.space) | set(cells)
            garden = next(g for g in _components(covered, adjacent) if cells[0] in g)
            if len({n for c in garden for n in adjacent[c] if n in fountains}) != 1:
                continue
            flowers = {c for c, sp in veg.space.items() if sp.flowers}
            flowers |= {c for c, sp in zip(cells, t.spaces, strict=True) if sp.flowers}
            if any(
                sum(c in veg.assistants for c in bed) > 1 for bed in _components(flowers, adjacent)
            ):
                continue
            out.append((anchor, k))
    return out


def test_ish_place_04_08_incremental_enumeration_matches_brute_force() -> None:
    """Golden check: at placement decisions of random games, the bit-set enumeration gives
    exactly the placements a from-scratch check allows (ISH-PLACE-02/-03/-04/-08)."""
    from games.ishtar.turn import placements

    seen = [0]

    def check(match: object) -> None:
        state = match.state  # type: ignore[attr-defined]
        if state.turn.step == st.POSITION:
            seen[0] += 1
            if seen[0] % 4 == 1:
                assert placements(state) == _brute_force(state)

    for players, seed in ((2, 21), (4, 22)):
        play_random(GAME, players, seed, on_step=check)
    assert seen[0] > 20


def test_golden_first_placement_counts() -> None:
    """Legal first placements on the presets (golden counts: a change here is a rules change)."""
    from games.ishtar.turn import placements

    for players, pile, tid, total, anchors in (
        (2, 0, "chevron-start-2", 192, 102),
        (4, 3, "triangle-start-2", 258, 98),
    ):
        match = new_match(players, 0)
        pick(match, "pile", pile=pile)
        state = match.state
        assert state.turn.tile == tid
        found = placements(state)
        assert (len(found), len(choices(match))) == (total, anchors)
        assert found == _brute_force(state)


def test_ish_open_2_a_reserved_tile_that_fits_nowhere_is_discarded_too() -> None:
    match = new_match(2, 3)
    pick(match, "pile", pile=0)
    state = match.state
    while state.turn.step != st.CHOOSE:
        match.act(state.current, 0)
    state.player.reserved_tile = state.piles[2].pop()
    on_terrain(state, terrain("F.", "T."))
    match = refresh(match)
    reserved = state.player.reserved_tile
    pick(match, "reserved", tile=reserved)
    assert choices(match) == [{"kind": "discard", "tile": reserved}]
    pick(match, "discard")
    assert state.discarded == [reserved]


def _by_placement_problem(
    veg: Vegetation, tile_: object, shape: tuple[tuple[int, int], ...]
) -> list:
    """Every (anchor, rotation) whose spaces ``placement_problem`` accepts, in the documented
    order (anchor row, then column, then rotation)."""
    found = []
    for anchor in veg.terrain.kind:
        for k, offsets in enumerate(rotations(shape)):
            cells = cells_of_offsets(anchor, offsets)
            if veg.placement_problem(tile_, cells) is None:  # type: ignore[arg-type]
                found.append((anchor, k))
    return sorted(found, key=lambda p: (p[0][1], p[0][0], p[1]))


def cells_of_offsets(anchor: tuple[int, int], offsets: tuple[tuple[int, int], ...]) -> list:
    return [(anchor[0] + dq, anchor[1] + dr) for dq, dr in offsets]


def test_ish_place_01_to_05_and_08_placements_are_exactly_the_legal_positions() -> None:
    """ISH-PLACE-01..05, ISH-PLACE-08: the bit-set enumeration of ``placements`` lists exactly
    the positions that the clause-by-clause check ``placement_problem`` accepts, in order, for
    every tile of every shape, at every tile placement of random 2- to 4-player matches (four
    boards and their edges, gardens of several fountains, assistants in the beds)."""
    checked = 0

    def compare(match: object) -> None:
        nonlocal checked
        state = match.state  # type: ignore[attr-defined]
        if state.turn.step != st.POSITION or state.turn.tile is None:
            return
        veg = state.veg
        for tile_id in sorted({state.turn.tile, *list(state.edition.tiles)[::9]}):
            t = state.edition.tiles[tile_id]
            shape = EDITION.shapes[t.shape]
            assert veg.placements(t, rotations(shape)) == _by_placement_problem(veg, t, shape)
            checked += 1

    for players, seed in ((2, 3), (3, 4), (4, 5)):
        play_random(GAME, players, seed, on_step=compare)
    assert checked > 100


def test_can_bloom_says_whether_a_token_fits_anywhere() -> None:
    """``can_bloom`` (which stops at the first spot) agrees with ``bloom_spots`` (which lists
    them all) for both token sizes, at every step of random matches (ISH-SKILL-14/-16)."""
    seen = {True: 0, False: 0}

    def check(match: object) -> None:
        veg = match.state.veg  # type: ignore[attr-defined]
        for size in (1, 2):
            fits = veg.can_bloom(size)
            assert fits == bool(veg.bloom_spots(size))
            seen[fits] += 1

    for players, seed in ((2, 31), (4, 32)):
        play_random(GAME, players, seed, on_step=check)
    assert seen[True] and seen[False]
