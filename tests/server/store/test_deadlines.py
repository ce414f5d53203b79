"""The group commit's deadline (``server.store.client.Deadlines``): what ``asyncio.timeout``
does for one call, for every call on one loop timer; and :meth:`Client.commit` under it, a
batch that never ends turned into the StoreError of a Redis away."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from server.store import Action, StoreError
from server.store.client import Deadlines
from server.store.redis import RedisStore
from tests.server.conftest import OpenStore

SECONDS = 0.05


async def _bounded(deadlines: Deadlines, work: asyncio.Future[None]) -> str:
    """``work`` awaited under a deadline as :meth:`Client.commit` does: "done", or the
    deadline's TimeoutError as "timeout" (any other cancellation propagates)."""
    deadline = deadlines.enter()
    try:
        await work
    except BaseException as stopped:
        if deadlines.leave(deadline) and isinstance(stopped, asyncio.CancelledError):
            return "timeout"
        raise
    deadlines.leave(deadline)
    return "done"


async def test_a_call_past_its_deadline_is_cancelled_and_leaves_as_a_timeout() -> None:
    deadlines = Deadlines(SECONDS)
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    started = time.monotonic()
    task = asyncio.create_task(_bounded(deadlines, never))
    done, _ = await asyncio.wait([task], timeout=5)  # (a deadline that never falls: fails)
    assert done and task.result() == "timeout"
    assert SECONDS * 0.9 <= time.monotonic() - started < 1
    assert task.cancelling() == 0  # (the deadline's request taken back, as asyncio.timeout does)


async def test_calls_that_end_in_time_are_never_cancelled_and_not_kept() -> None:
    deadlines = Deadlines(SECONDS)
    loop = asyncio.get_running_loop()
    works = [loop.create_future() for _ in range(20)]
    tasks = [asyncio.create_task(_bounded(deadlines, work)) for work in works]
    await asyncio.sleep(0)
    for work in reversed(works):  # (out of order: the oldest ends last)
        work.set_result(None)
    assert await asyncio.gather(*tasks) == ["done"] * 20
    assert not deadlines._running  # every call over is out of the queue
    await asyncio.sleep(SECONDS * 2)  # the timer fires with nothing left to cancel
    assert all(t.cancelling() == 0 for t in tasks)
    assert deadlines._timer is None


async def test_calls_fall_due_each_at_its_own_time_on_one_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deadlines = Deadlines(0.6)  # (long enough that the three start before the first is due)
    loop = asyncio.get_running_loop()
    armed = 0
    call_at = loop.call_at

    def counted(when: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        nonlocal armed
        armed += callback == deadlines._expire
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counted)
    first, second, third = (loop.create_future() for _ in range(3))
    a = asyncio.create_task(_bounded(deadlines, first))
    await asyncio.sleep(0.2)
    b = asyncio.create_task(_bounded(deadlines, second))
    c = asyncio.create_task(_bounded(deadlines, third))
    await asyncio.sleep(0)
    assert armed == 1  # one timer for the three, set for the oldest
    await asyncio.wait([a], timeout=5)
    assert a.done() and a.result() == "timeout"
    assert not b.done() and not c.done()  # due 0.2 s later
    third.set_result(None)
    assert await c == "done"
    assert await b == "timeout"
    assert armed == 2  # set again once, for the second call


async def test_a_cancellation_from_elsewhere_still_propagates() -> None:
    deadlines = Deadlines(SECONDS)
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(_bounded(deadlines, never))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(SECONDS * 2)  # its deadline cancels nothing afterwards


async def test_a_cancellation_from_elsewhere_as_the_deadline_falls_still_propagates() -> None:
    """Both at once: the task was asked to stop by someone else, so the CancelledError is not
    the deadline's alone, and it is not taken for a timeout (as with ``asyncio.timeout``)."""
    deadlines = Deadlines(SECONDS)
    loop = asyncio.get_running_loop()
    never: asyncio.Future[None] = loop.create_future()
    task = asyncio.create_task(_bounded(deadlines, never))
    await asyncio.sleep(0)
    deadline = deadlines._running[0]
    loop.call_at(deadline.due, task.cancel)  # after the deadline's timer, in the same turn
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadline.expired


@pytest.fixture
async def store(open_redis_store: OpenStore) -> RedisStore:
    return await open_redis_store(deadline=0.1)


def _meta(room: str) -> dict[str, Any]:
    return {"room": room, "game": "tiny", "players": 2, "state": "open", "rev": 0, "seats": []}


def _reconnect_hangs(store: RedisStore, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The group commit's connection dropped, and opening it again hanging for ever (a step the
    lane's own timer does not bound; the socket timeouts would, in life): set when it hangs."""
    lane = store._client._lane
    connection = lane._connection
    hanging = asyncio.Event()

    async def connect() -> None:
        hanging.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(connection, "connect", connect)
    lane._drop(ConnectionError("dropped by the test"))
    return hanging


async def test_a_batch_that_never_ends_fails_at_the_deadline_and_marks_redis_away(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every step of a batch has its own bound (the lane's timer, the socket timeouts); the
    deadline is the one over all of them."""
    await store.create_room("r", _meta("r"))
    assert store.ready()
    hanging = _reconnect_hangs(store, monkeypatch)
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"unavailable \(TimeoutError\)"):
        await asyncio.wait_for(store.append("r", Action(1, 0, {"kind": "draw"})), 5)
    assert hanging.is_set()
    assert 0.25 <= time.monotonic() - started < 2  # the deadline: 3 timeouts of 0.1 s
    assert not store.ready()
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_batch_cancelled_from_elsewhere_is_cancelled_not_a_timeout(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.create_room("r", _meta("r"))
    hanging = _reconnect_hangs(store, monkeypatch)
    append = asyncio.create_task(store.append("r", Action(1, 0, {"kind": "draw"})))
    await hanging.wait()
    append.cancel()
    with pytest.raises(asyncio.CancelledError):
        await append
    assert store.ready()  # nothing said Redis was away
