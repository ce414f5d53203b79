"""Quotas and budgets: what one connection, one address and the whole node may hold and ask for.

The frame rate (:mod:`server.limits`) bounds how often a client may speak, not what its requests
cost: a ``create`` that starts an all-bot match or a ``list_rooms`` costs the server far more than
a ``ping``. So, decided on purpose (STYLE 11), on top of the frame rate:

- **Holdings** (:class:`Quota`): things a key holds until they end, counted per key. Rooms open
  (open or playing) per connection and per address, all-bot matches per address, replay rooms
  per connection and per address, spectators per node, half-open upgrades per address. A room
  gives its holdings back when it finishes or closes (:meth:`Holdings.release`), a replay room
  when its last spectator leaves (it closes then).
- **Budgets** (:class:`Budget`): token buckets per connection and per address for the costly
  requests (``list_rooms``, ``create`` and ``quick`` that opens a room, ``start`` with bots,
  ``replay``). The per-address bucket is ``address_factor`` connections' worth, so that opening
  more connections does not multiply what one address may ask. Buckets of addresses that have
  refilled are dropped (:meth:`Budget.prune`), so memory follows the active addresses.

A refusal is :class:`~protocol.errors.QuotaExceeded` naming the limit (``quota_exceeded`` on
the wire, with ``limit``); the connection survives, and nothing of the request was done. Every
refusal counts in ``oasis_refused_total{limit}``.

This module does no I/O and reads no clock of its own: ``now`` is an argument (tests give it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

from protocol.errors import QuotaExceeded
from server.limits import TokenBucket

Refused: TypeAlias = Callable[[str], None]
"""Told the name of every limit that refused something (the metrics counter)."""


def _ignore(limit: str) -> None:
    return None


class Quota:
    """At most ``limit`` things held per key (``what`` names the things, for the message)."""

    def __init__(self, name: str, limit: int, what: str, refused: Refused = _ignore) -> None:
        self.name = name
        self.limit = limit
        self.what = what
        self._refused = refused
        self._held: dict[str, int] = {}

    def __len__(self) -> int:
        """Keys holding something (a key that gives back its last place is dropped)."""
        return len(self._held)

    def held(self, key: str) -> int:
        return self._held.get(key, 0)

    def total(self) -> int:
        return sum(self._held.values())

    def check(self, key: str) -> None:
        """Raise ``quota_exceeded`` if ``key`` holds its limit already."""
        if self._held.get(key, 0) >= self.limit:
            self._refused(self.name)
            raise QuotaExceeded(self.name, f"at most {self.limit} {self.what}")

    def acquire(self, key: str) -> None:
        self.check(key)
        self._held[key] = self._held.get(key, 0) + 1

    def release(self, key: str) -> None:
        left = self._held.get(key, 0) - 1
        if left > 0:
            self._held[key] = left
        else:
            self._held.pop(key, None)


@dataclass(slots=True, init=False)
class Holdings:
    """What one thing (a room, a spectator) holds of which quotas, given back once.

    Its own ``__init__`` (two per new match): compiled, the one ``dataclass`` writes runs
    interpreted (about 1,600 instructions)."""

    held: list[tuple[Quota, str]]

    def __init__(self, held: list[tuple[Quota, str]] | None = None) -> None:
        self.held = [] if held is None else held

    def take(self, quota: Quota, key: str) -> None:
        quota.acquire(key)
        self.held.append((quota, key))

    def give_back(self, quota: Quota, key: str) -> None:
        """Give back one place taken with :meth:`take` (a request that failed after it)."""
        if (quota, key) in self.held:
            self.held.remove((quota, key))
            quota.release(key)

    def release(self) -> None:
        held, self.held = self.held, []
        for quota, key in held:
            quota.release(key)


class Budget:
    """A token bucket per key: ``rate`` requests per second, bursts of ``burst``."""

    PRUNE_EVERY = 1024
    """Takes between two prunings of the refilled buckets."""

    def __init__(
        self, name: str, rate: float, burst: float, what: str, refused: Refused = _ignore
    ) -> None:
        self.name = name
        self.rate = rate
        self.burst = max(1.0, burst)
        self.what = what
        self._refused = refused
        self._buckets: dict[str, TokenBucket] = {}
        self._takes = 0

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float | None = None) -> None:
        """Spend one token of ``key`` or raise ``quota_exceeded``."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, stamp=now)
        if not bucket.take(now):
            self._refused(self.name)
            raise QuotaExceeded(self.name, f"too many {self.what}; slow down")
        self._takes += 1
        if self._takes % self.PRUNE_EVERY == 0:
            self.prune(now)

    def refund(self, key: str) -> None:
        """Give back the token of a request that was refused for another reason."""
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.tokens = min(self.burst, bucket.tokens + 1.0)

    def forget(self, key: str) -> None:
        self._buckets.pop(key, None)

    def prune(self, now: float) -> None:
        """Drop the buckets that are full again (a new one would be the same)."""
        full = [
            key
            for key, b in self._buckets.items()
            if b.tokens + (now - b.stamp) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]


