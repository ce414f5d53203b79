"""server.views: every frame turns the previous view into the current one, hash included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack
import pytest

import protocol.tree
import server.views as views_module
from games import registry
from games.base import JSON, Choice, Decision, Event, Game, Match
from games.rng import Rng
from protocol.codec import canonical
from protocol.hashing import view_hash
from protocol.patch import apply, diff
from server.views import Views


class _Scripted(Game[None]):
    """A stand-in engine whose views are whatever the test puts in ``shared`` and ``own``, and
    whose decision is ``next`` (a real :class:`Match` reads it again after :func:`_moved`)."""

    name = "scripted"
    title = "Scripted"
    min_players = 1
    max_players = 4

    def __init__(self) -> None:
        self.shared: dict[str, Any] = {}
        self.own: dict[str, Any] = {}
        self.next: Decision | None = Decision(0, "turn", [{"kind": "pass"}])

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> None:
        return None

    def decision(self, state: None) -> Decision | None:
        return self.next

    def apply(self, state: None, choice: Choice) -> list[Event]:
        return []

    def shared_view(self, state: None) -> dict[str, Any]:
        return self.shared

    def own_view(self, state: None, seat: int) -> dict[str, Any]:
        return self.own

    def result(self, state: None) -> None:
        return None

    def dump(self, state: None) -> dict[str, JSON]:
        return {}

    def load(self, data: Mapping[str, JSON]) -> None:
        return None

    def hidden_variant(self, state: None, viewer: int | None, rng: Rng) -> None:
        return None

    def describe(self, state: None, decision: Decision) -> list[dict[str, Any]]:
        return list(decision.choices)

    def prompt(self, state: None, decision: Decision) -> str:
        return "choose"


def _match(game: _Scripted) -> Match[None]:
    return Match(game, None)


def _moved(match: Match[None], decision: Decision) -> None:
    """The match moves on (a pass of the seat to move) to ``decision``."""
    game = match.game
    assert isinstance(game, _Scripted) and match.decision is not None
    seat = match.decision.seat
    game.next = decision
    match.push(seat, {"kind": "pass"})


def _check_frames(views: Views, docs: list[Any], frames: tuple[bytes, ...]) -> None:
    for seat, data in enumerate(frames):
        frame = msgpack.unpackb(data)
        docs[seat] = apply(docs[seat], frame["ops"])
        assert view_hash(docs[seat]) == frame["hash"]
        assert docs[seat] == views.full(seat)[0]
        # the joined and state frames' bytes: the same document, canonical, and its hash
        enc, digest = views.document(seat)
        assert msgpack.unpackb(enc) == docs[seat] and enc == canonical(docs[seat])
        assert digest == frame["hash"] == views.hash_for(seat)
    enc, digest = views.document(None)
    assert enc == canonical(views.full(None)[0]) and digest == views.hash_for(None)


def test_changes_the_plain_encoding_misses_in_python_are_still_sent() -> None:
    """Type changes Python calls equal, a list the engine mutates after handing it out, keys
    that come and go: the per-field cache must see every one of them."""
    game = _Scripted()
    held = [1, 2, 3]
    game.shared = {"n": 1, "held": held, "nested": {"a": [0.0]}, "gone": "x"}
    views = Views("r", _match(game), 2, {"clock": {"remaining_ms": [1, 2]}})
    docs = [views.full(s)[0] for s in range(2)]
    steps: list[dict[str, Any]] = [
        {"n": True, "held": held, "nested": {"a": [0.0]}, "gone": "x"},
        {"n": 1.0, "held": held, "nested": {"a": [-0.0]}},
        {"n": 1.0, "held": held, "nested": {"a": [-0.0]}, "new": {"b": 1}},
    ]
    for rev, shared in enumerate(steps, start=1):
        held.append(rev)  # mutated in place: the previous view must not change with it
        game.shared = shared
        revision = views.advance(rev, [], {"clock": {"remaining_ms": [1, 2 + rev]}})
        _check_frames(views, docs, revision.seat_frames)
        full = views.full(0)[0]
        assert full["shared"]["game"] == msgpack.unpackb(msgpack.packb(shared))
        assert full["clock"] == {"remaining_ms": [1, 2 + rev]}


def test_only_the_kept_fields_are_held_even_as_fields_come_and_go() -> None:
    """A field the game does not declare kept may be a list it mutates and hands out again: it
    is encoded at every revision, also once it (or another field) came or went."""
    game = _Scripted()
    game.kept_fields = frozenset({"k"})  # type: ignore[misc]
    held = [1]
    kept = {"a": 1}
    pad = "x" * 300  # (a shared part this big is tracked per field, its kept fields held)
    versions: list[dict[str, Any]] = [
        {"k": kept, "p": pad},
        {"k": kept, "m": held, "p": pad},
        {"k": kept, "m": held, "x": 1, "p": pad},
        {"k": kept, "m": held, "p": pad},
        {"m": held, "p": pad},
        {"k": kept, "m": held, "p": pad},
    ]
    game.shared = versions[0]
    views = Views("r", _match(game), 2)
    docs = [views.full(s)[0] for s in range(2)]
    for rev, shared in enumerate(versions[1:], start=1):
        held.append(rev)  # mutated in place and handed out again: must still be sent
        game.shared = dict(shared)
        _check_frames(views, docs, views.advance(rev, []).seat_frames)
        assert docs[0]["shared"]["game"] == msgpack.unpackb(msgpack.packb(shared))


@pytest.mark.parametrize("name", ["yspahan", "ishtar"])
def test_random_matches_patch_every_audience_exactly(name: str) -> None:
    game = registry.get(name)
    for seed in (1, 2):
        match = Match.new(game, 4, {}, seed)
        views = Views("r", match, 4)
        docs = [views.full(s)[0] for s in range(4)]
        chooser = Rng.from_seed(seed)
        rev = 0
        while (decision := match.decision) is not None and rev < 150:
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            rev += 1
            _check_frames(views, docs, views.advance(rev, events).seat_frames)


def _ops(frame: bytes) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = msgpack.unpackb(frame)["ops"]
    return ops


def test_a_list_that_grew_at_its_end_is_patched_with_adds_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ishtar's ``laid``: the old list's bytes start the new list's, so the new items are
    ``add``ed without decoding the old list; an item changed inside is not taken for growth.
    (Thirty items: a shared part big enough to be tracked field by field, not whole.)"""
    game = _Scripted()
    laid: list[Any] = [{"tile": f"t{i}", "at": [i, 0]} for i in range(30)]
    game.shared = {"laid": laid}
    views = Views("r", _match(game), 1)
    assert len(views.shared_enc) >= views_module._SHARED_WHOLE_BELOW
    docs = [views.full(0)[0]]
    game.shared = {"laid": [*laid, {"tile": "t30", "at": [30, 0]}]}
    decoded: list[bytes] = []
    unpack = protocol.tree.unpack
    monkeypatch.setattr(protocol.tree, "unpack", lambda data: decoded.append(data) or unpack(data))
    # Compiled (scripts/build-compiled in place), protocol.tree binds unpack at build time: the
    # decodes are watched in pure Python only (CI's run); the ops are checked either way.
    watched = (protocol.tree.__file__ or "").endswith(".py")
    revision = views.advance(1, [])
    assert decoded == []
    assert _ops(revision.seat_frames[0]) == [
        {"op": "add", "path": "/shared/game/laid/30", "value": {"tile": "t30", "at": [30, 0]}}
    ]
    _check_frames(views, docs, revision.seat_frames)
    changed = [{"tile": "t0", "at": [0, 1]}, *laid[1:], {"tile": "t30", "at": [30, 0]}, 3]
    game.shared = {"laid": changed}
    revision = views.advance(2, [])
    assert decoded or not watched  # not a prefix: the old list was decoded and diffed
    assert _ops(revision.seat_frames[0]) == [
        {"op": "replace", "path": "/shared/game/laid/0/at/1", "value": 1},
        {"op": "add", "path": "/shared/game/laid/31", "value": 3},
    ]
    _check_frames(views, docs, revision.seat_frames)


