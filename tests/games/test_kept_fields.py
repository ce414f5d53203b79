"""``Game.kept_fields``: the fields of a shared view that the server keeps between revisions
(:mod:`server.views` skips encoding one it gets again as the same object) must never change once
handed out, by the engine or by anyone.

Seeded random matches of both games, with undos, through a :class:`games.base.Match`: every value
of a kept field handed out so far is held, and after every step it must still encode to the bytes
it had when handed out.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.base import Game, Match
from games.ishtar import GAME as ISHTAR
from games.rng import Rng
from games.yspahan import GAME as YSPAHAN
from protocol.codec import canonical

GAMES = {"ishtar": ISHTAR, "yspahan": YSPAHAN}


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("players", [2, 4])
def test_kept_fields_never_change_once_handed_out(name: str, players: int) -> None:
    game: Game[Any] = GAMES[name]
    fields = game.kept_fields
    assert fields, f"{name} declares no kept field"
    handed: dict[int, tuple[str, Any, bytes]] = {}  # id -> (field, value, bytes then)
    reused = 0
    for seed in (1, 2):
        match = Match.new(game, players, {}, seed)
        chooser = Rng.from_seed(seed ^ 0x4B3D)
        last: dict[str, Any] = {}
        while True:
            view = game.shared_view(match.state)
            assert fields <= view.keys(), f"kept fields {sorted(fields - view.keys())} not in view"
            for field in fields:
                value = view[field]
                reused += value is last.get(field)
                last[field] = value
                if id(value) not in handed:
                    handed[id(value)] = (field, value, canonical(value))
            for field, value, enc in handed.values():
                assert canonical(value) == enc, f"{name} seed {seed}: {field} changed after"
            decision = match.decision
            if decision is None:
                break
            if match.can_undo(decision.seat) and chooser.below(5) == 0:
                match.undo(decision.seat)
            else:
                match.push(decision.seat, decision.choices[chooser.below(len(decision.choices))])
    # Handed out again as the same object at many revisions: what makes keeping them pay.
    assert reused > len(handed)


ENTRIES = {"ishtar": ("players", "piles"), "yspahan": ("players", "tower")}
"""Kept list fields whose unchanged entries are handed out again as the same objects
(:func:`games.base.memo_entries` for Ishtar's; Yspahan's views compare their facts in place)."""


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_changed_list_field_keeps_the_entries_that_did_not_change(name: str) -> None:
    """When one player's part (or pile, or floor) changes, the new list holds the others' very
    entries (the server's diff skips them by identity); an entry that changed is a new object."""
    game: Game[Any] = GAMES[name]
    kept = new = 0
    match = Match.new(game, 4, {}, 3)
    chooser = Rng.from_seed(0x4B3E)
    last: dict[str, Any] = {}
    while (decision := match.decision) is not None:
        view = game.shared_view(match.state)
        for field in ENTRIES[name]:
            before, after = last.get(field), view[field]
            if before is not None and after is not before:
                for old, now in zip(before, after, strict=True):
                    if canonical(old) == canonical(now):
                        assert now is old, f"{field}: an unchanged entry made again"
                        kept += 1
                    else:
                        assert now is not old
                        new += 1
            last[field] = after
        match.push(decision.seat, decision.choices[chooser.below(len(decision.choices))])
    assert kept > new > 0
