"""The Yspahan game state and its snapshot form.

The state is one mutable dataclass of plain lists and ints (no nested objects but the
:class:`~games.rng.Rng`), so that copying, dumping and loading stay cheap and exact. Shops,
souks, squares, floors and buildings are indices into the tables of :mod:`games.yspahan.data`.

Incremental structures: ``shops`` says who holds each shop, and ``souk_owner`` / ``souk_fill``
keep, for each souk, its occupant (-1: empty) and how many of its shops are filled, so that the
goods rules (one occupant per souk, finish a started souk first) and the week scoring never scan
the city.

The turn in progress is a small stage machine (``stage`` plus a few fields that only some stages
use, always reset to neutral values otherwise so that equal positions dump equally):

=============  ===========================================================================
``yellow``     the day's roller chooses 0-3 yellow dice
``turn``       the acting player takes a group (one of its actions), plays a card, or draws
``extra``      the actor took group ``floor`` for its floor action and adds cards as extra
               dice (``extra`` added so far); the group stays on the tower until they stop
``place``      the actor puts one good in a shop (``pending`` goods left, in ``quarter``); or,
               with ``card`` "place_board", the one good of that card, in any quarter
``steward``    the actor chooses where the steward goes (``pending``: the group's value)
``send``       the actor chooses which of two faced goods goes to the caravan first
``keep``       a good's owner decides whether to pay a camel to keep it (``queue`` head)
``build``      2 players: the actor chooses the building a dice group pays for
``amount``     the actor chooses how much a gold/camel card converts (``card``)
``cards``      the actor chooses a card to play in the middle of the decision ``resume``
``after``      after the action: play cards, build (3-4 players), end the turn
``over``       the match has ended
=============  ===========================================================================

A card played for its effect interrupts the decision it was played at: ``resume`` names that
stage, ``card`` the card while its own follow-up (``amount``, or the one-good ``place``) is
pending; the interrupted stage keeps its own fields (``pending``, ``quarter``, ``queue``,
``floor``, ``extra``) untouched meanwhile.

Snapshots: ``schema`` 2. A schema-1 dump (the release before extra dice became a sub-decision
and the one-good card stopped borrowing ``pending``) is migrated on load by
:func:`_migrate_1_to_2`: no group is being added to (``floor`` -1, ``extra`` 0), and a one-good
placement in progress keeps ``pending`` 0 (in schema 1 it held that good).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from games.base import JSON
from games.errors import SnapshotError
from games.rng import Rng
from games.yspahan import data

STAGES: Final = (
    "yellow",
    "turn",
    "extra",
    "place",
    "steward",
    "send",
    "keep",
    "build",
    "amount",
    "cards",
    "after",
    "over",
)
INTERRUPTIBLE: Final = ("extra", "place", "steward", "send", "keep", "build")
"""Stages of one's own turn that offer the ``cards`` choice (``turn`` and ``after`` list the
card plays themselves); ``resume`` may name any of them, or ``turn`` / ``after``."""
SCHEMA: Final = 2
CATEGORIES: Final = ("souks", "bazaar", "caravan_camels", "caravan", "buildings", "cards")
"""Score breakdown categories; a player's score is always the sum of their breakdown."""


@dataclass
class YState:
    """Everything about a match; see the module docstring for the stage fields."""

    players: int
    rng: Rng
    gold: list[int]
    camels: list[int]
    score: list[int]
    breakdown: list[dict[str, int]]
    """Per seat, the points by category: every one of :data:`CATEGORIES`, in that order (setup
    and ``load`` make them so, scoring only adds to them), so that a view or a dump copies them
    as they are."""
    hands: list[list[str]]
    built: list[list[int]]
    no_camels: list[int]
    no_gold: list[int]
    deck: list[str]
    discard: list[str]
    shops: list[int]
    souk_owner: list[int]
    souk_fill: list[int]
    steward: int
    caravan: list[int]
    week: int
    day: int
    pawn: int
    order: list[int]
    turn: int
    tower: list[list[int]]
    yellow: int
    stage: str
    actor: int
    built_this_turn: bool = False
    pending: int = 0
    quarter: int = -1
    queue: list[int] = field(default_factory=list)
    card: str = ""
    resume: str = ""
    turns: int = 0
    floor: int = -1
    extra: int = 0
    memo: dict[str, tuple[object, object]] = field(default_factory=dict, compare=False, repr=False)
    """Parts of the views kept with the key they were made from (not a fact of the match:
    neither dumped nor compared; :func:`games.yspahan.views.shared_view`)."""

    @property
    def roller(self) -> int:
        """The day's first player in turn order: who rolled and who alone may use yellow dice."""
        return self.order[0]


