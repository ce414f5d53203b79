"""The views' memo (:attr:`games.yspahan.state.YState.memo`) and the fast paths of ``describe``.

Whatever the engine keeps between calls must give exactly the views and descriptions of a state
that keeps nothing: after seeded random steps, and after any fact of a player, the tower, the
city, the caravan or the turn is changed in place (as the scripted tests do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from games.base import Match
from games.rng import Rng
from games.yspahan import GAME, city, data, labels
from games.yspahan.state import YState
from games.yspahan.views import KEPT
from protocol.codec import canonical
from tests.games.yspahan.helpers import give_card, put_goods, turn_state


def _same_views(state: YState) -> None:
    """The views of ``state`` are those made with nothing kept (an empty memo)."""
    shared = canonical(GAME.shared_view(state))
    own = [GAME.own_view(state, seat) for seat in range(state.players)]
    kept, state.memo = state.memo, {}
    try:
        assert shared == canonical(GAME.shared_view(state))
        assert own == [GAME.own_view(state, seat) for seat in range(state.players)]
    finally:
        state.memo = kept


def test_kept_fields_are_every_field_of_the_shared_view_but_pending() -> None:
    view = GAME.shared_view(turn_state(4))
    assert set(KEPT) == view.keys() - {"pending"}
    assert GAME.kept_fields == frozenset(KEPT)


def test_an_unchanged_position_hands_out_the_same_objects() -> None:
    state = turn_state(4, floors={"camels": (1, 2, 0), "gold": (6, 1, 0)})
    give_card(state, 0, "3_gold")
    first, again = GAME.shared_view(state), GAME.shared_view(state)
    for field in KEPT:
        assert again[field] == first[field]
        if isinstance(first[field], (list, dict)):
            assert again[field] is first[field], field


def _hand(state: YState) -> None:
    give_card(state, 2, "no_gold")


def _swap_card(state: YState) -> None:  # same hand size, another card
    state.discard.append(state.hands[2].pop())
    give_card(state, 2, state.deck[0])


def _breakdown_only(state: YState) -> None:  # a score moved between categories
    state.breakdown[1]["souks"] += 2
    state.breakdown[1]["cards"] -= 2


def _tower(state: YState) -> None:
    state.tower[0][1] += 1


def _queue(state: YState) -> None:
    put_goods(state, 1, "sk3.0")
    state.queue.append(data.SHOP_INDEX["sk3.0"])


CHANGES: dict[str, Callable[[YState], None]] = {
    "gold": lambda s: s.gold.__setitem__(1, s.gold[1] + 1),
    "camels": lambda s: s.camels.__setitem__(3, 7),
    "score": lambda s: s.score.__setitem__(0, 4),
    "no_camels": lambda s: s.no_camels.__setitem__(2, 1),
    "no_gold": lambda s: s.no_gold.__setitem__(2, 1),
    "hand": _hand,
    "same-size hand": _swap_card,
    "breakdown": _breakdown_only,
    "built": lambda s: s.built[3].append(data.CRANE),
    "over": lambda s: setattr(s, "stage", "over"),
    "tower": _tower,
    "city": lambda s: put_goods(s, 2, "br2.0"),
    "city emptied": lambda s: city.empty_city(s),
    "order": lambda s: s.order.reverse(),
    "discard": lambda s: s.discard.append(s.deck.pop()),
    "caravan": lambda s: s.caravan.append(1),
    "queue": _queue,
    "quarter": lambda s: setattr(s, "quarter", 2),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_fact_changed_in_place_shows_at_once(change: str) -> None:
    state = turn_state(4, floors={"camels": (1, 2, 0), "gold": (6, 1, 0)})
    give_card(state, 2, "3_gold")
    put_goods(state, 0, "sk4.1")
    before = canonical(GAME.shared_view(state)), [GAME.own_view(state, s) for s in range(4)]
    CHANGES[change](state)
    _same_views(state)
    after = canonical(GAME.shared_view(state)), [GAME.own_view(state, s) for s in range(4)]
    assert after != before, f"{change} changes nothing shown"


def _described(state: YState, choice: dict[str, Any]) -> dict[str, Any]:
    """A choice described the plain way: its kind's text in :data:`labels.CHOICES`, and the
    effects of :func:`labels.move_effects` / :func:`labels.placement_effects`."""
    kind = str(choice["kind"])
    words = labels.CHOICES.get(kind)
    shown = {**choice, "label": words(state, choice) if words else kind}
    if kind == "move":
        shown["effects"] = labels.move_effects(state, str(choice["to"]))
    elif kind == "place":
        shown["effects"] = labels.placement_effects(state, str(choice["shop"]))
    return shown


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (3, 6), (4, 7)])
def test_views_and_descriptions_match_a_state_that_keeps_nothing(players: int, seed: int) -> None:
    match = Match.new(GAME, players, {}, seed)
    chooser = Rng.from_seed(seed)
    while (decision := match.decision) is not None:
        state = match.state
        _same_views(state)
        described = GAME.describe(state, decision)
        assert canonical(described) == canonical([_described(state, c) for c in decision.choices])
        assert [list(c) for c in described] == [
            list(_described(state, c)) for c in decision.choices
        ]
        match.act(decision.seat, chooser.below(len(decision.choices)))
    _same_views(match.state)


def test_an_unchanged_hand_hands_out_the_same_own_view() -> None:
    state = turn_state(4)
    give_card(state, 1, "no_gold")
    first = GAME.own_view(state, 1)
    assert GAME.own_view(state, 1) is first
    assert GAME.own_view(state, 2) is not first  # (each seat its own)
    give_card(state, 1, "3_gold")
    second = GAME.own_view(state, 1)
    assert second is not first and second == {"hand": ["3_gold", "no_gold"]}
    assert first == {"hand": ["no_gold"]}  # (what was handed out is never changed)
    assert GAME.own_view(state, 1) is second
