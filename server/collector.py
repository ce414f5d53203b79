"""Python's cyclic garbage collector while the server serves (``OASIS_GC``).

Reference counting frees almost everything a room makes; the cyclic collector is only for
objects caught in reference cycles, and the rooms make next to none. Its automatic collections
are what the players feel: a collection of the youngest generation walks every container made
since the last one and still alive, and with hundreds of rooms those are each room's current
objects (an Ishtar decision's legal choices, alive until the room's next move), so each one
stops the event loop long enough to be the paced p99; a smaller threshold makes each shorter
but walks the same objects again and again, costing far more in all. The figures:
BENCHMARKS.md, "The collector frozen instead of its young collections".

``freeze`` (the default, :class:`Collector`): the automatic collections are off. Every
:data:`CHECK_SECONDS` the collector looks at the count of containers made since its last look
(Python's own count for its youngest generation); past ``OASIS_GC_YOUNG`` it calls
:func:`gc.freeze`, which moves every tracked object into the permanent generation without
looking at any of them (constant time), and resets that count. Frozen objects are still freed
by reference counting as soon as nothing refers to them; only garbage in cycles stays. What was
frozen since the last full collection is counted from those counts (containers made less those
freed, at each freeze: more than what is really new, since a collection would stop tracking
most of it, dicts and tuples of numbers and strings). Once that is as much as what was alive
after the last full collection (:data:`FULL_GROWTH`: the objects may have doubled) and the
total is over :data:`FULL_FLOOR`, everything is unfrozen, collected in one full collection and
what is alive frozen again: garbage in cycles never outgrows what is alive (nor a million
objects). The settle pass after a burst of closed rooms (:mod:`server.trim`) makes one too. So
the only pauses left are those full collections: none until the server has counted a million
objects, then at most one per doubling.

``collect``: Python's generational collections, with the thresholds ``OASIS_GC_YOUNG``, 20
and 100 (:func:`tune_gc`; ``OASIS_GC_YOUNG`` 0 keeps Python's 700, 10, 10).
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Final

from server import logging as oasis_logging

CHECK_SECONDS: Final = 0.05
"""Seconds between two looks at the count (a look costs a few microseconds)."""
FULL_GROWTH: Final = 1.0
"""A full collection once what was frozen since the last one is this fraction of what that one
left alive. Python's own rule for its full collections is a quarter, but of objects that
survived its younger collections; what is counted here includes the containers a collection
would stop tracking (most of what rooms make), so a quarter would run full collections for no
garbage while rooms fill up."""
FULL_FLOOR: Final = 1_000_000
"""No full collection below this many objects (counted as above): what it would find is next
to nothing, and each is a pause of the whole loop as long as the objects are many; the cost is
at most this many objects of garbage in cycles kept, some hundreds of MiB at worst."""
GC_OLDER: Final = (20, 100)
"""``collect``: the thresholds of the two older generations, in collections of the younger."""


def tune_gc(young: int) -> None:
    """``collect``: the collector's thresholds for serving (``OASIS_GC_YOUNG``; 0: Python's)."""
    if young > 0:
        gc.set_threshold(young, GC_OLDER[0], GC_OLDER[1])


class Collector:
    """The ``freeze`` policy (see the module): automatic collections off, :func:`gc.freeze`
    past ``young`` new containers, a full collection once what was frozen since the last one
    is ``growth`` times what that one left and the total is more than ``floor``.

    :meth:`start` once the server's long-lived objects are made (the restored rooms), then
    :meth:`check` every :data:`CHECK_SECONDS` (:meth:`run` does, until cancelled).
    """

    def __init__(self, young: int, growth: float = FULL_GROWTH, floor: int = FULL_FLOOR) -> None:
        self.young = young
        self.growth = growth
        self.floor = floor
        self.base = 0
        """Objects alive (frozen) after the last full collection."""
        self.grown = 0
        """Containers frozen since, net (see the module); not :func:`gc.get_freeze_count`,
        which walks every frozen object (a stall of its own with hundreds of rooms)."""
        self.freezes = 0
        self.fulls = 0

    def start(self) -> None:
        gc.disable()
        gc.freeze()
        self.base, self.grown = gc.get_freeze_count(), 0

    def check(self) -> bool:
        """Freeze if enough containers were made since the last look, then collect everything
        if enough was frozen since the last full collection. True if it froze."""
        made = gc.get_count()[0]
        if made <= self.young:
            return False
        gc.freeze()
        self.freezes += 1
        self.grown += made
        if self.base + self.grown > self.floor and self.grown > self.base * self.growth:
            self.full()
        return True

    def full(self) -> None:
        """Unfreeze everything, one full collection, freeze what is left."""
        before = self.base + self.grown
        started = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self.base, self.grown = gc.get_freeze_count(), 0
        self.fulls += 1
        oasis_logging.get().info(
            "gc_full_collection",
            counted=before,
            garbage=found,
            kept=self.base,
            ms=round((time.perf_counter() - started) * 1000, 1),
        )

    async def run(self, every: float = CHECK_SECONDS) -> None:
        while True:
            await asyncio.sleep(every)
            self.check()
