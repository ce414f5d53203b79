"""A room's metadata as the store keeps it: :class:`RoomMeta`, a typed record with one codec.

The room writes its meta at creation (with the seed), when seats change, when the match starts
and, in rooms with clocks, after every choice; the Redis store keeps it as a hash of top-level
fields (``update_room`` merges them, so the seed written at creation stays). Everything that
reads it back (restore, the listings and quick matches across nodes, replays, archives) reads
it through :meth:`RoomMeta.from_json`, once, instead of picking fields out of a map by hand.

The stored map is :meth:`RoomMeta.to_json`: the room's ``info`` (what the lobby lists and a
``room`` frame carries: room, game, players, options, public, state, rev, seats, spectators,
spectator_delay, spectator_chat, paused, replay_of and clock when set) plus what only a restore
needs (tokens: the seats' token digests in hex, never tokens; quick, host, bot; clock_state in
a room with clocks; seed at creation).

Stored bytes are untrusted, and a meta may be partial (a listing reads a few fields of it) or
older than a field: :meth:`RoomMeta.from_json` never raises, a field that is absent or of the
wrong type takes its default. Where a field is required (a restore with no snapshot needs the
game, players, options and seed) the default is None and the reader says what is missing.

Both records are never changed once made (:func:`dataclasses.replace` makes a changed copy);
they are plain slotted dataclasses, not frozen ones: a room builds a :class:`RoomMeta` and one
:class:`SeatMeta` per seat at every seat change, and a frozen dataclass sets each of its fields
through ``object.__setattr__`` (most of the time it takes to build one).
The module is compiled with the store's write path (``scripts/build_compiled.py``): the room's
compiled core builds these records and reads their fields as a native class's, not through
Python attribute lookups. :func:`replay_fields` reads the four fields an archive needs as
:meth:`RoomMeta.from_json` reads them, without the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["RoomMeta", "SeatMeta", "replay_fields"]


_FRESH: Final[dict[str, Any]] = {}
""":class:`RoomMeta`'s ``options`` when none are given: a new empty map each time."""


