"""A tiny card game that exists only to exercise the game contract and its harness.

Each player holds a hidden hand drawn from a shuffled deck of 12 cards (1-6, twice). On a turn a
player plays a card from the hand (public, scores its value) or, while the deck lasts, draws one
(only the drawer learns which). The match ends when the deck and every hand are empty.

The benchmarks serve it (the peer comparison, ``bench/cost.py``), so a compiled checkout compiles
it with the engines (``scripts/build_compiled.py``'s ``BENCH``): its state is then a native class,
copied field by field, never by ``copy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from mypy_extensions import mypyc_attr  # (the tests' dev extras have it, with mypy)

from games.base import JSON, Choice, Decision, Event, Game, Result
from games.errors import SnapshotError
from games.rng import Rng


@dataclass
class TinyState:
    rng: Rng
    deck: list[int]
    hands: list[list[int]]
    scores: list[int]
    to_move: int
    turns: int


@mypyc_attr(allow_interpreted_subclasses=True)  # (tests subclass it)
class Tiny(Game[TinyState]):
    name = "tiny"
    title = "Tiny"
    min_players = 2
    max_players = 4

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> TinyState:
        rng = Rng.from_seed(seed)
        deck = [v for v in range(1, 7) for _ in range(2)]
        rng.shuffle(deck)
        hands = [[deck.pop(), deck.pop()] for _ in range(players)]
        return TinyState(rng, deck, hands, [0] * players, 0, 0)

    def decision(self, state: TinyState) -> Decision | None:
        if not state.deck and not any(state.hands):
            return None
        seat = state.to_move
        choices: list[Choice] = [
            {"kind": "play", "card": c} for c in sorted(set(state.hands[seat]))
        ]
        if state.deck:
            choices.append({"kind": "draw"})
        return Decision(seat, "turn", choices)

    def apply(self, state: TinyState, choice: Choice) -> list[Event]:
        seat = state.to_move
        if choice["kind"] == "draw":
            card = state.deck.pop()
            state.hands[seat].append(card)
            events = [Event("drew", {"seat": seat}, {seat: {"card": card}})]
        else:
            played = choice["card"]
            assert isinstance(played, int)
            state.hands[seat].remove(played)
            state.scores[seat] += played
            events = [Event("played", {"seat": seat, "card": played})]
        state.turns += 1
        players = len(state.hands)
        for step in range(1, players + 1):
            nxt = (seat + step) % players
            if state.hands[nxt] or state.deck:
                state.to_move = nxt
                break
        return events

    def shared_view(self, state: TinyState) -> dict[str, JSON]:
        return {
            "deck": len(state.deck),
            "hands": [len(h) for h in state.hands],
            "scores": list(state.scores),
        }

    def own_view(self, state: TinyState, seat: int) -> dict[str, JSON]:
        return {"hand": cast("list[JSON]", sorted(state.hands[seat]))}

    def result(self, state: TinyState) -> Result | None:
        if state.deck or any(state.hands):  # (not over: what decision() says, without its list)
            return None
        best = max(state.scores)
        return Result(
            tuple(state.scores),
            tuple(i for i, s in enumerate(state.scores) if s == best),
            tuple({"cards": s} for s in state.scores),
            state.turns,
        )

    def dump(self, state: TinyState) -> dict[str, JSON]:
        return {
            "rng": state.rng.state,
            "deck": list(state.deck),
            "hands": [list(h) for h in state.hands],
            "scores": list(state.scores),
            "to_move": state.to_move,
            "turns": state.turns,
        }

    def load(self, data: Mapping[str, JSON]) -> TinyState:
        try:
            return TinyState(
                Rng(data["rng"]),  # type: ignore[arg-type]
                list(data["deck"]),  # type: ignore[arg-type]
                [list(h) for h in data["hands"]],  # type: ignore[union-attr, arg-type]
                list(data["scores"]),  # type: ignore[arg-type]
                data["to_move"],  # type: ignore[arg-type]
                data["turns"],  # type: ignore[arg-type]
            )
        except (KeyError, TypeError) as exc:
            raise SnapshotError(f"not a tiny snapshot: {exc}") from None

    def hidden_variant(self, state: TinyState, viewer: int | None, rng: Rng) -> TinyState:
        out = TinyState(  # (field by field: a compiled state is a native class, never copied)
            Rng(rng.next_u64()),
            list(state.deck),
            [list(h) for h in state.hands],
            list(state.scores),
            state.to_move,
            state.turns,
        )
        pool = list(out.deck)
        for seat, hand in enumerate(out.hands):
            if seat != viewer:
                pool.extend(hand)
        rng.shuffle(pool)
        out.deck = [pool.pop() for _ in out.deck]
        for seat, hand in enumerate(out.hands):
            if seat != viewer:
                out.hands[seat] = [pool.pop() for _ in hand]
        return out


TINY = Tiny()
