"""Snapshots (``dump`` / ``load``) and the re-dealt variants the leak check uses.

A snapshot is the primary state as plain data, generator included. The garden and flowerbed
structures are not stored: ``load`` replays ``laid`` (tiles, tokens, trees, assistants in the
order they were laid), checking each tile is legal where it lies, so a snapshot that does not
describe a reachable board is refused with :class:`~games.errors.SnapshotError`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from games.base import JSON
from games.errors import GameError, SnapshotError
from games.ishtar.board import build_terrain, check_layout
from games.ishtar.edition import COLOURS, Edition
from games.ishtar.garden import Vegetation, tile_cells
from games.ishtar.hexes import Hex
from games.ishtar.state import STEPS, Player, State, Turn
from games.ishtar.turn import hx, shape_rotations
from games.rng import Rng

VERSION: Final = 1


def dump(state: State) -> dict[str, JSON]:
    """The state as plain data (module doc); also the copy an undo starts from, taken at the
    start of a turn every few turns (:class:`games.base.Match`).

    What never changes is shared instead of copied: the laid items with ``state.laid`` (an
    item never changes once laid; ``load`` makes its own) and the layout with every other
    dump of the match. So nobody may change a dump: copy it first (as the tests that spoil
    one do)."""
    t = state.turn
    return {
        "game": "ishtar",
        "version": VERSION,
        "edition": state.edition.name,
        "rng": state.rng.state,
        "layout": _layout(state),
        "fountains": list(state.fountains),
        "rock_gems": [[h[0], h[1], c] for h, c in state.rock_gems.items()],
        "stock": dict(state.stock),
        "cups": list(state.cups),
        "piles": [list(p) for p in state.piles],
        "top_up": list(state.top_up),
        "cut": list(state.cut),
        "can": state.can,
        "deck": list(state.deck),
        "display": list(state.display),
        "display_marker": list(state.display_marker),
        "markers": state.markers,
        "tokens": list(state.tokens),
        "players": [
            {
                "seat": p.seat,
                "colour": p.colour,
                "gems": dict(p.gems),
                "assistants": p.assistants,
                "blocked": p.blocked,
                "placed": p.placed,
                "skills": dict(p.skills),
                "skill_gems": {k: list(v) for k, v in p.skill_gems.items()},
                "planted": list(p.planted),
                "reserved_tree": p.reserved_tree,
                "reserved_tile": p.reserved_tile,
            }
            for p in state.players
        ],
        "first": state.first,
        "current": state.current,
        "turn_no": state.turn_no,
        "turn": {
            "step": t.step,
            "tile": t.tile,
            "anchor": None if t.anchor is None else hx(t.anchor),
            "placed": None if t.placed is None else [hx(c) for c in t.placed],
            "icon": t.icon,
            "pay_left": t.pay_left,
            "pay_for": t.pay_for,
            "target": t.target,
            "skill": t.skill,
            "take_left": t.take_left,
            "buying": t.buying,
        },
        "laid": list(state.laid),
        "discarded": list(state.discarded),
        "reserved_marker": list(state.reserved_marker),
        "triggered": state.triggered,
        "turns_played": state.turns_played,
    }


def _layout(state: State) -> list[JSON]:
    """The layout as a dump writes it, made once per match (kept on the vegetation)."""
    memo = state.veg.memo
    found = memo.get("layout")
    if found is not None and found[0] is state.layout:
        kept = found[1]
        assert isinstance(kept, list)
        return kept
    made: list[JSON] = [p.to_json() for p in state.layout]
    memo["layout"] = (state.layout, made)
    return made


def _int(v: Any) -> int:
    if type(v) is not int:
        raise SnapshotError(f"expected an integer, got {v!r}")
    return v


def _opt_int(v: Any) -> int | None:
    return None if v is None else _int(v)


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise SnapshotError(f"expected a string, got {v!r}")
    return v


def _opt_str(v: Any) -> str | None:
    return None if v is None else _str(v)


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise SnapshotError(f"expected true or false, got {v!r}")
    return v


def _hex(v: Any) -> Hex:
    if not (isinstance(v, list) and len(v) == 2):
        raise SnapshotError(f"expected [q, r], got {v!r}")
    return (_int(v[0]), _int(v[1]))


def _strs(v: Any) -> list[str]:
    if not isinstance(v, list):
        raise SnapshotError(f"expected a list, got {v!r}")
    return [_str(x) for x in v]


def _gems(v: Any) -> dict[str, int]:
    if not isinstance(v, dict) or set(v) != set(COLOURS):
        raise SnapshotError(f"expected a gem map, got {v!r}")
    out = {c: _int(v[c]) for c in COLOURS}
    if min(out.values()) < 0:
        raise SnapshotError("negative gems")
    return out


def load(edition: Edition, data: Mapping[str, JSON]) -> State:
    try:
        return _load(edition, data)
    except SnapshotError:
        raise
    except (GameError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise SnapshotError(f"not an Ishtar snapshot: {type(exc).__name__}: {exc}") from None


def _load(edition: Edition, d: Mapping[str, Any]) -> State:
    if not isinstance(d, Mapping) or d.get("game") != "ishtar" or d.get("version") != VERSION:
        raise SnapshotError("not an Ishtar snapshot (game or version)")
    if d["edition"] != edition.name:
        raise SnapshotError(f"snapshot of edition {d['edition']!r}, not {edition.name!r}")
    raw_players = d["players"]
    if not isinstance(raw_players, list) or not 2 <= len(raw_players) <= 4:
        raise SnapshotError("a snapshot has 2 to 4 players")
    n = len(raw_players)
    layout = check_layout(edition, n, d["layout"], "snapshot layout", SnapshotError)
    terrain = build_terrain(edition, layout)
    players = []
    for seat, rp in enumerate(raw_players):
        if _int(rp["seat"]) != seat:
            raise SnapshotError("players out of order")
        skills = {_str(k): _int(v) for k, v in rp["skills"].items()}
        skill_gems = {_str(k): _strs(v) for k, v in rp["skill_gems"].items()}
        if not set(skills) <= set(skill_gems) <= set(edition.skills):
            raise SnapshotError("unknown or unpaid skill")
        players.append(
            Player(
                seat,
                _str(rp["colour"]),
                _gems(rp["gems"]),
                _int(rp["assistants"]),
                _int(rp["blocked"]),
                _int(rp["placed"]),
                skills,
                skill_gems,
                _strs(rp["planted"]),
                _opt_str(rp["reserved_tree"]),
                _opt_str(rp["reserved_tile"]),
            )
        )
    rt = d["turn"]
    anchor, placed = rt["anchor"], rt["placed"]
    turn = Turn(
        step=_str(rt["step"]),
        tile=_opt_str(rt["tile"]),
        anchor=None if anchor is None else _hex(anchor),
        placed=None if placed is None else [_hex(c) for c in placed],
        icon=_opt_str(rt["icon"]),
        pay_left=_int(rt["pay_left"]),
        pay_for=_str(rt["pay_for"]),
        target=_int(rt["target"]),
        skill=_opt_str(rt["skill"]),
        take_left=_int(rt["take_left"]),
        buying=_opt_str(rt["buying"]),
    )
    if turn.step not in STEPS:
        raise SnapshotError(f"unknown step {turn.step!r}")
    state = State(
        edition=edition,
        terrain=terrain,
        veg=Vegetation(terrain),
        rng=Rng(_int(d["rng"])),
        layout=layout,
        fountains=_strs(d["fountains"]),
        rock_gems={_hex(e[:2]): _str(e[2]) for e in d["rock_gems"]},
        stock=_gems(d["stock"]),
        cups=_strs(d["cups"]),
        piles=[_strs(p) for p in d["piles"]],
        top_up=[_bool(b) for b in d["top_up"]],
        cut=_strs(d["cut"]),
        can=_opt_int(d["can"]),
        deck=_strs(d["deck"]),
        display=_strs(d["display"]),
        display_marker=[_bool(b) for b in d["display_marker"]],
        markers=_int(d["markers"]),
        tokens=_strs(d["tokens"]),
        players=players,
        first=_int(d["first"]),
        current=_int(d["current"]),
        turn_no=_int(d["turn_no"]),
        turn=turn,
        discarded=_strs(d["discarded"]),
        reserved_marker=[_bool(b) for b in d["reserved_marker"]],
        triggered=_bool(d["triggered"]),
        turns_played=_int(d["turns_played"]),
    )
    _replay(state, d["laid"])
    _check(state)
    return state


def _replay(state: State, laid: Any) -> None:
    if not isinstance(laid, list):
        raise SnapshotError("laid must be a list")
    veg, edition = state.veg, state.edition
    for item in laid:
        if not isinstance(item, dict):
            raise SnapshotError("bad laid item")
        if "tile" in item and set(item) == {"tile", "at", "rotation"}:
            tile = edition.tiles[_str(item["tile"])]
            rotation = _int(item["rotation"])
            if not 0 <= rotation < 6:
                raise SnapshotError("bad rotation")
            cells = tile_cells(_hex(item["at"]), shape_rotations(state, tile)[rotation])
            why = veg.placement_problem(tile, cells)
            if why is not None:
                raise SnapshotError(f"tile {tile.id} cannot lie there: {why}")
            veg.place(tile, cells)
            state.laid.append({"tile": tile.id, "at": list(item["at"]), "rotation": rotation})
        elif "token" in item and set(item) == {"token", "cells"}:
            token = edition.tokens[_str(item["token"])]
            spots = [_hex(c) for c in item["cells"]]
            if len(spots) != len(token.offsets) or veg.bloom_problem(spots) is not None:
                raise SnapshotError("a blooming token cannot lie there")
            veg.bloom(token.id, spots, token.flowers)
            state.laid.append({"token": token.id, "cells": [hx(c) for c in spots]})
        elif "tree" in item and set(item) == {"tree", "at"}:
            cell = _hex(item["at"])
            if cell not in veg.empty_grass:
                raise SnapshotError("a tree must stand on empty grass")
            veg.plant(cell, _int(item["tree"]))
            state.laid.append({"tree": _int(item["tree"]), "at": hx(cell)})
        elif "assistant" in item and set(item) == {"assistant", "at"}:
            cell = _hex(item["at"])
            if veg.assistant_problem(cell) is not None:
                raise SnapshotError("an assistant cannot stand there")
            veg.add_assistant(cell, _int(item["assistant"]))
            state.laid.append({"assistant": _int(item["assistant"]), "at": hx(cell)})
        else:
            raise SnapshotError(f"bad laid item {item!r}")


def _check(state: State) -> None:
    """Cheap consistency: every component exactly once, counts that fit the player count."""
    n, edition = len(state.players), state.edition
    if not (0 <= state.first < n and 0 <= state.current < n):
        raise SnapshotError("seat out of range")
    if len(state.piles) != 6 or len(state.top_up) != 6 or len(state.cups) != 6:
        raise SnapshotError("want 6 piles")
    if state.can is not None and not 0 <= state.can < 6:
        raise SnapshotError("the can is off the carpet")
    tiles = [*state.cut, *state.discarded, *(t for p in state.piles for t in p)]
    tiles += [item["tile"] for item in state.laid if "tile" in item]
    tiles += [p.reserved_tile for p in state.players if p.reserved_tile]
    if state.turn.tile:
        tiles.append(state.turn.tile)
    if Counter(tiles) != Counter(list(edition.tiles)):
        raise SnapshotError("the tiles do not add up to the edition's")
    cards = [*state.deck, *state.display, *(c for p in state.players for c in p.planted)]
    cards += [p.reserved_tree for p in state.players if p.reserved_tree]
    if not set(cards) <= set(edition.trees) or len(cards) != len(set(cards)):
        raise SnapshotError("tree cards repeat or are unknown")
    if len(state.display) != len(state.display_marker) or len(state.reserved_marker) != n:
        raise SnapshotError("marker lists do not match")
    if not set(state.fountains) <= {f.id for f in edition.fountains}:
        raise SnapshotError("unknown fountain")
    if len(state.fountains) != len(state.terrain.fountain_cells):
        raise SnapshotError("one fountain per fountain space")


def _copy(state: State) -> State:
    """A shallow copy, without the cached decision (``copy.copy`` cannot copy a compiled
    ``State``: it has no ``__dict__``)."""
    return dataclasses.replace(state, cache={})


def hidden_variant(state: State, viewer: int | None, rng: Rng) -> State:
    """A shallow copy with everything ``viewer`` may not see re-dealt (see views.py)."""
    out = _copy(state)
    out.rng = Rng(rng.next_u64())
    # Tiles: the face-down part of each pile and the cut tiles, re-dealt within each shape.
    shape_of = {tid: t.shape for tid, t in state.edition.tiles.items()}
    pools: dict[str, list[str]] = {}
    for pile, up in zip(state.piles, state.top_up, strict=True):
        for tid in pile[:-1] if up else pile:
            pools.setdefault(shape_of[tid], []).append(tid)
    for tid in state.cut:
        pools.setdefault(shape_of[tid], []).append(tid)
    for pool in pools.values():
        rng.shuffle(pool)
    piles = []
    for pile, up in zip(state.piles, state.top_up, strict=True):
        hidden = len(pile) - 1 if up and pile else len(pile)
        new = [pools[shape_of[t]].pop() for t in pile[:hidden]]
        piles.append(new + pile[hidden:])
    out.piles = piles
    out.cut = [pools[shape_of[t]].pop() for t in state.cut]
    # Tree cards: the deck, and other players' planted cards until the end.
    secret = [p.seat for p in state.players if p.seat != viewer and not state.over]
    cards = list(state.deck) + [c for s in secret for c in state.players[s].planted]
    rng.shuffle(cards)
    out.deck = [cards.pop() for _ in state.deck]
    players = list(state.players)
    for s in secret:
        p = players[s]
        players[s] = dataclasses.replace(p, planted=[cards.pop() for _ in p.planted])
    out.players = players
    return out
