"""The game contract every rules engine implements, and the checked wrapper around it.

A rules engine is a :class:`Game`: a stateless object whose methods take a mutable game state
``S``. The engine is pure: no I/O, no clock, no global random state; randomness comes from the
:class:`~games.rng.Rng` stored in the state, so the same seed and the same choices give the same
match byte for byte, and a snapshot (``dump``) restores the generator too.

A turn is a sequence of small decisions. At any moment exactly one seat must decide (or nobody,
when the match is over): :meth:`Game.decision` names that seat, the kind of decision and its
legal choices. A choice is a small map, ``{"kind": ..., <arguments>}``, and the legal list is
in a stable order so that clients may answer with an index, or with the map itself (its values
of the same types: ``true``, ``1`` and ``1.0`` are three different answers). Decisions that
belong to another player in the middle of someone's turn are ordinary decisions for that
player's seat.

:meth:`Game.apply` is the trusted path: it receives a choice that :class:`Match` has already
checked (game not over, right seat, choice among the legal ones) and mutates the state. Untrusted
input goes through :meth:`Match.act`, which raises a typed :mod:`games.errors` error and leaves
the state untouched.

Views are plain data (maps with string keys, lists, ints, strings, bools, None; never floats:
JavaScript cannot tell ``300.0`` from ``300``, so a float would break a browser's view hash).
Each audience's view is split in two parts so the server can diff and encode the common part once
per revision: a *shared* part, identical for every audience (spectators included), and each
seat's *own* part (its secrets, and its legal choices when it must decide). Nothing hidden from
an audience may appear in what it is sent: not other seats' secrets, not the order of face-down
piles and decks, never the generator state.

Views explain themselves (DESIGN "Views explain themselves"): every choice in ``own.choices``
carries a ``label`` (what it does, in game terms) and may carry ``effects`` (what it would
change, public information only), the decision in ``shared.turn`` a ``prompt``, every event a
``text`` written for the audience that receives it. The engine's own choice lists stay bare (the
legal maps the log stores and the engine applies): :meth:`Game.describe`, :meth:`Game.prompt` and
:meth:`Game.narrate` add the texts, and :meth:`Match.resolve` ignores ``label`` and ``effects``
when it matches a choice map (:data:`DESCRIPTIVE`), so a client may send a listed map back as it
received it or bare. In texts seat ``s`` is named ``P{s + 1}`` (:func:`seat_name`): what a
player counts at the table counts from 1 (Ishtar's piles too); names and coordinates are written
as the view writes them.

Undo (issue 19; Board Game Arena's policy): a seat may take back its own steps of the current
turn, one by one, up to the last thing that cannot be taken back. The barrier is derived, not
declared per decision: :meth:`Match.push` makes a step final, and every step before it, when it
used the generator (:meth:`Game.generator`'s state moved: dice rolled, cards shuffled),
revealed something hidden (:meth:`Game.revealed`: an event with a private part, a card drawn,
or one of the game's :attr:`Game.revealing` kinds, a tile turned face up), or ended the turn
(:meth:`Game.turn_count` moved), and when another seat decides. Only the seat to move may undo.
:meth:`Match.undo` rebuilds the position before the seat's last open step from a copy taken at
the start of a turn (``dump``; of this turn or of one a few turns back, see :class:`_Turn`) and
every other choice since, so the state after an undo equals, byte for byte, the state before
the undone step, and nobody learns anything: every step that is taken back showed only what its
public events told everyone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar, cast

from games.errors import (
    GameOverError,
    IllegalChoice,
    MalformedChoice,
    NotYourTurnError,
    OptionsError,
    UndoRefused,
)
from games.rng import NATIVE, Rng

try:  # (read by mypyc at build time; a no-op where mypy_extensions is not installed)
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Any:  # type: ignore[misc]
        return lambda x: x


JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""What views, choices, events and snapshots are made of (msgpack and JSON both carry it)."""

Choice: TypeAlias = dict[str, JSON]
"""A legal choice: ``{"kind": str, ...arguments}``."""

S = TypeVar("S")

DESCRIPTIVE: Final[frozenset[str]] = frozenset({"label", "effects"})
"""Keys of a listed choice that describe it and are not part of it (:meth:`Match.resolve`)."""


