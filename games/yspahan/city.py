"""The city: shops, souks and their occupants, kept incrementally in the state.

Rules (seed, "Placer des marchandises dans un quartier"): one good per shop; a player who has a
partly filled souk must complete it before starting another; never in a souk another player
occupies; a souk may be left unfinished; goods that find no legal shop stay in the reserve.

Reading of "complete it before starting another" (YSP-OPEN-1): it applies within the quarter being
played, as Boardspace does. A player can hold two partly filled souks in one quarter (the steward
may take a good out of a souk they had completed); then any empty shop of either is legal, and no
new souk may be started.
"""

from __future__ import annotations

from games.yspahan import data
from games.yspahan.state import YState


def legal_shops(state: YState, seat: int, quarter: int) -> list[int]:
    """Shops of ``quarter`` where ``seat`` may put its next good, in shop order."""
    owners = state.souk_owner
    fills = state.souk_fill
    shops = state.shops
    partial: list[int] = []
    empty: list[int] = []
    for souk_index in data.SOUKS_OF_QUARTER[quarter]:
        owner = owners[souk_index]
        if owner == seat:
            souk = data.SOUKS[souk_index]
            if fills[souk_index] < len(souk.shops):
                partial.extend(s for s in souk.shops if shops[s] < 0)
        elif owner < 0:
            empty.extend(data.SOUKS[souk_index].shops)
    return partial or empty


def legal_shops_anywhere(state: YState, seat: int) -> list[int]:
    """Legal shops of every quarter, each quarter under its own rule (the one-good card)."""
    out: list[int] = []
    for quarter in range(len(data.QUARTERS)):
        out.extend(legal_shops(state, seat, quarter))
    return out


def put(state: YState, shop: int, seat: int) -> None:
    """Put ``seat``'s good in an empty ``shop`` (trusted: the shop was legal)."""
    state.shops[shop] = seat
    souk = data.SHOP_SOUK[shop]
    state.souk_owner[souk] = seat
    state.souk_fill[souk] += 1


def take(state: YState, shop: int) -> int:
    """Take the good out of ``shop`` and return its owner; the souk is freed when emptied."""
    seat = state.shops[shop]
    state.shops[shop] = -1
    souk = data.SHOP_SOUK[shop]
    state.souk_fill[souk] -= 1
    if state.souk_fill[souk] == 0:
        state.souk_owner[souk] = -1
    return seat


def complete_souks(state: YState) -> list[tuple[int, int]]:
    """``(souk, occupant)`` for every complete souk, in souk order."""
    return [
        (souk.index, state.souk_owner[souk.index])
        for souk in data.SOUKS
        if state.souk_fill[souk.index] == len(souk.shops)
    ]


def empty_city(state: YState) -> None:
    """Every good goes back to its owner's reserve (the reserves are unlimited, YSP-SETUP-12)."""
    state.shops[:] = [-1] * len(state.shops)
    state.souk_owner[:] = [-1] * len(state.souk_owner)
    state.souk_fill[:] = [0] * len(state.souk_fill)


def goods_in_city(state: YState) -> int:
    """How many goods are in the shops."""
    return sum(1 for s in state.shops if s >= 0)
