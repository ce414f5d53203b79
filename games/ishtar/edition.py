"""The edition: every physical component of the game, loaded from data and validated at load.

The printed boards, tiles and tree cards are not public, so Oasis ships a documented
reconstruction (``ishtar-edition.json`` beside this module, a copy of
``shared/data/ishtar-edition.json``). The engine never hard-codes a component: an exact
transcription of the printed game that follows the same schema can replace the file. Loading
checks the structure and every count the rulebook gives (12 faces, 42 tiles, 6 cups, 26 cards,
20 markers, 8 tokens, fountains 3/2/1, gems 50/38/26, skills A-J...) and raises
:class:`~games.errors.EditionError` naming the first problem and where it is (ISH-SETUP-25).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from games.errors import EditionError
from games.ishtar.hexes import DIRECTIONS, Hex, connected, disc, distance, rotate

COLOURS: tuple[str, ...] = ("purple", "red", "white")
"""Gem colours, commonest first; also the order of every gem map in views."""
SHAPES: tuple[str, ...] = ("straight", "triangle", "chevron")
ICONS: tuple[str, ...] = ("assistant", "skill", "wild")
UPPER: tuple[str, ...] = ("A", "B", "C", "D", "E")
LOWER: tuple[str, ...] = ("F", "G", "H", "I", "J")
PLAYER_COUNTS: tuple[int, ...] = (2, 3, 4)
_FOUNTAINS = {"purple": (3, 4), "red": (2, 6), "white": (1, 8)}
_GEM_STOCK = {"purple": 50, "red": 38, "white": 26}
_PACKAGED = "ishtar-edition.json"


@dataclass(frozen=True, slots=True)
class Face:
    """One side of a terrain board, in board coordinates (centre (0, 0))."""

    id: str
    fountain: Hex
    tablets: frozenset[Hex]
    rocks: Mapping[Hex, str]


@dataclass(frozen=True, slots=True)
class Space:
    """One space of a tile or token: ``flowers == 0`` is grass; an icon sits on flowers only."""

    flowers: int
    icon: str | None = None


@dataclass(frozen=True, slots=True)
class Tile:
    """A vegetation tile. ``flower_groups``: indices of its flower spaces, grouped by contact."""

    id: str
    shape: str
    starting: bool
    spaces: tuple[Space, ...]
    icon: str | None
    icon_space: int | None
    flower_groups: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class TreeCard:
    id: str
    name: str
    cost: Mapping[str, int]
    points: int


@dataclass(frozen=True, slots=True)
class Token:
    """A blooming token: its spaces as offsets from its anchor, each with its flowers."""

    id: str
    offsets: tuple[Hex, ...]
    flowers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Fountain:
    id: str
    colour: str
    points: int


@dataclass(frozen=True, slots=True)
class BoardPlacement:
    """Where one terrain board lies: which board, side up, rotation steps and macro hex."""

    board: str
    side: str
    rotation: int
    macro: Hex

    def to_json(self) -> dict[str, Any]:
        return {
            "board": self.board,
            "side": self.side,
            "rotation": self.rotation,
            "macro": list(self.macro),
        }


@dataclass(frozen=True, slots=True)
class Skill:
    id: str
    upper: bool
    requires: str | None
    params: Mapping[str, Any]
    column: int = 0
    """Its column on the player board (1-5; an upper skill sits above the lower it requires)."""
    effect: str = ""
    """The leaflet's text, for people (``GET /games/ishtar``)."""


@dataclass(frozen=True, eq=False)
class Edition:
    """Validated component data. Maps keep the file's order (stable choice order)."""

    name: str
    board_spaces: tuple[Hex, ...]
    macro_basis: tuple[Hex, Hex]
    faces: Mapping[tuple[str, str], Face]
    boards: tuple[str, ...]
    presets: Mapping[int, tuple[BoardPlacement, ...]]
    shapes: Mapping[str, tuple[Hex, ...]]
    tiles: Mapping[str, Tile]
    trees: Mapping[str, TreeCard]
    tokens: Mapping[str, Token]
    fountains: tuple[Fountain, ...]
    gem_stock: Mapping[str, int]
    cups: tuple[str, ...]
    markers: int
    player_colours: tuple[str, ...]
    boards_by_players: Mapping[int, int]
    basic_per_pile: Mapping[int, int]
    display_size: int
    assistants_in_supply: int
    assistants_blocked: int
    start_gems: Mapping[str, int]
    skills: Mapping[str, Skill]

    def macro_centre(self, macro: Hex) -> Hex:
        (aq, ar), (bq, br) = self.macro_basis
        return (macro[0] * aq + macro[1] * bq, macro[0] * ar + macro[1] * br)


