"""The English wording of Ishtar: choice labels, decision prompts and event texts.

Everything a person reads about a match is written here, in the game's terms (tiles by their
shape and spaces, tree cards by their name, skills by their letter and what they do), never with
the engine's internal names (kinds, ids like ``tree-25``). Seats are ``P1``..``P4``
(:func:`games.base.seat_name`) and piles 1-6 (:func:`pile_name`: ``pile 1`` is ``piles[0]``,
clockwise), counted from 1 like seats; rotations keep the numbers of the view (0-5) and spaces
are named as the view's terrain names them (``f7``: column letter, row number, the notation of
:mod:`games.ishtar.names`, which a person reads on a drawn map and types back).

Only what the audience may see is ever described: a face-down pile top is "face down", the card
of a tree bought or planted is named in the owner's private text only (the shared prompt of the
``tree`` step does not name it). The tests hold every kind against a table here
(:data:`CHOICES`, :data:`PROMPTS`, :data:`EVENTS`): a new kind without wording fails them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final

from games.base import JSON, Choice, Decision, Event, seat_name
from games.ishtar import state as st
from games.ishtar.board import Terrain
from games.ishtar.edition import COLOURS, Edition, Skill, Tile
from games.ishtar.state import State
from games.ishtar.turn import Positions

Text = Callable[[State, Mapping[str, Any]], str]

ICON_WORDS: Final = {
    "assistant": "an assistant icon",
    "skill": "a skill icon",
    "wild": "a wild icon",
}
TURNS: Final = {
    0: "unturned",
    1: "turned 60° counter-clockwise",
    2: "turned 120° counter-clockwise",
    3: "turned 180°",
    4: "turned 120° clockwise",
    5: "turned 60° clockwise",
}


# --------------------------------------------------------------------------- nouns


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def gems_text(gems: Mapping[str, Any]) -> str:
    """``{"purple": 1, "red": 2}`` -> ``1 purple and 2 red gems``; nothing -> ``no gem``."""
    counts = [(_count_of(gems.get(c, 0) or 0), c) for c in COLOURS]
    parts = [f"{n} {c}" for n, c in counts if n]
    if not parts:
        return "no gem"
    last = [n for n, _ in counts if n][-1]
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{listed} gem{'s' * (last != 1)}"


def _count_of(value: Any) -> int:
    """``int(value)``, without calling ``int`` on what is one already (a call of the type
    costs more than the test, compiled)."""
    return value if type(value) is int else int(value)


def space_text(flowers: int, icon: str | None) -> str:
    text = "grass" if flowers == 0 else plural(flowers, "flower")
    return text + (f" with {ICON_WORDS[icon]}" if icon else "")


def tile_text(tile: Tile) -> str:
    """``a chevron tile (2 flowers with an assistant icon, grass, 1 flower)``."""
    spaces = ", ".join(space_text(sp.flowers, sp.icon) for sp in tile.spaces)
    start = "starting " if tile.starting else ""
    return f"a {start}{tile.shape} tile ({spaces})"


def card_text(edition: Edition, card: str) -> str:
    """``Fig (1 purple and 1 red gem, 4 points)``."""
    tree = edition.trees[card]
    return f"{tree.name} ({gems_text(tree.cost)}, {plural(tree.points, 'point')})"


def token_text(edition: Edition, token: str) -> str:
    flowers = edition.tokens[token].flowers
    if len(flowers) == 1:
        return f"a single blooming token ({plural(flowers[0], 'flower')})"
    split = " + ".join(str(n) for n in flowers)
    return f"a double blooming token ({split} flowers)"


def pile_name(index: Any) -> str:
    """``pile 1`` for ``piles[0]``: texts count piles from 1, as they count seats (P1)."""
    return f"pile {int(index) + 1}"


def at(state: State, raw: Any) -> str:
    """A space ``[q, r]`` by its name on the terrain (``f7``, :mod:`games.ishtar.names`).

    Two ints are looked up in the terrain's flat table of names (:class:`_PositionLabels`):
    no key to make and hash, as the terrain's dict of names would need (rotation labels and
    event texts name three spaces each)."""
    q = raw[0]
    r = raw[1]
    if type(q) is int and type(r) is int:
        named = _position_labels(state).name(q, r)
        if named:
            return named
    names = state.terrain.names
    found = names.get((q, r))  # (the ints of a listed choice, with no conversion)
    if found:
        return found
    h = (int(q), int(r))
    return names.get(h) or f"({h[0]},{h[1]})"


def cells_text(state: State, cells: Any) -> str:
    return ", ".join(at(state, c) for c in cells)


def skill_summary(skill: Skill) -> str:
    """What a skill does, in a few words, from its parameters (an edition change stays true)."""
    p = skill.params
    if skill.id == "A":
        return f"{p['points_per_tablet']} points per sacred tablet next to your flowerbeds"
    if skill.id == "B":
        return f"every icon you place is wild; {p['points']} points"
    if skill.id == "C":
        per = p["points_per_gem"]
        return (
            f"{per['purple']} points per purple, {per['red']} per red, "
            f"{per['white']} per white gem you keep"
        )
    if skill.id == "D":
        return f"{p['points_per_tree']} points per tree next to your flowerbeds"
    if skill.id == "E":
        return f"{p['points_per_assistant']} points for each assistant still in your supply"
    if skill.id == "F":
        return f"take {plural(int(p['gems']), 'gem')} from the stock, at once"
    if skill.id == "G":
        return f"lay a double blooming token ({p['token_flowers']} flowers), at once"
    if skill.id == "H":
        return f"lay a single blooming token ({p['token_flowers']} flowers), at once"
    if skill.id == "I":
        return "reserve a tree card on display and free an assistant, at once"
    if skill.id == "J":
        return "reserve a face-up tile and free an assistant, at once"
    return "a skill"


def skill_text(edition: Edition, skill: str) -> str:
    """``Skill E: 7 points for each assistant still in your supply``."""
    return f"Skill {skill}: {skill_summary(edition.skills[skill])}"


def _tile(state: State, tile: Any) -> str:
    """:func:`tile_text` of a tile by its id, written once per edition (:func:`_tile_texts`):
    choices and events name the same tiles again and again, match after match."""
    memo = state.veg.memo
    found = memo.get("tile_texts")
    if found is None:
        texts = _tile_texts(state.edition)
        memo["tile_texts"] = (None, texts)
    else:
        kept = found[1]
        assert isinstance(kept, dict)
        texts = kept
    tid = str(tile)
    text = texts.get(tid)
    if text is None:
        text = texts[tid] = tile_text(state.edition.tiles[tid])
    return text


@functools.lru_cache(maxsize=16)
def _tile_texts(edition: Edition) -> dict[str, str]:
    """The tile texts written so far for ``edition``, by tile id, for every match on it (a text
    says what the edition prints on the tile, nothing of a match); filled as they are asked
    for, bounded by the edition's tiles."""
    return {}


