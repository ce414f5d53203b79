"""Who is really playing: what changed in the seats and the clocks, in sentences."""

from __future__ import annotations

from typing import Any

from clients.notices import clock_changes, new_match, seat_changes, week_scoring


def info(**p2: Any) -> dict[str, Any]:
    seat = {"seat": 1, "name": "bob", "taken": True, "bot": False, "connected": True,
            "bot_kind": None, "standin": False, "forfeited": False, **p2}  # fmt: skip
    ann = {"seat": 0, "name": "ann", "taken": True, "connected": True}
    return {"state": "playing", "seats": [ann, seat]}


def test_a_drop_a_stand_in_and_a_comeback() -> None:
    playing = info()
    gone = info(connected=False)
    standin = info(connected=False, standin=True, bot_kind="heuristic")
    back = info(connected=True)
    assert seat_changes(playing, gone, 0) == [
        "P2 bob disconnected; a bot takes the seat over if they do not come back soon"
    ]
    assert seat_changes(gone, standin, 0) == [
        "a heuristic bot now plays for P2 bob until they come back"
    ]
    assert seat_changes(standin, back, 0) == ["P2 bob is back; the stand-in bot stops"]
    assert seat_changes(gone, back, 0) == ["P2 bob is back"]
    assert seat_changes(playing, playing, 0) == []


def test_the_viewer_s_own_seat_is_you() -> None:
    gone = info(connected=False)
    standin = info(connected=False, standin=True, bot_kind="heuristic")
    assert seat_changes(gone, standin, 1) == [
        "a heuristic bot now plays for you until you come back"
    ]
    assert seat_changes(info(), gone, 1) == [], "no notice of one's own drop"


def test_a_seat_taken_before_the_start() -> None:
    before = {"state": "open", "seats": [{"seat": 0, "taken": False}, {"seat": 1, "taken": False}]}
    after = {"state": "open", "seats": [{"seat": 0, "taken": True, "name": "ann"},
                                        {"seat": 1, "taken": True, "bot": True}]}  # fmt: skip
    assert seat_changes(before, after, 0) == ["you took your seat", "a bot took seat P2"]


def test_clocks_that_ran_out() -> None:
    before = {"timeouts": [0, 0], "forfeited": []}
    after = {"timeouts": [0, 1], "forfeited": []}
    assert clock_changes(before, after, info(), 0) == [
        "P2 bob ran out of time: a bot made their move"
    ]
    assert clock_changes(before, after, info(), 1) == ["you ran out of time: a bot made your move"]
    lost = {"timeouts": [0, 0], "forfeited": [1]}
    assert clock_changes(before, lost, info(), 0) == [
        "P2 bob ran out of time and forfeited; a bot plays the seat to the end"
    ]
    assert clock_changes(None, after, info(), 0) == []


def test_the_new_match_a_rematch_moved_us_into() -> None:
    full = {"state": "playing", "seats": info()["seats"]}
    assert new_match("r2", full, 1) == "New match: room r2, the same players; you are P2 bob"
    assert new_match("r2", full) == "New match: room r2, the same players; you watch it"
    waiting = info(taken=False, name="", connected=False)
    assert new_match("r2", waiting, 0) == "New match: room r2; P2 is free (its player had left)"


def test_a_week_s_scoring_seat_by_seat() -> None:
    events: list[dict[str, Any]] = [
        {"kind": "day_end"},
        {"kind": "score", "seat": 1, "points": 3, "category": "souk", "reason": "sk3"},
        {"kind": "score", "seat": 1, "points": 2, "category": "bazaar", "reason": "sk3"},
        {"kind": "week_end", "week": 2},
    ]
    assert week_scoring(events, info()) == (
        "Week 2 scoring",
        ["P2 bob: +5 VP = 3 (sk3), 2 (Bazaar sk3)"],
    )
    assert week_scoring(events[:1], info()) is None
    assert week_scoring([{"kind": "week_end", "week": 1}], info()) == (
        "Week 1 scoring",
        ["nobody scored this week"],
    )
