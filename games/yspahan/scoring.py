"""Victory points: every point goes through :func:`award`, which writes one ``score`` event.

So a player's score is, at every moment, the sum of the ``points`` of the score events naming
them, and also the sum of their breakdown (one counter per category of
:data:`~games.yspahan.state.CATEGORIES`); the tests check both.

Also here: the week's souk scoring (seed, "Fin de la semaine": each complete souk scores its value
to its occupant, +2 with the Bazaar; incomplete souks score nothing) and the end of the match
(most VP wins, ties share the victory).
"""

from __future__ import annotations

from games.base import Event, Result
from games.yspahan import data
from games.yspahan.city import complete_souks
from games.yspahan.state import YState


def award(state: YState, seat: int, points: int, category: str, reason: str) -> Event:
    """Give ``points`` to ``seat`` under ``category`` and return the event that says so."""
    state.score[seat] += points
    state.breakdown[seat][category] += points
    return Event("score", {"seat": seat, "points": points, "category": category, "reason": reason})


def score_souks(state: YState, events: list[Event]) -> None:
    """Week scoring of the quarters: complete souks pay their occupant (+2 with the Bazaar)."""
    for souk_index, seat in complete_souks(state):
        souk = data.SOUKS[souk_index]
        events.append(award(state, seat, souk.vp, "souks", souk.id))
        if data.BAZAAR in state.built[seat]:
            events.append(award(state, seat, data.BAZAAR_BONUS, "bazaar", souk.id))


def result(state: YState) -> Result | None:
    """Scores, winners (everyone tied for the most VP) and breakdown once the match is over."""
    if state.stage != "over":
        return None
    best = max(state.score)
    return Result(
        tuple(state.score),
        tuple(i for i, s in enumerate(state.score) if s == best),
        tuple(dict(b) for b in state.breakdown),
        state.turns,
    )