def _bed(state: State, cell: Any) -> str:
    """``a flowerbed of 3 spaces and 5 flowers`` (public: laid tiles and tokens)."""
    veg = state.veg
    bed = veg.bed_of.get((int(cell[0]), int(cell[1])))
    if bed is None:
        return "a flower space"
    cells = veg.beds[bed]
    flowers = sum(veg.space[c].flowers for c in cells)
    return f"a flowerbed of {plural(len(cells), 'space')} and {plural(flowers, 'flower')}"


# --------------------------------------------------------------------------- choices


def _pile(state: State, c: Mapping[str, Any]) -> str:
    pile, cost = int(c["pile"]), int(c["cost"])
    stack = state.piles[pile]
    shown = bool(stack) and state.top_up[pile]
    what = _tile(state, stack[-1]) if shown else "the face-down top tile"
    text = f"take from {pile_name(pile)}: {what}"
    if state.can == pile:
        return text + " (the watering can stays)"
    if cost:
        return text + f", paying {plural(cost, 'gem')} to move the watering can there"
    if state.can is None:
        return text + " (the watering can goes there)"
    return text + " (the watering can moves there free)"


def _gem(state: State, c: Mapping[str, Any]) -> str:
    turn = state.turn
    left = turn.pay_left - 1
    more = f" ({left} more to pay)" if left else ""
    if turn.pay_for == "can":
        return f"pay a {c['colour']} gem for the watering can{more}"
    return f"put a {c['colour']} gem on Skill {turn.skill}{more}"


