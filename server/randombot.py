"""Server-side players that pick a random legal choice, seeing only their own seat's view.

A bot reads the ``choices`` of its own part of the view, exactly what a client would get, so it
can never use information its seat may not see (issue 7's stronger bots keep that rule). Its
generator is seeded from the room's seed and the seat, so a match with bots replays exactly.
"""

from __future__ import annotations

from typing import Any

from games.rng import Rng


class RandomBot:
    def __init__(self, seed: int) -> None:
        self._rng = Rng.from_seed(seed)

    def choose(self, own: Any) -> int:
        """An index into the legal choices listed in ``own`` (the seat's own view part)."""
        choices = own.get("choices") if isinstance(own, dict) else None
        if not isinstance(choices, list) or not choices:
            raise ValueError("the bot's seat has no choice to make")
        return self._rng.below(len(choices))