def bare(choice: Mapping[str, Any]) -> Choice:
    """A listed choice without its descriptions (:data:`DESCRIPTIVE`): the map the engine lists."""
    return {k: v for k, v in choice.items() if k not in DESCRIPTIVE}


def seat_name(seat: int) -> str:
    """How texts name a seat: ``P1`` for seat 0 (players count from 1 at the table)."""
    return f"P{seat + 1}"


def words(kind: str) -> str:
    """``end_turn`` -> ``end turn``: a kind in words, for the generic texts only."""
    return kind.replace("_", " ")


_TEXTS: Final[dict[tuple[object, ...], str]] = {}
"""The generic labels and texts made so far, by :func:`_text_key`: a game without a labels
module labels the same few choices and events again and again (the deciding seat's choices at
every revision), and a text costs a few thousand instructions to format, a look-up a few
hundred."""
_TEXTS_MAX: Final = 4096
"""Past this many, the others are formatted each time (the memo never grows without bound)."""


def _text_key(mark: str, mapping: Mapping[str, JSON]) -> tuple[object, ...] | None:
    """The memo key of a map's text: its keys and values in order, when every value is a str,
    an int or None of exactly those types (two such maps equal item by item read the same; a
    bool, a float or a container gives None: not memoized; so does a map that is not a dict).

    Where built, :data:`_KEY` (``games._gamesc.text_key``) makes the same tuple at its final
    size, in a third of the instructions (a key per label and per text, three an action of a
    game without a labels module)."""
    if type(mapping) is not dict:
        return None
    items = cast(dict[str, JSON], mapping)  # (typed: compiled, the dict's own loop)
    parts: list[object] = [mark]
    for key, value in items.items():
        kind = type(value)
        if kind is not int and kind is not str and value is not None:
            return None
        parts.append(key)
        parts.append(value)
    return tuple(parts)


_KEY: Final[Callable[[str, Mapping[str, JSON]], tuple[object, ...] | None]] = (
    _text_key if NATIVE is None else NATIVE.text_key
)
""":func:`_text_key`, in C where built (``games/_gamesc.c``)."""


def _remember(key: tuple[object, ...] | None, text: str) -> str:
    if key is not None and len(_TEXTS) < _TEXTS_MAX:
        _TEXTS[key] = text
    return text


def generic_label(choice: Mapping[str, JSON]) -> str:
    """``play (card 4)``: the kind and its arguments in words, for games without a labels module
    (memoized, :data:`_TEXTS`)."""
    key = _KEY("label", choice)
    known = None if key is None else _TEXTS.get(key)
    return known if known is not None else _remember(key, _label(choice))


def _label(choice: Mapping[str, JSON]) -> str:
    kind: JSON = "choice"
    args: list[str] = []
    for name, value in choice.items():
        if name == "kind":
            kind = value
        else:
            args.append(f"{words(name)} {value}")
    said = words(str(kind))
    return f"{said} ({', '.join(args)})" if args else said


def generic_text(event: Mapping[str, JSON]) -> str:
    """``P1: drew (card 3)``: an event in words, for games without a labels module (memoized,
    :data:`_TEXTS`)."""
    key = _KEY("text", event)
    known = None if key is None else _TEXTS.get(key)
    return known if known is not None else _remember(key, _text(event))


def _text(event: Mapping[str, JSON]) -> str:
    kind: JSON = "event"
    seat: JSON = None
    args: list[str] = []
    for name, value in event.items():
        if name == "kind":
            kind = value
        elif name == "seat":
            seat = value
        elif name != "text":
            args.append(f"{words(name)} {value}")
    who = f"{seat_name(seat)}: " if isinstance(seat, int) and not isinstance(seat, bool) else ""
    said = words(str(kind))
    return who + (f"{said} ({', '.join(args)})" if args else said)


@dataclass(slots=True, init=False)
class Decision:
    """Who must decide now, what kind of decision it is, and the legal choices in order.

    ``choices`` is a sequence, not always a list: an engine may make each map when it is first
    asked for (Ishtar's position decisions, :class:`games.ishtar.turn.Positions`), so a reader
    indexes or iterates it and does not count on list methods.

    Never changed once made (nor :class:`Event`): not frozen dataclasses all the same, whose
    generated ``__init__`` is interpreted and sets each field through ``object.__setattr__``
    (about 490 ns an event, against 120 for this compiled one; one decision and an event or
    more per move)."""

    seat: int
    kind: str
    choices: Sequence[Choice]

    def __init__(self, seat: int, kind: str, choices: Sequence[Choice]) -> None:
        self.seat, self.kind, self.choices = seat, kind, choices


