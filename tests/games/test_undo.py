"""Undo within a turn (issue 19), on both games: the barrier and what an undo gives back.

The barrier is derived by :class:`games.base.Match` (chance used, something hidden shown, the
turn over, another seat deciding); these tests prove from the outside that it holds: every step
left open to an undo is re-played on states whose hidden parts were re-dealt for each audience
and must show that audience exactly the same, and every undo gives back the state before the
undone step byte for byte, in random matches where seats undo at random moments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from games.base import _REBASE, Event, Game, Match, own_part, shared_part
from games.errors import UndoRefused
from games.ishtar import GAME as ISHTAR
from games.rng import Rng
from games.yspahan import GAME as YSPAHAN
from protocol.codec import canonical
from tests.harness import UNDO, check_playout, play_random

GAMES = {"ishtar": ISHTAR, "yspahan": YSPAHAN}
RANDOM_MATCHES = 200
"""Matches per game in the default tier in which seats undo at random (the issue's count)."""


def _views(game: Game[Any], state: Any, viewer: int | None) -> bytes:
    shared = shared_part(game, state)
    own = None if viewer is None else own_part(game, state, viewer)
    return canonical({"shared": shared, "own": own})


@pytest.mark.slow  # 51 s for both games; tests/server/test_undo.py plays whole matches with undos
@pytest.mark.parametrize("name", sorted(GAMES))
def test_200_random_matches_with_undos_give_back_the_state_byte_for_byte(name: str) -> None:
    """After every undo the state dumps to the bytes it had before the undone step, and the
    leak check passes on it for every audience (the harness checks both at each undo); every
    match still finishes with a result."""
    game = GAMES[name]
    undos = 0
    for i in range(RANDOM_MATCHES):
        out = play_random(game, 2 + i % 3, 7_000 + i, undo=0.3, undo_leaks=True)
        assert out.match is not None and out.match.result() is not None
        undos += out.undos
    assert undos > 20 * RANDOM_MATCHES, f"only {undos} undos in {RANDOM_MATCHES} matches"


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_full_harness_passes_with_undos(name: str, players: int) -> None:
    """The leak check, snapshot and diff round trips run on the state after every undo too,
    and the record with its undos replays to the same final bytes from the seed and from a
    settled snapshot."""
    out = check_playout(GAMES[name], players, 40 + players, undo=0.3)
    assert out.undos > 10


def _open_steps(
    game: Game[Any], players: int, seed: int, check: Callable[[Any, int, Any, list[Event]], None]
) -> int:
    """Play a random match; call ``check(state_before, seat, choice, raw_events)`` for every
    step that is left open to an undo; return how many there were."""
    match = Match.new(game, players, {}, seed)
    chooser = Rng.from_seed(seed ^ 0x5EED)
    found = 0
    while (decision := match.decision) is not None:
        before = game.load(game.dump(match.state))
        legal = decision.choices[chooser.below(len(decision.choices))]
        rng = game.generator(match.state)
        assert rng is not None
        drawn, turns = rng.state, game.turn_count(match.state)
        events = match.push(decision.seat, legal)
        if match.can_undo(decision.seat):
            assert rng.state == drawn, "an open step used chance"
            assert game.turn_count(match.state) == turns, "an open step ended the turn"
            check(before, decision.seat, legal, events)
            found += 1
    return found


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_no_step_open_to_an_undo_shows_anyone_anything_hidden(name: str, players: int) -> None:
    """Every audience sees the same after an open step whatever its hidden parts were: the
    step, played on a state re-dealt for that audience, is legal there and gives that audience
    the very same view. So neither the step nor its undo can tell anyone what they could not
    see (ISH-CHOOSE-10, YSP-ACTION-05, YSP-TOWER-01 are barriers: the step that turns a tile,
    draws a card or rolls the dice is never open)."""
    game = GAMES[name]
    leak_rng = Rng.from_seed(players)

    def check(before: Any, seat: int, legal: Any, events: list[Event]) -> None:
        assert all(not e.private for e in events), "an open step told one seat a secret"
        after = Match(game, game.load(game.dump(before)))
        after.push(seat, legal)
        for viewer in (None, *range(players)):
            variant = game.load(game.dump(game.hidden_variant(before, viewer, leak_rng)))
            replayed = Match(game, variant)
            decision = replayed.decision
            assert decision is not None and legal in decision.choices, (
                f"the step depends on what audience {viewer} cannot see"
            )
            replayed.push(seat, legal)
            assert _views(game, replayed.state, viewer) == _views(game, after.state, viewer), (
                f"the step showed audience {viewer} something hidden"
            )

    found = sum(_open_steps(game, players, 300 + seed, check) for seed in range(2))
    assert found > 50


@pytest.mark.parametrize("name", sorted(GAMES))
def test_after_an_undo_every_audience_sees_what_it_saw_before_the_step(name: str) -> None:
    game = GAMES[name]
    match = Match.new(game, 3, {}, 5)
    chooser = Rng.from_seed(5)
    checked = 0
    while (decision := match.decision) is not None and checked < 40:
        seen = [_views(game, match.state, v) for v in (None, 0, 1, 2)]
        match.act(decision.seat, chooser.below(len(decision.choices)))
        if match.can_undo(decision.seat):
            match.undo(decision.seat)
            assert [_views(game, match.state, v) for v in (None, 0, 1, 2)] == seen
            checked += 1
            match.act(decision.seat, chooser.below(len(decision.choices)))
    assert checked == 40


def _first(
    game: Game[Any], players: int, want: Callable[[Match[Any], int, list[Event]], bool]
) -> tuple[Match[Any], int]:
    """The first step of seeded random matches after which ``want(match, seat, events)``."""
    for seed in range(50):
        match = Match.new(game, players, {}, seed)
        chooser = Rng.from_seed(seed)
        while (decision := match.decision) is not None:
            seat = decision.seat
            events = match.act(seat, chooser.below(len(decision.choices)))
            if want(match, seat, events):
                return match, seat
    raise AssertionError("no such step in 50 matches")


def _kinds(events: list[Event]) -> set[str]:
    return {e.kind for e in events}


def _refused(match: Match[Any], seat: int) -> str:
    before = canonical(match.game.dump(match.state))
    with pytest.raises(UndoRefused) as refused:
        match.undo(seat)
    assert canonical(match.game.dump(match.state)) == before, "a refused undo changed the state"
    assert not match.can_undo(seat)
    return refused.value.message


def test_ish_choose_10_the_step_that_turns_a_tile_face_up_cannot_be_taken_back() -> None:
    """ISH-CHOOSE-10: the new top of the pile the can left is turned face up: a barrier."""
    match, seat = _first(
        ISHTAR, 3, lambda m, s, ev: "tile_revealed" in _kinds(ev) and m.to_move == s
    )
    assert "revealed what was hidden (tile revealed)" in _refused(match, seat)


def test_ish_choose_09_a_free_pile_taken_without_a_reveal_can_be_taken_back() -> None:
    """ISH-CHOOSE-09: taking a tile from the can's own pile reveals nothing: it can be undone,
    and the undo gives the tile back to the pile and the decision back to the Choose step."""
    match, seat = _first(
        ISHTAR,
        3,
        lambda m, s, ev: (
            "tile_taken" in _kinds(ev) and "tile_revealed" not in _kinds(ev) and m.can_undo(s)
        ),
    )
    (undone,) = match.undo(seat)
    assert undone.kind == "undone" and undone.data["seat"] == seat
    assert undone.data["decision"] in ("choose", "pay")
    assert match.decision is not None and match.decision.kind == undone.data["decision"]
    texts = undone.data["taken_back"]
    assert isinstance(texts, list) and texts and all(isinstance(t, str) for t in texts)
    assert undone.data["text"] == f"P{seat + 1} took back: " + "; ".join(map(str, texts))


def test_ysp_action_05_a_card_drawn_cannot_be_taken_back() -> None:
    """YSP-ACTION-05: the draw action gives the top card of the deck, seen by the drawer only."""
    match, seat = _first(YSPAHAN, 3, lambda m, s, ev: "draw" in _kinds(ev) and m.to_move == s)
    assert "drew what only one seat sees (draw)" in _refused(match, seat)


def test_ysp_tower_01_the_roll_cannot_be_taken_back() -> None:
    """YSP-TOWER-01, YSP-TOWER-05: the roller's yellow dice choice rolls the dice: chance."""
    match, seat = _first(YSPAHAN, 3, lambda m, s, ev: "roll" in _kinds(ev) and m.to_move == s)
    assert "used chance" in _refused(match, seat)


def test_ysp_card_01_a_card_played_from_the_hand_cannot_be_taken_back() -> None:
    """YSP-CARD-01: a card played in one's turn shows the others a card of the hidden hand."""
    match, seat = _first(YSPAHAN, 3, lambda m, s, ev: "play" in _kinds(ev) and m.to_move == s)
    assert "revealed what was hidden (play)" in _refused(match, seat)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_only_the_seat_to_move_may_undo_and_not_across_another_seats_decision(name: str) -> None:
    game = GAMES[name]
    match, seat = _first(game, 3, lambda m, s, ev: m.can_undo(s))
    other = (seat + 1) % 3
    assert "only the seat to move" in _refused(match, other)
    # the seat's open steps, then a step of the next seat: the first seat may undo nothing
    while match.to_move == seat:
        decision = match.decision
        assert decision is not None
        match.act(seat, 0)
    nxt = match.to_move
    assert nxt is not None and nxt != seat
    while match.to_move == nxt:
        match.act(nxt, 0)
    if match.to_move == seat:
        assert "another seat decided" in _refused(match, seat)


def test_a_match_over_has_nothing_to_undo() -> None:
    out = play_random(YSPAHAN, 2, 3)
    assert out.match is not None and out.match.over
    assert _refused(out.match, 0) == "the match is over"


def test_undo_record_replays_the_same_match() -> None:
    """A record with undos (:data:`UNDO`) replays from the seed to the same final bytes."""
    out = play_random(ISHTAR, 2, 11, undo=0.5)
    assert out.undos > 0 and UNDO in out.choices
    again = Match.new(ISHTAR, 2, {}, 11)
    for index in out.choices:
        decision = again.decision
        assert decision is not None
        if index == UNDO:
            again.undo(decision.seat)
        else:
            again.act(decision.seat, index)
    assert out.match is not None
    assert canonical(ISHTAR.dump(again.state)) == canonical(ISHTAR.dump(out.match.state))


def test_a_game_without_a_generator_has_no_undo() -> None:
    from tests.games.tiny import TINY

    match = Match.new(TINY, 2, {}, 1)
    decision = match.decision
    assert decision is not None
    assert _refused(match, decision.seat) == "nothing to take back yet"
    for _ in range(3):
        match.act(decision.seat, 0)
        seat = match.to_move
        assert seat is not None
        assert _refused(match, seat) == "Tiny has no undo"
        assert match.why_no_undo(seat) == "Tiny has no undo"
        assert not match.can_undo(decision.seat)
        decision = match.decision
        assert decision is not None


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_copy_for_undo_is_taken_again_only_after_a_few_turns(name: str) -> None:
    """``Match.push`` copies the state at the start of a turn only once the steps since its
    last copy reach ``_REBASE`` (in between, the last turns' steps stay, final): and an undo
    from a copy several turns old still gives back the state before the undone step, byte for
    byte, with the same refusal once nothing of this turn is left."""
    game = GAMES[name]
    match = Match.new(game, 3, {}, 21)
    chooser = Rng.from_seed(21)
    before: list[bytes] = []  # the state before each step of the current turn
    copies = turns = old_undos = 0
    base = None
    while (decision := match.decision) is not None:
        seat = decision.seat
        if match.can_undo(seat) and chooser.below(3) == 0:
            record = match._turn
            assert record is not None
            old_undos += record.first > 0
            match.undo(seat)
            assert canonical(game.dump(match.state)) == before.pop()
            if match._turn is not None and len(match._turn.steps) == match._turn.first:
                assert _refused(match, seat) == "nothing left to take back this turn"
            continue
        turn = game.turn_count(match.state)
        if match._turn is None or match._turn.turns != turn:
            before.clear()
            turns += 1
        before.append(canonical(game.dump(match.state)))
        last = match._turn
        held = 0 if last is None else len(last.steps)
        match.act(seat, chooser.below(len(decision.choices)))
        record = match._turn
        assert record is not None
        if record.base is not base:
            assert last is None or held >= _REBASE
            copies += 1
            base = record.base
    assert old_undos > 5
    assert copies * 4 < turns
