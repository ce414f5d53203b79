"""Room chat: who may speak how often, and the recent lines a newcomer is shown.

Chat is rate-limited per connection and room with a token bucket (``per_minute`` lines, bursts
of up to 5), refused with ``slow_down`` rather than ``rate_limited`` because a chatty player
is not abusing the connection and must not lose it. The room keeps the last ``keep`` lines in
memory (the store keeps them with the match); a spectator of a delayed room is only shown seats'
lines older than the delay, like the feed itself.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from protocol.errors import ErrorCode, RequestError
from server.limits import TokenBucket

SHOWN_ON_JOIN = 50


class ChatLog:
    def __init__(self, per_minute: int, keep: int) -> None:
        self.per_minute = per_minute
        self.lines: deque[dict[str, Any]] = deque(maxlen=max(1, keep))
        self._buckets: dict[str, TokenBucket] = {}

    def check_rate(self, session: str) -> None:
        bucket = self._buckets.get(session)
        if bucket is None:
            bucket = TokenBucket(self.per_minute / 60.0, min(5, self.per_minute))
            self._buckets[session] = bucket
        if not bucket.take():
            raise RequestError(
                ErrorCode.SLOW_DOWN, f"at most {self.per_minute} chat lines a minute"
            )

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def recent(self, spectator_delay: float | None) -> list[dict[str, Any]]:
        """The last lines for a seat (``None``) or a spectator of a room with that delay."""
        lines = list(self.lines)[-SHOWN_ON_JOIN:]
        if spectator_delay:
            cutoff = time.time() - spectator_delay
            lines = [line for line in lines if line["from"]["seat"] is None or line["ts"] <= cutoff]
        return lines
