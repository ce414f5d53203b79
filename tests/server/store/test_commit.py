"""The group commit with a fake sender and no Redis: batching by loop turn, several batches in
flight, each outcome to its own submitter, failures of a whole batch, cancellation and close."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from server.store import RevisionError, StoreError
from server.store.commit import GroupCommit, Pending


class FakeSender:
    """Records every batch and answers it when the test says (``answer``/``fail``): a round
    trip that takes as long as the test wants, with no clock and no Redis."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self._replies: list[asyncio.Future[Sequence[StoreError | None]]] = []
        self.sent = asyncio.Event()

    async def __call__(self, batch: Sequence[Pending[str]]) -> Sequence[StoreError | None]:
        self.batches.append([item.payload for item in batch])
        reply: asyncio.Future[Sequence[StoreError | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self._replies.append(reply)
        self.sent.set()
        return await reply

    async def next_batch(self, count: int) -> list[str]:
        """Wait until ``count`` batches were sent; the last one. (The bound only turns a commit
        that never sends into a failure instead of a hung run.)"""
        async with asyncio.timeout(10):
            while len(self.batches) < count:
                self.sent.clear()
                await self.sent.wait()
        return self.batches[count - 1]

    def answer(self, index: int, outcomes: Sequence[StoreError | None] | None = None) -> None:
        """Answer batch ``index``: every item stored, unless ``outcomes`` says otherwise."""
        size = len(self.batches[index])
        self._replies[index].set_result([None] * size if outcomes is None else outcomes)

    def fail(self, index: int, error: BaseException) -> None:
        self._replies[index].set_exception(error)


async def _settled() -> None:
    """Let every ready task run (submitters queue in one loop turn each)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_lone_submission_is_sent_at_once_alone() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    done = asyncio.create_task(commit.submit("append 1", "a"))
    assert await sender.next_batch(1) == ["a"]
    sender.answer(0)
    await done
    assert (commit.batches, commit.items) == (1, 1)


async def test_submissions_during_a_round_trip_go_together_at_the_next_loop_turn() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    first = asyncio.create_task(commit.submit("append a", "a"))
    assert await sender.next_batch(1) == ["a"]
    others = [asyncio.create_task(commit.submit(f"append {p}", p)) for p in "bcd"]
    # b, c and d queue in one loop turn: one batch, sent without waiting for a's reply
    assert await sender.next_batch(2) == ["b", "c", "d"]
    assert not first.done() and not any(task.done() for task in others)
    late = asyncio.create_task(commit.submit("append e", "e"))
    assert await sender.next_batch(3) == ["e"]  # three batches in flight at once
    sender.answer(1)  # answered out of order: each batch answers its own submitters
    await asyncio.gather(*others)
    assert not first.done() and not late.done()
    sender.answer(0)
    sender.answer(2)
    await asyncio.gather(first, late)
    assert (commit.batches, commit.items) == (3, 5)
    lone = asyncio.create_task(commit.submit("append f", "f"))  # nothing in flight: at once
    await asyncio.sleep(0)
    assert len(sender.batches) == 4 and sender.batches[3] == ["f"]
    sender.answer(3)
    await lone


async def _lead_then_two(
    sender: FakeSender,
) -> tuple[asyncio.Task[None], asyncio.Task[None], asyncio.Task[None]]:
    """``append a`` sent alone, then ``append b`` and ``c`` sent together as the next batch
    while it is in flight: the three submitters' tasks."""
    commit: GroupCommit[str] = GroupCommit(sender)
    lead = asyncio.create_task(commit.submit("append a", "a"))
    await sender.next_batch(1)
    b = asyncio.create_task(commit.submit("append b", "b"))
    c = asyncio.create_task(commit.submit("append c", "c"))
    await sender.next_batch(2)
    return lead, b, c


async def test_each_outcome_reaches_its_own_submitter_only() -> None:
    sender = FakeSender()
    lead, b, c = await _lead_then_two(sender)
    sender.answer(0)
    await lead
    refused = RevisionError("append b: the log is at rev 3")
    sender.answer(1, [refused, None])
    with pytest.raises(RevisionError) as caught:
        await b
    assert caught.value is refused
    await c  # stored: the other room's refusal is not its own


async def test_a_batch_that_fails_as_a_whole_fails_each_item_naming_it() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    lead = asyncio.create_task(commit.submit("append a", "a"))
    await sender.next_batch(1)
    b = asyncio.create_task(commit.submit("append b", "b"))
    c = asyncio.create_task(commit.submit("append c", "c"))
    await _settled()
    lost = StoreError("redis is unavailable (ConnectionError)")
    sender.fail(0, lost)
    with pytest.raises(StoreError) as alone:
        await lead
    assert alone.value is lost  # a lone item gets the error itself
    assert await sender.next_batch(2) == ["b", "c"]  # sent before a's failure: their own
    sender.fail(1, StoreError("deadline"))
    for task, name in ((b, "append b"), (c, "append c")):
        with pytest.raises(StoreError) as caught:
            await task
        assert str(caught.value) == f"{name}: deadline"
    again = asyncio.create_task(commit.submit("append d", "d"))
    await asyncio.sleep(0)
    assert sender.batches[2:] == [["d"]]  # nothing in flight: the next submission leads again
    sender.answer(2)
    await again


async def test_a_cancelled_leader_leaves_no_submitter_waiting() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    lead = asyncio.create_task(commit.submit("append a", "a"))
    await sender.next_batch(1)
    b = asyncio.create_task(commit.submit("append b", "b"))
    await _settled()
    lead.cancel()
    with pytest.raises(asyncio.CancelledError):
        await lead
    assert await sender.next_batch(2) == ["b"]  # the queued one still goes
    sender.answer(1)
    await b
    again = asyncio.create_task(commit.submit("append c", "c"))
    assert await sender.next_batch(3) == ["c"]
    sender.answer(2)
    await again


async def test_close_sends_no_new_batch_and_fails_what_is_queued() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    lead = asyncio.create_task(commit.submit("append a", "a"))
    await sender.next_batch(1)
    queued = asyncio.create_task(commit.submit("append b", "b"))
    await asyncio.sleep(0)  # b queued, its batch not sent yet
    commit.close()
    await _settled()
    sender.answer(0)
    await lead  # the batch in flight lands and answers
    with pytest.raises(StoreError, match="append b: the store is closed"):
        await queued
    await commit.drain()
    assert len(sender.batches) == 1


async def test_drain_waits_for_the_batch_on_its_way() -> None:
    sender = FakeSender()
    commit: GroupCommit[str] = GroupCommit(sender)
    lead = asyncio.create_task(commit.submit("append a", "a"))
    await sender.next_batch(1)
    second = asyncio.create_task(commit.submit("append b", "b"))
    await sender.next_batch(2)  # sent by the commit's own task, not by a submitter
    sender.answer(0)
    await lead
    draining = asyncio.create_task(commit.drain())
    await _settled()
    assert not draining.done()
    sender.answer(1)
    await draining
    assert second.done() and second.exception() is None


async def test_a_sender_with_too_few_outcomes_fails_every_item_of_its_batch() -> None:
    """A sender's mistake (fewer or more outcomes than items) is nobody's stored write: each
    submitter of that batch gets a StoreError, none another's outcome, none waits for ever."""
    sender = FakeSender()
    lead, b, c = await _lead_then_two(sender)
    sender.answer(0)
    sender.answer(1, [None])  # one outcome for two items
    await lead
    for task, what in ((b, "append b"), (c, "append c")):
        with pytest.raises(StoreError, match=f"{what}: 1 outcomes for a batch of 2"):
            await task