def test_choices_filled_and_emptied_are_one_replace_each() -> None:
    game = _Scripted()
    match = _match(game)
    views = Views("r", match, 2)
    docs = [views.full(s)[0] for s in range(2)]
    choices: list[Choice] = [{"kind": "pass", "n": n} for n in range(30)]
    _moved(match, Decision(1, "turn", choices))
    revision = views.advance(1, [])
    assert {"op": "replace", "path": "/own/choices", "value": choices} in _ops(
        revision.seat_frames[1]
    )
    _check_frames(views, docs, revision.seat_frames)
    _moved(match, Decision(0, "turn", [{"kind": "pass"}]))
    revision = views.advance(2, [])
    assert {"op": "replace", "path": "/own/choices", "value": []} in _ops(revision.seat_frames[1])
    _check_frames(views, docs, revision.seat_frames)


def test_a_change_of_choices_is_always_one_replace_of_the_whole_list() -> None:
    """SPEC section 3: ``own.choices`` is never diffed, not even where the size rule would keep
    single ops (a one-item list for another, a list that lost its last item); the other seat's
    own part and the shared part are diffed as before."""
    game = _Scripted()
    game.shared = {"rev": 0}
    match = _match(game)
    views = Views("r", match, 2)
    docs = [views.full(s)[0] for s in range(2)]
    steps: list[list[Choice]] = [
        [{"kind": "pass", "n": 0}],
        [{"kind": "pass", "n": 1}],
        [{"kind": "pass", "n": n} for n in range(5)],
        [{"kind": "pass", "n": n} for n in range(4)],
    ]
    for rev, choices in enumerate(steps, start=1):
        game.shared = {"rev": rev}
        _moved(match, Decision(0, "turn", choices))
        revision = views.advance(rev, [])
        own = [op for op in _ops(revision.seat_frames[0]) if op["path"].startswith("/own")]
        assert own == [{"op": "replace", "path": "/own/choices", "value": choices}]
        assert {"op": "replace", "path": "/shared/game/rev", "value": rev} in _ops(
            revision.seat_frames[0]
        )
        assert not [op for op in _ops(revision.seat_frames[1]) if op["path"].startswith("/own")]
        _check_frames(views, docs, revision.seat_frames)
    _moved(match, Decision(0, "turn", steps[-1]))  # the same choices again: nothing to send
    revision = views.advance(len(steps) + 1, [])
    assert not [op for op in _ops(revision.seat_frames[0]) if op["path"].startswith("/own")]
    _check_frames(views, docs, revision.seat_frames)


