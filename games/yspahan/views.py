"""What each audience sees, and the re-deal of everything a viewer may not see.

Hidden: the cards in a hand (its owner sees them; everyone sees the count), the order of the
deck (everyone sees its size) and the generator. Everything else is public: the tower, the city,
the caravan, the steward, gold, camels, buildings and build-without credits, scores with their
breakdown, the face-up discard pile, the day and week, what the turn in progress is waiting
for and whether the player whose turn it is has built this turn (``built_this_turn``). Once the
match is over every hand is shown (``players[].hand``), as the contract reveals everything at the
end. The views never read ``state.deck`` beyond its length, nor ``state.rng`` at all. Field by
field: ``protocol/games/yspahan.md``.
"""

from __future__ import annotations

from typing import Final

from games.base import JSON
from games.rng import Rng
from games.yspahan import caravan, data
from games.yspahan.state import YState, dump, jlist, load

KEPT: tuple[str, ...] = (
    "players",
    "week",
    "day",
    "pawn",
    "order",
    "turn",
    "actor",
    "tower",
    "yellow",
    "city",
    "steward",
    "caravan",
    "deck",
    "discard",
    "built_this_turn",
)
"""The fields of :func:`shared_view` that are kept (:attr:`games.base.Game.kept_fields`): each
list or map is handed out again as the very same object while what it shows is unchanged (the
memo, :attr:`~games.yspahan.state.YState.memo`, holds it with the facts it was made from), and
nothing handed out is changed afterwards; the others are numbers, flags and ids.

All but ``pending``: a kept map that changed is diffed from its last value, and the ops of its
keys then come in that map's order, whereas from its decoded bytes they came in canonical order
(``queue`` before ``value``); a ``pending`` map in canonical order would change the order of the
keys in a ``replace`` of it instead (the frames would differ, not the documents)."""

_SOUK_SHOPS: Final[tuple[tuple[str, int, int], ...]] = tuple(
    (s.id, s.shops[0], s.shops[-1] + 1) for s in data.SOUKS
)
"""Each souk's id and the slice of ``shops`` it holds (a souk's shops are numbered in a row)."""
assert all(s.shops == tuple(range(s.shops[0], s.shops[-1] + 1)) for s in data.SOUKS)


def _city(state: YState) -> dict[str, JSON]:
    """One list per souk of who holds each shop, kept until a shop changes hands (most
    revisions change none) and handed out again as the very same object (views are never
    mutated); then the souks where no shop changed hands keep their very lists (as
    :func:`_players`). The memo holds a copy of ``shops`` as its key, compared with the state's
    list as it is (no key is built for a revision that changes nothing)."""
    shops = state.shops
    found = state.memo.get("city")
    if found is not None:
        seen = found[0]
        assert isinstance(seen, list)
        if seen == shops:
            kept = found[1]
            assert isinstance(kept, dict)
            return kept
    old_key, old = found if found is not None else ([], {})
    assert isinstance(old_key, list) and isinstance(old, dict)
    city: dict[str, JSON] = {
        souk: old[souk]
        if old_key and _same_range(old_key, shops, start, stop)
        else [None if v < 0 else v for v in shops[start:stop]]
        for souk, start, stop in _SOUK_SHOPS
    }
    state.memo["city"] = (list(shops), city)
    return city


def _same_range(a: list[int], b: list[int], start: int, stop: int) -> bool:
    """Whether ``a`` and ``b`` hold the same numbers from ``start`` to ``stop`` (compared in
    place: no slice is made)."""
    return all(a[i] == b[i] for i in range(start, stop))


