"""The group commit's EVALSHA commands packed by ``server.store.client._evalsha``: hiredis's
``pack_command`` bytes, which the store sent before, for every type of argument it takes."""

from __future__ import annotations

from typing import Any

import pytest
from hiredis import pack_command
from hypothesis import given, settings
from hypothesis import strategies as st

from server.store.client import _evalsha, bulk, evalsha_append, evalsha_head


class Script:
    sha = "0123456789abcdef0123456789abcdef01234567"


arguments = (
    st.text(max_size=40)
    | st.binary(max_size=40)
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=6), st.lists(arguments, max_size=8))
def test_the_commands_are_hiredis_bytes(names: list[str], args: list[Any]) -> None:
    expected = pack_command(("EVALSHA", Script.sha, len(names), *names, *args))
    assert _evalsha(Script, names, args) == expected
    # A call's head packed once before (the store's appends): the same bytes.
    assert _evalsha(Script, names, args, evalsha_head(Script, names)) == expected


def test_long_arguments_and_non_ascii_keys() -> None:
    names = ["oasis:{r\u00e9}:meta", "k" * 300]
    args = [b"\x00" * 70_000, "\u2603" * 100, 2**64 - 1, -(2**63), 0.1]
    expected = pack_command(("EVALSHA", Script.sha, len(names), *names, *args))
    assert _evalsha(Script, names, args) == expected


@pytest.mark.parametrize("wrong", [True, None, bytearray(b"x"), [1], {"a": 1}])
def test_what_hiredis_refuses_is_refused(wrong: Any) -> None:
    with pytest.raises(TypeError):
        pack_command(("EVALSHA", Script.sha, 0, wrong))
    with pytest.raises(TypeError):
        _evalsha(Script, [], [wrong])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(max_size=30), min_size=1, max_size=6),
    st.integers(min_value=0, max_value=2**63 - 1),
    st.binary(max_size=300),
    st.text(max_size=40),
)
def test_an_append_packed_in_one_piece_is_the_same_command(
    names: list[str], rev: int, blob: bytes, token: str
) -> None:
    """The append's fast path (no meta fields) writes what the general one writes."""
    head = evalsha_head(Script, names)
    expected = _evalsha(Script, names, [rev, blob, token], head)
    assert evalsha_append(head, len(names), rev, blob, bulk(token)) == expected
    assert expected == pack_command(("EVALSHA", Script.sha, len(names), *names, rev, blob, token))
