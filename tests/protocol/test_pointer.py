"""protocol/pointer.py: RFC 6901 pointers written and parsed, list indices checked."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.pointer import PointerError, escape, index, parse, pointer, unescape


def test_escaping_round_trips() -> None:
    assert escape("a/b~c") == "a~1b~0c"
    assert unescape("a~1b~0c") == "a/b~c"
    assert unescape("~01") == "~1"
    assert pointer("x/y", 3, "~") == "/x~1y/3/~0"
    assert pointer() == ""


@given(st.lists(st.text(max_size=6), max_size=5))
def test_a_written_pointer_parses_back_to_its_tokens(tokens: list[str]) -> None:
    assert parse(pointer(*tokens)) == tokens


def test_the_whole_document_and_malformed_pointers() -> None:
    assert parse("") == []
    assert parse("/") == [""]
    for bad in ("a", "a/b", 3, None):
        with pytest.raises(PointerError):
            parse(bad)


@pytest.mark.parametrize(
    ("token", "length", "adding", "expected"),
    [("0", 3, False, 0), ("2", 3, False, 2), ("3", 3, True, 3), ("-", 3, True, 3)],
)
def test_list_indices(token: str, length: int, adding: bool, expected: int) -> None:
    assert index(length, token, adding=adding) == expected


@pytest.mark.parametrize(
    ("token", "adding"),
    [("3", False), ("4", True), ("-", False), ("01", True), ("-1", True), ("x", True),
     ("", True), ("\u00b2", True), ("\u0663", True), (" 1", True)],
)  # fmt: skip
def test_list_indices_that_do_not_fit_are_pointer_errors(token: str, adding: bool) -> None:
    with pytest.raises(PointerError):
        index(3, token, adding=adding)