def make_tile(
    tid: str, shape: str, offsets: tuple[Hex, ...], spaces: list[Space], starting: bool = False
) -> Tile:
    """A tile with its derived fields: the icon, its space, and the flower spaces in contact."""
    icon_space = next((i for i, sp in enumerate(spaces) if sp.icon), None)
    groups: list[list[int]] = []
    for s, sp in enumerate(spaces):
        if not sp.flowers:
            continue
        touching = [g for g in groups if any(distance(offsets[s], offsets[o]) == 1 for o in g)]
        merged = [s]
        for g in touching:
            groups.remove(g)
            merged.extend(g)
        groups.append(sorted(merged))
    icon = None if icon_space is None else spaces[icon_space].icon
    return Tile(tid, shape, starting, tuple(spaces), icon, icon_space, tuple(map(tuple, groups)))


# --------------------------------------------------------------------------- reading helpers


def _fail(where: str, what: str) -> EditionError:
    return EditionError(f"edition {where}: {what}")


def _get(raw: Any, key: str, where: str) -> Any:
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    if key not in raw:
        raise _fail(where, f"missing field {key!r}")
    return raw[key]


def _list(raw: Any, where: str) -> list[Any]:
    if not isinstance(raw, list):
        raise _fail(where, "expected a list")
    return raw


def _int(raw: Any, where: str) -> int:
    if type(raw) is not int:
        raise _fail(where, f"expected an integer, got {raw!r}")
    return raw


def _str(raw: Any, where: str) -> str:
    if not isinstance(raw, str):
        raise _fail(where, f"expected a string, got {raw!r}")
    return raw


def _hex(raw: Any, where: str) -> Hex:
    if not (isinstance(raw, list) and len(raw) == 2 and all(type(v) is int for v in raw)):
        raise _fail(where, f"expected a [q, r] pair of integers, got {raw!r}")
    return (raw[0], raw[1])


