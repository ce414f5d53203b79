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
from tests.games.tiny import TINY


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
    is encoded at every revision, also once it (or another field) came or went; only the kept
    fields the game has now are held (one that went is dropped, one that came back held)."""
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
        # exactly the kept fields the game has now, as the very objects it handed out
        held_now = views._kept.get("game", {})
        assert held_now.keys() == ({"k"} & shared.keys())
        assert all(held_now[key] is shared[key] for key in held_now)


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


class _Seated(_Scripted):
    """A scripted engine whose seats each have their own private view (``owns[seat]``)."""

    def __init__(self, players: int) -> None:
        super().__init__()
        self.owns: list[Any] = [{"hand": []} for _ in range(players)]

    def own_view(self, state: None, seat: int) -> Any:
        return self.owns[seat]


def test_every_seat_own_part_changing_in_any_way_is_patched_exactly() -> None:
    """Every seat's private part and the deciding seat's choices are encoded together, as one
    array read seat by seat (``Views._advance_own``): any seat's private part may change at any
    revision, deciding or not, to a value of another size or type, one whose bytes start with
    the last value's or another seat's, or back to the same; every frame must still rebuild
    every seat's view and hash, and a seat whose own part did not change gets no own ops."""
    players = 4
    game = _Seated(players)
    match = _match(game)
    views = Views("r", match, players)
    docs = [views.full(s)[0] for s in range(players)]
    rng = Rng.from_seed(7)
    values: list[Any] = [
        {"hand": []},
        {"hand": [1]},
        {"hand": [1, 2]},
        {"hand": [1, 2], "x": "s" * 40},
        {"hand": list(range(20))},
        {"b": 1, "a": {"z": None, "y": [True, False, 1.5]}},
        {"": [1]},
        {"": [[1]]},
        {"": 1},
        {"hand": "x" * 300},
        {},
        {"hand": [2**40, -(2**40), -1, 200, -200, 70000]},
    ]
    for rev in range(1, 120):
        before = [canonical(game.owns[s]) for s in range(players)]
        for seat in range(players):
            if rng.below(3) == 0:
                game.owns[seat] = values[rng.below(len(values))]
        seat = rng.below(players + 1)  # (players: the match is over, nobody decides)
        choices: list[Choice] = [{"kind": "pass", "n": n} for n in range(rng.below(4))]
        chosen = None if seat == players else Decision(seat, "turn", choices)
        owns = [views.full(s)[0]["own"] for s in range(players)]
        old = [own["choices"] for own in owns]
        match.game.next = chosen  # type: ignore[attr-defined]
        match._known = False
        revision = views.advance(rev, [], None, [2, 1, 2, 1])
        _check_frames_rules(views, docs, revision.seat_frames, [2, 1, 2, 1])
        for s in range(players):
            mine = [op for op in _ops(revision.seat_frames[s]) if op["path"].startswith("/own")]
            now = views.full(s)[0]["own"]
            # the ops of the trees of the own part, one node per entry (made without them)
            work = protocol.tree.Work()
            last = protocol.tree.track(None, owns[s], views_module._OWN_DEPTH, work)
            new = protocol.tree.track(last, now, views_module._OWN_DEPTH, work)
            whole = views_module._WHOLE
            assert mine == protocol.tree.diff_trees(last, new, "/own", work, whole=whole)
            unchanged = before[s] == canonical(game.owns[s]) and old[s] == now["choices"]
            assert (mine == []) == unchanged
            assert now["private"] == msgpack.unpackb(msgpack.packb(game.owns[s]))


def _check_frames_rules(
    views: Views, docs: list[Any], frames: tuple[bytes, ...], rules: list[int]
) -> None:
    for seat, data in enumerate(frames):
        frame = msgpack.unpackb(data)
        docs[seat] = apply(docs[seat], frame["ops"])
        assert view_hash(docs[seat], rules[seat]) == frame["hash"]
        assert docs[seat] == views.full(seat)[0]
        enc, digest = views.document(seat, rules[seat])
        assert enc == canonical(docs[seat]) and digest == frame["hash"]
        assert views.hash_for(seat, rules[seat]) == frame["hash"]
    enc, digest = views.document(None)
    assert enc == canonical(views.full(None)[0]) and digest == view_hash(views.full(None)[0])


def test_skip_finds_the_end_of_every_kind_of_msgpack_value() -> None:
    values: list[Any] = [
        None,
        True,
        False,
        0,
        127,
        128,
        255,
        256,
        65535,
        65536,
        2**32 - 1,
        2**32,
        2**64 - 1,
        -1,
        -32,
        -33,
        -128,
        -129,
        -32768,
        -32769,
        -(2**31),
        -(2**31) - 1,
        -(2**63),
        1.5,
        "",
        "x" * 31,
        "x" * 32,
        "x" * 255,
        "x" * 256,
        "x" * 65535,
        "x" * 65536,
        b"",
        b"x" * 256,
        b"x" * 65536,
        [],
        list(range(15)),
        list(range(16)),
        list(range(65536)),
        {},
        {str(i): i for i in range(15)},
        {str(i): [i, {"a": None}] for i in range(16)},
        {str(i): i for i in range(65536)},
        *(msgpack.ExtType(1, b"x" * n) for n in (1, 2, 4, 8, 16, 3, 256, 65536)),
    ]
    encoded = [msgpack.packb(v, use_bin_type=True) for v in values]
    encoded.append(msgpack.packb(2.5, use_single_float=True))
    for data in encoded:
        assert views_module._skip(data + b"\xc0\x01", 0) == len(data)
        assert views_module._skip(b"\x00" + data, 1) == 1 + len(data)
    with pytest.raises(ValueError, match="not msgpack"):
        views_module._skip(b"\xc1", 0)


@pytest.mark.parametrize("name", ["tiny", "yspahan", "ishtar"])
def test_own_parts_made_at_once_are_those_track_makes(name: str) -> None:
    """``Views.ensure`` makes every seat's own part from one encoding: the same bytes and
    pieces as tracking each seat's ``own_view`` (which ``Views.advance`` then relies on),
    at every revision of a seeded match, the deciding seat's choices included."""
    if name == "tiny":
        registry.register(TINY)
    game = registry.get(name)
    match = Match.new(game, 4, {}, 3)
    chooser = Rng.from_seed(3)
    for _ in range(60):
        decision = match.decision
        views = Views("r", match, 4)
        for seat, tree in enumerate(views._own):
            made = protocol.tree.track(
                None, views_module.own_view(match, seat, decision), 1, protocol.tree.Work()
            )
            assert tree.enc == made.enc and tree.parts == made.parts
        if decision is None:
            break
        match.act(decision.seat, chooser.below(len(decision.choices)))


def test_a_room_part_that_changes_alone_changes_every_hash() -> None:
    """The spectators' hash (and the rule-2 hashes chained on it) is kept while the shared part
    and the room's parts stay the same: a revision at which only a room-level part changed (a
    clock) must still hash the new documents, in its frames and in ``document``."""
    game = _Seated(2)
    game.shared = {"same": 1}
    game.next = None
    views = Views("r", _match(game), 2, {"clock": {"left": 0}})
    docs = [views.full(s)[0] for s in range(2)]
    for rev in range(1, 4):
        revision = views.advance(rev, [], {"clock": {"left": rev}}, [2, 1])
        _check_frames_rules(views, docs, revision.seat_frames, [2, 1])
        assert msgpack.unpackb(revision.spectator_frame)["hash"] == views.document(None)[1]
        assert views.full(None)[0]["clock"] == {"left": rev}
