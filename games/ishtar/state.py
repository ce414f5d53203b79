"""The mutable state of one match, and the vocabulary of turn steps.

The state holds the primary facts only (what is where, whose turn, which step); the
:class:`~games.ishtar.garden.Vegetation` structures are derived from ``laid`` (everything laid
on the terrain, in order) and rebuilt on load. ``cache`` holds the pending decision between
moves (and what an applier keeps for it, see ``turn.apply_position``) and is dropped by every
``apply``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from games.ishtar.board import Terrain
from games.ishtar.edition import COLOURS, BoardPlacement, Edition
from games.ishtar.garden import Vegetation
from games.ishtar.hexes import Hex
from games.rng import Rng

# Turn steps, in the order a turn runs them (ISH-CHOOSE-02).
CHOOSE: Final = "choose"  # pick a pile (or the reserved tile)
PAY: Final = "pay"  # pay gems one at a time (the watering can's extra moves, or a skill)
POSITION: Final = "position"  # where the tile's space 0 goes
ROTATION: Final = "rotation"  # how the tile is turned there
SPECIAL: Final = "special"  # assistant, skill, or pass
TAKE_GEM: Final = "take_gem"  # skill F
BLOOM: Final = "bloom"  # skills G and H
RESERVE_TREE: Final = "reserve_tree"  # skill I
RESERVE_TILE: Final = "reserve_tile"  # skill J
PLANT: Final = "plant"  # buy a tree card or end the turn
TREE: Final = "tree"  # where the bought card's tree goes
OVER: Final = "over"

STEPS = (
    CHOOSE,
    PAY,
    POSITION,
    ROTATION,
    SPECIAL,
    TAKE_GEM,
    BLOOM,
    RESERVE_TREE,
    RESERVE_TILE,
    PLANT,
    TREE,
    OVER,
)


def no_gems() -> dict[str, int]:
    return dict.fromkeys(COLOURS, 0)


@dataclass
class Player:
    seat: int
    colour: str
    gems: dict[str, int]
    assistants: int
    """In supply, ready to be placed."""
    blocked: int
    """Still on the carpet (freed by skills I and J)."""
    placed: int = 0
    skills: dict[str, int] = field(default_factory=dict)
    """Unlocked skill -> number of the turn it was unlocked on."""
    skill_gems: dict[str, list[str]] = field(default_factory=dict)
    planted: list[str] = field(default_factory=list)
    reserved_tree: str | None = None
    reserved_tile: str | None = None


@dataclass
class Turn:
    """Where the current turn stands."""

    step: str = CHOOSE
    tile: str | None = None
    """The tile in hand (chosen, not yet placed)."""
    anchor: Hex | None = None
    placed: list[Hex] | None = None
    """Spaces of the tile placed this turn (its icon is the special action's)."""
    icon: str | None = None
    """The special action on offer: 'assistant', 'skill' or 'wild'."""
    pay_left: int = 0
    pay_for: str = ""
    """'can' (extra watering-can moves) or 'skill'."""
    target: int = 0
    """The pile the can goes to, while paying for it."""
    skill: str | None = None
    take_left: int = 0
    buying: str | None = None
    """The tree card bought, waiting for its tree's space."""


@dataclass
class State:
    edition: Edition
    terrain: Terrain
    veg: Vegetation
    rng: Rng
    layout: tuple[BoardPlacement, ...]
    fountains: list[str]
    """Fountain id on each fountain space (terrain.fountain_cells order)."""
    rock_gems: dict[Hex, str]
    stock: dict[str, int]
    cups: list[str]
    piles: list[list[str]]
    """Tile ids per carpet spot, bottom first: the top is the last."""
    top_up: list[bool]
    cut: list[str]
    """Tiles removed at setup for 2 or 3 players: out of the game, never shown."""
    can: int | None
    deck: list[str]
    """Tree deck, face down; the next card is the last."""
    display: list[str]
    display_marker: list[bool]
    markers: int
    """Tree markers in reserve (not on a card, not planted)."""
    tokens: list[str]
    """Blooming tokens still on the carpet."""
    players: list[Player]
    first: int
    current: int
    turn_no: int
    turn: Turn
    laid: list[dict[str, Any]] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    reserved_marker: list[bool] = field(default_factory=list)
    """Per seat: the reserved tree card carries its marker."""
    triggered: bool = False
    turns_played: int = 0
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        return self.turn.step == OVER

    @property
    def player(self) -> Player:
        return self.players[self.current]
