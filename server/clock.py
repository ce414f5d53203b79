"""Fischer clocks: per seat, an initial time plus an increment for every decision made.

A room created with ``clock`` (:func:`parse_clock`, validated at the boundary) keeps one
:class:`Clocks`. Only the seat that must decide has its clock running; time is read from the
event loop's monotonic clock by the room's task (never by the engines, which stay pure). When
the seat decides, the time it took is charged and the increment added. When its time runs out
the room's timer fires (:class:`ClockDue`) and the room's policy applies:

- ``bot``: a heuristic bot (:mod:`server.bots`; the seat's own bot if a bot already plays it)
  makes that decision for the seat; the seat's clock then holds just the
  increment, so a player who stopped moving has the bot move for them every ``increment``
  seconds, and takes over again with whatever time they have when they act in time;
- ``forfeit``: the seat is forfeited for the rest of the match: it is played by the random bot
  from then on (its player may watch but no longer act), it is listed in the clock part's
  ``forfeited`` and in the archived result's ``forfeited``. The match goes on for the others
  (both games are scored as usual; a forfeited seat is simply out of the running in the
  clients' eyes and the archive's).

Views: the clock is a room-level top-level part of every audience's view document,
``view["clock"]`` (see protocol/SPEC.md section 20), diffed and hashed with the rest, so a client
that rebuilds its view from patches has the same clock as ``sync`` gives. It changes only with
revisions: ``remaining_ms`` is every seat's time when the current decision began, ``running`` the
seat that must decide (its clock runs while the room is ``playing`` and not paused; None once the
match is over). How long the running clock has already run when a full view is sent travels
beside it, as ``elapsed_ms`` of the ``joined`` and ``state`` frames. Every time in the clock
part is an integer number of milliseconds (``initial_ms``, ``increment_ms``, ``remaining_ms``): a
view never holds a float, which JavaScript could not tell from an integer when it hashes the
view. A client counts down from
``remaining_ms[running] - elapsed_ms`` from the moment it got the frame (or from
``remaining_ms[running]`` when a patch, or the ``room`` frame that says the match started,
arrives).

Restarts: the clock part (``clock_state``) is written into the room's metadata with every
choice, by the choice's own append (one round trip; rooms with clocks only); a restored room
restarts every clock at its stored remaining time, the running one from the moment the room is
restored: time spent while the server was down is not counted. While the room is paused
(storage down) the running clock stops too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from protocol.errors import ErrorCode, RequestError
from server.store.meta import RoomMeta

PART: Final = "clock"
"""The name of the clock's room-level part in every audience's view document."""
POLICIES: Final = ("bot", "forfeit")
MAX_INITIAL: Final = 24 * 3600.0
MAX_INCREMENT: Final = 3600.0


@dataclass(frozen=True, slots=True)
class ClockSettings:
    initial: float
    increment: float
    on_timeout: str

    def to_json(self) -> dict[str, Any]:
        """As ``create`` gave them (seconds): the room's ``info.clock``, and what is stored."""
        return {"initial": self.initial, "increment": self.increment, "on_timeout": self.on_timeout}

    def to_view(self) -> dict[str, Any]:
        """In the views: integer milliseconds only (views hold no floats, SPEC section 3)."""
        return {
            "initial_ms": round(self.initial * 1000),
            "increment_ms": round(self.increment * 1000),
            "on_timeout": self.on_timeout,
        }


@dataclass(frozen=True, slots=True)
class ClockDue:
    """The running clock may have reached zero (at revision ``rev``)."""

    rev: int