def _position(state: State, c: Mapping[str, Any]) -> str:
    """``put the tile's first space on f7 (2 ways to turn it)``."""
    cell: list[Any] = c["at"]
    rotations: list[Any] = c["rotations"]
    return _position_labels(state).label(state, cell, len(rotations))


def _position_text(state: State, cell: list[Any], n: int) -> str:
    ways = _WAYS[n] if n < len(_WAYS) else f"{n} ways to turn it"
    return f"put the tile's first space on {at(state, cell)} ({ways})"


class _PositionLabels:
    """The position labels written so far, by space and number of ways to turn the tile: a
    position decision lists about 110 choices, and the same spaces come back turn after turn;
    and the spaces' names (:func:`at`).

    Flat lists over the terrain's bounding box (8 slots per space for the labels, one per count
    of rotations; one per space for the names), not dicts: a label or a name is found by index
    arithmetic, without building and hashing a key. Bounded by the terrain's size; a space
    outside the box (none in play) or a count of 8 or more is written each time instead."""

    __slots__ = ("height", "labels", "names", "qmin", "rmin", "width")

    def __init__(self, terrain: Terrain) -> None:
        spaces = list(terrain.names)
        qs = [h[0] for h in spaces] or [0]
        rs = [h[1] for h in spaces] or [0]
        self.qmin = min(qs)
        self.rmin = min(rs)
        self.width = max(qs) - self.qmin + 1
        self.height = max(rs) - self.rmin + 1
        self.labels: list[str | None] = [None] * (self.width * self.height * 8)
        self.names: list[str | None] = [None] * (self.width * self.height)
        for (q, r), name in terrain.names.items():
            self.names[(r - self.rmin) * self.width + q - self.qmin] = name

    def name(self, q: int, r: int) -> str | None:
        """The name of space ``(q, r)``, or None off the terrain."""
        col = q - self.qmin
        row = r - self.rmin
        if 0 <= col < self.width and 0 <= row < self.height:
            return self.names[row * self.width + col]
        return None

    def label(self, state: State, cell: list[Any], n: int) -> str:
        """The label of a position at ``cell`` (``[q, r]``) with ``n`` rotations."""
        q = cell[0]
        r = cell[1]
        if isinstance(q, int) and isinstance(r, int) and n < 8:
            col = q - self.qmin
            row = r - self.rmin
            if 0 <= col < self.width and 0 <= row < self.height:
                i = (row * self.width + col) * 8 + n
                found = self.labels[i]
                if found is None:
                    found = self.labels[i] = _position_text(state, cell, n)
                return found
        return _position_text(state, cell, n)


def _position_labels(state: State) -> _PositionLabels:
    """The position labels, kept on the vegetation for the whole match and made once per
    terrain (:func:`_terrain_labels`): every match on the same layout names the spaces alike."""
    memo = state.veg.memo
    found = memo.get("position_labels")
    if found is None:
        table = _terrain_labels(state.terrain)
        memo["position_labels"] = (None, table)
        return table
    kept = found[1]
    assert isinstance(kept, _PositionLabels)
    return kept


