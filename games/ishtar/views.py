"""What each audience sees: one shared part for everybody and a small own part per seat.

Hidden (ISH-VIEW-01..-10): the order and contents of each pile below its top (and a top that is
still face down), the tiles cut at setup, the tree deck, and the planted tree cards of other
players until the end (their count is public). Everything else is public, reserved cards and
tiles included. At the end the shared part reveals every planted card and carries the score
breakdown. The generator state never appears.

Shared part: ``terrain`` (rows ``{r, q, cells}``, one character per space: ``.`` sand, ``p r w``
rocks, ``T`` tablet, ``F`` fountain, blank for no space), ``fountains``, ``rock_gems``
(``"q,r"`` -> colour still lying there), ``laid`` (tiles with their spaces ``[q, r, flowers,
icon]``, tokens, trees and assistants in the order laid), ``piles`` (cup shape, count, face-up
top or None), ``can``, ``display``, ``deck`` (a count), ``markers``, ``tokens``, ``stock``,
``players`` (gems, assistants, skills with their gems, planted count, reservations), ``pending``
(the tile in hand and what the current step still needs; the step itself is the contract's
``shared.turn.decision``, not repeated here), and ``scores`` (None until the end). Own part:
``planted``.

Consequences, all from public information, so a client can show standings without the rules:
``beds`` (every flowerbed: its cells, flower count, controlling seat and fountain), each
fountain's ``spaces`` (per seat, the flower spaces of the beds it controls in that fountain's
gardens: who would score the fountain now) and ``leaders``, the blooming ``tokens`` with their
flowers, and ``provisional``: each seat's score so far category by category as if the game
ended now, without ``trees`` (planted cards are face down; None once ``scores`` is there).
Field by field: ``protocol/games/ishtar.md``.

What changes only when something is laid (``laid``, ``beds``, ``fountains``, ``rock_gems``,
``provisional`` with the players' skills, gems and assistants), and ``players``, ``piles``,
``display`` and ``tokens`` (each with the facts it shows as its key) are kept on the vegetation
(``memo``) and handed out as the very same objects until they change, like the terrain's rows:
a view is never mutated by whoever receives it. They are the game's ``kept_fields``: the server
does not encode again a field it gets as the same object.
"""

from __future__ import annotations

import functools
from typing import Any, cast

from games.base import JSON, memo_entries
from games.ishtar.edition import COLOURS, Edition, Tile
from games.ishtar.garden import tile_cells
from games.ishtar.hexes import Hex
from games.ishtar.scoring import CATEGORIES, final_scores, fountain_points, score_position
from games.ishtar.state import Player, State
from games.ishtar.turn import as_hex, hx, shape_rotations


def tile_json(tile: Tile) -> dict[str, JSON]:
    """A tile as views show it: the same object for the same tile every time (views are never
    mutated), built once."""
    return _tile_json(tile)


@functools.lru_cache(maxsize=1024)
def _tile_json(tile: Tile) -> dict[str, JSON]:
    return {
        "id": tile.id,
        "shape": tile.shape,
        "starting": tile.starting,
        "spaces": [
            {"flowers": sp.flowers, "icon": sp.icon} if sp.icon else {"flowers": sp.flowers}
            for sp in tile.spaces
        ],
    }


def _tiles_json(edition: Edition) -> dict[str, dict[str, JSON]]:
    """Every tile of ``edition`` by id, as :func:`tile_json` shows it: a lookup by id instead of
    hashing a whole tile (a frozen dataclass hashes every field) for the cache at every call."""
    return _edition_tiles_json(edition)


@functools.lru_cache(maxsize=16)
def _edition_tiles_json(edition: Edition) -> dict[str, dict[str, JSON]]:
    return {tid: _tile_json(tile) for tid, tile in edition.tiles.items()}


def _card(state: State, card: str, marker: bool) -> dict[str, JSON]:
    """A tree card as views show it, with its marker: built once per edition, card and marker
    (the same object every time, like :func:`tile_json`)."""
    return _card_json(state.edition, card, marker)