COSTLY: Final = ("list", "create", "replay")
"""The kinds of costly request with a budget (``start`` with bots spends ``create``'s)."""


@dataclass(frozen=True, slots=True)
class QuotaSettings:
    """The quota settings of :class:`~server.config.Config` (SPEC section 14 has the table)."""

    rooms_per_connection: int = 4
    rooms_per_address: int = 32
    bot_matches_per_address: int = 2
    replays_per_connection: int = 2
    replays_per_address: int = 4
    spectators_per_room: int = 500
    spectators_per_node: int = 10_000
    half_open_per_address: int = 16
    list_per_second: float = 2.0
    list_burst: int = 10
    create_per_minute: float = 12.0
    create_burst: int = 5
    replay_per_minute: float = 12.0
    replay_burst: int = 3
    address_factor: float = 4.0


class Quotas:
    """Every quota and budget of one node."""

    def __init__(self, s: QuotaSettings, refused: Refused = _ignore) -> None:
        self.settings = s
        r = refused
        self.rooms_per_connection = Quota(
            "rooms_per_connection", s.rooms_per_connection, "rooms open per connection", r
        )
        self.rooms_per_address = Quota(
            "rooms_per_address", s.rooms_per_address, "rooms open per address", r
        )
        self.bot_matches = Quota(
            "bot_matches_per_address",
            s.bot_matches_per_address,
            "matches of bots only running per address",
            r,
        )
        self.replays = Quota(
            "replays_per_connection", s.replays_per_connection, "replays per connection", r
        )
        self.replays_per_address = Quota(
            "replays_per_address", s.replays_per_address, "replays per address", r
        )
        self.spectators = Quota(
            "spectators_per_node", s.spectators_per_node, "spectators on this server", r
        )
        self.half_open = Quota(
            "half_open_per_address",
            s.half_open_per_address,
            "connections per address still upgrading",
            r,
        )
        self.spectators_per_room = s.spectators_per_room
        self._refused = refused
        f = s.address_factor
        rates = {
            "list": (s.list_per_second, float(s.list_burst), "room listings"),
            "create": (s.create_per_minute / 60.0, float(s.create_burst), "rooms created"),
            "replay": (s.replay_per_minute / 60.0, float(s.replay_burst), "replays"),
        }
        self.per_connection = {
            kind: Budget(f"{kind}_per_connection", rate, burst, what, r)
            for kind, (rate, burst, what) in rates.items()
        }
        self.per_address = {
            kind: Budget(f"{kind}_per_address", rate * f, burst * f, what, r)
            for kind, (rate, burst, what) in rates.items()
        }

    def refuse(self, limit: str, message: str) -> QuotaExceeded:
        """A refusal by a limit that is not one of these objects (counted the same way)."""
        self._refused(limit)
        return QuotaExceeded(limit, message)

    def spend(self, kind: str, session: str, address: str, now: float | None = None) -> None:
        """Spend one ``kind`` request of the connection and of its address, or refuse it (and
        spend nothing)."""
        now = time.monotonic() if now is None else now
        self.per_connection[kind].take(session, now)
        try:
            self.per_address[kind].take(address, now)
        except QuotaExceeded:
            self.per_connection[kind].refund(session)
            raise

    def forget(self, session: str) -> None:
        """A connection closed: its buckets go (its address's stay)."""
        for budget in self.per_connection.values():
            budget.forget(session)
