"""Everything static a client needs to draw and explain Ishtar, served as ``GET /games/ishtar``.

Built once from the validated :class:`~games.ishtar.edition.Edition` (never from the raw file), so
a replaced edition changes what clients see with it. The views then name components by id
(tiles, tree cards, tokens, fountains) and this document says what each id is: shapes with the
offsets of all six rotations (a client needs no hex arithmetic to lay a tile), the terrain
boards and layouts, the tiles with their spaces, the tree cards, the blooming tokens with their
flowers, the fountains, the skills with their names, costs and texts. Fields are described in
``protocol/games/ishtar.md`` and ``protocol/schema/ishtar-data.json``.
"""

from __future__ import annotations

from games.base import JSON
from games.ishtar.board import CODES, build_terrain
from games.ishtar.edition import COLOURS, ICONS, Edition, Tile
from games.ishtar.garden import rotations
from games.ishtar.hexes import DIRECTIONS, Hex
from games.ishtar.labels import ICON_WORDS, skill_summary, tile_text
from games.ishtar.scoring import CATEGORIES

DIRECTION_NAMES = ("E", "NE", "NW", "W", "SW", "SE")
TERRAIN_WORDS = {
    "sand": "sand (a tile may cover it)",
    "tablet": "a sacred tablet (never covered)",
    "fountain": "a fountain (never covered; gardens grow from it)",
    "purple": "a rock with a purple gem (a tile may cover it and collect the gem)",
    "red": "a rock with a red gem",
    "white": "a rock with a white gem",
}
NAMING = (
    "a space is named by its column letters and its row number (f7): drawn with row r as a line"
    " and space [q, r] at half step 2q + r, columns a, b, ... from the terrain's left edge, rows"
    " 1, 2, ... from its top; the view's terrain rows carry each space's name"
)


def _hx(h: Hex) -> list[JSON]:
    return [h[0], h[1]]


def _tile(tile: Tile) -> dict[str, JSON]:
    return {
        "id": tile.id,
        "shape": tile.shape,
        "starting": tile.starting,
        "spaces": [
            {"flowers": sp.flowers, "icon": sp.icon} if sp.icon else {"flowers": sp.flowers}
            for sp in tile.spaces
        ],
        "text": tile_text(tile),
    }


def static_data(edition: Edition, title: str, players: tuple[int, int]) -> dict[str, JSON]:
    faces: list[JSON] = []
    for (board, side), face in edition.faces.items():
        faces.append(
            {
                "board": board,
                "side": side,
                "face": face.id,
                "fountain": _hx(face.fountain),
                "tablets": [_hx(t) for t in sorted(face.tablets, key=lambda h: (h[1], h[0]))],
                "rocks": [
                    [h[0], h[1], colour]
                    for h, colour in sorted(face.rocks.items(), key=lambda i: (i[0][1], i[0][0]))
                ],
            }
        )
    layouts: dict[str, JSON] = {
        str(n): [p.to_json() for p in preset] for n, preset in edition.presets.items()
    }
    shapes: dict[str, JSON] = {
        shape: {
            "offsets": [_hx(o) for o in offsets],
            "rotations": [[_hx(o) for o in rot] for rot in rotations(offsets)],
        }
        for shape, offsets in edition.shapes.items()
    }
    return {
        "name": "ishtar",
        "title": title,
        "players": {"min": players[0], "max": players[1]},
        "edition": edition.name,
        "hex": {
            "coordinates": "axial [q, r] on pointy-topped hexes; q grows east, r south-east",
            "pixel": "centre of [q, r]: x = sqrt(3) * (q + r / 2), y = 1.5 * r (y down)",
            "directions": [
                {"name": n, "offset": _hx(d)}
                for n, d in zip(DIRECTION_NAMES, DIRECTIONS, strict=True)
            ],
            "rotation": "one step turns 60 degrees counter-clockwise: [q, r] -> [q + r, -q]",
            "names": NAMING,
        },
        "terrain_codes": {code: TERRAIN_WORDS[kind] for kind, code in CODES.items()},
        "board_spaces": [_hx(h) for h in edition.board_spaces],
        "macro_basis": [_hx(edition.macro_basis[0]), _hx(edition.macro_basis[1])],
        "terrain_boards": faces,
        "layouts": layouts,
        "space_names": {
            str(n): [[h[0], h[1], name] for h, name in build_terrain(edition, preset).names.items()]
            for n, preset in edition.presets.items()
        },
        "tile_shapes": shapes,
        "icons": {icon: ICON_WORDS[icon] for icon in ICONS},
        "tiles": [_tile(t) for t in edition.tiles.values()],
        "trees": [
            {
                "card": t.id,
                "name": t.name,
                "cost": {c: t.cost[c] for c in COLOURS},
                "points": t.points,
            }
            for t in edition.trees.values()
        ],
        "tokens": [
            {
                "token": t.id,
                "offsets": [_hx(o) for o in t.offsets],
                "flowers": list(t.flowers),
            }
            for t in edition.tokens.values()
        ],
        "fountains": [
            {"fountain": f.id, "colour": f.colour, "points": f.points} for f in edition.fountains
        ],
        "gem_colours": list(COLOURS),
        "gem_stock": {c: edition.gem_stock[c] for c in COLOURS},
        "player_colours": list(edition.player_colours),
        "display_size": edition.display_size,
        "markers": edition.markers,
        "skills": [
            {
                "skill": s.id,
                "name": f"Skill {s.id}",
                "level": "upper" if s.upper else "lower",
                "column": s.column,
                "requires": s.requires,
                "cost": 2,
                "summary": skill_summary(s),
                "text": s.effect,
            }
            for s in edition.skills.values()
        ],
        "score_categories": list(CATEGORIES),
    }