@dataclass(slots=True, init=False)
class SeatMeta:
    """One seat as stored (the ``seats`` entries of a ``room`` frame, SPEC section 7)."""

    seat: int
    name: str = ""
    taken: bool = False
    bot: bool = False
    connected: bool = False
    bot_kind: str | None = None
    standin: bool = False
    forfeited: bool = False

    def __init__(
        self,
        seat: int,
        name: str = "",
        taken: bool = False,
        bot: bool = False,
        connected: bool = False,
        bot_kind: str | None = None,
        standin: bool = False,
        forfeited: bool = False,
    ) -> None:
        """(Its own, compiled: the dataclass's generated one runs interpreted.)"""
        self.seat = seat
        self.name = name
        self.taken = taken
        self.bot = bot
        self.connected = connected
        self.bot_kind = bot_kind
        self.standin = standin
        self.forfeited = forfeited

    @classmethod
    def from_json(cls, index: int, data: Any) -> SeatMeta:
        """Seat ``index`` from its stored map (a map that is not one: an empty seat)."""
        if not isinstance(data, Mapping):
            return cls(index)
        kind = data.get("bot_kind")
        return cls(
            seat=index,
            name=str(data.get("name", "")),
            taken=bool(data.get("taken", False)),
            bot=bool(data.get("bot", False)),
            connected=bool(data.get("connected", False)),
            bot_kind=kind if isinstance(kind, str) and kind else None,
            standin=bool(data.get("standin", False)),
            forfeited=bool(data.get("forfeited", False)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "name": self.name,
            "taken": self.taken,
            "bot": self.bot,
            "connected": self.connected,
            "bot_kind": self.bot_kind,
            "standin": self.standin,
            "forfeited": self.forfeited,
        }


@dataclass(slots=True, init=False)
class RoomMeta:
    """A room's stored metadata (see the module doc for what each part is for)."""

    room: str
    game: str | None
    """None: the stored meta names no game."""
    players: int | None
    """None: not stored, or not a number."""
    options: dict[str, Any] | None = field(default_factory=dict)
    """None: stored, but not a map."""
    public: bool = True
    state: str = "open"
    rev: int = 0
    seats: tuple[SeatMeta, ...] = ()
    spectators: int = 0
    spectator_delay: int | float = 0.0
    """As stored: an int stays one (typed so that compiled code keeps it as it is)."""
    spectator_chat: bool = True
    paused: bool = False
    replay_of: str | None = None
    clock: dict[str, Any] | None = None
    """The clock settings as ``create`` gave them (``ClockSettings.to_json``), or None."""
    tokens: tuple[str, ...] = ()
    """Each seat's token digest in hex ("" for a seat nobody holds)."""
    quick: bool = False
    host: str = ""
    bot: str = "random"
    clock_state: dict[str, Any] | None = None
    """The clocks' part of the views after the last stored choice (rooms with clocks)."""
    seed: int | None = None
    """Written at creation only (later writes omit it, and the store keeps the first)."""

    def __init__(
        self,
        room: str,
        game: str | None,
        players: int | None,
        options: dict[str, Any] | None = _FRESH,
        public: bool = True,
        state: str = "open",
        rev: int = 0,
        seats: tuple[SeatMeta, ...] = (),
        spectators: int = 0,
        spectator_delay: int | float = 0.0,
        spectator_chat: bool = True,
        paused: bool = False,
        replay_of: str | None = None,
        clock: dict[str, Any] | None = None,
        tokens: tuple[str, ...] = (),
        quick: bool = False,
        host: str = "",
        bot: str = "random",
        clock_state: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        """(Its own, compiled: the dataclass's generated one runs interpreted, about 6,000
        instructions at every seat change.)"""
        self.room = room
        self.game = game
        self.players = players
        self.options = {} if options is _FRESH else options
        self.public = public
        self.state = state
        self.rev = rev
        self.seats = seats
        self.spectators = spectators
        self.spectator_delay = spectator_delay
        self.spectator_chat = spectator_chat
        self.paused = paused
        self.replay_of = replay_of
        self.clock = clock
        self.tokens = tokens
        self.quick = quick
        self.host = host
        self.bot = bot
        self.clock_state = clock_state
        self.seed = seed

    @property
    def free_seats(self) -> int:
        return sum(1 for seat in self.seats if not seat.taken)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], room: str = "") -> RoomMeta:
        """The meta of a stored map (see the module doc: never raises); ``room`` when the map
        does not name it (a listing reads a few fields only)."""
        get = data.get
        raw_seats = get("seats")
        seats = (
            tuple(SeatMeta.from_json(i, s) for i, s in enumerate(raw_seats))
            if isinstance(raw_seats, list | tuple)
            else ()
        )
        raw_tokens = get("tokens")
        tokens = (
            tuple(t if isinstance(t, str) else "" for t in raw_tokens)
            if isinstance(raw_tokens, list | tuple)
            else ()
        )
        options = get("options", {})
        replay_of = get("replay_of")
        clock = get("clock")
        clock_state = get("clock_state")
        return cls(
            room=_text(get("room"), room),
            game=_optional_text(get("game")),
            players=_optional_int(get("players")),
            options=dict(options) if isinstance(options, Mapping) else None,
            public=bool(get("public", True)),
            state=_text(get("state"), "open"),
            rev=_optional_int(get("rev")) or 0,
            seats=seats,
            spectators=_optional_int(get("spectators")) or 0,
            spectator_delay=_number(get("spectator_delay")),
            spectator_chat=bool(get("spectator_chat", True)),
            paused=bool(get("paused", False)),
            replay_of=replay_of if isinstance(replay_of, str) else None,
            clock=dict(clock) if isinstance(clock, Mapping) else None,
            tokens=tokens,
            quick=bool(get("quick", False)),
            host=_text(get("host"), ""),
            bot=_text(get("bot"), "") or "random",
            clock_state=dict(clock_state) if isinstance(clock_state, Mapping) else None,
            seed=_optional_int(get("seed")),
        )

    def to_json(self) -> dict[str, Any]:
        """The stored map (the optional parts only when set)."""
        out: dict[str, Any] = {
            "room": self.room,
            "game": self.game,
            "players": self.players,
            "options": self.options,
            "public": self.public,
            "state": self.state,
            "rev": self.rev,
            "seats": [seat.to_json() for seat in self.seats],
            "spectators": self.spectators,
            "spectator_delay": self.spectator_delay,
            "spectator_chat": self.spectator_chat,
            "paused": self.paused,
        }
        if self.replay_of is not None:
            out["replay_of"] = self.replay_of
        if self.clock is not None:
            out["clock"] = self.clock
        out["tokens"] = list(self.tokens)
        out["quick"] = self.quick
        out["host"] = self.host
        out["bot"] = self.bot
        if self.clock_state is not None:
            out["clock_state"] = self.clock_state
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def replay_fields(
    data: Mapping[str, Any],
) -> tuple[str | None, int | None, dict[str, Any] | None, int | None]:
    """The game, players, options and seed of a stored map, each as
    :meth:`RoomMeta.from_json` reads it, without reading the rest (an archive needs only these
    four, at the end of every match)."""
    get = data.get
    options = get("options", {})
    return (
        _optional_text(get("game")),
        _optional_int(get("players")),
        dict(options) if isinstance(options, Mapping) else None,
        _optional_int(get("seed")),
    )


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) else default


def _optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> int | float:
    """A stored number as it was (an int stays one, so it is stored again the same), else 0."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return 0.0