@functools.lru_cache(maxsize=64)
def _terrain_labels(terrain: Terrain) -> _PositionLabels:
    """The position labels of ``terrain`` (its spaces' names are all they read), shared by the
    matches on it: a terrain is built once per layout and kept (:func:`games.ishtar.board.
    build_terrain`), and a label written in one match is read in the next."""
    return _PositionLabels(terrain)


_WAYS: Final = tuple("1 way to turn it" if n == 1 else f"{n} ways to turn it" for n in range(7))
"""How many ways a tile turns at a position, written once."""


def _rotation(state: State, c: Mapping[str, Any]) -> str:
    k = int(c["rotation"])
    text = f"rotation {k}: the tile {TURNS[k]}, on {cells_text(state, c['cells'])}"
    gains: dict[str, int] = {}
    for cell in c["cells"]:
        colour = state.rock_gems.get((_count_of(cell[0]), _count_of(cell[1])))
        if colour is not None:
            gains[colour] = gains.get(colour, 0) + 1
    return text + (f", collecting {gems_text(gains)}" if gains else "")


def _bloom(state: State, c: Mapping[str, Any]) -> str:
    flowers = state.edition.tokens[str(c["token"])].flowers
    where = ", ".join(
        f"{plural(n, 'flower')} on {at(state, cell)}"
        for cell, n in zip(c["cells"], flowers, strict=True)
    )
    return f"lay {token_text(state.edition, str(c['token']))}: {where}"


def _buy(state: State, c: Mapping[str, Any]) -> str:
    card = str(c["card"])
    mine = " (your reserved card)" if card == state.player.reserved_tree else ""
    return f"buy {card_text(state.edition, card)}{mine}"


CHOICES: Final[dict[str, Text]] = {
    "pile": _pile,
    "reserved": lambda s, c: f"take your reserved tile: {_tile(s, c['tile'])}",
    "skip": lambda s, c: "go on without a tile (there is none left to take)",
    "gem": _gem,
    "position": _position,
    "discard": lambda s, c: f"discard {_tile(s, c['tile'])}: it fits nowhere",
    "rotation": _rotation,
    "assistant": lambda s, c: f"put an assistant on {_bed(s, c['at'])} at {at(s, c['at'])}",
    "skill": lambda s, c: f"unlock {skill_text(s.edition, str(c['skill']))} (2 gems)",
    "pass": lambda s, c: "do no special action",
    "take_gem": lambda s, c: f"take a {c['colour']} gem from the stock",
    "bloom": _bloom,
    "reserve_tree": lambda s, c: f"reserve {card_text(s.edition, str(c['card']))}",
    "reserve_tile": lambda s, c: (
        f"reserve {_tile(s, c['tile'])} from the top of {pile_name(c['pile'])}"
    ),
    "buy": _buy,
    "tree": lambda s, c: f"plant your {s.edition.trees[str(c['card'])].name} on {at(s, c['at'])}",
    "end_turn": lambda s, c: "end your turn",
}


def describe(state: State, decision: Decision) -> list[Choice]:
    """The choices with their labels (Ishtar gives no ``effects``: the labels say it all)."""
    choices = decision.choices
    if type(choices) is Positions:
        return _describe_positions(state, choices)
    out: list[Choice] = []
    for c in choices:
        shown = dict(c)
        name = str(c["kind"])
        words = CHOICES.get(name)
        shown["label"] = words(state, c) if words else name
        out.append(shown)
    return out


def _describe_positions(state: State, choices: Positions) -> list[Choice]:
    """A position decision's choices with their labels, made from its anchors and rotations
    (no bare map made first to be copied): each a copy of one template, with ``label`` last
    as :func:`describe` adds it to the others (a copy costs less than a new map of five)."""
    positions = _position_labels(state)
    anchors, rotations = choices.anchors, choices.rotations
    template: Choice = {
        "kind": "position",
        "tile": choices.tile,
        "at": None,
        "rotations": None,
        "label": None,
    }
    out: list[Choice] = []
    for i in range(len(anchors)):
        cell: list[Any] = anchors[i]
        ways: list[Any] = rotations[i]
        shown = template.copy()
        shown["at"] = cell
        shown["rotations"] = ways
        shown["label"] = positions.label(state, cell, len(ways))
        out.append(shown)
    return out


