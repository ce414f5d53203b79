"""Choice labels: every kind the engines offer gets a readable, distinct text."""

from __future__ import annotations

import pytest

from clients.choices import generic, label, numbered
from clients.hexgrid import Grid
from tests.clients.samples import samples


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_every_choice_kind_of_real_matches_has_a_pretty_label(game: str) -> None:
    for sample in samples(game):
        choices = sample.view["own"]["choices"] if sample.view["own"] else []
        for choice in choices:
            text = label(game, choice)
            assert text and text != generic(choice), (sample.decision, choice)


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
def test_the_labels_of_one_decision_are_all_different(game: str) -> None:
    for sample in samples(game):
        choices = sample.view["own"]["choices"] if sample.view["own"] else []
        texts = [text for _, text in numbered(game, choices)]
        assert len(set(texts)) == len(texts), (sample.decision, texts)


def test_choices_are_numbered_from_one() -> None:
    choices = [{"kind": "end_turn"}, {"kind": "pass"}]
    assert numbered("ishtar", choices) == [(1, "end your turn"), (2, "do no special action")]


def test_unknown_kinds_and_games_get_the_generic_label() -> None:
    choice = {"kind": "jump", "to": [1, 2], "far": None}
    assert label("ishtar", choice) == "jump: to=(1,2) far=-"
    assert label("chess", {"kind": "move", "from": "e2"}) == "move: from=e2"


def test_a_known_kind_with_unexpected_arguments_falls_back_to_generic() -> None:
    assert label("ishtar", {"kind": "pile"}) == "pile"
    assert label("yspahan", {"kind": "place", "shop": 3}) == "place: shop=3"


def test_ishtar_labels_read_well() -> None:
    assert label("ishtar", {"kind": "pile", "pile": 0, "cost": 2}) == (
        "take from pile 1 (pay 2 gems to move the can)"
    )
    assert label("ishtar", {"kind": "tree", "card": "tree-05", "at": [1, -2]}) == (
        "plant tree tree-05 at (1,-2)"
    )


def test_yspahan_labels_read_well() -> None:
    take = {"kind": "take", "floor": "gold", "action": "floor", "extra": "3_gold"}
    assert label("yspahan", take) == "gold dice: gold action (+1 die, discarding 3_gold)"
    assert label("yspahan", {"kind": "place", "shop": "br2.0"}) == "put a good in br2.0 (barrels)"
    assert label("yspahan", {"kind": "swap", "camels": -2}) == "sell 2 camels for 2 gold"


def test_a_label_from_the_server_is_shown_as_it_is_sent_but_made_printable() -> None:
    choice = {"kind": "take", "floor": "gold", "label": "gain 4 gold\x1b]52;c;aGk=\x07"}
    assert label("yspahan", choice) == "gain 4 gold"
    board = {"tower": [{"floor": "gold", "value": 6, "white": 4, "yellow": 0}]}
    assert label("yspahan", choice, None, board) == "gain 4 gold"


def test_what_the_board_shows_completes_the_client_s_own_labels() -> None:
    board = {
        "tower": [{"floor": "sacks", "value": 3, "white": 2, "yellow": 1}],
        "display": [
            {"card": "tree-01", "name": "Tamarisk", "cost": {"purple": 1, "red": 0}, "points": 1}
        ],
        "piles": [{"top": {"shape": "chevron", "spaces": [{"flowers": 2, "icon": "skill"},
                                                          {"flowers": 0}, {"flowers": 1}]}}],
    }  # fmt: skip
    take = {"kind": "take", "floor": "sacks", "action": "floor", "extra": None}
    assert label("yspahan", take, None, board) == "sacks dice: place 3 sacks"
    steward = {"kind": "take", "floor": "sacks", "action": "steward"}
    assert label("yspahan", steward, None, board) == "sacks dice: move the steward 3 squares"
    assert label("yspahan", {"kind": "build", "building": "crane"}, None, board).startswith(
        "build the Crane, 4 camels 4 gold: +1 good"
    )
    assert label("ishtar", {"kind": "buy", "card": "tree-01"}, None, board) == (
        "buy Tamarisk (1p → 1 pts)"
    )
    pile = label("ishtar", {"kind": "pile", "pile": 0, "cost": 0}, None, board)
    assert pile == "take from pile 1: chevron 2 skill | , | 1"
    assert label("ishtar", {"kind": "skill", "skill": "E"}, None, board) == (
        "unlock skill E: end: 7 pts per assistant still in your supply"
    )


def test_a_choice_on_an_ishtar_space_starts_with_the_space_s_name_on_the_map() -> None:
    grid = Grid.of([(0, 0), (1, 0), (0, 1)])
    assert label("ishtar", {"kind": "assistant", "at": [1, 0]}, grid) == (
        "b1: put an assistant on the flowerbed here"
    )
    bloom = {"kind": "bloom", "token": "bloom-single-1", "cells": [[0, 1]]}
    assert label("ishtar", bloom, grid).startswith("a2: lay bloom token")