@dataclass(slots=True, init=False)
class Event:
    """Something that happened, for logs and animations, projected per audience.

    ``data`` is seen by everyone; ``private`` adds fields for one seat only (for example the card
    a player drew: everyone sees that a card was drawn, only the drawer sees which). Never
    changed once narrated (see :class:`Decision` for why it is not frozen).
    """

    kind: str
    data: Mapping[str, JSON]
    private: Mapping[int, Mapping[str, JSON]]

    def __init__(
        self,
        kind: str,
        data: Mapping[str, JSON] | None = None,
        private: Mapping[int, Mapping[str, JSON]] | None = None,
    ) -> None:
        self.kind = kind
        self.data = {} if data is None else data
        self.private = {} if private is None else private

    def project(self, seat: int | None) -> dict[str, JSON]:
        """The event as ``seat`` sees it (``None``: a spectator)."""
        out: dict[str, JSON] = {"kind": self.kind}
        out.update(self.data)
        if seat is not None:
            extra = self.private.get(seat)
            if extra:
                out.update(extra)
        return out


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a match: score and per-category breakdown per seat, the winners (ties share)."""

    scores: tuple[int, ...]
    winners: tuple[int, ...]
    breakdown: tuple[Mapping[str, int], ...]
    turns: int

    def to_json(self) -> dict[str, JSON]:
        return {
            "scores": list(self.scores),
            "winners": list(self.winners),
            "breakdown": [dict(b) for b in self.breakdown],
            "turns": self.turns,
        }


@dataclass(frozen=True, slots=True)
class View:
    """One audience's view: the part every audience shares and its own part (None: spectator)."""

    shared: dict[str, JSON]
    own: dict[str, JSON] | None

    def to_json(self) -> dict[str, JSON]:
        return {"shared": self.shared, "own": self.own}