# --------------------------------------------------------------------------- prompts


def _prompt_pay(state: State) -> str:
    turn = state.turn
    owed = plural(turn.pay_left, "gem")
    if turn.pay_for == "can":
        return f"pay {owed} for the watering can, one at a time"
    return f"pay {owed} for Skill {turn.skill}, one at a time (any colours)"


def _prompt_special(state: State) -> str:
    icon = state.turn.icon
    if icon == "assistant":
        return "assistant icon: place an assistant, or pass"
    if icon == "skill":
        return "skill icon: unlock a skill for 2 gems, or pass"
    return "wild icon: place an assistant, unlock a skill, or pass"


def _prompt_choose(state: State) -> str:
    if state.player.reserved_tile is not None:
        return "choose a tile: a pile's top, or your reserved tile"
    return "choose the pile whose top tile you take"


PROMPTS: Final[dict[str, Callable[[State], str]]] = {
    st.CHOOSE: _prompt_choose,
    st.PAY: _prompt_pay,
    st.POSITION: lambda s: "choose where the tile's first space goes",
    st.ROTATION: lambda s: f"choose how the tile turns at {at(s, s.turn.anchor or (0, 0))}",
    st.SPECIAL: _prompt_special,
    st.TAKE_GEM: lambda s: f"Skill F: take {plural(s.turn.take_left, 'more gem')} from the stock",
    st.BLOOM: lambda s: f"Skill {s.turn.skill}: choose where the blooming token goes",
    st.RESERVE_TREE: lambda s: "Skill I: choose a tree card on display to reserve",
    st.RESERVE_TILE: lambda s: "Skill J: choose a face-up tile to reserve",
    st.PLANT: lambda s: "buy a tree card, or end your turn",
    st.TREE: lambda s: "choose an empty grass space for your tree",
}


def prompt(state: State, decision: Decision) -> str:
    words = PROMPTS.get(decision.kind)
    return words(state) if words else decision.kind


# --------------------------------------------------------------------------- events


def _can_moved(s: State, e: Mapping[str, Any]) -> str:
    who = seat_name(e["seat"])
    if e["from"] is None:
        return f"{who} puts the watering can on {pile_name(e['to'])}"
    if e["from"] == e["to"]:
        return f"{who} leaves the watering can on {pile_name(e['to'])}"
    return f"{who} moves the watering can from {pile_name(e['from'])} to {pile_name(e['to'])}"


def _gem_paid(s: State, e: Mapping[str, Any]) -> str:
    what = "for the watering can" if e["for"] == "can" else "onto a skill"
    return f"{seat_name(e['seat'])} pays a {e['colour']} gem {what}"


def _game_over(s: State, e: Mapping[str, Any]) -> str:
    winners = [seat_name(w) for w in e["winners"]]
    best = e["scores"][e["winners"][0]]
    if len(winners) == 1:
        return f"the game is over: {winners[0]} wins with {plural(best, 'point')}"
    return f"the game is over: {' and '.join(winners)} share the victory with {best} points"


def _tree_bought(s: State, e: Mapping[str, Any]) -> str:
    card = e.get("card")
    what = "a tree card" if card is None else card_text(s.edition, str(card))
    return f"{seat_name(e['seat'])} buys {what}, paying {gems_text(e['paid'])}"


def _tree_planted(s: State, e: Mapping[str, Any]) -> str:
    card = e.get("card")
    what = "a tree" if card is None else f"a {s.edition.trees[str(card)].name}"
    return f"{seat_name(e['seat'])} plants {what} on {at(s, e['at'])}"


