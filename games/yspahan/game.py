"""The Yspahan rules engine: the :class:`~games.base.Game` contract over this package's modules.

This class only wires the pieces together: setup, the pending decision
(:mod:`~games.yspahan.decisions`), applying a choice (:mod:`~games.yspahan.actions`), views
(:mod:`~games.yspahan.views`), snapshots (:mod:`~games.yspahan.state`) and the result
(:mod:`~games.yspahan.scoring`). See the package docstring for the rules decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from games.base import JSON, Choice, Decision, Event, Game, Result
from games.rng import Rng
from games.yspahan import actions, city, data, decisions, labels, scoring, tower, views
from games.yspahan import state as snapshot
from games.yspahan.state import CATEGORIES, INTERRUPTIBLE, YState
from games.yspahan.turn import start_day


class Yspahan(Game[YState]):
    """Yspahan for 2 to 4 players (2 players with Ystari's official 2-player rules)."""

    name = "yspahan"
    title = "Yspahan"
    min_players = 2
    max_players = 4

    def __init__(self) -> None:
        self._static: dict[str, JSON] | None = None

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> YState:
        """2 gold each, no camel, no card; deck shuffled; a random first player; day 1 of week 1."""
        rng = Rng.from_seed(seed)
        deck = list(data.DECK)
        rng.shuffle(deck)
        pawn = rng.below(players)
        state = YState(
            players=players,
            rng=rng,
            gold=[data.START_GOLD] * players,
            camels=[data.START_CAMELS] * players,
            score=[0] * players,
            breakdown=[dict.fromkeys(CATEGORIES, 0) for _ in range(players)],
            hands=[[] for _ in range(players)],
            built=[[] for _ in range(players)],
            no_camels=[0] * players,
            no_gold=[0] * players,
            deck=deck,
            discard=[],
            shops=[-1] * len(data.SHOP_IDS),
            souk_owner=[-1] * len(data.SOUKS),
            souk_fill=[0] * len(data.SOUKS),
            steward=data.CENTRE,
            caravan=[],
            week=1,
            day=1,
            pawn=pawn,
            order=[],
            turn=0,
            tower=tower.empty_tower(),
            yellow=0,
            stage="yellow",
            actor=pawn,
        )
        start_day(state, [])
        return state

    def decision(self, state: YState) -> Decision | None:
        return decisions.decision(state)

    revealing: ClassVar[frozenset[str]] = frozenset({"play", "extra_die"})
    """A card played from the hand, or added to a group as an extra die, shows the others a
    card they could not see: undo stops there, as at a draw (a private event) and a roll."""
    kept_fields: ClassVar[frozenset[str]] = frozenset(views.KEPT)
    """Every field of the shared view but ``pending`` (:data:`games.yspahan.views.KEPT`, which
    says why not that one): the lists and maps are handed out again as the same objects while
    unchanged (:mod:`~games.yspahan.views`), and the numbers, flags and square ids are immutable
    (an unchanged small number or id is the same object; one that is not is simply encoded)."""

    def generator(self, state: YState) -> Rng:
        return state.rng

    def turn_count(self, state: YState) -> int:
        return state.turns

    def apply(self, state: YState, choice: Choice) -> list[Event]:
        return actions.apply(state, choice)

    def shared_view(self, state: YState) -> dict[str, JSON]:
        return views.shared_view(state)

    def own_view(self, state: YState, seat: int) -> dict[str, JSON]:
        return views.own_view(state, seat)

    def result(self, state: YState) -> Result | None:
        return scoring.result(state)

    def dump(self, state: YState) -> dict[str, JSON]:
        return snapshot.dump(state)

    def load(self, data: Mapping[str, JSON]) -> YState:
        return snapshot.load(data)

    def hidden_variant(self, state: YState, viewer: int | None, rng: Rng) -> YState:
        return views.hidden_variant(state, viewer, rng)

    def describe(self, state: YState, decision: Decision) -> list[Choice]:
        return labels.describe(state, decision)

    def prompt(self, state: YState, decision: Decision) -> str:
        return labels.prompt(state, decision)

    def narrate(self, state: YState, events: list[Event]) -> list[Event]:
        return labels.narrate(state, events)

    def static_data(self) -> dict[str, JSON]:
        from games.yspahan.static import static_data

        if self._static is None:
            self._static = static_data(self.title, (self.min_players, self.max_players))
        return self._static

    def why_illegal(self, state: YState, choice: Choice) -> str | None:
        """Say why a well-formed choice is refused, for the most common mistakes (each reason
        true: a rule the answer breaks, or None)."""
        kind = choice.get("kind")
        seat = state.actor
        if kind == "place":
            return _why_not_shop(state, choice.get("shop"))
        if kind == "take":
            return _why_not_take(state, choice)
        if kind == "extra":
            card = choice.get("card")
            if state.stage != "extra":
                return "extra dice are added right after taking a group for its floor action"
            if card is not None and card not in state.hands[seat]:
                return f"no {card!r} card in hand to add as an extra die"
            return None
        if kind == "build":
            return _why_not_build(state, choice.get("building"))
        if kind == "play":
            return _why_not_play(state, choice.get("card"))
        if kind == "move" and state.stage == "steward":
            if choice.get("to") == data.SQUARES[state.steward].id:
                return "the steward must move: a move ends at least one square away"
            return "the steward cannot end there: wrong distance, or not enough gold to adjust it"
        return None


def _why_not_take(state: YState, choice: Choice) -> str | None:
    floor = choice.get("floor")
    if floor not in data.FLOORS:
        return f"no tower floor named {floor!r}"
    index = data.FLOORS.index(str(floor))
    if state.stage != "turn":
        return "a group is taken at the start of a turn only"
    if state.tower[index][0] == 0:
        return f"the {floor} floor holds no group"
    if decisions.group_size(state, index) == 0:
        return "only the first player may take a group made only of yellow dice"
    if "extra" in choice:
        return "a take names no extra card: extra dice are chosen next, one card at a time"
    return None


def _why_not_build(state: YState, building: object) -> str | None:
    seat = state.actor
    if not isinstance(building, str) or building not in data.BUILDING_INDEX:
        return f"no building named {building!r}"
    if data.BUILDING_INDEX[building] in state.built[seat]:
        return f"the {building} is already built"
    if state.stage not in ("after", "build"):
        if state.players == 2:
            return "with 2 players a building is a dice group's action (take ... build)"
        return "a building is bought after the turn's action"
    if state.built_this_turn:
        return "only one building per turn"
    return f"the {building} costs more camels or gold than you have"


def _why_not_play(state: YState, card: object) -> str | None:
    if card not in state.hands[state.actor]:
        return f"no {card!r} card in hand"
    if state.stage in INTERRUPTIBLE:
        return 'in the middle of this decision, choose "cards" first, then the card'
    if state.card or state.stage == "amount":
        return "finish the card in play first"
    if state.stage not in ("turn", "after", "cards"):
        return "cards are played in one's own turn, after the yellow dice are rolled"
    if card == "place_board":
        return "no shop of any quarter may take your good now"
    return None


def _why_not_shop(state: YState, shop_id: object) -> str | None:
    if not isinstance(shop_id, str) or shop_id not in data.SHOP_INDEX:
        return f"no shop named {shop_id!r}"
    shop = data.SHOP_INDEX[shop_id]
    souk = data.SHOP_SOUK[shop]
    if state.shops[shop] >= 0:
        return f"shop {shop_id} already holds a good"
    owner = state.souk_owner[souk]
    if owner >= 0 and owner != state.actor:
        return f"souk {data.SOUKS[souk].id} is occupied by seat {owner}"
    if state.quarter >= 0 and data.SOUKS[souk].quarter != state.quarter:
        return f"goods go to the {data.QUARTERS[state.quarter]} quarter"
    quarter = data.SOUKS[souk].quarter
    if shop not in city.legal_shops(state, state.actor, quarter):
        return "finish your partly filled souk of this quarter before starting another"
    return None


GAME = Yspahan()
