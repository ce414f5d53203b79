"""The heuristic bots' common shape: score every legal choice from the view, take the best.

A :class:`Scorer` knows one game; :class:`ScoringBot` asks it for a number per legal choice and
takes the highest, breaking ties (and only ties) with a generator seeded like the random bot's
(room seed, seat, revision), so the bot stays a pure function of what it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from games.rng import Rng

_MASK = (1 << 64) - 1


class Scorer(Protocol):
    def score(self, shared: Mapping[str, Any], own: Mapping[str, Any]) -> Sequence[float]:
        """One number per legal choice in ``own["choices"]``: higher is better."""
        ...


class ScoringBot:
    kind = "heuristic"

    def __init__(self, scorer: Scorer, seed: int, seat: int) -> None:
        self.scorer = scorer
        self._base = (seed ^ (0x4E0 + seat) * 0x9E3779B97F4A7C15) & _MASK

    def choose(self, view: Mapping[str, Any], rev: int) -> int:
        own = view.get("own")
        if not isinstance(own, Mapping) or not own.get("choices"):
            raise ValueError("the bot's seat has no choice to make")
        choices = own["choices"]
        if len(choices) == 1:
            return 0
        scores = list(self.scorer.score(view.get("shared") or {}, own))
        best = max(scores)
        top = [i for i, s in enumerate(scores) if s >= best - 1e-9]
        if len(top) == 1:
            return top[0]
        rng = Rng.from_seed(self._base ^ (rev * 0xD1B54A32D192ED03 & _MASK))
        return top[rng.below(len(top))]