def _expect(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise _fail(where, what)


def _by_players(raw: Any, where: str) -> dict[int, int]:
    out = {int(k): _int(v, f"{where}.{k}") for k, v in _get_obj(raw, where).items()}
    _expect(sorted(out) == list(PLAYER_COUNTS), where, "want entries for 2, 3 and 4 players")
    return out


def _get_obj(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object")
    return raw


# --------------------------------------------------------------------------- sections


def _read_faces(
    raw: Any, spaces: frozenset[Hex]
) -> tuple[dict[tuple[str, str], Face], tuple[str, ...]]:
    boards = _list(raw, "terrain_boards")
    _expect(len(boards) == 6, "terrain_boards", f"{len(boards)} boards, want 6")
    faces: dict[tuple[str, str], Face] = {}
    names: list[str] = []
    for b, board in enumerate(boards):
        bid = _str(_get(board, "id", f"terrain_boards[{b}]"), f"terrain_boards[{b}].id")
        _expect(bid not in names, f"terrain_boards[{b}]", f"board id {bid!r} repeats")
        names.append(bid)
        sides = _list(_get(board, "faces", bid), f"{bid}.faces")
        _expect(len(sides) == 2, bid, f"{len(sides)} faces, want 2 (sides A and B)")
        for s, rawface in enumerate(sides):
            where = f"{bid}.faces[{s}]"
            side = _str(_get(rawface, "side", where), f"{where}.side")
            _expect(side == "AB"[s], where, f"side {side!r}, want {'AB'[s]!r}")
            fountain = _hex(_get(rawface, "fountain", where), f"{where}.fountain")
            tablets = [
                _hex(t, f"{where}.tablets")
                for t in _list(_get(rawface, "tablets", where), f"{where}.tablets")
            ]
            rocks: dict[Hex, str] = {}
            for colour, cells in _get_obj(_get(rawface, "rocks", where), f"{where}.rocks").items():
                _expect(colour in COLOURS, f"{where}.rocks", f"unknown gem colour {colour!r}")
                for cell in _list(cells, f"{where}.rocks.{colour}"):
                    rocks[_hex(cell, f"{where}.rocks.{colour}")] = colour
            listed = [fountain, *tablets, *rocks]
            _expect(len(listed) == len(set(listed)), where, "a space is listed twice")
            _expect(set(listed) <= spaces, where, "a listed space lies off the board")
            _expect(3 <= len(tablets) <= 4, where, f"{len(tablets)} sacred tablets, want 3-4")
            _expect(7 <= len(rocks) <= 9, where, f"{len(rocks)} rock spaces, want 7-9")
            gems = Counter(rocks.values())
            _expect(
                gems["purple"] >= gems["red"] > gems["white"] >= 1,
                where,
                f"rock gems {dict(gems)}: want purple >= red > white >= 1",
            )
            fid = _str(_get(rawface, "id", where), f"{where}.id")
            faces[(bid, side)] = Face(fid, fountain, frozenset(tablets), rocks)
    return faces, tuple(names)


def _read_tiles(raw: Any, shapes: Mapping[str, tuple[Hex, ...]]) -> dict[str, Tile]:
    tiles: dict[str, Tile] = {}
    for i, rawtile in enumerate(_list(raw, "vegetation_tiles")):
        where = f"vegetation_tiles[{i}]"
        tid = _str(_get(rawtile, "id", where), f"{where}.id")
        where = f"vegetation tile {tid}"
        _expect(tid not in tiles, where, "id repeats")
        shape = _str(_get(rawtile, "shape", where), f"{where}.shape")
        _expect(shape in shapes, where, f"unknown shape {shape!r}")
        starting = _get(rawtile, "starting", where)
        _expect(isinstance(starting, bool), where, "'starting' must be true or false")
        rawspaces = _list(_get(rawtile, "spaces", where), f"{where}.spaces")
        _expect(len(rawspaces) == 3, where, f"{len(rawspaces)} spaces, want 3")
        spaces: list[Space] = []
        icon: str | None = None
        for s, sp in enumerate(rawspaces):
            kind = _get(sp, "kind", f"{where}.spaces[{s}]")
            if kind == "grass":
                _expect(set(sp) == {"kind"}, where, f"grass space {s} carries {sorted(sp)}")
                spaces.append(Space(0))
                continue
            _expect(kind == "flowers", where, f"space {s} has unknown kind {kind!r}")
            flowers = _int(_get(sp, "flowers", where), f"{where}.spaces[{s}].flowers")
            _expect(1 <= flowers <= 4, where, f"space {s} shows {flowers} flowers, want 1-4")
            sp_icon = sp.get("icon")
            if sp_icon is not None:
                _expect(sp_icon in ICONS, where, f"unknown icon {sp_icon!r}")
                _expect(icon is None, where, "more than one icon")
                _expect(not starting, where, "a starting tile carries an icon")
                icon = sp_icon
            spaces.append(Space(flowers, sp_icon))
        tiles[tid] = make_tile(tid, shape, shapes[shape], spaces, starting)
    _expect(len(tiles) == 42, "vegetation_tiles", f"{len(tiles)} tiles, want 42")
    for shape in shapes:
        group = [t for t in tiles.values() if t.shape == shape]
        basic = [t for t in group if not t.starting]
        _expect(
            len(group) == 14 and len(basic) == 12,
            "vegetation_tiles",
            f"{shape}: {len(group)} tiles of which {len(basic)} basic, want 14 and 12",
        )
    return tiles


def _read_trees(raw: Any) -> dict[str, TreeCard]:
    trees: dict[str, TreeCard] = {}
    for i, rawcard in enumerate(_list(raw, "tree_cards")):
        where = f"tree_cards[{i}]"
        cid = _str(_get(rawcard, "id", where), f"{where}.id")
        _expect(cid not in trees, where, f"id {cid!r} repeats")
        rawcost = _get_obj(_get(rawcard, "cost", where), f"{where}.cost")
        _expect(set(rawcost) == set(COLOURS), where, "cost must list each gem colour")
        cost = {c: _int(rawcost[c], f"{where}.cost.{c}") for c in COLOURS}
        _expect(all(v >= 0 for v in cost.values()), where, "negative cost")
        _expect(1 <= sum(cost.values()) <= 4, where, "a tree costs 1 to 4 gems")
        points = _int(_get(rawcard, "points", where), f"{where}.points")
        name = _str(_get(rawcard, "name", where), f"{where}.name")
        trees[cid] = TreeCard(cid, name, cost, points)
    _expect(len(trees) == 26, "tree_cards", f"{len(trees)} cards, want 26")
    return trees


def _read_tokens(raw: Any) -> dict[str, Token]:
    tokens: dict[str, Token] = {}
    for i, rawtoken in enumerate(_list(raw, "blooming_tokens")):
        where = f"blooming_tokens[{i}]"
        tid = _str(_get(rawtoken, "id", where), f"{where}.id")
        _expect(tid not in tokens, where, f"id {tid!r} repeats")
        spaces = _list(_get(rawtoken, "spaces", where), f"{where}.spaces")
        offsets = tuple(_hex(_get(s, "offset", where), f"{where}.offset") for s in spaces)
        flowers = tuple(_int(_get(s, "flowers", where), f"{where}.flowers") for s in spaces)
        _expect(
            bool(offsets) and offsets[0] == (0, 0) and connected(offsets),
            where,
            "spaces must start at [0, 0] and touch",
        )
        tokens[tid] = Token(tid, offsets, flowers)
    kinds = Counter((len(t.offsets), sum(t.flowers)) for t in tokens.values())
    _expect(
        kinds == Counter({(1, 2): 4, (2, 3): 4}),
        "blooming_tokens",
        f"want 4 single tokens of 2 flowers and 4 double of 3, got {dict(kinds)}",
    )
    return tokens


def _read_presets(raw: Any) -> dict[int, list[Any]]:
    presets: dict[int, list[Any]] = {}
    for i, preset in enumerate(_list(_get(raw, "presets", "layouts"), "layouts.presets")):
        players = _int(_get(preset, "players", f"layouts.presets[{i}]"), "players")
        presets[players] = _list(_get(preset, "boards", f"layouts.presets[{i}]"), "boards")
    _expect(sorted(presets) == list(PLAYER_COUNTS), "layouts", "want one preset per count")
    return presets


def _read_skills(raw: Any) -> dict[str, Skill]:
    skills: dict[str, Skill] = {}
    for i, rawskill in enumerate(_list(raw, "skills")):
        where = f"skills[{i}]"
        sid = _str(_get(rawskill, "id", where), f"{where}.id")
        level = _get(rawskill, "level", where)
        requires = _get(rawskill, "requires", where)
        _expect(level in ("upper", "lower"), where, f"level {level!r}")
        params = _get_obj(_get(rawskill, "params", where), f"{where}.params")
        column = _int(rawskill.get("column", 0), f"{where}.column")
        effect = _str(rawskill.get("effect", ""), f"{where}.effect")
        skills[sid] = Skill(sid, level == "upper", requires, params, column, effect)
    _expect(tuple(skills) == UPPER + LOWER, "skills", f"want skills A-J, got {list(skills)}")
    for up, low in zip(UPPER, LOWER, strict=True):
        _expect(skills[up].requires == low, "skills", f"skill {up} must require {low}")
        _expect(skills[low].requires is None and not skills[low].upper, "skills", f"{low} is lower")
    return skills


def parse_edition(raw: Any) -> Edition:
    """Validate decoded edition JSON and build the :class:`Edition`; raise EditionError."""
    from games.ishtar.board import check_layout  # board needs Edition; import late

    try:
        return _parse(raw, check_layout)
    except EditionError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise EditionError(f"edition malformed: {type(exc).__name__}: {exc}") from None


def _parse(raw: Any, check_layout: Any) -> Edition:
    root = _get_obj(raw, "root")
    name = _str(_get(_get(root, "header", "root"), "name", "header"), "header.name")
    directions = [
        _hex(_get(d, "offset", "hex.directions"), "hex.directions")
        for d in _list(_get(_get(root, "hex", "root"), "directions", "hex"), "hex.directions")
    ]
    _expect(tuple(directions) == DIRECTIONS, "hex.directions", "want E, NE, NW, W, SW, SE")
    shape_raw = _get(root, "board_shape", "root")
    radius = _int(_get(shape_raw, "core_radius", "board_shape"), "board_shape.core_radius")
    tabs = [_hex(t, "board_shape.tabs") for t in _list(_get(shape_raw, "tabs", "board_shape"), "")]
    spaces = frozenset(disc(radius)) | frozenset(tabs)
    _expect(
        {rotate(h, 1) for h in spaces} == spaces, "board_shape", "the shape changes under rotation"
    )
    basis = _get(_get(root, "macro_grid", "root"), "basis", "macro_grid")
    macro_basis = (_hex(basis["Q"], "macro_grid.basis.Q"), _hex(basis["R"], "macro_grid.basis.R"))
    faces, boards = _read_faces(_get(root, "terrain_boards", "root"), spaces)
    shapes: dict[str, tuple[Hex, ...]] = {}
    for shape, spec in _get_obj(_get(root, "tile_shapes", "root"), "tile_shapes").items():
        offsets = tuple(_hex(o, f"tile_shapes.{shape}") for o in _get(spec, "offsets", shape))
        _expect(len(offsets) == 3 and offsets[0] == (0, 0), f"tile_shapes.{shape}", "bad offsets")
        _expect(connected(offsets), f"tile_shapes.{shape}", "spaces do not touch")
        shapes[shape] = offsets
    _expect(tuple(shapes) == SHAPES, "tile_shapes", f"want {list(SHAPES)}, got {list(shapes)}")
    tiles = _read_tiles(_get(root, "vegetation_tiles", "root"), shapes)
    trees = _read_trees(_get(root, "tree_cards", "root"))
    tokens = _read_tokens(_get(root, "blooming_tokens", "root"))
    fountains = tuple(
        Fountain(_str(f["id"], "fountains"), _str(f["colour"], "fountains"), _int(f["points"], ""))
        for f in _list(_get(root, "fountains", "root"), "fountains")
    )
    found = Counter((f.colour, f.points) for f in fountains)
    want = Counter({(c, p): n for c, (n, p) in _FOUNTAINS.items()})
    _expect(found == want, "fountains", "want 3 purple (4 VP), 2 red (6 VP), 1 white (8 VP)")
    stock = {c: _int(v, f"gem_stock.{c}") for c, v in _get_obj(root["gem_stock"], "").items()}
    _expect(stock == _GEM_STOCK, "gem_stock", f"{stock}, want {_GEM_STOCK}")
    cups = tuple(_str(_get(c, "shape", "cups"), "cups") for c in _list(root["cups"], "cups"))
    _expect(
        Counter(cups) == Counter({s: 2 for s in SHAPES}), "cups", "want 6 cups, 2 of each shape"
    )
    components = _get_obj(_get(root, "components", "root"), "components")
    markers = _int(_get(components, "tree_markers", "components"), "components.tree_markers")
    _expect(markers == 20, "components", f"{markers} tree markers, want 20")
    colours = tuple(_str(c, "components.player_colours") for c in components["player_colours"])
    _expect(len(colours) == 4, "components", "want 4 player colours")
    setup = _get_obj(_get(root, "setup", "root"), "setup")
    boards_by_players = _by_players(setup["terrain_boards"], "setup.terrain_boards")
    _expect(
        boards_by_players == {2: 4, 3: 5, 4: 6}, "setup.terrain_boards", "want players + 2 boards"
    )
    basic = _by_players(setup["basic_tiles_per_pile"], "setup.basic_tiles_per_pile")
    _expect(basic == {2: 4, 3: 5, 4: 6}, "setup.basic_tiles_per_pile", "want 4 / 5 / 6")
    per_player = _get_obj(setup["per_player"], "setup.per_player")
    start_gems = {c: _int(per_player["gems"].get(c, 0), "setup.per_player.gems") for c in COLOURS}
    skills = _read_skills(_get(root, "skills", "root"))
    edition = Edition(
        name=name,
        board_spaces=tuple(sorted(spaces, key=lambda h: (h[1], h[0]))),
        macro_basis=macro_basis,
        faces=faces,
        boards=boards,
        presets={},
        shapes=shapes,
        tiles=tiles,
        trees=trees,
        tokens=tokens,
        fountains=fountains,
        gem_stock=stock,
        cups=cups,
        markers=markers,
        player_colours=colours,
        boards_by_players=boards_by_players,
        basic_per_pile=basic,
        display_size=_int(setup["tree_cards_face_up"], "setup.tree_cards_face_up"),
        assistants_in_supply=_int(per_player["assistants_in_supply"], "setup.per_player"),
        assistants_blocked=_int(per_player["assistants_blocked_on_carpet"], "setup.per_player"),
        start_gems=start_gems,
        skills=skills,
    )
    presets = {
        players: check_layout(edition, players, entries, f"layouts preset for {players} players")
        for players, entries in _read_presets(_get(root, "layouts", "root")).items()
    }
    return dataclasses.replace(edition, presets=presets)


def load_edition(text: str | bytes) -> Edition:
    """Parse and validate an edition file's text."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise EditionError(f"edition is not JSON: {exc}") from None
    return parse_edition(raw)


@functools.cache
def default_edition() -> Edition:
    """The edition packaged beside this module, read once per process (at setup, not per move)."""
    text = resources.files("games.ishtar").joinpath(_PACKAGED).read_text(encoding="utf-8")
    return load_edition(text)