@functools.lru_cache(maxsize=1024)
def _card_json(edition: Edition, card: str, marker: bool) -> dict[str, JSON]:
    tree = edition.trees[card]
    return {
        "card": card,
        "name": tree.name,
        "cost": {c: tree.cost[c] for c in COLOURS},
        "points": tree.points,
        "marker": marker,
    }


def _laid(state: State) -> list[JSON]:
    """Everything laid on the terrain, in order; tiles and tokens with their spaces' flowers.

    ``state.laid`` only grows (an undo loads another state), and an entry never changes once
    laid: the entries are kept on the vegetation with the list they were made from, only the new
    items are described, and while nothing is laid every view gets the very same list (views are
    never mutated, see :meth:`games.ishtar.board.Terrain.rows_json`)."""
    laid = state.laid
    memo = state.veg.memo
    found = memo.get("laid")
    done: list[JSON] = []
    if found is not None and found[0] is laid:
        kept = found[1]
        assert isinstance(kept, list)
        if len(kept) == len(laid):
            return kept
        if len(kept) < len(laid):
            done = kept
    out = done + [_laid_entry(state, item) for item in laid[len(done) :]]
    memo["laid"] = (laid, out)
    return out


def _laid_entry(state: State, item: dict[str, Any]) -> dict[str, JSON]:
    entry: dict[str, JSON] = dict(item)
    if "tile" in item:
        tile = state.edition.tiles[item["tile"]]
        rots = shape_rotations(state, tile)
        cells = tile_cells(as_hex(item["at"]), rots[item["rotation"]])
        entry["spaces"] = [
            [q, r, sp.flowers, sp.icon] for (q, r), sp in zip(cells, tile.spaces, strict=True)
        ]
    elif "token" in item:
        flowers = state.edition.tokens[item["token"]].flowers
        entry["spaces"] = [[c[0], c[1], n] for c, n in zip(item["cells"], flowers, strict=True)]
    return entry


def _pending(state: State, tiles: dict[str, dict[str, JSON]]) -> dict[str, JSON]:
    turn = state.turn
    return {
        "tile": None if turn.tile is None else tiles[turn.tile],
        "at": None if turn.anchor is None else hx(turn.anchor),
        "placed": None if turn.placed is None else [hx(c) for c in turn.placed],
        "icon": turn.icon,
        "pay_left": turn.pay_left,
        "pay_for": turn.pay_for or None,
        "skill": turn.skill,
        "take_left": turn.take_left,
    }


def _memo(state: State, name: str, key: object, make: Any) -> Any:
    """``make()``, kept on the vegetation until ``key`` changes."""
    found = state.veg.memo.get(name)
    if found is not None and found[0] == key:
        return found[1]
    value = make()
    state.veg.memo[name] = (key, value)
    return value


class _Beds:
    """The flowerbeds' view and the fountains' (:func:`_beds`), as of the vegetation's
    ``version``, with the flower spaces per seat that the fountains' view was made from."""

    __slots__ = ("beds", "fountains", "key", "owned", "spaces", "version")

    def __init__(self) -> None:
        self.version = -1
        self.beds: list[JSON] = []
        self.owned: tuple[JSON, ...] = ()
        """The entries of the beds with an assistant: all that scores of the vegetation but the
        trees (:func:`_provisional`)."""
        self.spaces: dict[Hex, list[int]] = {}
        self.key: tuple[tuple[int, ...], ...] | None = None
        self.fountains: list[JSON] = []


def _beds(state: State) -> _Beds:
    """Every flowerbed (cells sorted, beds in the order they were made), per fountain the flower
    spaces each seat controls in its gardens (ISH-SCORE fountains), and each fountain with them
    and its leaders: recomputed only when something was laid, the fountains only when those
    spaces changed (else the very same list). The caller must not change what it gets."""
    veg = state.veg
    memo = veg.memo
    found = memo.get("beds")
    if found is None:
        kept = _Beds()
        memo["beds"] = (None, kept)
    else:
        held = found[1]
        assert isinstance(held, _Beds)
        kept = held
    if kept.version != veg.version:
        kept.beds, kept.spaces, kept.owned = _beds_now(state)
        key = tuple([tuple(counts) for counts in kept.spaces.values()])
        if key != kept.key:
            kept.fountains = _fountains_now(state, kept.spaces)
            kept.key = key
        kept.version = veg.version
    return kept


