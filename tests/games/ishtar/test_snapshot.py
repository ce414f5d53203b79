"""Snapshots round-trip; garbage is refused with SnapshotError; bad choices change nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from games.errors import IllegalChoice, MalformedChoice, NotYourTurnError, SnapshotError
from games.ishtar import GAME
from protocol.codec import canonical
from tests.games.ishtar.helpers import new_match, pick, play_turn
from tests.harness import play_random


def test_dump_load_round_trip_mid_game_and_at_the_end() -> None:
    match = new_match(3, 6)
    for _ in range(4):
        play_turn(match)
    data = GAME.dump(match.state)
    assert canonical(GAME.dump(GAME.load(data))) == canonical(data)
    out = play_random(GAME, 4, 2)
    assert out.match is not None
    data = GAME.dump(out.match.state)
    again = GAME.load(data)
    assert GAME.result(again) == out.match.result()


def _data() -> dict[str, Any]:
    match = new_match(2, 6)
    for _ in range(3):
        play_turn(match)
    return GAME.dump(match.state)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.clear(),
        lambda d: d.update(game="yspahan"),
        lambda d: d.update(version=99),
        lambda d: d.update(edition="other"),
        lambda d: d.pop("piles"),
        lambda d: d.update(rng="seed"),
        lambda d: d.update(players=d["players"][:1]),
        lambda d: d["players"][0].update(gems={"purple": -1, "red": 0, "white": 0}),
        lambda d: d["players"][0].update(skills={"Z": 1}),
        lambda d: d["turn"].update(step="dance"),
        lambda d: d["laid"].append({"tile": d["piles"][0][0], "at": [99, 99], "rotation": 0}),
        lambda d: d["laid"].append({"bogus": 1}),
        lambda d: d["laid"][0].update(rotation=9),
        lambda d: d["piles"][0].append(d["piles"][1][0]),
        lambda d: d.update(can=7),
        lambda d: d["layout"].pop(),
        lambda d: d.update(deck=d["deck"] + d["display"][:1]),
        lambda d: d.update(fountains=["nope"] * len(d["fountains"])),
    ],
)
def test_load_refuses_garbage_with_snapshot_error(spoil: Any) -> None:
    data = copy.deepcopy(_data())
    spoil(data)
    with pytest.raises(SnapshotError):
        GAME.load(data)


def test_bad_choices_raise_typed_errors_and_change_nothing() -> None:
    match = new_match(2, 1)
    pick(match, "pile", pile=0)
    state = match.state
    before = canonical(GAME.dump(state))
    seat = state.current
    with pytest.raises(NotYourTurnError):
        match.act(1 - seat, 0)
    with pytest.raises(MalformedChoice):
        match.act(seat, "here")
    with pytest.raises(IllegalChoice, match="off the boards"):
        match.act(seat, {"kind": "position", "tile": state.turn.tile, "at": [500, 500]})
    with pytest.raises(IllegalChoice, match="not possible"):
        match.act(seat, {"kind": "buy", "card": "tree-01"})
    with pytest.raises(IllegalChoice, match="tile in hand"):
        match.act(seat, {"kind": "position", "tile": "straight-01", "at": [0, 0]})
    assert canonical(GAME.dump(state)) == before
