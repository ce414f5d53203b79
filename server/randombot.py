"""Server-side players that pick a random legal choice, seeing only their own seat's view.

A bot reads the ``choices`` of its own part of the view, exactly what a client would get, so it
can never use information its seat may not see (issue 7's stronger bots keep that rule).

Its randomness is a pure function of the room's seed, its seat and the revision it moves at
(a fresh generator per move), not a generator that advances with the match: a room restored
from the store (whose bots were rebuilt at some later revision) therefore makes exactly the
choices the uninterrupted room would have made, and a match with bots replays exactly.
"""

from __future__ import annotations

from typing import Any

from games.rng import Rng

_MASK = (1 << 64) - 1


class RandomBot:
    def __init__(self, seed: int, seat: int) -> None:
        self._base = (seed ^ (0xB07 + seat) * 0x9E3779B97F4A7C15) & _MASK

    def choose(self, own: Any, rev: int) -> int:
        """An index into the legal choices listed in ``own`` (the seat's own view part), for the
        decision pending at ``rev``."""
        choices = own.get("choices") if isinstance(own, dict) else None
        if not isinstance(choices, list) or not choices:
            raise ValueError("the bot's seat has no choice to make")
        rng = Rng.from_seed(self._base ^ (rev * 0xD1B54A32D192ED03 & _MASK))
        return rng.below(len(choices))
