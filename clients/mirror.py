"""One room's view as the server last described it, rebuilt from ``joined``, ``state``, ``patch``.

This is the client's protocol core for views and does no I/O (STYLE: a core that takes frames in
and says what to do, under a thin asyncio shell in :mod:`clients.connection`). It follows
SPEC section 10 to the letter:

1. ``joined`` with a view, or ``state``: replace the view and the revision; check the hash;
2. ``patch`` with ``rev`` at or below ours: ignore it (we already have it, e.g. after a ``state``);
3. ``patch`` with ``rev`` = ours + 1: apply its ops, take its ``rev``, compare the hash;
4. ``patch`` with a larger ``rev`` (a gap): ignore it and ask for ``sync``.

Clocks (SPEC section 20): :attr:`Mirror.clock_since` is the monotonic time at which the running
clock's current decision began, as far as this client can tell: the arrival of the patch that
began it, or of a full view minus its ``elapsed_ms``, or of the ``room`` frame that started the
match. :meth:`Mirror.clock_left` turns it into each seat's time left now.

Any hash mismatch or patch that does not fit the view also asks for ``sync``. While a sync is
pending no second one is asked for, and patches still fill in when they line up. A ``joined``
without a view (resume) keeps the view we hold: the missed patches follow it.

Views are never edited in place: a patch makes a new view that shares what it did not change
(:mod:`clients.patching`), which lets the hash re-encode only what changed
(:mod:`clients.hashing`). Code that holds a view must treat it as read-only.

The outcome of each frame is an :class:`Update`, which tells the shell whether to send ``sync``
and carries the events to log; problems are kept as text so a user sees what went wrong.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from clients.hashing import ViewHasher
from clients.patching import apply
from protocol.patch import PatchError


@dataclass(slots=True)
class Update:
    """What one frame did to the mirror."""

    changed: bool = False
    """The view or the revision changed."""
    need_sync: bool = False
    """The shell must send ``sync`` for this room (a gap, a bad patch or a wrong hash)."""
    events: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None
    """A protocol violation seen in the frame, in words (the mirror has already recovered)."""


@dataclass
class Mirror:
    """The view of one room for one audience, its revision, and the room's ``info``."""

    room: str
    rev: int = -1
    view: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    seat: int | None = None
    token: str | None = None
    """The seat token, kept to resume the seat after a drop (never sent anywhere else)."""
    spectator: bool = False
    sync_pending: bool = False
    resyncs: int = 0
    """How many times this mirror had to ask for the full view (a desync counter for bots)."""
    hasher: ViewHasher = field(default_factory=ViewHasher, repr=False, compare=False)
    clock_since: float = field(default_factory=time.monotonic, compare=False)

    # Views -------------------------------------------------------------------------------

    @property
    def shared(self) -> dict[str, Any]:
        return self.view["shared"] if isinstance(self.view, dict) else {}

    @property
    def own(self) -> dict[str, Any] | None:
        own = self.view.get("own") if isinstance(self.view, dict) else None
        return own if isinstance(own, dict) else None

    @property
    def choices(self) -> list[dict[str, Any]]:
        own = self.own
        choices = own.get("choices") if own else None
        return choices if isinstance(choices, list) else []

    @property
    def result(self) -> dict[str, Any] | None:
        result = self.shared.get("result")
        return result if isinstance(result, dict) else None

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def game(self) -> str:
        return str(self.info.get("game", ""))

    def clock_left(self, now: float | None = None) -> list[float] | None:
        """Each seat's clock in seconds at ``now`` (monotonic), or None in a room without."""
        clock = self.view.get("clock") if isinstance(self.view, dict) else None
        if not isinstance(clock, dict) or not isinstance(clock.get("remaining_ms"), list):
            return None
        left = [float(ms) / 1000 for ms in clock["remaining_ms"]]
        running = clock.get("running")
        ticking = self.info.get("state") == "playing" and not self.info.get("paused")
        if isinstance(running, int) and 0 <= running < len(left) and ticking:
            spent = (time.monotonic() if now is None else now) - self.clock_since
            left[running] = max(0.0, left[running] - spent)
        return left

    # Frames ------------------------------------------------------------------------------

    def on_frame(self, frame: dict[str, Any]) -> Update:
        kind = frame.get("type")
        if kind == "joined":
            return self.on_joined(frame)
        if kind == "state":
            return self._replace(frame, "state")
        if kind == "patch":
            return self.on_patch(frame)
        if kind == "room" and isinstance(frame.get("info"), dict):
            if self.info.get("state") == "open" and frame["info"].get("state") == "playing":
                self.clock_since = time.monotonic()
            self.info = frame["info"]
            return Update(changed=True)
        return Update()

    def on_joined(self, frame: dict[str, Any]) -> Update:
        if isinstance(frame.get("info"), dict):
            self.info = frame["info"]
        seat = frame.get("seat")
        self.seat = seat if isinstance(seat, int) else None
        self.spectator = self.seat is None
        if isinstance(frame.get("token"), str):
            self.token = frame["token"]
        if frame.get("view") is None:
            rev = frame.get("rev")
            if self.view is None or rev != self.rev:
                # A resume we cannot follow (we hold no view, or another rev): ask for it all.
                return self._ask_sync(f"resumed at rev {rev} but this view is at {self.rev}")
            return Update()
        return self._replace(frame, "joined")

    def _replace(self, frame: dict[str, Any], what: str) -> Update:
        rev, view, digest = frame.get("rev"), frame.get("view"), frame.get("hash")
        if not isinstance(rev, int) or not isinstance(view, dict):
            return self._ask_sync(f"{what} without a revision and a view")
        if rev < self.rev and what == "state":
            # An answer to an older sync after newer patches: keep the newer view.
            self.sync_pending = False
            return Update()
        self.view, self.rev = view, rev
        self.sync_pending = False
        elapsed = frame.get("elapsed_ms")
        spent = elapsed / 1000 if isinstance(elapsed, int | float) else 0.0
        self.clock_since = time.monotonic() - spent
        if digest is not None and self.hasher.hash(view) != digest:
            return Update(changed=True, problem=f"{what} at rev {rev} has a wrong hash")
        return Update(changed=True)

    def on_patch(self, frame: dict[str, Any]) -> Update:
        rev, ops, digest = frame.get("rev"), frame.get("ops"), frame.get("hash")
        events = [e for e in frame.get("events") or [] if isinstance(e, dict)]
        if not isinstance(rev, int) or not isinstance(ops, list):
            return self._ask_sync("a patch without a revision or ops")
        if self.view is None:
            return self._ask_sync(f"patch {rev} arrived before any view")
        if rev <= self.rev:
            return Update()
        if rev != self.rev + 1:
            return self._ask_sync(f"missed revisions {self.rev + 1} to {rev - 1}")
        try:
            new = apply(self.view, ops)
        except (PatchError, KeyError, TypeError) as exc:
            return self._ask_sync(f"patch {rev} does not fit the view ({exc})")
        self.view, self.rev = new, rev
        self.clock_since = time.monotonic()
        if digest != self.hasher.hash(new):
            update = self._ask_sync(f"the view after patch {rev} has a wrong hash")
            update.changed, update.events = True, events
            return update
        return Update(changed=True, events=events)

    def _ask_sync(self, problem: str) -> Update:
        if self.sync_pending:
            return Update(problem=problem)
        self.sync_pending = True
        self.resyncs += 1
        return Update(need_sync=True, problem=problem)
