"""Real view documents from in-process random matches, for the renderer and label tests.

The client never imports ``games``; its tests may, to get exactly what the server would send.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any

from games import registry
from games.base import Match, audience_view


@dataclass(frozen=True)
class Sample:
    game: str
    decision: str
    view: dict[str, Any]
    """The deciding seat's view (choices listed), or a spectator's at the end."""


def info(game: str, players: int = 2) -> dict[str, Any]:
    seats = [
        {"seat": i, "name": "ann" if i == 0 else f"bot {i + 1}", "taken": True, "bot": i > 0,
         "connected": True}
        for i in range(players)
    ]  # fmt: skip
    return {"room": "r1", "game": game, "players": players, "state": "playing", "seats": seats}


@functools.cache
def samples(game: str, seeds: int = 3, players: int = 2) -> tuple[Sample, ...]:
    """One view per decision kind and choice kind met, plus the final views."""
    engine = registry.get(game)
    seen: set[tuple[str, str]] = set()
    out: list[Sample] = []
    for seed in range(seeds):
        match = Match.new(engine, players, {}, seed)
        rng = random.Random(seed)
        while (decision := match.decision) is not None:
            kinds = {(decision.kind, str(c["kind"])) for c in decision.choices}
            if not kinds <= seen:
                seen |= kinds
                view = audience_view(engine, match.state, decision.seat).to_json()
                out.append(Sample(game, decision.kind, view))
            match.act(decision.seat, rng.randrange(len(decision.choices)))
        out.append(Sample(game, "over", audience_view(engine, match.state, None).to_json()))
        out.append(Sample(game, "over-seat", audience_view(engine, match.state, 0).to_json()))
    return tuple(out)


def events(game: str, seed: int = 0, players: int = 2) -> list[dict[str, Any]]:
    """Every event of one random match, as the seat 0 audience sees them."""
    engine = registry.get(game)
    match = Match.new(engine, players, {}, seed)
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    while (decision := match.decision) is not None:
        evs = match.act(decision.seat, rng.randrange(len(decision.choices)))
        out += [e.project(0) for e in evs]
    return out