def _beds_now(state: State) -> tuple[list[JSON], dict[Hex, list[int]], tuple[JSON, ...]]:
    veg = state.veg
    players = len(state.players)
    spaces: dict[Hex, list[int]] = {f: [0] * players for f in state.terrain.fountain_cells}
    kept = _bed_entries(state)
    out: list[JSON] = []
    owned: list[JSON] = []
    # Beds by id, the order they were made in (ids only grow and are never reused; a merge
    # keeps one of the merged beds' ids): a new bed comes last and the others keep their
    # places, so the positional diff (SPEC section 3) adds one entry instead of shifting every
    # bed after it, as an order by first cell did.
    for bed in sorted(veg.beds):
        cells = veg.beds[bed]
        owner = veg.bed_owner.get(bed)
        entry = kept.get(bed)
        if entry is None or entry.size != len(cells) or entry.owner != owner:
            entry = kept[bed] = _bed_entry(state, cells, owner)
        if owner is not None:
            spaces[entry.fountain][owner] += len(cells)
            owned.append(entry.json)
        out.append(entry.json)
    return out, spaces, tuple(owned)


class _BedEntry:
    """A flowerbed as the view shows it, with what it was made from: a bed only grows (beds
    merge, nothing is removed) and its id is never reused, so the entry holds while the bed has
    as many cells and the same owner."""

    __slots__ = ("fountain", "json", "owner", "size")

    def __init__(self, size: int, owner: int | None, fountain: Hex, json: dict[str, JSON]) -> None:
        self.size = size
        self.owner = owner
        self.fountain = fountain
        self.json = json


def _bed_entries(state: State) -> dict[int, _BedEntry]:
    """Bed id -> its entry, kept on the vegetation (entries of merged beds stay unused)."""
    memo = state.veg.memo
    found = memo.get("bed_entries")
    if found is None:
        entries: dict[int, _BedEntry] = {}
        memo["bed_entries"] = (None, entries)
        return entries
    kept = found[1]
    assert isinstance(kept, dict)
    return kept


def _bed_entry(state: State, cells: list[Hex], owner: int | None) -> _BedEntry:
    """One bed's entry: its cells sorted (row, then column), flowers, owner and fountain."""
    veg = state.veg
    ordered = sorted(cells, key=lambda h: (h[1], h[0]))
    fountain = veg.fountain_of[ordered[0]]
    json: dict[str, JSON] = {
        "cells": [hx(c) for c in ordered],
        "flowers": sum(veg.space[c].flowers for c in cells),
        "owner": owner,
        "fountain": hx(fountain),
    }
    return _BedEntry(len(cells), owner, fountain, json)


def _fountains_now(state: State, spaces: dict[Hex, list[int]]) -> list[JSON]:
    fountains = {f.id: f for f in state.edition.fountains}
    out: list[JSON] = []
    for cell, fid in zip(state.terrain.fountain_cells, state.fountains, strict=True):
        counts = spaces[cell]
        best = max(counts)
        out.append(
            {
                "at": hx(cell),
                "fountain": fid,
                "colour": fountains[fid].colour,
                "points": fountains[fid].points,
                "spaces": list(counts),
                "leaders": [s for s, n in enumerate(counts) if best and n == best],
            }
        )
    return out


