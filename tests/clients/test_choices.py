"""Choice labels: every kind the engines offer gets a readable, distinct text."""

from __future__ import annotations

import pytest

from clients.choices import generic, label, numbered
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
        "take the top tile of pile 1 (moving the can costs 2 gems)"
    )
    assert label("ishtar", {"kind": "tree", "card": "tree-05", "at": [1, -2]}) == (
        "plant tree tree-05 at (1,-2)"
    )


def test_yspahan_labels_read_well() -> None:
    take = {"kind": "take", "floor": "gold", "action": "floor", "extra": "3_gold"}
    assert label("yspahan", take) == "take the gold dice: gold action (+1 die by discarding 3_gold)"
    assert label("yspahan", {"kind": "place", "shop": "br2.0"}) == (
        "put a good in barrels souk br2, shop 1"
    )
    assert label("yspahan", {"kind": "swap", "camels": -2}) == "sell 2 camels for 2 gold"
