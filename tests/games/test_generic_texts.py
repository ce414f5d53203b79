"""The generic labels and event texts of a game without a labels module (the tests' tiny game),
and their memo: the same text whether made or remembered, values of other types never taken
for one another (``1``, ``True`` and ``1.0`` are equal keys to a dict but read differently)."""

from __future__ import annotations

import os
import random
from types import MappingProxyType
from typing import Any

import pytest

from games import base
from games.base import generic_label, generic_text


def test_a_choice_reads_as_its_kind_and_arguments_in_words() -> None:
    assert generic_label({"kind": "play", "card": 4}) == "play (card 4)"
    assert generic_label({"kind": "end_turn"}) == "end turn"
    assert generic_label({"pick_up": "tile_a", "n": 2}) == "choice (pick up tile_a, n 2)"
    assert generic_label({"kind": "play", "card": 4}) == "play (card 4)"  # (remembered)


def test_an_event_reads_as_who_did_what() -> None:
    assert generic_text({"kind": "drew", "seat": 1}) == "P2: drew"
    assert generic_text({"kind": "drew", "seat": 1, "card": 3}) == "P2: drew (card 3)"
    assert generic_text({"kind": "game_over", "text": "old"}) == "game over"
    assert generic_text({"seat": 0, "card": 5, "kind": "played"}) == "P1: played (card 5)"
    assert generic_text({"kind": "drew", "seat": 1}) == "P2: drew"  # (remembered)


def test_values_of_other_types_are_never_taken_for_one_another() -> None:
    assert generic_label({"kind": "pick", "n": 1}) == "pick (n 1)"
    assert generic_label({"kind": "pick", "n": True}) == "pick (n True)"
    assert generic_label({"kind": "pick", "n": 1.0}) == "pick (n 1.0)"
    assert generic_label({"kind": "pick", "n": 1}) == "pick (n 1)"
    assert generic_text({"kind": "left", "seat": 1}) == "P2: left"
    assert generic_text({"kind": "left", "seat": True}) == "left"
    assert generic_text({"kind": "left", "seat": 1}) == "P2: left"


def test_a_label_and_a_text_of_the_same_map_are_kept_apart() -> None:
    assert generic_text({"kind": "wait", "seat": 2}) == "P3: wait"
    assert generic_label({"kind": "wait", "seat": 2}) == "wait (seat 2)"


def test_any_mapping_is_read_and_the_memo_stays_bounded() -> None:
    assert generic_label(MappingProxyType({"kind": "take", "gold": 3})) == "take (gold 3)"
    for i in range(base._TEXTS_MAX + 10):
        assert generic_label({"kind": "count", "i": i}) == f"count (i {i})"
    assert len(base._TEXTS) <= base._TEXTS_MAX
    assert generic_label({"kind": "count", "i": base._TEXTS_MAX + 5}) == (
        f"count (i {base._TEXTS_MAX + 5})"
    )


def test_the_native_memo_key_is_the_pythons() -> None:
    """``games._gamesc.text_key`` (where built: :data:`games.base._KEY`) makes the very tuple
    of :func:`games.base._text_key`, or None where it does: maps of every plain type, bools,
    floats, containers, an empty map, a dict subclass and another mapping (str keys and JSON
    values only: the compiled Python refuses others, as its types say).
    Where it is not built it is skipped, except in the compiled tier
    (``OASIS_NATIVE_DIFF=required``)."""
    if base._KEY is base._text_key:
        if os.environ.get("OASIS_NATIVE_DIFF") == "required":
            pytest.fail("games._gamesc is not built")
        pytest.skip("games._gamesc is not built (pure Python)")

    class Sub(dict[str, object]):
        pass

    plain: list[object] = ["a", "", "ünï", 0, -1, 2**70, None]
    other: list[object] = [True, False, 1.0, -0.0, [1], {"a": 1}]
    maps: list[Any] = [{}, Sub(kind="x"), MappingProxyType({"kind": "x"})]
    source = random.Random(19)
    for _ in range(2000):
        values = plain + other if source.random() < 0.3 else plain
        maps.append(
            {f"k{source.randrange(9)}": source.choice(values) for _ in range(source.randrange(6))}
        )
    for mapping in maps:
        for mark in ("label", "text"):
            assert base._KEY(mark, mapping) == base._text_key(mark, mapping)
            key = base._KEY(mark, mapping)
            if key is not None:  # (equal tuples may still differ in types: 1 == True)
                assert [type(v) for v in key] == [type(v) for v in base._text_key(mark, mapping)]
