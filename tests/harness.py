"""The harness every rules engine runs: seeded random playouts with the contract's checks.

:func:`check_playout` plays one seeded random match and, after every step, checks

- the leak rule: for every audience, a state whose hidden parts were re-dealt
  (:meth:`Game.hidden_variant`) gives a byte-identical view;
- the snapshot round trip: ``load(dump(s))`` dumps to the same bytes and gives the same views;
- the diff round trip of every audience's view, with :func:`protocol.patch.apply` and with the
  independent ``jsonpatch`` library, and the view hash of the patched document;
- events are plain data, and a seat's private event fields reach that seat only;
- :meth:`Game.seat_to_move` names the seat of the pending decision (None at the end);
- the game's own invariants (a callback).

At the end it replays the recorded choices from the seed and from a mid-game snapshot, and
checks the final state is byte-identical (determinism). :func:`play_random` is the cheap loop
for many games.

With ``undo`` (a probability), both loops take back a step (:meth:`Match.undo`) wherever the
seat to move may, that often, instead of choosing; the record holds :data:`UNDO` there. Every
undo must give back, byte for byte, the state before the step it took back, and the checks above
run on the state after it as after any step (the leak check included). The mid-game snapshot is
taken where no step is open to an undo (:attr:`Match.settled`), as the server takes its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonpatch  # type: ignore[import-untyped]
from msgpack import packb

from games.base import JSON, Game, Match, own_part, shared_part
from games.rng import Rng
from protocol.codec import Limits, canonical, check_value
from protocol.patch import apply, diff

Invariant = Callable[[Any], None]

UNDO = -1
"""In :attr:`Playout.choices`: the seat to move took back its last step there."""


@dataclass
class Playout:
    """What a random playout did: the choices (as indices, :data:`UNDO` for an undo) and how it
    ended."""

    seed: int
    players: int
    choices: list[int] = field(default_factory=list)
    match: Match[Any] | None = None

    @property
    def steps(self) -> int:
        return len(self.choices)

    @property
    def undos(self) -> int:
        return self.choices.count(UNDO)


class _Undoer:
    """Decides when a playout undoes, and checks each undo gives back the state before the
    step it took back (the dumps of the states an undo may return to, per open step)."""

    def __init__(self, game: Game[Any], seed: int, rate: float, leaks_of: int = 0) -> None:
        self.game = game
        self.rate = rate
        self.rng = Rng.from_seed(seed ^ 0x0D0)
        self.before: list[bytes] = []
        self.leaks_of = leaks_of
        """Players: run the leak and event checks on the state after every undo (0: no)."""

    def wants(self, match: Match[Any], seat: int) -> bool:
        if not self.rate or not match.can_undo(seat):
            return False
        return self.rng.below(1 << 20) < self.rate * (1 << 20)

    def step(self, match: Match[Any], seat: int, index: int) -> list[Any]:
        dumped = canonical(self.game.dump(match.state)) if self.rate else b""
        events = match.act(seat, index)
        if self.rate:
            if match.can_undo(seat):
                self.before.append(dumped)
            else:
                self.before.clear()
        return events

    def undo(self, match: Match[Any], seat: int) -> list[Any]:
        events = match.undo(seat)
        assert canonical(self.game.dump(match.state)) == self.before.pop(), (
            "the undo did not give back the state before the step"
        )
        if self.leaks_of:
            parts = _Parts(self.game, match.state, self.leaks_of)
            _check_leaks(self.game, match.state, parts, self.rng)
            _check_events(events, self.leaks_of)
        return events


def play_random(
    game: Game[Any],
    players: int,
    seed: int,
    options: Mapping[str, object] | None = None,
    *,
    max_steps: int = 100_000,
    on_step: Callable[[Match[Any]], None] | None = None,
    undo: float = 0.0,
    undo_leaks: bool = False,
) -> Playout:
    """Play one match choosing uniformly among the legal choices (chooser seeded by ``seed``),
    taking back a step with probability ``undo`` wherever one may be (module doc); with
    ``undo_leaks``, the leak check and the event checks run on the state after every undo."""
    match = Match.new(game, players, options or {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    undoer = _Undoer(game, seed, undo, players if undo_leaks else 0)
    out = Playout(seed, players, match=match)
    while (decision := match.decision) is not None:
        assert decision.choices, f"decision {decision.kind} has no legal choice"
        if len(out.choices) >= max_steps:
            raise AssertionError(f"no end after {max_steps} decisions (seed {seed})")
        if undoer.wants(match, decision.seat):
            undoer.undo(match, decision.seat)
            out.choices.append(UNDO)
        else:
            index = chooser.below(len(decision.choices))
            undoer.step(match, decision.seat, index)
            out.choices.append(index)
        if on_step is not None:
            on_step(match)
    return out


class _Parts:
    """The shared part and every seat's own part of a state's views (the audience views are
    ``{"shared": shared, "own": own[seat] or None}``, so checking the parts checks them all)."""

    def __init__(self, game: Game[Any], state: Any, players: int) -> None:
        self.shared = shared_part(game, state)
        self.own = [own_part(game, state, seat) for seat in range(players)]

    def assert_equal(self, other: _Parts, what: str) -> None:
        assert _equal(self.shared, other.shared), f"{what}: shared part differs"
        for seat, (a, b) in enumerate(zip(self.own, other.own, strict=True)):
            assert _equal(a, b), f"{what}: own part of seat {seat} differs"


def _equal(a: Any, b: Any) -> bool:
    """Equal as views: same canonical encoding (fast paths first)."""
    return a == b and (packb(a) == packb(b) or canonical(a) == canonical(b))


def check_playout(
    game: Game[Any],
    players: int,
    seed: int,
    options: Mapping[str, object] | None = None,
    *,
    invariants: Invariant | None = None,
    max_steps: int = 100_000,
    undo: float = 0.0,
) -> Playout:
    """One random match with every contract check after every step (see the module doc)."""
    match = Match.new(game, players, options or {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    leak_rng = Rng.from_seed(seed ^ 0x1EA4)
    undoer = _Undoer(game, seed, undo)
    out = Playout(seed, players, match=match)
    parts = _Parts(game, match.state, players)
    check_value({"shared": parts.shared, "own": parts.own}, _VIEW_LIMITS)
    snapshot_at = 0
    snapshot: dict[str, JSON] | None = None
    if invariants is not None:
        invariants(match.state)
    while (decision := match.decision) is not None:
        assert decision.choices, f"decision {decision.kind} has no legal choice"
        assert len(out.choices) < max_steps, f"no end after {max_steps} decisions (seed {seed})"
        assert game.seat_to_move(match.state) == decision.seat, "seat_to_move != decision.seat"
        _check_leaks(game, match.state, parts, leak_rng)
        if undoer.wants(match, decision.seat):
            events = undoer.undo(match, decision.seat)
            out.choices.append(UNDO)
        else:
            index = chooser.below(len(decision.choices))
            events = undoer.step(match, decision.seat, index)
            out.choices.append(index)
        _check_events(events, players)
        if invariants is not None:
            invariants(match.state)
        dumped = game.dump(match.state)
        restored = game.load(dumped)
        assert canonical(game.dump(restored)) == canonical(dumped), "snapshot round trip"
        new_parts = _Parts(game, match.state, players)
        _Parts(game, restored, players).assert_equal(new_parts, "view of the restored state")
        _check_diff(parts.shared, new_parts.shared)
        for old_own, new_own in zip(parts.own, new_parts.own, strict=True):
            _check_diff(old_own, new_own)
        parts = new_parts
        if snapshot is None and len(out.choices) >= 1 + (seed % 7) and match.settled:
            snapshot_at, snapshot = len(out.choices), dumped
    assert game.result(match.state) is not None, "no result at the end"
    assert game.seat_to_move(match.state) is None, "seat_to_move after the end"
    final = canonical(game.dump(match.state))
    again = replay(game, players, seed, options, out.choices)
    assert canonical(game.dump(again.state)) == final, "same seed and choices, another match"
    if snapshot is not None:
        resumed = Match(game, game.load(snapshot))
        _play(resumed, out.choices[snapshot_at:])
        assert canonical(game.dump(resumed.state)) == final, "restored snapshot diverged"
    return out


def replay(
    game: Game[Any],
    players: int,
    seed: int,
    options: Mapping[str, object] | None,
    choices: list[int],
) -> Match[Any]:
    match = Match.new(game, players, options or {}, seed)
    _play(match, choices)
    return match


def _play(match: Match[Any], choices: list[int]) -> None:
    for index in choices:
        decision = match.decision
        assert decision is not None, "match ended before its choices ran out"
        if index == UNDO:
            match.undo(decision.seat)
        else:
            match.act(decision.seat, index)


_VIEW_LIMITS = Limits(max_frame_bytes=1 << 30, max_depth=32, max_container=1 << 20, max_str=1 << 20)


def _check_leaks(game: Game[Any], state: Any, parts: _Parts, rng: Rng) -> None:
    """Re-deal what an audience may not see; what it is shown must not change.

    The spectators' variant re-deals every secret, so the shared part is checked against it;
    each seat's variant keeps that seat's secrets, so its own part is checked against it.
    """
    variant = game.hidden_variant(state, None, rng)
    assert _equal(shared_part(game, variant), parts.shared), (
        "audience None sees something hidden from it (shared part)"
    )
    for seat, own in enumerate(parts.own):
        variant = game.hidden_variant(state, seat, rng)
        assert _equal(own_part(game, variant, seat), own), (
            f"audience {seat} sees something hidden from it (own part)"
        )


def _check_events(events: list[Any], players: int) -> None:
    for event in events:
        for seat in range(players):
            check_value(event.project(seat), _VIEW_LIMITS)
            assert set(event.private) <= set(range(players)), "private part for no seat"
        public = event.project(None)
        check_value(public, _VIEW_LIMITS)
        for seat, extra in event.private.items():
            for other in range(players):
                if other != seat:
                    seen = event.project(other)
                    for key in extra:
                        assert key not in seen or key in event.data, (
                            f"seat {other} sees {key!r} meant for seat {seat}"
                        )


def _check_diff(old: dict[str, JSON], new: dict[str, JSON]) -> None:
    ops = diff(old, new)
    if not ops:
        assert _equal(old, new), "no operations between different views"
        return
    ours = apply(old, ops)
    assert canonical(ours) == canonical(new), "apply(old, diff(old, new)) != new"
    theirs = jsonpatch.apply_patch(old, ops)
    assert theirs == new, "jsonpatch disagrees with our diff"