def _rock_gems(state: State) -> dict[str, JSON]:
    """``"q,r"`` -> colour of the gems still on the rocks, sorted. Gems only leave the rocks,
    when a tile covers them: kept on the vegetation with the map and size they were made from,
    and made again from the kept entries, without those that left, while every gem is among
    them."""
    gems = state.rock_gems
    memo = state.veg.memo
    found = memo.get("rock_gems")
    if found is not None:
        key, kept = found
        assert isinstance(key, tuple) and isinstance(kept, _RockGems)
        if key[0] is gems:
            if key[1] == len(gems):
                return kept.json
            out: dict[str, JSON] = {}
            for cell, name in kept.entries:
                colour = gems.get(cell)
                if colour is not None:
                    out[name] = colour
            if len(out) == len(gems):
                memo["rock_gems"] = ((gems, len(gems)), _RockGems(kept.entries, out))
                return out
    # (the spaces as objects: the filter above looks them up as they are, without unpacking
    # and packing each one again)
    entries: list[tuple[Any, str]] = [(cell, f"{cell[0]},{cell[1]}") for cell in sorted(gems)]
    out = {name: gems[cell] for cell, name in entries}
    memo["rock_gems"] = ((gems, len(gems)), _RockGems(entries, out))
    return out


class _RockGems:
    """The rock gems' view, and the spaces with their names it was made from (in order)."""

    __slots__ = ("entries", "json")

    def __init__(self, entries: list[tuple[Any, str]], json: dict[str, JSON]) -> None:
        self.entries = entries
        self.json = json


def _players(state: State, tiles: dict[str, dict[str, JSON]], over: bool) -> list[JSON]:
    """Every player's public part (gems, assistants, skills with their gems, planted count,
    reservations; the planted cards at the end); kept until one of them changes, and then the
    others' entries too (as :func:`games.base.memo_entries`).

    Each entry is kept with copies of the facts it shows (:class:`_PlayerSeen`), compared with
    the player's as they are: no key to build at every view, and the very same list while
    every entry holds (which :func:`_provisional` relies on)."""
    players = state.players
    marker = state.reserved_marker
    memo = state.veg.memo
    found = memo.get("players")
    seen: list[_PlayerSeen] = []
    if found is not None:
        held, kept = found
        assert isinstance(held, list) and isinstance(kept, list)
        seen = held
        if len(seen) == len(players):
            for i, p in enumerate(players):
                if not seen[i].holds(p, marker[p.seat], over):
                    break
            else:
                return kept
    now: list[_PlayerSeen] = []
    for i, p in enumerate(players):
        if i < len(seen) and seen[i].holds(p, marker[p.seat], over):
            now.append(seen[i])
        else:
            now.append(_PlayerSeen(p, marker[p.seat], over, _player(state, tiles, over, i)))
    out: list[JSON] = [s.json for s in now]
    memo["players"] = (now, out)
    return out


class _PlayerSeen:
    """A player's entry in the view, with copies of what it shows (the player's dicts and lists
    change in place). Skills are only ever added, so equal skill maps list them in the same
    order."""

    __slots__ = (
        "assistants",
        "blocked",
        "gems",
        "json",
        "marker",
        "placed",
        "planted",
        "planted_cards",
        "reserved_tile",
        "reserved_tree",
        "skill_gems",
        "skills",
    )

    def __init__(self, p: Player, marker: bool, over: bool, json: JSON) -> None:
        self.gems = dict(p.gems)
        self.assistants = p.assistants
        self.blocked = p.blocked
        self.placed = p.placed
        self.skills = dict(p.skills)
        self.skill_gems = {s: list(g) for s, g in p.skill_gems.items()}
        self.planted = len(p.planted)
        self.planted_cards: list[str] | None = list(p.planted) if over else None
        self.reserved_tree = p.reserved_tree
        self.marker = marker
        self.reserved_tile = p.reserved_tile
        self.json = json

    def holds(self, p: Player, marker: bool, over: bool) -> bool:
        """Whether the entry still shows ``p`` (with its tree card's ``marker``) as it is."""
        return (
            self.assistants == p.assistants
            and self.blocked == p.blocked
            and self.placed == p.placed
            and self.planted == len(p.planted)
            and self.reserved_tree == p.reserved_tree
            and self.marker == marker
            and self.reserved_tile == p.reserved_tile
            and self.gems == p.gems
            and self.skills == p.skills
            and self.skill_gems == p.skill_gems
            and (self.planted_cards is None if not over else self.planted_cards == p.planted)
        )


