"""The clock part of a view (SPEC section 20) as the client keeps and draws it."""

from __future__ import annotations

import copy
from typing import Any

from clients.lobby import clock_option
from clients.render import screen
from clients.render.common import clock_time, seats_table, to_text
from protocol.hashing import view_hash
from protocol.mirror import Mirror
from tests.clients.samples import info, samples


def _clocked(view: dict[str, Any], running: int | None = 0) -> dict[str, Any]:
    out = copy.deepcopy(view)
    out["clock"] = {
        "initial_ms": 300000,
        "increment_ms": 5000,
        "on_timeout": "bot",
        "remaining_ms": [65000, 9400],
        "running": running,
        "timeouts": [0, 2],
        "forfeited": [],
    }
    return out


def _mirror(view: dict[str, Any], elapsed_ms: int) -> Mirror:
    mirror = Mirror("r1")
    mirror.on_frame(
        {
            "type": "joined",
            "room": "r1",
            "seat": 0,
            "rev": 4,
            "view": view,
            "hash": view_hash(view),
            "info": info("yspahan"),
            "elapsed_ms": elapsed_ms,
        }
    )
    return mirror


def test_the_running_clock_counts_from_the_decision_start_the_server_reported() -> None:
    view = _clocked(samples("yspahan")[0].view)
    mirror = _mirror(view, elapsed_ms=5000)
    left = mirror.clock_left(mirror.clock_since + 5.0)
    assert left == [60.0, 9.4]  # the running seat's 65 s less 5 s, the other's untouched
    assert mirror.clock_left(mirror.clock_since + 100.0) == [0.0, 9.4]


def test_a_clock_that_does_not_run_while_paused_or_over() -> None:
    mirror = _mirror(_clocked(samples("yspahan")[0].view, running=None), elapsed_ms=0)
    assert mirror.clock_left(mirror.clock_since + 30) == [65.0, 9.4]
    paused = _mirror(_clocked(samples("yspahan")[0].view), elapsed_ms=0)
    paused.info = {**paused.info, "paused": True}
    assert paused.clock_left(paused.clock_since + 30) == [65.0, 9.4]


def test_the_screen_draws_every_seats_clock_and_the_running_one() -> None:
    mirror = _mirror(_clocked(samples("yspahan")[0].view), elapsed_ms=0)
    text = to_text(screen(mirror), width=140)
    assert "Clocks" in text and "+5s per decision; at zero: bot" in text
    assert "1:05 ◀" in text or "1:04 ◀" in text
    assert "0:09.4" in text
    assert "More" not in text  # the clock is drawn, not dumped as unknown data
    assert clock_time(125.2) == "2:05" and clock_time(3.25) == "0:03.2"


def test_seats_show_stand_ins_forfeits_and_bot_kinds() -> None:
    seats = [
        {"seat": 0, "name": "ann", "taken": True, "bot": False, "standin": True},
        {"seat": 1, "name": "bot 2", "taken": True, "bot": True, "bot_kind": "heuristic"},
        {"seat": 2, "name": "cy", "taken": True, "bot": False, "forfeited": True},
    ]
    text = to_text(seats_table({"seats": seats}))
    assert "away (a bot plays)" in text
    assert "bot (heuristic)" in text
    assert "forfeited (bot)" in text


def test_the_clock_option_of_create() -> None:
    assert clock_option("300+5", "forfeit") == {
        "initial": 300.0,
        "increment": 5.0,
        "on_timeout": "forfeit",
    }
    assert clock_option("60", "bot")["increment"] == 0.0
