"""Limits on what one client may cost the server, and the backpressure policy.

The policy, decided on purpose (STYLE 11):

- **Frame size.** A client frame above ``max_frame_bytes`` gets a ``frame_too_large`` error and
  close 1009. The WebSocket layer refuses anything above twice that (also 1009) before reading
  it all, so a huge frame costs no memory.
- **Message rate.** A token bucket per connection (``rate_per_second``, ``rate_burst``); a client
  that empties it gets ``rate_limited`` and close 1008. The bucket is checked before decoding, so
  a flood of garbage costs one comparison per frame. Chat has its own, slower bucket per sender.
- **Connections per IP.** At most ``max_connections_per_ip`` open WebSockets per address; the
  next handshake is refused with HTTP 429 (and a race past the check is closed with 1008).
- **Connections per node and half-open upgrades per address** are counted at TCP accept and a
  refused connection is aborted (:mod:`server.gate`); what requests cost beyond one frame
  (listing, creating, replays, spectating, chat per room) has its own budgets and quotas
  (:mod:`server.quotas`).
- **Idle and ping.** No ``hello`` within ``hello_timeout`` or no frame at all within
  ``idle_timeout``: close 1000 after a ``bye``. Dead peers are found by the WebSocket keepalive
  (``ping_interval``/``ping_timeout``).
- **Slow readers (the send buffer).** Rooms never await a socket: a frame is written into the
  socket's transport buffer at once (framed once, one write: :mod:`server.connection`), and the
  room goes on. If a connection's unsent bytes pass ``send_buffer_bytes`` it becomes
  *lagging*: frames for it are dropped from then on instead of buffered. A watcher task waits
  for the buffer to drain; if it drains within ``resync_timeout`` the client is resynced (a
  full ``state`` of every room it is in, at the current revision) and resumes normal service.
  If it does not drain in time, or it lags again within ``lag_window`` of its last resync, it
  is closed (1008, "too slow"). Memory per slow client is therefore bounded by about
  ``send_buffer_bytes`` plus one frame, and a room's work per revision never depends on its
  slowest reader.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum


@dataclass(slots=True)
class TokenBucket:
    """``rate`` tokens per second up to ``burst``; :meth:`take` says whether one was left."""

    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.tokens < 0:
            self.tokens = self.burst

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class IpCounter:
    """Open connections per remote address."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._counts: defaultdict[str, int] = defaultdict(int)

    def __len__(self) -> int:
        """Addresses with a connection open."""
        return len(self._counts)

    def full(self, ip: str) -> bool:
        # (.get: indexing the defaultdict would keep every address ever checked, at 0, for
        # good: one per handshake that never reached acquire)
        return self._counts.get(ip, 0) >= self.limit

    def acquire(self, ip: str) -> bool:
        if self._counts[ip] >= self.limit:
            return False
        self._counts[ip] += 1
        return True

    def release(self, ip: str) -> None:
        self._counts[ip] -= 1
        if self._counts[ip] <= 0:
            del self._counts[ip]


class SendVerdict(Enum):
    SENT = "sent"
    DROPPED = "dropped"
    """The connection is lagging or closed: the frame is not written."""
    LAGGING = "lagging"
    """This write passed the limit: start watching for a drain, then resync."""
    CLOSE = "close"
    """Lagged again soon after a resync: close the connection."""


@dataclass(slots=True)
class SendBuffer:
    """The slow-reader policy above, as a small state machine over buffer sizes and times."""

    limit: int
    lag_window: float
    lagging: bool = False
    last_resync: float = float("-inf")
    overflows: int = 0

    def after_write(self, buffered: int, now: float | None = None) -> SendVerdict:
        if buffered <= self.limit:
            return SendVerdict.SENT
        now = time.monotonic() if now is None else now
        self.lagging = True
        self.overflows += 1
        if now - self.last_resync < self.lag_window:
            return SendVerdict.CLOSE
        return SendVerdict.LAGGING

    def resynced(self, now: float | None = None) -> None:
        self.lagging = False
        self.last_resync = time.monotonic() if now is None else now