def _player(state: State, tiles: dict[str, dict[str, JSON]], over: bool, seat: int) -> JSON:
    p = state.players[seat]
    entry: dict[str, JSON] = {
        "seat": p.seat,
        "colour": p.colour,
        "gems": {c: p.gems[c] for c in COLOURS},
        "assistants": p.assistants,
        "blocked": p.blocked,
        "placed": p.placed,
        "skills": {s: list(p.skill_gems.get(s, [])) for s in p.skills},
        "planted": len(p.planted),
        "reserved_tree": None
        if p.reserved_tree is None
        else _card(state, p.reserved_tree, state.reserved_marker[p.seat]),
        "reserved_tile": None if p.reserved_tile is None else tiles[p.reserved_tile],
    }
    if over:
        entry["planted_cards"] = list(p.planted)
    return entry


_PileItem = tuple[str, int, str | None]
"""A pile as its view entry shows it: cup shape, tile count, face-up top."""


def _piles(state: State, tiles: dict[str, dict[str, JSON]]) -> list[JSON]:
    """Each pile's cup shape, tile count and face-up top; kept until one of them changes, and
    then the other piles' entries too (:func:`games.base.memo_entries`). The kept key is first
    compared item by item with the piles as they are, without building a new one."""
    cups, piles, top_up = state.cups, state.piles, state.top_up
    assert len(cups) == len(piles) == len(top_up)
    found = state.veg.memo.get("piles")
    if found is not None:
        assert isinstance(found[0], tuple) and isinstance(found[1], list)
        held = cast(tuple[_PileItem, ...], found[0])
        if len(held) == len(cups):
            for i, pile in enumerate(piles):
                cup, count, top = held[i]
                now = pile[-1] if pile and top_up[i] else None
                if count != len(pile) or cup != cups[i] or (top is not now and top != now):
                    break
            else:
                return found[1]
    key = tuple(
        [
            (cups[i], len(piles[i]), piles[i][-1] if piles[i] and top_up[i] else None)
            for i in range(len(cups))
        ]
    )
    return memo_entries(state.veg.memo, "piles", key, lambda i: _pile(key[i], tiles))


def _pile(item: _PileItem, tiles: dict[str, dict[str, JSON]]) -> JSON:
    shape, count, top = item
    return {"cup": shape, "count": count, "top": None if top is None else tiles[top]}


def _display(state: State) -> list[JSON]:
    """The tree cards on display with their markers; kept until the display changes."""
    key = (tuple(state.display), tuple(state.display_marker))
    found: list[JSON] = _memo(
        state,
        "display",
        key,
        lambda: [
            _card(state, card, marker)
            for card, marker in zip(state.display, state.display_marker, strict=True)
        ],
    )
    return found


def _tokens(state: State) -> list[JSON]:
    """The blooming tokens still on the carpet with their flowers. Tokens only leave the carpet
    (a bloom removes one): kept with the list and size they were made from, like the rock gems."""
    tokens = state.tokens
    memo = state.veg.memo
    found = memo.get("tokens")
    if found is not None:
        key, kept = found
        if isinstance(key, tuple) and key[0] is tokens and key[1] == len(tokens):
            assert isinstance(kept, list)
            return kept
    edition = state.edition
    out: list[JSON] = [{"token": t, "flowers": list(edition.tokens[t].flowers)} for t in tokens]
    memo["tokens"] = ((tokens, len(tokens)), out)
    return out


