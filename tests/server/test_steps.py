"""The room core's driver (:mod:`server.steps`): a command's steps end by yielding None."""

from __future__ import annotations

from typing import Any

import pytest

from server.core import RoomCore
from server.effects import Breathe, Done, Effect, Handling, Outbox
from server.metrics import Metrics
from server.room_state import Announce, Status
from server.steps import Driver
from tests.server.core.twin import Twin


def _driver() -> Driver:
    out = Outbox()
    out.start(0.0)
    return Driver(
        "r1", status=Status(), out=out, metrics=Metrics(), log=None, storage_lost=lambda: None
    )


def test_steps_that_yield_none_are_done_and_leave_nothing_waiting() -> None:
    """A None yielded is the end of the command (no ``StopIteration`` to catch, compiled): the
    effects so far are returned, nothing waits for the store, and what follows the None never
    runs."""
    driver = _driver()
    ran: list[Any] = []

    def steps() -> Handling:
        value = yield Breathe()
        ran.append(value)
        yield None
        ran.append("never")

    effects = driver.run(steps(), None, object())
    assert len(effects) == 1 and isinstance(effects[0], Breathe)
    assert driver.resume(Done(7)) == [] and ran == [7]
    with pytest.raises(AssertionError):
        driver.resume(Done())  # (nothing waits for an answer)
    assert driver.run(steps(), None, object()) != []  # (the next command may start)


def test_the_core_ends_every_command_by_yielding_none() -> None:
    """The core's dispatch, the steps the driver runs, ends with its None (after which a
    compiled driver never has a generator return in ``send``)."""
    twin = Twin()
    twin.open()
    core: RoomCore = twin.core
    steps = core._dispatch(None, Announce())
    seen: list[Effect | None] = list(steps)
    assert seen and seen[-1] is None