class _Seen:
    """The player facts a ``players`` list was made from: copies, never changed, compared with
    the state's own lists as they are (a revision that changes no player builds nothing).

    The eight facts are written out in each method on purpose: compiled, typed fields compared
    one by one cost less than a tuple of them and a generic loop (measured: that form cost
    0.6 % more of a Yspahan match's instructions)."""

    __slots__ = (
        "breakdown",
        "built",
        "camels",
        "gold",
        "hands",
        "no_camels",
        "no_gold",
        "over",
        "score",
    )

    def __init__(self, state: YState, over: bool) -> None:
        self.over = over
        self.gold = list(state.gold)
        self.camels = list(state.camels)
        self.score = list(state.score)
        self.no_camels = list(state.no_camels)
        self.no_gold = list(state.no_gold)
        self.hands = [list(h) for h in state.hands]
        self.built = [list(b) for b in state.built]
        self.breakdown = [dict(b) for b in state.breakdown]

    def same(self, state: YState, over: bool) -> bool:
        """Whether every fact is as it was."""
        return (
            self.over == over
            and self.gold == state.gold
            and self.camels == state.camels
            and self.score == state.score
            and self.no_camels == state.no_camels
            and self.no_gold == state.no_gold
            and self.hands == state.hands
            and self.built == state.built
            and self.breakdown == state.breakdown
        )

    def same_player(self, state: YState, p: int) -> bool:
        """Whether player ``p``'s facts are as they were (with ``over`` unchanged)."""
        return (
            self.gold[p] == state.gold[p]
            and self.camels[p] == state.camels[p]
            and self.score[p] == state.score[p]
            and self.no_camels[p] == state.no_camels[p]
            and self.no_gold[p] == state.no_gold[p]
            and self.hands[p] == state.hands[p]
            and self.built[p] == state.built[p]
            and self.breakdown[p] == state.breakdown[p]
        )


def _players(state: YState, over: bool) -> list[JSON]:
    """Each player's public part, kept until one of them changes; then the players who did not
    change keep their very entries (as :func:`games.base.memo_entries`, with the facts compared
    in place: :class:`_Seen`). A hand is compared whole though only its size shows before the
    end: a card swapped for another (played, then one drawn) makes an equal entry anew."""
    found = state.memo.get("players")
    seen: _Seen | None = None
    old: list[JSON] = []
    if found is not None:
        last, kept = found
        assert isinstance(last, _Seen) and isinstance(kept, list)
        if last.same(state, over):
            return kept
        if last.over == over:
            seen, old = last, kept
    entries: list[JSON] = [
        old[p] if seen is not None and seen.same_player(state, p) else _player(state, over, p)
        for p in range(state.players)
    ]
    state.memo["players"] = (_Seen(state, over), entries)
    return entries


def _player(state: YState, over: bool, p: int) -> JSON:
    entry: dict[str, JSON] = {
        "gold": state.gold[p],
        "camels": state.camels[p],
        "score": state.score[p],
        "cards": len(state.hands[p]),
        "buildings": [data.BUILDINGS[b].id for b in state.built[p]],
        "no_camels": state.no_camels[p],
        "no_gold": state.no_gold[p],
        "breakdown": dict(state.breakdown[p]),
    }
    if over:
        entry["hand"] = jlist(sorted(state.hands[p]))
    return entry


def _tower(state: YState) -> list[JSON]:
    """The dice on each floor of the tower, kept until they change (a roll, a group taken);
    then the floors that did not change keep their very entries (as :func:`_players`; the memo
    holds a copy of the floors, compared with the state's)."""
    tower = state.tower
    found = state.memo.get("tower")
    seen: list[list[int]] = []
    old: list[JSON] = []
    if found is not None:
        last, kept = found
        assert isinstance(last, list) and isinstance(kept, list)
        if last == tower:
            return kept
        seen, old = last, kept
    entries: list[JSON] = [
        old[i] if i < len(seen) and seen[i] == floor else _floor(data.FLOORS[i], floor)
        for i, floor in enumerate(tower)
    ]
    state.memo["tower"] = ([list(f) for f in tower], entries)
    return entries


def _floor(name: str, dice: list[int]) -> JSON:
    return {"floor": name, "value": dice[0], "white": dice[1], "yellow": dice[2]}


def _copy(memo: dict[str, tuple[object, object]], name: str, items: list[int] | list[str]) -> JSON:
    """A copy of ``items`` kept while they are equal: the very same list is handed out again
    (it is never changed, so it is its own key)."""
    found = memo.get(name)
    if found is not None:
        kept = found[1]
        assert isinstance(kept, list)
        if kept == items:
            return kept
    copy: list[JSON] = list(items)
    memo[name] = (None, copy)
    return copy