def _provisional(state: State, beds: _Beds, players_json: list[JSON]) -> list[JSON]:
    """Each seat's score if the game ended now, without the face-down tree cards.

    Recomputed only when a flowerbed with an assistant changed (its entry in ``beds``, made
    again only when the bed grew or got its assistant: cells, flowers, owner and fountain are
    all that the flowers, fountains and skills A and D read of it), a tree was planted while
    a player has skill D, a player's skills changed, or the gems of a player with skill C or
    the assistants of one with skill E: nothing else scores but the trees. A tile or token
    that joins no bed with an assistant changes none of these.

    Those facts are compared only when the vegetation's ``version`` or the players' view
    (``players_json``, the very same list while no player changed, see :func:`_players`) is
    not what they were last time: else none of them changed."""
    memo = state.veg.memo
    version = state.veg.version
    found = memo.get("provisional")
    before: object = None
    value: list[JSON] = []
    if found is not None:
        held, kept = found
        assert isinstance(held, _ProvisionalKey) and isinstance(kept, list)
        if held.version == version and held.players is players_json:
            return kept
        before, value = held.facts, kept
    players = state.players
    key = (
        beds.owned,
        tuple(state.veg.trees) if any("D" in p.skills for p in players) else None,
        tuple(
            (
                tuple(p.skills),
                tuple(p.gems.values()) if "C" in p.skills else None,
                p.assistants if "E" in p.skills else None,
            )
            for p in players
        ),
    )
    if found is None or before != key:
        value = _provisional_now(state)
    memo["provisional"] = (_ProvisionalKey(version, players_json, key), value)
    return value


class _ProvisionalKey:
    """What the provisional scores were made from: the facts that score, and the vegetation's
    version and players' view they were last found the same for."""

    __slots__ = ("facts", "players", "version")

    def __init__(self, version: int, players: list[JSON], facts: object) -> None:
        self.version = version
        self.players = players
        self.facts = facts


def _provisional_now(state: State) -> list[JSON]:
    rows = score_position(
        state.edition, state.terrain, state.veg, fountain_points(state), state.players
    )
    out: list[JSON] = []
    for row in rows:
        shown: dict[str, JSON] = {k: row[k] for k in CATEGORIES if k != "trees"}
        shown["total"] = row["total"] - row["trees"]
        out.append(shown)
    return out


class _Fixed:
    """What the views take from the match's fixed parts (edition and terrain), made once per
    match instead of being looked up at every view: the tiles by id and the terrain's rows (the
    fountains' points are kept by :func:`games.ishtar.scoring.fountain_points`)."""

    __slots__ = ("edition", "terrain", "terrain_rows", "tiles")

    def __init__(self, state: State) -> None:
        self.edition = state.edition
        self.terrain = state.terrain
        self.tiles = _tiles_json(state.edition)
        self.terrain_rows: list[JSON] = state.terrain.rows_json()


def _fixed(state: State) -> _Fixed:
    """The state's :class:`_Fixed`, kept on the vegetation (made again for another edition or
    terrain, which no match changes)."""
    memo = state.veg.memo
    found = memo.get("fixed")
    if found is not None:
        kept = found[1]
        assert isinstance(kept, _Fixed)
        if kept.edition is state.edition and kept.terrain is state.terrain:
            return kept
    made = _Fixed(state)
    memo["fixed"] = (None, made)
    return made


def shared_view(state: State) -> dict[str, JSON]:
    over = state.over
    fixed = _fixed(state)
    tiles = fixed.tiles
    rows = final_scores(state) if over else None
    players = _players(state, tiles, over)
    beds = _beds(state)
    return {
        "edition": state.edition.name,
        "first": state.first,
        "current": state.current,
        "turn": state.turn_no,
        "turns_played": state.turns_played,
        "triggered": state.triggered,
        "pending": _pending(state, tiles),
        "terrain": fixed.terrain_rows,
        "fountains": beds.fountains,
        "beds": beds.beds,
        "rock_gems": _rock_gems(state),
        "laid": _laid(state),
        "piles": _piles(state, tiles),
        "can": state.can,
        "display": _display(state),
        "deck": len(state.deck),
        "markers": state.markers,
        "tokens": _tokens(state),
        "stock": {c: state.stock[c] for c in COLOURS},
        "discarded": list(state.discarded),
        "players": players,
        "scores": None if rows is None else [dict(r) for r in rows],
        "provisional": None if over else _provisional(state, beds, players),
    }


def own_view(state: State, seat: int) -> dict[str, JSON]:
    """A seat's secrets: its planted tree cards and their points (public at the end anyway)."""
    trees = state.edition.trees
    planted = state.players[seat].planted
    return {
        "planted": [{"card": c, "points": trees[c].points} for c in planted],
        "planted_points": sum(trees[c].points for c in planted),
    }