def parse_clock(raw: Any) -> ClockSettings | None:
    """Validate ``create``'s untrusted ``clock`` map (None or absent: no clocks)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RequestError(ErrorCode.BAD_REQUEST, "create: 'clock' must be a map")

    def number(name: str, hi: float, default: float | None, lo: float = 0.0) -> float:
        value: Any = raw.get(name, default)
        if not isinstance(value, int | float) or isinstance(value, bool) or not lo <= value <= hi:
            raise RequestError(
                ErrorCode.BAD_REQUEST, f"create: 'clock.{name}' must be a number from {lo} to {hi}"
            )
        return float(value)

    initial = number("initial", MAX_INITIAL, None, 0.001)
    increment = number("increment", MAX_INCREMENT, 0.0)
    policy = raw.get("on_timeout", "bot")
    if policy not in POLICIES:
        raise RequestError(
            ErrorCode.BAD_REQUEST,
            f"create: 'clock.on_timeout' must be one of {', '.join(POLICIES)}",
        )
    return ClockSettings(initial, increment, str(policy))


class Clocks:
    """Every seat's remaining time and which clock runs; ``now`` is the loop's monotonic time."""

    def __init__(self, settings: ClockSettings, players: int) -> None:
        self.settings = settings
        self.remaining = [settings.initial] * players
        self.running: int | None = None
        self._since = 0.0
        self._charged = 0.0
        """Time already charged to the running clock in this decision (before a pause)."""
        self.counting = False
        self.forfeited: list[int] = []
        self.timeouts = [0] * players

    def copy(self) -> Clocks:
        """A copy that changes apart from this one (its lists copied): what a choice would
        make of the clocks, worked out before it is applied."""
        twin = Clocks(self.settings, len(self.remaining))
        twin.remaining = list(self.remaining)
        twin.running = self.running
        twin._since = self._since
        twin._charged = self._charged
        twin.counting = self.counting
        twin.forfeited = list(self.forfeited)
        twin.timeouts = list(self.timeouts)
        return twin

    def start(self, seat: int | None, now: float) -> None:
        """The decision of ``seat`` begins (None: nobody's, e.g. the match is over)."""
        self.running = seat
        self._since = now
        self._charged = 0.0
        self.counting = seat is not None

    def stop(self, now: float) -> None:
        """Charge the running seat for the time it took (pause, or before it decides)."""
        if self.running is not None and self.counting:
            spent = now - self._since
            self.remaining[self.running] = max(0.0, self.remaining[self.running] - spent)
            self._charged += spent
            self._since = now
        self.counting = False

    def restart(self, now: float) -> None:
        """Count the running clock from ``now`` on, charging nothing (after a pause)."""
        self._since = now
        self.counting = self.running is not None

    def decided(self, seat: int, now: float) -> None:
        """``seat`` made a decision: charge its time, add the increment."""
        if self.running == seat:
            self.stop(now)
        self.remaining[seat] += self.settings.increment
        self.running = None

    def undone(self, seat: int, now: float) -> None:
        """``seat`` took back a step: charge its time (it stays spent) and take back the
        increment the step earned, so that stepping and undoing never adds time (never below
        zero: a step a bot made at zero earned only the increment the seat then held)."""
        if self.running == seat:
            self.stop(now)
        self.remaining[seat] = max(0.0, self.remaining[seat] - self.settings.increment)
        self.running = None

    def left(self, now: float) -> float:
        """Seconds left on the running clock (inf when none runs)."""
        if self.running is None:
            return float("inf")
        running = (now - self._since) if self.counting else 0.0
        return self.remaining[self.running] - running

    def elapsed_ms(self, now: float) -> int:
        if self.running is None:
            return 0
        running = (now - self._since) if self.counting else 0.0
        return max(0, round((self._charged + running) * 1000))

    def timed_out(self, seat: int) -> None:
        self.remaining[seat] = 0.0
        self.timeouts[seat] += 1

    def forfeit(self, seat: int) -> None:
        if seat not in self.forfeited:
            self.forfeited.append(seat)

    def parts(self, to_move: int | None) -> dict[str, Any]:
        """The room-level parts of the views the clocks make (:mod:`server.views`)."""
        return {PART: self.part(to_move)}

    def result_extra(self) -> dict[str, Any]:
        """What the archived result adds: the seats forfeited on time, if any."""
        return {"forfeited": sorted(self.forfeited)} if self.forfeited else {}

    def part(self, to_move: int | None) -> dict[str, Any]:
        """The ``clock`` part of the views (times in integer milliseconds); ``to_move``: the
        seat that must decide (None: the match is over)."""
        return {
            **self.settings.to_view(),
            "remaining_ms": [round(r * 1000) for r in self.remaining],
            "running": to_move,
            "timeouts": list(self.timeouts),
            "forfeited": sorted(self.forfeited),
        }

    def restore(self, saved: Any) -> None:
        """Take the remaining times and forfeits of a stored clock part (see the module doc)."""
        if not isinstance(saved, dict):
            return
        rem = saved.get("remaining_ms")
        if isinstance(rem, list) and len(rem) == len(self.remaining):
            self.remaining = [max(0.0, float(r) / 1000) for r in rem]
        tos = saved.get("timeouts")
        if isinstance(tos, list) and len(tos) == len(self.timeouts):
            self.timeouts = [int(t) for t in tos]
        self.forfeited = [
            int(s) for s in saved.get("forfeited") or [] if 0 <= int(s) < len(rem or [])
        ]


def stored_clocks(meta: RoomMeta, players: int) -> Clocks | None:
    """A room's clocks as its stored meta last had them (``clock``, the settings, and
    ``clock_state``, the clock part), or None for a room without clocks.

    The room writes ``clock_state`` with every choice, the last one before the match is
    archived, so an archive's meta holds the clocks of the final view (``oasis replay``).
    Raises RequestError for settings that are not valid (the meta is not what a room wrote).
    """
    settings = parse_clock(meta.clock)
    if settings is None:
        return None
    clocks = Clocks(settings, players)
    clocks.restore(meta.clock_state)
    return clocks
