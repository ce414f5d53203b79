"""The public rooms in order, and the pages ``list_rooms`` cuts from them (SPEC section 7).

Bounded work per request, decided on purpose (STYLE 11): a page holds at most ``limit`` rooms
(100 at most) and looks at no more than :data:`MAX_SCAN` rooms to fill it; a page cut short by
the scan still carries ``next``, so a client asking for a rare filter walks the list in several
bounded requests instead of one that reads every room. Only the rooms of the page are turned into
``info``.

The order is by creation, oldest first, ties by room id: the key ``(created, room)``; a cursor is
that key of the last room looked at, as text (``"<created>/<room>"``), and a page starts after
it. One node keeps the keys of its public rooms in sorted lists (:class:`RoomIndex`, all games
and per game), kept current by the lobby as rooms open and close; several nodes page through
Redis's index of live rooms instead (:mod:`server.cluster`), with the same cursors.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from protocol import messages as m
from protocol.errors import ErrorCode, RequestError

Key = tuple[float, str]
"""``(created, room id)``: the order of the listing."""

MAX_SCAN = 1000
"""Rooms one page may look at (filtered out or not) before it stops and hands a cursor back."""


def cursor(key: Key) -> str:
    return f"{key[0]!r}/{key[1]}"


def parse_cursor(text: str) -> Key:
    """The key in a cursor; ``bad_request`` for anything a page's ``next`` could not be."""
    stamp, sep, room = text.partition("/")
    try:
        created = float(stamp)
    except ValueError:
        created = math.nan
    if not sep or not room or not math.isfinite(created):
        raise RequestError(ErrorCode.BAD_REQUEST, "list_rooms: 'after' must be a page's 'next'")
    return created, room


@dataclass(frozen=True, slots=True)
class Filters:
    """What a ``list_rooms`` asks of the rooms of its page (``game`` is the index's part)."""

    state: str | None
    free: bool

    @classmethod
    def of(cls, req: m.ListRooms) -> Filters:
        return cls(req.state, req.free)

    def accept(self, state: str, free_seats: int) -> bool:
        if self.state is not None and state != self.state:
            return False
        return not (self.free and (state != "open" or free_seats <= 0))


def page_size(req: m.ListRooms, default: int) -> int:
    return min(m.MAX_PAGE, req.limit or default)


class RoomIndex:
    """The keys of the public rooms, sorted, for all games and for each game."""

    def __init__(self) -> None:
        self._all: list[Key] = []
        self._games: dict[str, list[Key]] = {}

    def __len__(self) -> int:
        return len(self._all)

    def add(self, key: Key, game: str) -> None:
        bisect.insort(self._all, key)
        bisect.insort(self._games.setdefault(game, []), key)

    def remove(self, key: Key, game: str) -> None:
        _remove(self._all, key)
        keys = self._games.get(game)
        if keys is not None:
            _remove(keys, key)
            if not keys:
                del self._games[game]

    def after(self, game: str | None, after: Key | None) -> Iterator[tuple[Key, bool]]:
        """The keys after ``after`` (of ``game``), each with whether more follow it."""
        keys = self._all if game is None else self._games.get(game, [])
        start = 0 if after is None else bisect.bisect_right(keys, after)
        last = len(keys) - 1
        for i in range(start, len(keys)):
            yield keys[i], i < last


def _remove(keys: list[Key], key: Key) -> None:
    i = bisect.bisect_left(keys, key)
    if i < len(keys) and keys[i] == key:
        del keys[i]


Pick = Callable[[str], "Callable[[], dict[str, Any]] | None"]
"""A room id -> how to get its ``info`` if it is served and passes the filters, else None.
Called for every room a page looks at: the cheap checks first, no ``info`` built."""


def cut(
    keys: Iterator[tuple[Key, bool]], pick: Pick, size: int
) -> tuple[list[dict[str, Any]], str | None]:
    """One page from ``keys``: at most ``size`` rooms, at most :data:`MAX_SCAN` looked at."""
    out: list[dict[str, Any]] = []
    for scanned, (key, more) in enumerate(keys, 1):
        info = pick(key[1])
        if info is not None:
            out.append(info())
        if not more:
            return out, None
        if len(out) >= size or scanned >= MAX_SCAN:
            return out, cursor(key)
    return out, None
