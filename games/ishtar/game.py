"""The Ishtar rules engine on the game contract: a step table dispatching to the rule modules.

Each turn step names its choice-lister and its applier in ``_STEPS`` (a transition table in the
h11 manner); ``decision`` looks the step up, ``apply`` runs the applier and drops the cached
decision. Match has already checked the choice, so appliers trust it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Final

from games.base import JSON, Choice, Decision, Event, Game, Result
from games.ishtar import actions, labels, snapshot, turn, views
from games.ishtar import state as st
from games.ishtar.edition import Edition, default_edition
from games.ishtar.scoring import final_scores, winners
from games.ishtar.setup import check_options, new_match
from games.ishtar.state import State
from games.rng import Rng

Lister = Callable[[State], Sequence[Choice]]
Applier = Callable[[State, Choice], list[Event]]

_STEPS: Final[dict[str, tuple[Lister, Applier]]] = {
    st.CHOOSE: (turn.choices_choose, turn.apply_choose),
    st.PAY: (turn.choices_pay, turn.apply_pay),
    st.POSITION: (turn.choices_position, turn.apply_position),
    st.ROTATION: (turn.choices_rotation, turn.apply_rotation),
    st.SPECIAL: (actions.special_choices, actions.apply_special),
    st.TAKE_GEM: (actions.choices_take_gem, actions.apply_take_gem),
    st.BLOOM: (actions.choices_bloom, actions.apply_bloom),
    st.RESERVE_TREE: (actions.choices_reserve_tree, actions.apply_reserve_tree),
    st.RESERVE_TILE: (actions.choices_reserve_tile, actions.apply_reserve_tile),
    st.PLANT: (actions.choices_plant, actions.apply_plant),
    st.TREE: (actions.choices_tree, actions.apply_tree),
}


class Ishtar(Game[State]):
    """Ishtar: Gardens of Babylon, 2 to 4 players, on one edition's components."""

    name = "ishtar"
    title = "Ishtar: Gardens of Babylon"
    min_players = 2
    max_players = 4
    derived_fields: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "position": ("rotations",),
        "rotation": ("cells",),
    }
    """A position's ``rotations`` and a rotation's ``cells`` follow from its tile, anchor and
    rotation: an answered map may leave them out (it must then name only those)."""

    def __init__(self, edition: Edition | None = None) -> None:
        self._edition = edition
        self._static: dict[str, JSON] | None = None

    @property
    def edition(self) -> Edition:
        if self._edition is None:
            self._edition = default_edition()
        return self._edition

    def check_options(self, players: int, options: Mapping[str, object]) -> dict[str, JSON]:
        return check_options(self.edition, players, options)

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> State:
        return new_match(self.edition, players, options, seed)

    def decision(self, state: State) -> Decision | None:
        if state.over:
            return None
        found = state.cache.get("decision")
        if found is None:
            step = state.turn.step
            found = Decision(state.current, step, _STEPS[step][0](state))
            state.cache["decision"] = found
        assert isinstance(found, Decision)
        return found

    def seat_to_move(self, state: State) -> int | None:
        return None if state.over else state.current

    revealing: ClassVar[frozenset[str]] = frozenset({"tile_revealed", "display_refilled"})
    kept_fields: ClassVar[frozenset[str]] = frozenset(
        {
            "terrain",
            "laid",
            "beds",
            "fountains",
            "rock_gems",
            "provisional",
            "piles",
            "display",
            "tokens",
            "players",
        }
    )
    """The pile the can left turns its new top face up (ISH-CHOOSE-10), a reserved tile's pile
    too, and the tree display is refilled from the deck (ISH-TREE-10): undo stops there."""

    def generator(self, state: State) -> Rng:
        return state.rng

    def turn_count(self, state: State) -> int:
        return state.turns_played

    def apply(self, state: State, choice: Choice) -> list[Event]:
        step = state.turn.step
        state.cache.clear()
        events = _STEPS[step][1](state, choice)
        if state.over:
            result = self.result(state)
            assert result is not None
            events.append(Event("game_over", result.to_json()))
        return events

    def shared_view(self, state: State) -> dict[str, JSON]:
        return views.shared_view(state)

    def own_view(self, state: State, seat: int) -> dict[str, JSON]:
        return views.own_view(state, seat)

    def result(self, state: State) -> Result | None:
        if not state.over:
            return None
        rows = final_scores(state)
        return Result(
            tuple(r["total"] for r in rows),
            winners(rows),
            tuple(rows),
            state.turns_played,
        )

    def dump(self, state: State) -> dict[str, JSON]:
        return snapshot.dump(state)

    def load(self, data: Mapping[str, JSON]) -> State:
        return snapshot.load(self.edition, data)

    def hidden_variant(self, state: State, viewer: int | None, rng: Rng) -> State:
        return snapshot.hidden_variant(state, viewer, rng)

    def why_illegal(self, state: State, choice: Choice) -> str | None:
        from games.ishtar.explain import why_illegal

        return why_illegal(state, choice)

    def describe(self, state: State, decision: Decision) -> list[Choice]:
        return labels.describe(state, decision)

    def prompt(self, state: State, decision: Decision) -> str:
        return labels.prompt(state, decision)

    def narrate(self, state: State, events: list[Event]) -> list[Event]:
        return labels.narrate(state, events)

    def static_data(self) -> dict[str, JSON]:
        from games.ishtar.static import static_data

        found = self._static
        if found is None:
            found = self._static = static_data(
                self.edition, self.title, (self.min_players, self.max_players)
            )
        return found

    def options_schema(self) -> dict[str, JSON]:
        """``layout``: the terrain boards to play on (ISH-SETUP-05); the preset when absent."""
        edition = self.edition
        entry: dict[str, JSON] = {
            "type": "object",
            "properties": {
                "board": {"enum": list(edition.boards)},
                "side": {"enum": ["A", "B"]},
                "rotation": {"type": "integer", "minimum": 0, "maximum": 5},
                "macro": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": -20, "maximum": 20},
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            "required": ["board", "side", "rotation", "macro"],
            "additionalProperties": False,
        }
        return {
            "type": "object",
            "properties": {
                "layout": {
                    "description": "players + 2 terrain boards, each once, connected, on distinct "
                    "macro hexes; the edition's preset for the player count when absent",
                    "type": "array",
                    "items": entry,
                    "minItems": min(edition.boards_by_players.values()),
                    "maxItems": max(edition.boards_by_players.values()),
                }
            },
            "additionalProperties": False,
        }


GAME = Ishtar()
