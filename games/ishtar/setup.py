"""Room options and the setup of a new match, exactly as the rulebook's "Setting Up the Game".

The generator is the only random source: fountains, cups, the tile piles, the tree deck and the
first player are all drawn from the state's :class:`~games.rng.Rng`, in that fixed order, so
the same seed gives the same match.
"""

from __future__ import annotations

from collections.abc import Mapping

from games.base import JSON
from games.errors import EditionError, OptionsError
from games.ishtar.board import ROCK, build_terrain, check_layout
from games.ishtar.edition import COLOURS, SHAPES, Edition
from games.ishtar.garden import Vegetation
from games.ishtar.state import Player, State, Turn, no_gems
from games.rng import Rng


def check_options(edition: Edition, players: int, options: Mapping[str, object]) -> dict[str, JSON]:
    """Accept only ``layout``: a list of ``{board, side, rotation, macro}`` (ISH-SETUP-05)."""
    if not 2 <= players <= 4:
        raise OptionsError(f"Ishtar is for 2 to 4 players, not {players}")
    unknown = sorted(set(map(str, options)) - {"layout"})
    if unknown:
        raise OptionsError(f"unknown options: {', '.join(unknown)}")
    if "layout" not in options:
        return {}
    raw = options["layout"]
    if not isinstance(raw, list):
        raise OptionsError("layout: a list of {board, side, rotation, macro}")
    layout = check_layout(edition, players, raw, "layout", OptionsError)
    return {"layout": [p.to_json() for p in layout]}


def new_match(edition: Edition, players: int, options: Mapping[str, JSON], seed: int) -> State:
    if not 2 <= players <= 4:
        raise OptionsError(f"Ishtar is for 2 to 4 players, not {players}")
    rng = Rng.from_seed(seed)
    raw_layout = options.get("layout")
    if raw_layout is None:
        layout = edition.presets[players]
    else:
        assert isinstance(raw_layout, list)
        layout = check_layout(edition, players, raw_layout, "layout", OptionsError)
    terrain = build_terrain(edition, layout)

    fountains = [f.id for f in edition.fountains]
    rng.shuffle(fountains)
    fountains = fountains[: len(terrain.fountain_cells)]

    rock_gems = {h: terrain.rock_colour[h] for h, k in terrain.kind.items() if k == ROCK}
    stock = dict(edition.gem_stock)
    for colour in rock_gems.values():
        stock[colour] -= 1
    for colour in COLOURS:
        stock[colour] -= edition.start_gems[colour] * players
    if min(stock.values()) < 0:
        raise EditionError("edition: the gem stock cannot cover the rocks of this layout")

    cups = list(edition.cups)
    rng.shuffle(cups)
    basics: dict[str, list[str]] = {}
    starts: dict[str, list[str]] = {}
    for shape in SHAPES:
        basics[shape] = [
            t.id for t in edition.tiles.values() if t.shape == shape and not t.starting
        ]
        starts[shape] = [t.id for t in edition.tiles.values() if t.shape == shape and t.starting]
        rng.shuffle(basics[shape])
        rng.shuffle(starts[shape])
    keep = edition.basic_per_pile[players]
    full_size = {shape: len(basics[shape]) // 2 for shape in SHAPES}  # 2 cups per shape
    piles: list[list[str]] = []
    cut: list[str] = []
    for shape in cups:
        full = [basics[shape].pop() for _ in range(full_size[shape])]
        cut.extend(full[: len(full) - keep])
        piles.append([*full[len(full) - keep :], starts[shape].pop()])

    deck = list(edition.trees)
    rng.shuffle(deck)
    display = [deck.pop() for _ in range(edition.display_size)]
    first = rng.below(players)

    seats = []
    for seat in range(players):
        gems = no_gems()
        gems.update(edition.start_gems)
        seats.append(
            Player(
                seat,
                edition.player_colours[seat],
                gems,
                edition.assistants_in_supply,
                edition.assistants_blocked,
            )
        )
    return State(
        edition=edition,
        terrain=terrain,
        veg=Vegetation(terrain),
        rng=rng,
        layout=tuple(layout),
        fountains=fountains,
        rock_gems=rock_gems,
        stock=stock,
        cups=cups,
        piles=piles,
        top_up=[True] * len(piles),
        cut=cut,
        can=None,
        deck=deck,
        display=display,
        display_marker=[True] * len(display),
        markers=edition.markers - len(display),
        tokens=list(edition.tokens),
        players=seats,
        first=first,
        current=first,
        turn_no=1,
        turn=Turn(),
        reserved_marker=[False] * players,
    )
