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

from games.base import JSON, memo_entries
from games.rng import Rng
from games.yspahan import caravan, data
from games.yspahan.state import YState, dump, jlist, load

_SOUK_SHOPS: tuple[tuple[str, int, int], ...] = tuple(
    (s.id, s.shops[0], s.shops[-1] + 1) for s in data.SOUKS
)
"""Each souk's id and the slice of ``shops`` it holds (a souk's shops are numbered in a row)."""
assert all(s.shops == tuple(range(s.shops[0], s.shops[-1] + 1)) for s in data.SOUKS)


def _city(state: YState) -> dict[str, JSON]:
    """One list per souk of who holds each shop, kept until a shop changes hands (most
    revisions change none) and handed out again as the very same object (views are never
    mutated); then the souks where no shop changed hands keep their very lists (as
    :func:`_players`)."""
    shops = state.shops
    key = tuple(shops)
    found = state.memo.get("city")
    if found is not None and found[0] == key:
        kept = found[1]
        assert isinstance(kept, dict)
        return kept
    old_key, old = found if found is not None else ((), {})
    assert isinstance(old_key, tuple) and isinstance(old, dict)
    city: dict[str, JSON] = {
        souk: old[souk]
        if old_key and old_key[start:stop] == key[start:stop]
        else [None if v < 0 else v for v in shops[start:stop]]
        for souk, start, stop in _SOUK_SHOPS
    }
    state.memo["city"] = (key, city)
    return city


def _players(state: YState, over: bool) -> list[JSON]:
    """Each player's public part, kept until one of them changes; then the players who did not
    change keep their very entries (:func:`games.base.memo_entries`)."""
    key = tuple(
        (
            state.gold[p],
            state.camels[p],
            state.score[p],
            len(state.hands[p]),
            tuple(state.built[p]),
            state.no_camels[p],
            state.no_gold[p],
            tuple(state.breakdown[p].values()),
            tuple(state.hands[p]) if over else None,
        )
        for p in range(state.players)
    )
    return memo_entries(state.memo, "players", key, lambda p: _player(state, over, p))


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
    then the floors that did not change keep their very entries (as :func:`_players`)."""
    key = tuple(tuple(f) for f in state.tower)
    return memo_entries(state.memo, "tower", key, lambda i: _floor(data.FLOORS[i], key[i]))


def _floor(name: str, dice: tuple[int, ...]) -> JSON:
    return {"floor": name, "value": dice[0], "white": dice[1], "yellow": dice[2]}


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
    """
    over = state.stage == "over"
    players = _players(state, over)
    tower = _tower(state)
    city = _city(state)
    return {
        "players": players,
        "week": state.week,
        "day": state.day,
        "pawn": state.pawn,
        "order": jlist(state.order),
        "turn": state.turn,
        "actor": state.actor,
        "tower": tower,
        "yellow": state.yellow,
        "city": city,
        "steward": data.SQUARES[state.steward].id,
        "caravan": {"capacity": caravan.capacity(state.players), "goods": jlist(state.caravan)},
        "deck": len(state.deck),
        "discard": jlist(state.discard),
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


def own_view(state: YState, seat: int) -> dict[str, JSON]:
    """What only ``seat`` sees: its hand, sorted so that draw order does not show."""
    return {"hand": jlist(sorted(state.hands[seat]))}


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
