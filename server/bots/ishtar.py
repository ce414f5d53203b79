"""A heuristic Ishtar player that reads only its seat's view.

It rebuilds from the view's ``laid`` list what any client could (spaces with their flowers,
flowerbeds as connected flower spaces, their assistants, gardens and their fountains), then
values each legal choice in points: a placement by the flowers it adds to its own beds (and
takes from others'), the gems it uncovers and the bed its icon lets it claim; the special action
by the bed an assistant claims or what a skill is worth; a tree by its points against the gems it
costs. Tile shapes (with the offsets of every rotation) and the hex directions come from the
game's static data, the document any client downloads from ``GET /games/ishtar``
(:mod:`server.gamedata`); nothing reads the game state or the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

Hex: TypeAlias = tuple[int, int]

_GEM = 1.1
"""What one gem is worth, in points, to this player (trees turn about 2.5 gems into 5+)."""


class _Geometry:
    """The hex directions and the tile shapes in every rotation, from the static data."""

    def __init__(self, static: Mapping[str, Any]) -> None:
        self.directions: list[Hex] = [
            (int(d["offset"][0]), int(d["offset"][1])) for d in static["hex"]["directions"]
        ]
        self.rotations: dict[str, list[list[Hex]]] = {
            name: [[(int(o[0]), int(o[1])) for o in rot] for rot in shape["rotations"]]
            for name, shape in static["tile_shapes"].items()
        }
        self.fountain_points: dict[str, int] = {
            str(f["colour"]): int(f["points"]) for f in static["fountains"]
        }

    def cells(self, shape: str, at: Sequence[int], rotation: int) -> list[Hex]:
        return [(int(at[0]) + q, int(at[1]) + r) for q, r in self.rotations[shape][rotation]]

    def near(self, h: Hex) -> Iterable[Hex]:
        return ((h[0] + dq, h[1] + dr) for dq, dr in self.directions)


class _Board:
    """What is laid, as seen in the shared view."""

    def __init__(self, geo: _Geometry, g: Mapping[str, Any], me: int) -> None:
        self.geo = geo
        self.me = me
        self.flowers: dict[Hex, int] = {}
        self.covered: set[Hex] = set()
        self.owner_at: dict[Hex, int] = {}
        self.trees: set[Hex] = set()
        for item in g.get("laid") or []:
            if "spaces" in item:
                for sp in item["spaces"]:
                    cell = (int(sp[0]), int(sp[1]))
                    self.covered.add(cell)
                    if int(sp[2]) > 0:
                        self.flowers[cell] = int(sp[2])
            elif "assistant" in item:
                self.owner_at[(int(item["at"][0]), int(item["at"][1]))] = int(item["assistant"])
            elif "tree" in item:
                self.trees.add((int(item["at"][0]), int(item["at"][1])))
        self.fountain_points = {
            (int(f["at"][0]), int(f["at"][1])): int(
                f.get("points") or geo.fountain_points.get(str(f.get("colour")), 4)
            )
            for f in g.get("fountains") or []
        }
        self.gems = {
            (int(k.split(",")[0]), int(k.split(",")[1])): v
            for k, v in (g.get("rock_gems") or {}).items()
        }
        self.bed_of: dict[Hex, int] = {}
        self.beds: list[list[Hex]] = []
        for cell in self.flowers:
            if cell not in self.bed_of:
                self.beds.append(self._flood(cell, self.flowers, len(self.beds)))

    def _flood(self, start: Hex, flowers: Mapping[Hex, int], label: int) -> list[Hex]:
        out = [start]
        self.bed_of[start] = label
        stack = [start]
        while stack:
            for n in self.geo.near(stack.pop()):
                if n in flowers and n not in self.bed_of:
                    self.bed_of[n] = label
                    out.append(n)
                    stack.append(n)
        return out

    def bed_owner(self, cells: Iterable[Hex]) -> int | None:
        for c in cells:
            if c in self.owner_at:
                return self.owner_at[c]
        return None

    def bed_flowers(self, cells: Iterable[Hex]) -> int:
        return sum(self.flowers.get(c, 0) for c in cells)

    def merged(self, added: Mapping[Hex, int]) -> list[tuple[int | None, int, int, bool]]:
        """After adding ``added`` flower spaces: per touched bed, ``(owner, flowers before,
        flowers after, holds an added cell)``, one entry per resulting bed."""
        seen: set[Hex] = set()
        out: list[tuple[int | None, int, int, bool]] = []
        for cell in added:
            if cell in seen:
                continue
            group: set[Hex] = {cell}
            stack = [cell]
            old_beds: set[int] = set()
            while stack:
                for n in self.geo.near(stack.pop()):
                    if n in group:
                        continue
                    if n in added:
                        group.add(n)
                        stack.append(n)
                    elif n in self.bed_of:
                        old_beds.add(self.bed_of[n])
            seen |= group
            before_cells = [c for b in old_beds for c in self.beds[b]]
            owner = self.bed_owner(before_cells)
            before = self.bed_flowers(before_cells)
            after = before + sum(added[c] for c in group)
            out.append((owner, before, after, True))
        return out

    def bed_at(self, cell: Hex, added: Mapping[Hex, int]) -> tuple[int | None, int, int]:
        """``(owner, flowers, spaces)`` of the bed holding ``cell`` once ``added`` is laid."""
        flowers = dict(self.flowers)
        flowers.update(added)
        group = {cell}
        stack = [cell]
        while stack:
            for n in self.geo.near(stack.pop()):
                if n in flowers and n not in group:
                    group.add(n)
                    stack.append(n)
        return self.bed_owner(group), sum(flowers[c] for c in group), len(group)


class IshtarScorer:
    def __init__(self, static: Mapping[str, Any]) -> None:
        self.geo = _Geometry(static)

    def score(self, shared: Mapping[str, Any], own: Mapping[str, Any]) -> Sequence[float]:
        g = shared.get("game") or {}
        me = int(own["seat"])
        board = _Board(self.geo, g, me)
        player = (g.get("players") or [{}] * (me + 1))[me]
        ctx = _Ctx(g, me, board, player)
        return [ctx.value(c) for c in own["choices"]]


class _Ctx:
    def __init__(
        self, g: Mapping[str, Any], me: int, board: _Board, player: Mapping[str, Any]
    ) -> None:
        self.g = g
        self.me = me
        self.board = board
        self.player = player
        self.gems: dict[str, int] = {k: int(v) for k, v in (player.get("gems") or {}).items()}
        self.assistants = int(player.get("assistants", 0))
        self.skills: set[str] = set((player.get("skills") or {}).keys())
        self.pending: Mapping[str, Any] = g.get("pending") or {}
        # Late in the match (few tiles left) gems and future claims are worth less.
        left = sum(int(p.get("count", 0)) for p in g.get("piles") or [])
        self.late = 1.0 if left > 20 else max(0.2, left / 20)

    def value(self, c: Mapping[str, Any]) -> float:
        kind = c.get("kind")
        handler = getattr(self, f"_{kind}", None)
        return 0.0 if handler is None else float(handler(c))

    # choose -----------------------------------------------------------------------------------

    def _tile_worth(self, tile: Mapping[str, Any] | None) -> float:
        if tile is None:
            return 2.0
        spaces = tile.get("spaces") or []
        worth = 0.4 * sum(int(sp.get("flowers", 0)) for sp in spaces)
        for sp in spaces:
            icon = sp.get("icon")
            if icon in ("assistant", "wild") and self.assistants > 0:
                worth += 4.0
            elif icon == "skill" or (icon and "B" in self.skills):
                worth += 1.5 if sum(self.gems.values()) >= 2 else 0.5
        return worth

    def _pile(self, c: Mapping[str, Any]) -> float:
        piles = self.g.get("piles") or []
        pile = piles[int(c["pile"])] if int(c["pile"]) < len(piles) else {}
        return self._tile_worth(pile.get("top")) - int(c.get("cost", 0)) * _GEM * self.late

    def _reserved(self, c: Mapping[str, Any]) -> float:
        return self._tile_worth(self.player.get("reserved_tile")) + 0.5

    def _skip(self, c: Mapping[str, Any]) -> float:
        return 0.0

    # place ------------------------------------------------------------------------------------

    def _tile(self) -> Mapping[str, Any]:
        tile = self.pending.get("tile")
        return tile if isinstance(tile, Mapping) else {}

    def _placement(self, at: Sequence[int], rotation: int) -> float:
        tile = self._tile()
        shape = str(tile.get("shape", "straight"))
        spaces = tile.get("spaces") or []
        board = self.board
        cells = board.geo.cells(shape, at, rotation)
        value = 0.0
        for cell in cells:
            if cell in board.gems:
                value += _GEM * (0.6 + 0.4 * self.late)
        added = {
            cell: int(sp.get("flowers", 0))
            for cell, sp in zip(cells, spaces, strict=False)
            if int(sp.get("flowers", 0)) > 0
        }
        for owner, before, after, _ in board.merged(added):
            gain = after - before
            if owner == self.me:
                value += 1.3 * gain
            elif owner is not None:
                value -= 0.9 * gain
            else:
                value += 0.1 * gain
        for cell, sp in zip(cells, spaces, strict=False):
            icon = sp.get("icon")
            if not icon:
                continue
            wild = icon == "wild" or "B" in self.skills
            if (icon == "assistant" or wild) and self.assistants > 0:
                owner, flowers, size = board.bed_at(cell, added)
                if owner is None:
                    value += self._claim(flowers, size)
            elif icon == "skill" or wild:
                value += 1.0 if sum(self.gems.values()) >= 2 else 0.0
        # Grass next to my beds leaves room for my trees and blooming tokens: a little.
        return value

    def _claim(self, flowers: int, size: int) -> float:
        return 1.5 * flowers + 0.5 * size + 3.0 * self.late

    def _position(self, c: Mapping[str, Any]) -> float:
        rotations = c.get("rotations") or [0]
        return max(self._placement(c["at"], int(r)) for r in rotations)

    def _rotation(self, c: Mapping[str, Any]) -> float:
        return self._placement(c["at"], int(c["rotation"]))

    def _discard(self, c: Mapping[str, Any]) -> float:
        return 0.0

    # special ----------------------------------------------------------------------------------

    def _assistant(self, c: Mapping[str, Any]) -> float:
        cell = (int(c["at"][0]), int(c["at"][1]))
        _, flowers, size = self.board.bed_at(cell, {})
        return self._claim(flowers, size) + 1.0

    def _pass(self, c: Mapping[str, Any]) -> float:
        return 0.0

    def _skill(self, c: Mapping[str, Any]) -> float:
        skill = str(c["skill"])
        cost = 2 * _GEM * self.late
        worth = {
            "F": 2 * _GEM * self.late + 0.5,
            "G": 3.5,
            "H": 2.5,
            "I": 3.0 * self.late + 1.5,
            "J": 2.0 * self.late + 1.0,
            "A": 4.0,
            "B": 7.0 + 2.0 * self.late,
            "C": 2.0 * sum(self.gems.values()) * 0.5 + 2.0,
            "D": 4.0,
            "E": 7.0 * self.assistants * 0.6,
        }.get(skill, 1.0)
        return worth - cost

    def _gem(self, c: Mapping[str, Any]) -> float:  # pay with the colour held most
        return self.gems.get(str(c["colour"]), 0) - self._need(str(c["colour"]))

    def _take_gem(self, c: Mapping[str, Any]) -> float:
        colour = str(c["colour"])
        return self._need(colour) - 0.1 * self.gems.get(colour, 0)

    def _need(self, colour: str) -> float:
        """How much the best trees on display want ``colour`` beyond what is held."""
        need = 0.0
        for card in self._cards():
            missing = int((card.get("cost") or {}).get(colour, 0)) - self.gems.get(colour, 0)
            if missing > 0:
                need += missing * int(card.get("points", 0)) / 10
        return need

    def _bloom(self, c: Mapping[str, Any]) -> float:
        cells = [(int(x[0]), int(x[1])) for x in c["cells"]]
        token = str(c.get("token", ""))
        flowers = [2, 1] if len(cells) == 2 else [2]
        if "double" not in token and len(cells) == 1:
            flowers = [2]
        added = dict(zip(cells, flowers, strict=False))
        value = 0.0
        for owner, before, after, _ in self.board.merged(added):
            gain = after - before
            value += 1.3 * gain if owner == self.me else (-gain if owner is not None else 0.1)
        return value

    # trees ------------------------------------------------------------------------------------

    def _cards(self) -> list[Mapping[str, Any]]:
        out = [d for d in self.g.get("display") or [] if d.get("marker")]
        reserved = self.player.get("reserved_tree")
        if isinstance(reserved, Mapping):
            out.append(reserved)
        return out

    def _card(self, card: str) -> Mapping[str, Any]:
        for d in [*(self.g.get("display") or []), self.player.get("reserved_tree") or {}]:
            if isinstance(d, Mapping) and d.get("card") == card:
                return d
        return {}

    def _reserve_tree(self, c: Mapping[str, Any]) -> float:
        d = self._card(str(c["card"]))
        cost = sum(int(v) for v in (d.get("cost") or {}).values())
        return int(d.get("points", 0)) - 0.5 * cost

    def _reserve_tile(self, c: Mapping[str, Any]) -> float:
        for pile in self.g.get("piles") or []:
            top = pile.get("top")
            if isinstance(top, Mapping) and top.get("id") == c.get("tile"):
                return self._tile_worth(top)
        return 0.0

    def _buy(self, c: Mapping[str, Any]) -> float:
        d = self._card(str(c["card"]))
        cost = sum(int(v) for v in (d.get("cost") or {}).values())
        return 1.0 + int(d.get("points", 0)) - cost * _GEM * self.late * 0.8

    def _end_turn(self, c: Mapping[str, Any]) -> float:
        return 0.0

    def _tree(self, c: Mapping[str, Any]) -> float:
        cell = (int(c["at"][0]), int(c["at"][1]))
        mine = sum(
            1
            for n in self.board.geo.near(cell)
            if n in self.board.bed_of
            and self.board.bed_owner(self.board.beds[self.board.bed_of[n]]) == self.me
        )
        return 0.2 * mine if "D" in self.skills else -0.05 * mine