def _caravan(state: YState) -> JSON:
    """The caravan's capacity and goods, kept while the goods are the same (as :func:`_copy`);
    its keys in canonical order, as a kept map's must be (:data:`KEPT`)."""
    found = state.memo.get("caravan")
    if found is not None:
        goods = found[0]
        assert isinstance(goods, list)
        if goods == state.caravan:
            kept = found[1]
            assert isinstance(kept, dict)
            return kept
    copy: list[JSON] = list(state.caravan)
    view: dict[str, JSON] = {"capacity": caravan.capacity(state.players), "goods": copy}
    state.memo["caravan"] = (copy, view)
    return view


def shared_view(state: YState) -> dict[str, JSON]:
    """The view every audience shares (spectators included).

    The stage of the turn is not repeated here: it is the contract's ``shared.turn.decision``
    (null once the match is over), which changes with it at every decision; ``actor`` is the seat
    whose turn it is (the deciding seat may differ: an owner keeping a good).

    The city is one list per souk (``"sk3": [None, 0, None]``: shop ``sk3.1`` holds seat 0's
    good), which shows each souk's occupant and fill at a glance and keeps the view small.

    ``pending`` is the turn in progress: ``goods`` still to place by a goods action in
    ``quarter``, the steward's ``value`` to move, the ``queue`` of faced goods leaving for the
    caravan, the ``card`` in play (with "place_board" its one good goes in any quarter), the
    ``floor`` whose group is being taken with ``extra`` cards added as dice so far, and the
    decision a card play ``interrupted`` (to which it returns; null when none). The goods and
    the value stay shown while a card interrupts their decision.

    Every field but ``pending`` is kept (:data:`KEPT`): a revision that changes a field's facts
    hands out a new object for it, the others are those of the last view, which the server does
    not encode again.
    """
    over = state.stage == "over"
    players = _players(state, over)
    tower = _tower(state)
    city = _city(state)
    memo = state.memo
    return {
        "players": players,
        "week": state.week,
        "day": state.day,
        "pawn": state.pawn,
        "order": _copy(memo, "order", state.order),
        "turn": state.turn,
        "actor": state.actor,
        "tower": tower,
        "yellow": state.yellow,
        "city": city,
        "steward": data.SQUARES[state.steward].id,
        "caravan": _caravan(state),
        "deck": len(state.deck),
        "discard": _copy(memo, "discard", state.discard),
        "built_this_turn": state.built_this_turn,
        "pending": {
            "goods": state.pending if "place" in (state.stage, state.resume) else 0,
            "value": state.pending if "steward" in (state.stage, state.resume) else 0,
            "quarter": data.QUARTERS[state.quarter] if state.quarter >= 0 else None,
            "queue": [data.SHOP_IDS[s] for s in state.queue],
            "card": state.card or None,
            "floor": data.FLOORS[state.floor] if state.floor >= 0 else None,
            "extra": state.extra,
            "interrupted": state.resume or None,
        },
    }


_OWN_KEYS: Final[tuple[str, ...]] = ("own0", "own1", "own2", "own3")
"""The memo's name of each seat's own view."""


def own_view(state: YState, seat: int) -> dict[str, JSON]:
    """What only ``seat`` sees: its hand, sorted so that draw order does not show.

    Kept while the hand is the same (as :func:`_copy`: the memo holds a copy of the hand as it
    was, compared with the state's), and handed out again as the very same map, never changed:
    every seat's own view is asked for at every revision, and hands seldom change."""
    hand = state.hands[seat]
    name = _OWN_KEYS[seat]
    found = state.memo.get(name)
    if found is not None:
        seen, kept = found
        assert isinstance(seen, list) and isinstance(kept, dict)
        if seen == hand:
            return kept
    view: dict[str, JSON] = {"hand": jlist(sorted(hand))}
    state.memo[name] = (list(hand), view)
    return view


def copy_state(state: YState) -> YState:
    """An independent copy (through the snapshot form, which also checks it)."""
    return load(dump(state))


def hidden_variant(state: YState, viewer: int | None, rng: Rng) -> YState:
    """A copy with the deck order, the other hands and the generator re-dealt at random."""
    out = copy_state(state)
    out.rng = Rng(rng.next_u64())
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