@mypyc_attr(allow_interpreted_subclasses=True)  # (compiled, the engines subclass it)
class Game(ABC, Generic[S]):
    """A rules engine. Stateless: every method takes the state it works on."""

    name: ClassVar[str]
    """Registry name, lower case (``"ishtar"``)."""
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]

    def check_options(self, players: int, options: Mapping[str, object]) -> dict[str, JSON]:
        """Validate untrusted room options and return them normalised (defaults filled in).

        Raises :class:`OptionsError` naming what is wrong. The default accepts no options.
        """
        if not self.min_players <= players <= self.max_players:
            raise OptionsError(
                f"{self.title} is for {self.min_players} to {self.max_players} players, "
                f"not {players}"
            )
        if options:
            raise OptionsError(f"unknown options: {', '.join(sorted(map(str, options)))}")
        return {}

    @abstractmethod
    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> S:
        """A new match. ``options`` come from :meth:`check_options`."""

    @abstractmethod
    def decision(self, state: S) -> Decision | None:
        """The pending decision, or None when the match is over."""

    @abstractmethod
    def apply(self, state: S, choice: Choice) -> list[Event]:
        """Apply a legal choice of the pending decision (trusted), mutating ``state``."""

    @abstractmethod
    def shared_view(self, state: S) -> dict[str, JSON]:
        """What every audience sees. At the end it reveals everything and holds the breakdown."""

    @abstractmethod
    def own_view(self, state: S, seat: int) -> dict[str, JSON]:
        """What only ``seat`` sees (its hand, its face-down cards...)."""

    @abstractmethod
    def result(self, state: S) -> Result | None:
        """Scores and winners once the match is over, else None."""

    @abstractmethod
    def dump(self, state: S) -> dict[str, JSON]:
        """The whole state as plain data, generator included: ``load(dump(s))`` equals ``s``."""

    @abstractmethod
    def load(self, data: Mapping[str, JSON]) -> S:
        """Rebuild a state from :meth:`dump` output; raise SnapshotError if it is not one."""

    @abstractmethod
    def hidden_variant(self, state: S, viewer: int | None, rng: Rng) -> S:
        """A copy of ``state`` with everything ``viewer`` may not see re-dealt at random.

        Other seats' secrets, the order of face-down piles and decks, and the generator state
        change; everything the viewer may see stays. Used by the leak check: the viewer's view
        must be identical for both states.
        """

    def seat_to_move(self, state: S) -> int | None:
        """The seat that must decide now (None: the match is over).

        Used where the legal choices are not needed (replaying a stored log through the trusted
        :meth:`apply`); engines whose legal choices are costly to list override it.
        """
        decision = self.decision(state)
        return None if decision is None else decision.seat

    derived_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Per choice kind, the fields an answered map may leave out (see :func:`answers`).

    A derived field repeats what the other fields already decide, for drawing (Ishtar: the
    ``rotations`` of a position, the ``cells`` of a rotation); when it is sent it must be exact.
    """

    kept_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields of :meth:`shared_view` that the engine hands out as the very same object until
    they change and that nobody mutates once handed out (Ishtar's terrain and what it keeps on
    the vegetation, Yspahan's city). The server keeps the last value of each between revisions
    (:mod:`server.views`): one that is the same object is not encoded again, and the diff of one
    that changed starts from the kept value instead of decoding it, skipping by identity the
    parts the engine reused in the new value (:func:`memo_entries` reuses a list's unchanged
    entries). A test per engine checks, on seeded playouts, that a handed-out value of these
    fields never changes afterwards.
    """

    def why_illegal(self, state: S, choice: Choice) -> str | None:
        """Optionally explain why a well-formed choice is not legal now, for the error message."""
        return None

    # The undo barrier (module doc "Undo"). The defaults are safe: a game that does not name its
    # generator has no undo at all.

    revealing: ClassVar[frozenset[str]] = frozenset()
    """Kinds of public events that show what was hidden (Ishtar's ``tile_revealed``: a pile's
    new top turned face up). Events with a private part are draws and need not be listed."""

    def generator(self, state: S) -> Rng | None:
        """The state's generator, so that :class:`Match` sees whether a step used it; None (the
        default): every step is a barrier and nothing can be undone."""
        return None

    def turn_count(self, state: S) -> int:
        """Turns completed so far: a step that moves it ended a turn and cannot be taken back."""
        return 0

    def revealed(self, events: Sequence[Event]) -> str | None:
        """Why the raw events of one step cannot be taken back (a draw, a reveal), or None."""
        for event in events:
            if event.private:
                return f"drew what only one seat sees ({words(event.kind)})"
        for event in events:
            if event.kind in self.revealing:
                return f"revealed what was hidden ({words(event.kind)})"
        return None

    # Texts and static data (DESIGN "Views explain themselves"). The defaults are generic; the
    # real games override them from their labels module.

    def describe(self, state: S, decision: Decision) -> list[Choice]:
        """The legal choices as the deciding seat is shown them: each a copy of the legal map
        with a ``label`` (and, where the game gives them, ``effects``), in the same order."""
        return [{**c, "label": generic_label(c)} for c in decision.choices]

    def prompt(self, state: S, decision: Decision) -> str:
        """What the deciding seat is asked, addressed to it (``shared.turn.prompt``)."""
        return f"choose: {words(decision.kind)}"

    def narrate(self, state: S, events: list[Event]) -> list[Event]:
        """``events`` with a ``text`` for every audience: in ``data`` for everyone, and in
        ``private`` for a seat that sees more (the drawer reads which card it drew). ``state``
        is the state after the events."""
        out = []
        for e in events:
            seen = {"kind": e.kind, **e.data}  # (e.project(None), without the call)
            private: dict[int, Mapping[str, JSON]] | None = None
            if e.private:  # (most events have no private part: no comprehension to run)
                private = {
                    seat: {**extra, "text": generic_text({**seen, **extra})}
                    for seat, extra in e.private.items()
                }
            out.append(Event(e.kind, {**e.data, "text": generic_text(seen)}, private))
        return out

    def static_data(self) -> dict[str, JSON]:
        """Everything static a client needs to draw and explain the game (``GET /games/<name>``):
        components, boards, costs, texts. Never changes while the server runs."""
        return {"name": self.name, "title": self.title}

    def options_schema(self) -> dict[str, JSON]:
        """A JSON Schema (draft 2020-12) of the ``create.options`` this game accepts."""
        return {"type": "object", "properties": {}, "additionalProperties": False}