def test_a_small_shared_part_is_one_leaf_and_patched_exactly_as_it_grows_and_shrinks() -> None:
    """A shared part under ``_SHARED_WHOLE_BELOW`` bytes is tracked whole (the tiny game's):
    every revision's patch still rebuilds every audience's view and hash, across the revisions
    at which the part grows past the size and shrinks back below it."""
    game = _Scripted()
    game.shared = {"log": [], "turn": 0}
    views = Views("r", _match(game), 2)
    docs = [views.full(s)[0] for s in range(2)]
    watched = views.full(None)[0]
    leaves = deep = crossings = 0
    was_leaf = views.ensure().kids is None
    last_size = len(views.shared_enc)
    sizes = [*range(0, 40, 3), *range(40, 0, -7)]
    for rev, n in enumerate(sizes, 1):
        game.shared = {"log": [{"n": i, "text": "x" * (i % 5)} for i in range(n)], "turn": rev}
        revision = views.advance(rev, [])
        _check_frames(views, docs, revision.seat_frames)
        leaf = views.ensure().kids is None
        assert leaf == (last_size < views_module._SHARED_WHOLE_BELOW)  # (the last revision's)
        last_size = len(views.shared_enc)
        leaves, deep = leaves + leaf, deep + (not leaf)
        ops = _ops(revision.spectator_frame)
        new = views.full(None)[0]
        if leaf == was_leaf:  # the diff's own ops, whole or field by field
            assert ops == diff(watched, new)
        else:  # the one revision that changes how the part is tracked: replaced whole
            assert [op["path"] for op in ops] == ["/shared"]
            crossings += 1
        watched, was_leaf = new, leaf
    assert leaves >= 3 and deep >= 3 and crossings == 2
