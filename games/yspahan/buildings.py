"""The six buildings of each player board: prices, purchase and the VP of the 3rd to 6th.

Seed, "Le joueur peut construire un et un seul bâtiment spécial": pay its camels and gold, mark it
with a good; the 3rd, 4th and 5th building score 5 VP, the 6th 10. Buildings may be bought in any
order (Boardspace; no prerequisite found anywhere). Prices are Boardspace's. The powers are applied
where they act: Pen, Stall and Crane in the tower actions (:mod:`games.yspahan.game`), the
Hammam in :mod:`games.yspahan.steward`, the Caravanserai where a good reaches the caravan, the
Bazaar in the week scoring (:mod:`games.yspahan.scoring`).
"""

from __future__ import annotations

from games.base import Event
from games.yspahan import data
from games.yspahan.scoring import award
from games.yspahan.state import YState


def price(state: YState, seat: int, building: int) -> tuple[int, int]:
    """``(camels, gold)`` that ``seat`` would pay now, build-without credits applied."""
    b = data.BUILDINGS[building]
    camels = 0 if state.no_camels[seat] else b.camels
    gold = 0 if state.no_gold[seat] else b.gold
    return camels, gold


def affordable(state: YState, seat: int) -> list[int]:
    """Buildings ``seat`` has not built and can pay for now, in board order."""
    out = []
    built = state.built[seat]
    for b in data.BUILDINGS:
        if b.index in built:
            continue
        camels, gold = price(state, seat, b.index)
        if camels <= state.camels[seat] and gold <= state.gold[seat]:
            out.append(b.index)
    return out


def build(state: YState, seat: int, building: int) -> list[Event]:
    """Pay for ``building`` (trusted: affordable), mark it built and score its rank."""
    b = data.BUILDINGS[building]
    camels, gold = price(state, seat, building)
    if b.camels and state.no_camels[seat]:
        state.no_camels[seat] -= 1
    if b.gold and state.no_gold[seat]:
        state.no_gold[seat] -= 1
    state.camels[seat] -= camels
    state.gold[seat] -= gold
    state.built[seat].append(building)
    events = [
        Event("build", {"seat": seat, "building": b.id, "camels": camels, "gold": gold}),
    ]
    vp = data.BUILDING_VP[len(state.built[seat]) - 1]
    if vp:
        events.append(award(state, seat, vp, "buildings", b.id))
    return events


def has(state: YState, seat: int, building: int) -> bool:
    """Whether ``seat`` has built ``building`` (its power works from then on)."""
    return building in state.built[seat]
