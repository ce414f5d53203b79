"""Choice texts: the server's labels as sent (made printable), a generic form without one."""

from __future__ import annotations

import pytest

from clients.choices import generic, label, numbered
from clients.hexgrid import Grid
from tests.clients.samples import samples


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_choice_of_real_matches_shows_the_server_s_label(game: str) -> None:
    seen = 0
    for sample in samples(game):
        choices = sample.view["own"]["choices"] if sample.view["own"] else []
        for choice in choices:
            assert label(game, choice) == choice["label"], (sample.decision, choice)
            seen += 1
    assert seen > 20


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_the_labels_of_one_decision_are_all_different(game: str) -> None:
    for sample in samples(game):
        choices = sample.view["own"]["choices"] if sample.view["own"] else []
        texts = [text for _, text in numbered(game, choices)]
        assert len(set(texts)) == len(texts), (sample.decision, texts)


def test_choices_are_numbered_from_one() -> None:
    choices = [{"kind": "end_turn", "label": "end your turn"}, {"kind": "pass", "label": "pass"}]
    assert numbered("ishtar", choices) == [(1, "end your turn"), (2, "pass")]


def test_a_choice_without_a_label_gets_the_generic_form() -> None:
    choice = {"kind": "jump", "to": [1, 2], "far": None}
    assert label("ishtar", choice) == generic(choice) == "jump: to=(1,2) far=-"
    assert label("chess", {"kind": "move", "from": "e2"}) == "move: from=e2"
    assert label("ishtar", {"kind": "pile"}) == "pile"
    assert label("yspahan", {"kind": "move", "to": "W7", "effects": {"sends": []}}) == (
        "move: to=W7"
    )


def test_a_label_from_the_server_is_shown_as_it_is_sent_but_made_printable() -> None:
    choice = {"kind": "take", "floor": "gold", "label": "gain 4 gold\x1b]52;c;aGk=\x07"}
    assert label("yspahan", choice) == "gain 4 gold"
    assert generic({"kind": "x\x1b[2J", "y": "z\x07"}) == "x: y=z"


def test_a_choice_on_an_ishtar_space_starts_with_its_name() -> None:
    grid = Grid.of([(0, 0), (1, 0), (0, 1)], {(0, 0): "a1", (1, 0): "b1", (0, 1): "a2"})
    said = {"kind": "assistant", "at": [1, 0], "label": "put an assistant on a bed at b1"}
    assert label("ishtar", said, grid) == "b1: put an assistant on a bed here"
    first = {"kind": "position", "at": [0, 0], "label": "put the first space on a1 (2 ways)"}
    assert label("ishtar", first, grid) == "a1: put the first space here (2 ways)"
    unsaid = {"kind": "bloom", "token": "t", "cells": [[0, 1]], "label": "lay a token"}
    assert label("ishtar", unsaid, grid) == "a2: lay a token"
    turn = {"kind": "rotation", "at": [0, 0], "rotation": 1, "label": "rotation 1"}
    assert label("ishtar", turn, grid) == "rotation 1"
