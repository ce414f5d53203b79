"""The dice tower: rolling, grouping by value, and putting the groups on the floors.

Seed, "Approvisionnement de la tour": the lowest group goes on the camels floor; then, as far as
the groups go, the highest on the gold floor and the others in rising value on sacks, barrels,
chests and vases. With k distinct values, camels, gold (k >= 2) and the first k - 2 goods floors
are filled; the rest stay empty.

A floor is ``[value, white, yellow]`` (value 0: empty). Yellow dice are kept apart from white ones
because only the day's first player may use them: with 3-4 players they leave the tower after
that player's action (groups shrink, a yellow-only group vanishes, nothing changes floor); with 2
players they stay all day, the other player counts only the white dice of a group and may not
take a yellow-only group.
"""

from __future__ import annotations

from games.rng import Rng
from games.yspahan import data

Floor = list[int]


def empty_tower() -> list[Floor]:
    """A tower with every floor empty."""
    return [[0, 0, 0] for _ in data.FLOORS]


def roll(rng: Rng, white: int, yellow: int) -> tuple[list[int], list[int]]:
    """Roll the white dice, then the yellow ones, from the state's generator."""
    whites = [rng.die() for _ in range(white)]
    yellows = [rng.die() for _ in range(yellow)]
    return whites, yellows


def assign(whites: list[int], yellows: list[int]) -> list[Floor]:
    """Group the dice by value and put the groups on the floors as the seed says."""
    counts: dict[int, list[int]] = {}
    for v in whites:
        counts.setdefault(v, [0, 0])[0] += 1
    for v in yellows:
        counts.setdefault(v, [0, 0])[1] += 1
    values = sorted(counts)
    tower = empty_tower()
    if not values:
        return tower
    floors = [data.CAMELS_FLOOR]
    if len(values) >= 2:
        floors += [*data.GOODS_FLOORS[: len(values) - 2], data.GOLD_FLOOR]
    for floor, value in zip(floors, values, strict=True):
        white, yellow = counts[value]
        tower[floor] = [value, white, yellow]
    return tower


def remove_yellow(tower: list[Floor]) -> None:
    """Take every yellow die off the tower (3-4 players, after the first player's action)."""
    for floor in tower:
        if floor[2]:
            floor[2] = 0
            if floor[1] == 0:
                floor[0] = 0


def size_for(floor: Floor, roller: bool, players: int) -> int:
    """How many dice of ``floor`` count for a player (0: the group is not available to them).

    Only with 2 players can yellow dice still be on the tower when someone other than the roller
    plays; those dice do not count for that player, and a yellow-only group is closed to them.
    """
    if floor[0] == 0:
        return 0
    if roller or players != 2:
        return floor[1] + floor[2]
    return floor[1]


def clear(tower: list[Floor], floor: int) -> None:
    """The group of ``floor`` has been taken."""
    tower[floor] = [0, 0, 0]