def jlist(items: Iterable[JSON]) -> list[JSON]:
    """A list of plain values typed as JSON (lists are invariant, so list[int] is not one)."""
    return list(items)


_INT_LISTS: Final = (
    "gold",
    "camels",
    "score",
    "no_camels",
    "no_gold",
    "shops",
    "souk_owner",
    "souk_fill",
    "caravan",
    "order",
    "queue",
)
_INTS: Final = ("players", "steward", "week", "day", "pawn", "turn", "yellow", "actor")
_INTS_TAIL: Final = ("pending", "quarter", "turns", "floor", "extra")


def dump(state: YState) -> dict[str, JSON]:
    """The whole state as plain data, generator included: ``schema`` and ``rng``, then the
    fields of :data:`_INTS`, :data:`_INTS_TAIL` and :data:`_INT_LISTS` in their order, then the
    others (each field read by name, not through ``getattr``: a compiled state reads it
    directly)."""
    return {
        "schema": SCHEMA,
        "rng": state.rng.state,
        "players": state.players,
        "steward": state.steward,
        "week": state.week,
        "day": state.day,
        "pawn": state.pawn,
        "turn": state.turn,
        "yellow": state.yellow,
        "actor": state.actor,
        "pending": state.pending,
        "quarter": state.quarter,
        "turns": state.turns,
        "floor": state.floor,
        "extra": state.extra,
        "gold": jlist(state.gold),
        "camels": jlist(state.camels),
        "score": jlist(state.score),
        "no_camels": jlist(state.no_camels),
        "no_gold": jlist(state.no_gold),
        "shops": jlist(state.shops),
        "souk_owner": jlist(state.souk_owner),
        "souk_fill": jlist(state.souk_fill),
        "caravan": jlist(state.caravan),
        "order": jlist(state.order),
        "queue": jlist(state.queue),
        "breakdown": [dict(b) for b in state.breakdown],
        "hands": [jlist(h) for h in state.hands],
        "built": [jlist(b) for b in state.built],
        "deck": jlist(state.deck),
        "discard": jlist(state.discard),
        "tower": [jlist(f) for f in state.tower],
        "stage": state.stage,
        "built_this_turn": state.built_this_turn,
        "card": state.card,
        "resume": state.resume,
    }


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SnapshotError(f"{name} is not an integer")
    return value


def _ints(value: object, name: str) -> list[int]:
    if not isinstance(value, list):
        raise SnapshotError(f"{name} is not a list")
    return [_int(v, name) for v in value]