def answers(legal: Choice, answer: Mapping[str, object], optional: Sequence[str] = ()) -> bool:
    """Whether the map ``answer`` names the legal choice ``legal``.

    Every field of ``legal`` must be in ``answer`` with a :func:`same` value, except the
    ``optional`` (derived) ones, which may be left out; ``answer`` may have no other field.
    """
    found = 0
    for key, value in legal.items():
        if key in answer:
            if not same(value, answer[key]):
                return False
            found += 1
        elif key not in optional:
            return False
    return found == len(answer)


def same(a: object, b: object) -> bool:
    """Equal and of the same type at every depth: ``True``, ``1`` and ``1.0`` differ (Python's
    ``==`` calls them equal), as they do on the wire and in JavaScript."""
    if isinstance(a, dict):
        return (
            isinstance(b, Mapping)
            and len(a) == len(b)
            and all(key in b and same(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def audience_view(game: Game[S], state: S, seat: int | None) -> View:
    """The view of ``seat`` (None: spectators) with the contract's common fields.

    ``shared``: ``{"game": <game shared view>, "turn": {"seat", "decision", "prompt"} | None,
    "result": <Result.to_json()> | None}``; ``own`` (seats only): ``{"seat", "private": <game own
    view>, "choices": <legal choices, described, if this seat must decide, else []>}``.
    """
    return View(shared_part(game, state), None if seat is None else own_part(game, state, seat))


def memo_entries(
    memo: dict[str, tuple[object, object]],
    name: str,
    key: tuple[Any, ...],
    make: Callable[[int], JSON],
) -> list[JSON]:
    """A list field of a view that the engine keeps (:attr:`Game.kept_fields`), one entry per
    item of ``key``, with ``memo[name]`` holding it and the key it was made for: the same list
    while ``key`` is the same; else a new one in which every entry whose item of ``key`` did not
    change is the very same object as before (the server's diff skips it by identity, and it is
    not made again) and the others are ``make(i)``. Nobody may change what it hands out."""
    found = memo.get(name)
    if found is not None and found[0] == key:
        kept = found[1]
        assert isinstance(kept, list)
        return kept
    old_key, old = found if found is not None else ((), [])
    assert isinstance(old_key, tuple) and isinstance(old, list)
    entries: list[JSON] = [
        old[i] if i < len(old_key) and old_key[i] == item else make(i) for i, item in enumerate(key)
    ]
    memo[name] = (key, entries)
    return entries


def shared_part(game: Game[S], state: S, decision: Decision | None = None) -> dict[str, JSON]:
    """The part of every audience's view that they share (:func:`audience_view`). The result
    is asked for only when no seat must decide: a match with a pending decision is not over,
    and a game's :meth:`Game.result` is None until it is (the contract; ``result`` costs the
    tiny game more than the rest of this part)."""
    if decision is None:
        decision = game.decision(state)
    result = None if decision is not None else game.result(state)
    return {
        "game": game.shared_view(state),
        "turn": None
        if decision is None
        else {
            "seat": decision.seat,
            "decision": decision.kind,
            "prompt": game.prompt(state, decision),
        },
        "result": None if result is None else result.to_json(),
    }


def own_part(
    game: Game[S], state: S, seat: int, decision: Decision | None = None
) -> dict[str, JSON]:
    if decision is None:
        decision = game.decision(state)
    choices: list[JSON] = []
    if decision is not None and decision.seat == seat:
        choices = list(game.describe(state, decision))
    return {"seat": seat, "private": game.own_view(state, seat), "choices": choices}


_REBASE: Final = 32
"""Steps after which the next turn takes a new copy of the state (:class:`_Turn`): what an undo
replays at most, besides the steps of its own turn."""


@dataclass(slots=True)
class _Turn:
    """The steps since a copy of the state, to take the open ones back: a copy of the state
    before the first step of a turn (``base``), each step since with its seat, choice and the
    public texts of its events, ``turns`` (:meth:`Game.turn_count` in the current turn),
    ``first`` (the index of the current turn's first step) and ``open``: the steps from this
    index on can be undone (every earlier one is final: a barrier, another seat's, or one of an
    earlier turn).

    One copy every few turns, not one per turn nor per step: an undo loads it and replays every
    other step since through the trusted ``apply``, which gives the same bytes (the generator
    is in the copy). A turn that starts with :data:`_REBASE` steps or more held takes a new
    copy, so an undo replays a bounded number of steps (the copy was the bookkeeping's main
    cost per turn: a ``dump`` made and freed)."""

    base: dict[str, JSON]
    turns: int
    steps: list[tuple[int, Choice, list[str]]] = field(default_factory=list)
    open: int = 0
    first: int = 0


class Match(Generic[S]):
    """A game and its state, with every untrusted choice checked before it reaches the engine."""

    __slots__ = ("_barrier", "_decision", "_known", "_turn", "game", "state")

    def __init__(self, game: Game[S], state: S) -> None:
        self.game = game
        self.state = state
        self._decision: Decision | None = None
        self._known = False  # the pending decision is read when first asked for
        self._turn: _Turn | None = None
        self._barrier = "nothing to take back yet"  # why the last final step is final

    @classmethod
    def new(cls, game: Game[S], players: int, options: Mapping[str, object], seed: int) -> Match[S]:
        checked = game.check_options(players, options)
        return cls(game, game.setup(players, checked, seed))

    @property
    def decision(self) -> Decision | None:
        if not self._known:
            self._decision = self.game.decision(self.state)
            self._known = True
        return self._decision

    @property
    def to_move(self) -> int | None:
        """The seat that must decide now (None: over), without listing the legal choices."""
        if self._known:
            return None if self._decision is None else self._decision.seat
        return self.game.seat_to_move(self.state)

    @property
    def over(self) -> bool:
        return self.to_move is None

    def resolve(self, seat: int, choice: object) -> Choice:
        """Turn an untrusted answer (an index or a choice map) into a legal choice, or raise.

        A map names a legal choice by :func:`answers`: the same fields with values of the same
        types (``True`` is not ``1``), derived fields (:attr:`Game.derived_fields`) optional, and
        its descriptions (``label``, ``effects``: :data:`DESCRIPTIVE`) ignored.
        """
        decision = self.decision
        if decision is None:
            raise GameOverError("the match is over")
        if seat != decision.seat:
            raise NotYourTurnError(
                f"seat {decision.seat} must decide ({decision.kind}), not {seat}"
            )
        if isinstance(choice, bool):
            raise MalformedChoice("a choice is an index into the legal list or a choice map")
        if isinstance(choice, int):
            if 0 <= choice < len(decision.choices):
                return decision.choices[choice]
            raise IllegalChoice(
                f"choice index {choice} out of range: {len(decision.choices)} legal choices"
            )
        if not isinstance(choice, Mapping) or not isinstance(choice.get("kind"), str):
            raise MalformedChoice("a choice is an index into the legal list or a choice map")
        if DESCRIPTIVE.intersection(choice):
            choice = bare(choice)
        derived = self.game.derived_fields.get(str(choice["kind"]), ())
        for legal in decision.choices:
            if answers(legal, choice, derived):
                return legal
        if any(legal == choice for legal in decision.choices):
            raise IllegalChoice(
                "true, 1 and 1.0 are different answers: send every number and boolean"
                " with the type of the listed choice"
            )
        try:
            why = self.game.why_illegal(self.state, dict(choice))
        except Exception:  # an explanation must never turn a refusal into a crash
            why = None
        if why:
            raise IllegalChoice(why)
        if all(c.get("kind") != choice["kind"] for c in decision.choices):
            raise IllegalChoice(
                f"a {choice['kind']!r} choice is not possible now ({decision.kind})"
            )
        raise IllegalChoice(f"not a legal {decision.kind} choice now")

    def act(self, seat: int, choice: object) -> list[Event]:
        """Check and apply one choice of ``seat``; on error the state is unchanged.

        :meth:`resolve` then :meth:`push`: a caller that must do something between the two
        (the server stores the choice before applying it) calls them apart, and legality is
        decided once.
        """
        return self.push(seat, self.resolve(seat, choice))

    def push(self, seat: int, legal: Choice) -> list[Event]:
        """Apply a choice already known to be legal, the trusted half of :meth:`act` (as
        python-chess's ``push`` beside ``push_uci``).

        ``legal`` comes from :meth:`resolve` in this very position, or from a log that holds
        only such choices (a room's stored log, an archive). It is not checked again; only the
        seat is, which costs nothing after :meth:`resolve` (the decision is known) and one
        :meth:`Game.seat_to_move` otherwise: a choice pushed for the wrong seat or after the
        end raises and changes nothing.

        It also keeps the steps for :meth:`undo` (module doc "Undo"): a ``dump`` before the
        first step of a turn every few turns (:class:`_Turn`), then each step's seat, choice and
        public texts, and where the last barrier stands (what it adds per push:
        ``bench/undo.py``, figures in BENCHMARKS.md).
        """
        to_move = self.to_move
        if to_move != seat:
            if to_move is None:
                raise GameOverError("the match is over")
            raise NotYourTurnError(f"seat {to_move} must decide, not {seat}")
        game, state = self.game, self.state
        self._known = False
        rng = game.generator(state)
        if rng is None:
            self._barrier = ""  # (no undo at all: why_no_undo names the game, if ever asked)
            return game.narrate(state, game.apply(state, legal))
        drawn, turns = rng.state, game.turn_count(state)
        record = self._turn
        if record is None or record.turns != turns:
            if record is None or len(record.steps) >= _REBASE:
                record = self._turn = _Turn(game.dump(state), turns)
            else:  # (the last turn's steps stay, final, to be replayed from the same copy)
                record.turns = turns
                record.first = record.open = len(record.steps)
        steps = record.steps
        if steps and steps[-1][0] != seat:
            record.open = len(steps)
        raw = game.apply(state, legal)
        events = game.narrate(state, raw)
        steps.append((seat, legal, [str(e.data.get("text", words(e.kind))) for e in events]))
        why = game.revealed(raw)
        if why is None and rng.state != drawn:
            why = "used chance (" + ", ".join(words(e.kind) for e in raw) + ")"
        if why is None and game.turn_count(state) != turns:
            why = "ended the turn"
        if why is not None:
            record.open = len(steps)
            self._barrier = f"your last step {why}: it cannot be taken back"
        return events

    def why_no_undo(self, seat: int) -> str | None:
        """Why ``seat`` may not undo now (the reason :meth:`undo` refuses with), or None."""
        to_move = self.to_move
        if to_move is None:
            return "the match is over"
        if to_move != seat:
            return "only the seat to move may take back a step"
        record = self._turn
        if record is None:
            return self._barrier or f"{self.game.title} has no undo"
        if len(record.steps) == record.first:
            return "nothing left to take back this turn"
        if record.steps[-1][0] != seat:
            return "another seat decided after your last step"
        if record.open == len(record.steps):
            return self._barrier
        return None

    def can_undo(self, seat: int) -> bool:
        """Whether :meth:`undo` would take back a step of ``seat`` now."""
        record = self._turn
        return (
            record is not None
            and record.open < len(record.steps)
            and record.steps[-1][0] == seat
            and self.to_move == seat
        )

    @property
    def settled(self) -> bool:
        """No step is open to an undo: the state alone (``dump``) says everything a match
        rebuilt from it needs, so a snapshot may be taken here. A snapshot taken elsewhere
        would lose the turn's copy, and an undo logged after it could not be replayed."""
        record = self._turn
        return record is None or record.open == len(record.steps)

    def undo(self, seat: int) -> list[Event]:
        """Take back ``seat``'s last undoable step, or raise :class:`UndoRefused` and change
        nothing.

        The position is rebuilt from the copy and the other steps since (the engine's trusted
        ``apply`` replays them exactly). The one event, ``undone``, names the seat, the
        decision it is back at and the texts of the events taken back (public: a step that
        showed anyone more than its public events is a barrier), for every audience alike.
        """
        why = self.why_no_undo(seat)
        if why is not None:
            raise UndoRefused(why)
        record = self._turn
        assert record is not None
        game = self.game
        state = game.load(record.base)
        _, _, texts = record.steps.pop()
        for _, choice, _ in record.steps:
            game.apply(state, choice)
        self.state = state
        self._known = False
        decision = self.decision
        assert decision is not None and decision.seat == seat
        taken: list[JSON] = list(texts)
        data: dict[str, JSON] = {
            "seat": seat,
            "decision": decision.kind,
            "taken_back": taken,
            "text": f"{seat_name(seat)} took back: " + "; ".join(texts),
        }
        return [Event("undone", data)]

    def view(self, seat: int | None) -> View:
        decision = self.decision
        shared = shared_part(self.game, self.state, decision)
        own = None if seat is None else own_part(self.game, self.state, seat, decision)
        return View(shared, own)

    def result(self) -> Result | None:
        return self.game.result(self.state)
