"""One room's view as the server last described it, rebuilt from ``joined``, ``state``, ``patch``.

This is a client's protocol core for views, so a Python frontend needs only ``protocol``: it
does no I/O (frames in, what to do out, under a thin shell such as :mod:`clients.connection`)
and follows SPEC section 10 to the letter:

1. ``joined`` with a view, or ``state``: replace the view and the revision; check the hash;
2. ``patch`` with ``rev`` at or below ours: ignore it (we already have it, e.g. after a ``state``);
3. ``patch`` with ``rev`` = ours + 1: apply its ops, take its ``rev``, compare the hash;
4. ``patch`` with a larger ``rev`` (a gap): ignore it and ask for ``sync``.

Frames are untrusted: each is checked into its typed frame (:func:`protocol.frames.parse_frame`)
first, and one that does not follow the SPEC asks for ``sync`` like a bad patch.

Clocks (SPEC section 20): :attr:`Mirror.clock_since` is the monotonic time at which the running
clock's current decision began, as far as this client can tell: the arrival of the patch that
began it, or of a full view minus its ``elapsed_ms``, or of the ``room`` frame that started the
match. :meth:`Mirror.clock_left` turns it into each seat's time left now. The time of arrival is
``now`` of :meth:`Mirror.on_frame` (the monotonic clock when omitted).

Hashes are checked under the connection's view hash rule (:attr:`Mirror.hash_rule`, the one
``welcome`` confirmed, SPEC section 4). Any hash mismatch or patch that does not fit the view
also asks for ``sync``. While a sync is
pending no second one is asked for, and patches still fill in when they line up. A ``joined``
without a view (resume) keeps the view we hold: the missed patches follow it.

Views are never edited in place: a patch makes a new view that shares what it did not change
(:func:`protocol.patch.apply`), which lets the hash re-encode only what changed
(:class:`protocol.hashing.ViewHasher`). Code that holds a view must treat it as read-only.

The outcome of each frame is an :class:`Update`, which tells the shell whether to send ``sync``
and carries the events to log; problems are kept as text so a user sees what went wrong.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ServerFrameError
from protocol.frames import Joined, Patch, RoomInfo, State, parse_frame
from protocol.hashing import ViewHasher
from protocol.patch import PatchError, apply

__all__ = ["Mirror", "Update"]

_VIEW_FRAMES = frozenset({"joined", "state", "patch", "room"})


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
    hash_rule: int = 1
    """The view hash rule of the connection (SPEC section 4: the one ``welcome`` confirmed)."""
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

    def on_frame(self, frame: Mapping[str, Any], now: float | None = None) -> Update:
        """Take one decoded frame of this room (other kinds change nothing)."""
        kind = frame.get("type")
        if kind not in _VIEW_FRAMES:
            return Update()
        try:
            typed = parse_frame(frame)
        except ServerFrameError as exc:
            if kind == "room":
                return Update(problem=exc.message)
            return self._ask_sync(exc.message)
        at = time.monotonic() if now is None else now
        if isinstance(typed, Joined):
            return self._joined(typed, at)
        if isinstance(typed, State):
            return self._state(typed, at)
        if isinstance(typed, Patch):
            return self._patch(typed, at)
        assert isinstance(typed, RoomInfo)
        if self.info.get("state") == "open" and typed.info.get("state") == "playing":
            self.clock_since = at
        self.info = typed.info
        return Update(changed=True)

    def _joined(self, frame: Joined, at: float) -> Update:
        self.info = frame.info
        self.seat = frame.seat
        self.spectator = frame.seat is None
        if frame.token is not None:
            self.token = frame.token
        if frame.view is None:
            if self.view is None or frame.rev != self.rev:
                # A resume we cannot follow (we hold no view, or another rev): ask for it all.
                return self._ask_sync(f"resumed at rev {frame.rev} but this view is at {self.rev}")
            return Update()
        return self._replace(frame.rev, frame.view, frame.hash, frame.elapsed_ms, "joined", at)

    def _state(self, frame: State, at: float) -> Update:
        if frame.rev < self.rev:
            # An answer to an older sync after newer patches: keep the newer view.
            self.sync_pending = False
            return Update()
        return self._replace(frame.rev, frame.view, frame.hash, frame.elapsed_ms, "state", at)

    def _replace(
        self,
        rev: int,
        view: dict[str, Any],
        digest: str | None,
        elapsed_ms: int | None,
        what: str,
        at: float,
    ) -> Update:
        self.view, self.rev = view, rev
        self.sync_pending = False
        self.clock_since = at - (elapsed_ms or 0) / 1000
        if digest is not None and self.hasher.hash(view, self.hash_rule) != digest:
            return Update(changed=True, problem=f"{what} at rev {rev} has a wrong hash")
        return Update(changed=True)

    def _patch(self, frame: Patch, at: float) -> Update:
        rev = frame.rev
        if self.view is None:
            return self._ask_sync(f"patch {rev} arrived before any view")
        if rev <= self.rev:
            return Update()
        if rev != self.rev + 1:
            return self._ask_sync(f"missed revisions {self.rev + 1} to {rev - 1}")
        try:
            new = apply(self.view, frame.ops)
        except PatchError as exc:
            return self._ask_sync(f"patch {rev} does not fit the view ({exc})")
        self.view, self.rev = new, rev
        self.clock_since = at
        if frame.hash != self.hasher.hash(new, self.hash_rule):
            update = self._ask_sync(f"the view after patch {rev} has a wrong hash")
            update.changed, update.events = True, frame.events
            return update
        return Update(changed=True, events=frame.events)

    def _ask_sync(self, problem: str) -> Update:
        if self.sync_pending:
            return Update(problem=problem)
        self.sync_pending = True
        self.resyncs += 1
        return Update(need_sync=True, problem=problem)
