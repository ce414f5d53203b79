"""Acceptance: over 20 random matches per game, every choice has a label, every decision a
prompt, every event a text for every audience, none shows an internal name, and no view holds
a float.

"Internal names" are what the engines use and people should never read: snake_case kinds and
card kinds (``end_turn``, ``3_camels``), and component ids (``tree-25``, ``straight-start-1``,
``bloom-double-2``, ``fountain-red-1``). Names of places on a board that the game reference
defines for people (spaces ``(3,-2)``, squares ``W7``, shops ``sk3.0``) are fine.

Every kind met must also have its own wording in the game's labels module (a kind that falls
back to a generic text fails here, loudly, so a rules change shows what is missing).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from games import registry
from games.base import Match, own_part, shared_part
from games.rng import Rng

INTERNAL = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b|\b[a-z]+(?:-[a-z]+)*-\d+\b")
MATCHES = 20


def _labels(game: str) -> Any:
    module = __import__(f"games.{game}.labels", fromlist=["CHOICES"])
    return module


def internal_names(text: str) -> list[str]:
    return INTERNAL.findall(text)


def floats(value: Any, path: str = "") -> Iterator[str]:
    if isinstance(value, float):
        yield path or "/"
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from floats(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from floats(v, f"{path}/{i}")


def test_the_internal_name_check_sees_ids_and_kinds() -> None:
    assert internal_names("reserve_tree: card=tree-25") == ["reserve_tree", "tree-25"]
    assert internal_names("play 3_camels on straight-start-1") == ["3_camels", "straight-start-1"]
    assert internal_names("bloom-double-2 and fountain-red-1") == [
        "bloom-double-2",
        "fountain-red-1",
    ]
    assert internal_names("move the steward 3 squares to W7: sk3.0 (3,-2), a 2-flower token") == []
    assert list(floats({"a": [1, {"b": 300.0}], "c": 300})) == ["/a/1/b"]


@pytest.mark.parametrize("name", ["ishtar", "yspahan"])
def test_every_choice_decision_and_event_of_random_matches_is_explained(name: str) -> None:
    game = registry.get(name)
    labels = _labels(name)
    seen: dict[str, set[str]] = {"choice": set(), "decision": set(), "event": set()}
    for m in range(MATCHES):
        players = 2 + m % 3
        match = Match.new(game, players, {}, 1000 + m)
        chooser = Rng.from_seed(m)
        while True:
            decision = match.decision
            shared = shared_part(game, match.state, decision)
            assert not list(floats(shared)), (m, list(floats(shared)))
            for seat in range(players):
                own = own_part(game, match.state, seat, decision)
                assert not list(floats(own)), (m, seat, list(floats(own)))
                for choice in own["choices"]:
                    assert isinstance(choice, dict)
                    label = choice["label"]
                    assert isinstance(label, str) and label.strip(), choice
                    assert not internal_names(label), (label, choice)
                    seen["choice"].add(str(choice["kind"]))
            if decision is None:
                break
            turn = shared["turn"]
            assert isinstance(turn, dict)
            prompt = turn["prompt"]
            assert isinstance(prompt, str) and prompt.strip() and not internal_names(prompt), prompt
            seen["decision"].add(decision.kind)
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            for event in events:
                seen["event"].add(event.kind)
                for audience in [*range(players), None]:
                    text = event.project(audience)["text"]
                    assert isinstance(text, str) and text.strip(), event
                    assert not internal_names(text), (text, event)
    assert seen["choice"] <= set(labels.CHOICES), seen["choice"] - set(labels.CHOICES)
    assert seen["decision"] <= set(labels.PROMPTS), seen["decision"] - set(labels.PROMPTS)
    assert seen["event"] <= set(labels.EVENTS), seen["event"] - set(labels.EVENTS)
    assert len(seen["choice"]) >= 10 and len(seen["event"]) >= 15