def _strs(value: object, name: str, allowed: tuple[str, ...]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        raise SnapshotError(f"{name} is not a list of known names")
    return list(value)


def _str(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise SnapshotError(f"{name} is not one of the known names")
    return value


def _migrate_1_to_2(raw: Mapping[str, JSON]) -> dict[str, JSON]:
    """A schema-1 dump in the schema-2 form (see the module docstring)."""
    out = dict(raw)
    out["schema"] = 2
    out["floor"] = -1
    out["extra"] = 0
    if out.get("card") == "place_board":
        out["pending"] = 0
    return out


MIGRATIONS: Final = {1: _migrate_1_to_2}
"""``{schema: function turning a dump of that schema into one of the next}``."""


def load(raw: Mapping[str, JSON]) -> YState:
    """Rebuild a state from :func:`dump` output (migrated from an older schema first), checking
    shapes and ranges on the way."""
    if not isinstance(raw, Mapping):
        raise SnapshotError("a Yspahan snapshot is a map")
    schema = raw.get("schema")
    while type(schema) is int and schema in MIGRATIONS:
        raw = MIGRATIONS[schema](raw)
        schema = raw.get("schema")
    try:
        if schema != SCHEMA:
            raise SnapshotError(f"not a Yspahan snapshot (schema 1 to {SCHEMA})")
        n = _int(raw["players"], "players")
        if n not in (2, 3, 4):
            raise SnapshotError("players must be 2, 3 or 4")
        ints = {name: _int(raw[name], name) for name in _INTS + _INTS_TAIL}
        lists = {name: _ints(raw[name], name) for name in _INT_LISTS}
        breakdown_raw = raw["breakdown"]
        if not isinstance(breakdown_raw, list) or len(breakdown_raw) != n:
            raise SnapshotError("breakdown needs one map per player")
        breakdown: list[dict[str, int]] = []
        for entry in breakdown_raw:
            if not isinstance(entry, dict) or set(entry) != set(CATEGORIES):
                raise SnapshotError("breakdown entries need every category")
            breakdown.append({c: _int(entry[c], "breakdown") for c in CATEGORIES})
        hands_raw, built_raw, tower_raw = raw["hands"], raw["built"], raw["tower"]
        if not isinstance(hands_raw, list) or not isinstance(built_raw, list):
            raise SnapshotError("hands and built are lists")
        if not isinstance(tower_raw, list) or len(tower_raw) != len(data.FLOORS):
            raise SnapshotError("tower needs one entry per floor")
        hands = [_strs(h, "hand", data.CARD_KINDS) for h in hands_raw]
        built = [_ints(b, "built") for b in built_raw]
        tower = [_ints(f, "tower floor") for f in tower_raw]
        built_this_turn = raw["built_this_turn"]
        if not isinstance(built_this_turn, bool):
            raise SnapshotError("built_this_turn is a bool")
        state = YState(
            players=n,
            rng=Rng(_int(raw["rng"], "rng")),
            gold=lists["gold"],
            camels=lists["camels"],
            score=lists["score"],
            breakdown=breakdown,
            hands=hands,
            built=built,
            no_camels=lists["no_camels"],
            no_gold=lists["no_gold"],
            deck=_strs(raw["deck"], "deck", data.CARD_KINDS),
            discard=_strs(raw["discard"], "discard", data.CARD_KINDS),
            shops=lists["shops"],
            souk_owner=lists["souk_owner"],
            souk_fill=lists["souk_fill"],
            steward=ints["steward"],
            caravan=lists["caravan"],
            week=ints["week"],
            day=ints["day"],
            pawn=ints["pawn"],
            order=lists["order"],
            turn=ints["turn"],
            tower=tower,
            yellow=ints["yellow"],
            stage=_str(raw["stage"], "stage", STAGES),
            actor=ints["actor"],
            built_this_turn=built_this_turn,
            pending=ints["pending"],
            quarter=ints["quarter"],
            queue=lists["queue"],
            card=_str(raw["card"], "card", ("", *data.CARD_KINDS)),
            resume=_str(raw["resume"], "resume", ("", "turn", "after", *INTERRUPTIBLE)),
            turns=ints["turns"],
            floor=ints["floor"],
            extra=ints["extra"],
        )
    except KeyError as exc:
        raise SnapshotError(f"snapshot misses {exc}") from None
    _check(state)
    return state


def _check(s: YState) -> None:
    """Reject snapshots whose numbers cannot index the tables or break the incremental data."""
    n = s.players
    seats = range(n)
    per_player = (s.gold, s.camels, s.score, s.no_camels, s.no_gold, s.hands, s.built)
    if any(len(x) != n for x in per_player):
        raise SnapshotError("per-player fields need one entry per player")
    if any(v < 0 for x in (s.gold, s.camels, s.no_camels, s.no_gold) for v in x):
        raise SnapshotError("negative gold, camels or credits")
    if any(b < 0 or b >= len(data.BUILDINGS) for built in s.built for b in built):
        raise SnapshotError("unknown building")
    if len(s.shops) != len(data.SHOP_IDS) or any(v != -1 and v not in seats for v in s.shops):
        raise SnapshotError("shops must hold -1 or a seat, one per shop")
    owners, fills = _occupancy(s.shops)
    if owners != s.souk_owner or fills != s.souk_fill:
        raise SnapshotError("souk occupancy disagrees with the shops")
    capacity = data.CARAVAN_ROWS * data.CARAVAN_PER_ROW[n]
    if len(s.caravan) >= capacity or any(v not in seats for v in s.caravan):
        raise SnapshotError("caravan holds seats and is never full between steps")
    if not 0 <= s.steward < len(data.SQUARES):
        raise SnapshotError("steward off the path")
    if not (1 <= s.week <= data.WEEKS and 1 <= s.day <= data.DAYS_PER_WEEK):
        raise SnapshotError("day or week out of range")
    if s.pawn not in seats or not s.order or any(v not in seats for v in s.order):
        raise SnapshotError("bad turn order")
    if not 0 <= s.turn <= len(s.order) or s.actor not in seats:
        raise SnapshotError("bad turn index or actor")
    if any(len(f) != 3 or not 0 <= f[0] <= 6 or min(f) < 0 for f in s.tower):
        raise SnapshotError("tower floors are [value, white, yellow]")
    if not -1 <= s.quarter < len(data.QUARTERS) or s.pending < 0:
        raise SnapshotError("bad pending placement")
    if not -1 <= s.floor < len(data.FLOORS) or s.extra < 0 or (s.floor < 0 and s.extra):
        raise SnapshotError("bad group being taken")
    if any(not 0 <= q < len(data.SHOP_IDS) for q in s.queue):
        raise SnapshotError("bad steward queue")
    cards = sorted(s.deck + s.discard + [c for h in s.hands for c in h])
    if cards != sorted(data.DECK):
        raise SnapshotError("the cards are not the 18 cards of the game")
    _check_stage(s)


def _check_stage(s: YState) -> None:
    """The fields a stage reads must make sense for it, so a loaded state can always decide."""
    # Local imports: these modules import this one.
    from games.yspahan.buildings import affordable
    from games.yspahan.cards import playable
    from games.yspahan.decisions import group_size, keep_asked, place_shops

    stage = s.stage
    # The stage a card interrupts keeps its fields: check those of the stage that reads them.
    own = s.resume if stage in ("cards", "amount") or (stage == "place" and s.card) else stage
    if own in ("keep", "send") and not (s.queue and all(s.shops[q] >= 0 for q in s.queue)):
        raise SnapshotError(f"stage {own} needs goods queued for the caravan")
    if own == "send" and len(s.queue) != 2:
        raise SnapshotError("stage send orders exactly two goods")
    # Inside a card's follow-up the keep is asked afresh once the card is done (the card played
    # may have been the last one in hand), so the question must stand only until then.
    if stage in ("keep", "cards") and own == "keep" and not keep_asked(s, s.shops[s.queue[0]]):
        raise SnapshotError("stage keep asks an owner with a camel, or the actor with a card")
    if own == "place" and s.pending < 1:
        raise SnapshotError("stage place needs goods to place")
    if own == "steward" and not 1 <= s.pending <= 6:
        raise SnapshotError("stage steward needs a dice value")
    if (own == "extra") != (s.floor >= 0):
        raise SnapshotError("a group is held back for extra dice in stage extra only")
    if own == "extra" and group_size(s, s.floor) == 0:
        raise SnapshotError("stage extra needs a group to take")
    if stage == "extra" and not s.hands[s.actor]:
        raise SnapshotError("stage extra needs a card to add")
    if stage == "amount" and s.card not in ("score_gold", "score_camels", "swap_camels_gold"):
        raise SnapshotError("stage amount needs an amount card")
    if s.card and (stage not in ("place", "amount") or not s.resume):
        raise SnapshotError("a card in play needs its stage and a stage to resume")
    if s.resume and not s.card and stage != "cards":
        raise SnapshotError("only a card in play or the card list interrupts a stage")
    if stage == "cards" and (s.resume not in INTERRUPTIBLE or not playable(s, s.actor)):
        raise SnapshotError("stage cards interrupts a stage of the turn and lists a card")
    # (Two tests, not one ``in (*INTERRUPTIBLE, ...)``: mypyc cannot compile a starred tuple
    # after ``in``.)
    if (stage in INTERRUPTIBLE or stage in ("turn", "after", "amount", "cards", "yellow")) and (
        s.turn >= len(s.order) or s.order[s.turn] != s.actor
    ):
        raise SnapshotError("the actor is not the player whose turn it is")
    if stage == "place" and not place_shops(s):
        raise SnapshotError("stage place needs a legal shop")
    if own == "build" and not affordable(s, s.actor):
        raise SnapshotError("stage build needs an affordable building")


def _occupancy(shops: list[int]) -> tuple[list[int], list[int]]:
    """Souk occupants and fill counts recomputed from the shops (checks and tests only)."""
    owners = [-1] * len(data.SOUKS)
    fills = [0] * len(data.SOUKS)
    for shop, seat in enumerate(shops):
        if seat >= 0:
            souk = data.SHOP_SOUK[shop]
            if owners[souk] not in (-1, seat):
                raise SnapshotError("two players in one souk")
            owners[souk] = seat
            fills[souk] += 1
    return owners, fills


def occupancy(shops: list[int]) -> tuple[list[int], list[int]]:
    """Public form of the occupancy recomputation, for invariant checks."""
    return _occupancy(shops)
