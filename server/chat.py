"""Room chat: who may speak how often, and the recent lines a newcomer is shown.

Chat is rate-limited per connection and room with a token bucket (``per_minute`` lines, bursts
of up to 5), refused with ``slow_down`` rather than ``rate_limited`` because a chatty player
is not abusing the connection and must not lose it. Every member counts, spectators too (a
spectator's bucket is its connection's). On top of that, the whole room may carry at most
``room_per_minute`` lines a minute from all its members together (bursts of 10), so that many
connections cannot flood a room's members either: beyond it, ``quota_exceeded`` with ``limit``
``room_chat_per_minute``. The room keeps the last ``keep`` lines in
memory (the store keeps them with the match); a spectator of a delayed room is only shown seats'
lines older than the delay, like the feed itself.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from protocol.errors import ErrorCode, QuotaExceeded, RequestError
from server.limits import TokenBucket
from server.quotas import Quotas

SHOWN_ON_JOIN = 50


ROOM_BURST = 10
MAX_BUCKETS = 1024
"""Speakers' buckets kept per room before the refilled ones are dropped."""


class ChatLog:
    def __init__(self, per_minute: int, keep: int, room_per_minute: int = 0) -> None:
        self.per_minute = per_minute
        self.room_per_minute = room_per_minute
        self.lines: deque[dict[str, Any]] = deque(maxlen=max(1, keep))
        self._buckets: dict[str, TokenBucket] = {}
        self._room = (
            TokenBucket(room_per_minute / 60.0, min(ROOM_BURST, room_per_minute))
            if room_per_minute > 0
            else None
        )

    def check_rate(self, session: str, quotas: Quotas | None = None) -> None:
        """Spend a line of ``session`` and of the room, or refuse it."""
        bucket = self._buckets.get(session)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._prune()
            bucket = TokenBucket(self.per_minute / 60.0, min(5, self.per_minute))
            self._buckets[session] = bucket
        if not bucket.take():
            raise RequestError(
                ErrorCode.SLOW_DOWN, f"at most {self.per_minute} chat lines a minute"
            )
        if self._room is not None and not self._room.take():
            bucket.tokens += 1.0  # this line was not said: the speaker keeps its token
            message = f"at most {self.room_per_minute} chat lines a minute in one room"
            if quotas is not None:
                raise quotas.refuse("room_chat_per_minute", message)
            raise QuotaExceeded("room_chat_per_minute", message)

    def _prune(self) -> None:
        now = time.monotonic()
        rate = self.per_minute / 60.0
        for key, b in list(self._buckets.items()):
            if b.tokens + (now - b.stamp) * rate >= b.burst:
                del self._buckets[key]

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def recent(self, spectator_delay: float | None) -> list[dict[str, Any]]:
        """The last lines for a seat (``None``) or a spectator of a room with that delay."""
        lines = list(self.lines)[-SHOWN_ON_JOIN:]
        if spectator_delay:
            cutoff = time.time() - spectator_delay
            lines = [line for line in lines if line["from"]["seat"] is None or line["ts"] <= cutoff]
        return lines