def _refilled(s: State, e: Mapping[str, Any]) -> str:
    names = [card_text(s.edition, str(c)) for c in e["cards"]]
    return "new tree cards on display: " + ", ".join(names)


def _who(e: Mapping[str, Any]) -> str:
    return seat_name(e["seat"])


EVENTS: Final[dict[str, Text]] = {
    "can_moved": _can_moved,
    "tile_taken": lambda s, e: f"{_who(e)} takes {_tile(s, e['tile'])} from {pile_name(e['pile'])}",
    "tile_revealed": lambda s, e: f"{pile_name(e['pile'])} shows {_tile(s, e['tile'])} on top",
    "end_triggered": lambda s, e: "a second pile is empty: the game ends with this round",
    "can_aimed": lambda s, e: (
        f"{_who(e)} sends the watering can to {pile_name(e['pile'])}, "
        f"owing {plural(e['cost'], 'gem')}"
    ),
    "gem_paid": _gem_paid,
    "reserved_tile_taken": lambda s, e: (
        f"{_who(e)} takes their reserved tile, {_tile(s, e['tile'])}"
    ),
    "no_tile": lambda s, e: f"{_who(e)} finds no tile to take",
    "tile_discarded": lambda s, e: f"{_who(e)} discards {_tile(s, e['tile'])}: it fits nowhere",
    "tile_placed": lambda s, e: (
        f"{_who(e)} lays {_tile(s, e['tile'])} on {cells_text(s, e['cells'])}"
    ),
    "gems_collected": lambda s, e: f"{_who(e)} collects {gems_text(e['gems'])} from the rocks",
    "special_unavailable": lambda s, e: f"{_who(e)} cannot use the tile's {e['icon']} icon",
    "assistant_placed": lambda s, e: (
        f"{_who(e)} puts an assistant on {_bed(s, e['at'])} at {at(s, e['at'])}"
    ),
    "skill_chosen": lambda s, e: f"{_who(e)} chooses {skill_text(s.edition, str(e['skill']))}",
    "special_declined": lambda s, e: f"{_who(e)} does no special action",
    "skill_unlocked": lambda s, e: (
        f"{_who(e)} unlocks Skill {e['skill']} with {gems_text(_count(e['gems']))}"
    ),
    "gem_taken": lambda s, e: f"{_who(e)} takes a {e['colour']} gem from the stock",
    "bloom_placed": lambda s, e: (
        f"{_who(e)} lays {token_text(s.edition, str(e['token']))} on {cells_text(s, e['cells'])}"
    ),
    "tree_reserved": lambda s, e: f"{_who(e)} reserves {card_text(s.edition, str(e['card']))}",
    "assistant_freed": lambda s, e: f"{_who(e)} frees an assistant from the carpet",
    "tile_reserved": lambda s, e: (
        f"{_who(e)} reserves {_tile(s, e['tile'])} from {pile_name(e['pile'])}"
    ),
    "tree_bought": _tree_bought,
    "tree_planted": _tree_planted,
    "display_refilled": _refilled,
    "turn_ended": lambda s, e: f"{_who(e)} ends their turn",
    "game_over": _game_over,
}


def _count(colours: list[str]) -> dict[str, int]:
    out = dict.fromkeys(COLOURS, 0)
    for c in colours:
        out[c] += 1
    return out


def _text(state: State, kind: str, fields: Mapping[str, Any]) -> str:
    words = EVENTS.get(kind)
    return words(state, fields) if words else kind


def narrate(state: State, events: list[Event]) -> list[Event]:
    """Each event with its ``text``; a seat with private fields gets its own text."""
    out: list[Event] = []
    for e in events:
        data: dict[str, JSON] = {**e.data, "text": _text(state, e.kind, e.data)}
        private = {
            seat: {**extra, "text": _text(state, e.kind, {**e.data, **extra})}
            for seat, extra in e.private.items()
        }
        out.append(Event(e.kind, data, private))
    return out
