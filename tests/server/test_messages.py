"""protocol/messages.py: untrusted client frames in, typed requests out."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import messages as m
from protocol.errors import RequestError
from tests.protocol.strategies import documents, keys

GOOD: list[tuple[dict[str, Any], Any]] = [
    ({"type": "hello", "version": 1, "client": "cli"}, m.Hello(None, 1, "cli")),
    ({"type": "list_rooms", "id": 4}, m.ListRooms(4, None)),
    (
        {"type": "create", "game": "tiny", "players": 2, "public": False, "spectator_delay": 5},
        m.Create(None, "tiny", 2, {}, False, 5.0, True, None),
    ),
    ({"type": "join", "room": "r1", "seat": 1}, m.Join(None, "r1", 1, "player", None, None)),
    (
        {"type": "join", "room": "r1", "token": "t", "rev": 9},
        m.Join(None, "r1", None, "player", "t", 9),
    ),
    ({"type": "quick", "game": "tiny", "players": 2, "name": "a"}, m.Quick(None, "tiny", 2, "a")),
    ({"type": "spectate", "room": "r", "id": "x"}, m.Spectate("x", "r", None)),
    ({"type": "leave", "room": "r"}, m.Leave(None, "r")),
    ({"type": "rematch", "room": "r", "id": 4}, m.Rematch(4, "r")),
    ({"type": "start", "room": "r", "bots": True}, m.Start(None, "r", True)),
    ({"type": "act", "room": "r", "rev": 3, "choice": 0}, m.Act(None, "r", 3, 0, None)),
    (
        {"type": "act", "room": "r", "rev": 3, "choice": {"kind": "draw"}, "seat": 1},
        m.Act(None, "r", 3, {"kind": "draw"}, 1),
    ),
    ({"type": "undo", "room": "r", "rev": 4, "id": 9}, m.Undo(9, "r", 4)),
    ({"type": "sync", "room": "r"}, m.Sync(None, "r")),
    ({"type": "chat", "room": "r", "text": "hi"}, m.Chat(None, "r", "hi")),
    ({"type": "ping", "future": "field"}, m.Ping(None)),
    ({"type": "replay", "room": "r", "interval": 0}, m.Replay(None, "r", 0.0)),
    ({"type": "replay", "room": "r"}, m.Replay(None, "r", m.DEFAULT_REPLAY_INTERVAL)),
]


@pytest.mark.parametrize(("frame", "request_"), GOOD)
def test_every_client_frame_type_parses(frame: dict[str, Any], request_: Any) -> None:
    assert m.parse(frame) == request_


def test_every_client_type_is_covered() -> None:
    assert {frame["type"] for frame, _ in GOOD} == m.CLIENT_TYPES


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        ({"type": "hello"}, "version"),
        ({"type": "hello", "version": True}, "version"),
        ({"type": "create", "game": "tiny", "players": 2.0}, "players"),
        ({"type": "create", "game": "tiny", "players": 2, "options": []}, "options"),
        (
            {"type": "create", "game": "tiny", "players": 2, "spectator_delay": -1},
            "spectator_delay",
        ),
        ({"type": "join", "room": ""}, "room"),
        ({"type": "join", "room": "r", "seat": -1}, "seat"),
        ({"type": "join", "room": "r", "name": "n" * 33}, "name"),
        ({"type": "act", "room": "r", "rev": 1, "choice": None}, "choice"),
        ({"type": "undo", "room": "r"}, "rev"),
        ({"type": "undo", "room": "r", "rev": True}, "rev"),
        ({"type": "chat", "room": "r", "text": 5}, "text"),
        ({"type": "rematch"}, "room"),
    ],
)
def test_wrong_fields_are_bad_requests_naming_the_field(frame: dict[str, Any], field: str) -> None:
    with pytest.raises(RequestError) as error:
        m.parse(frame)
    assert error.value.code == "bad_request" and f"'{field}'" in error.value.message


@pytest.mark.parametrize("choice", [True, "first", 1.5, [0]])
def test_a_choice_of_another_type_reaches_the_room_which_calls_it_malformed(choice: Any) -> None:
    """SPEC section 7: ``malformed_choice`` comes after the room's checks, not from parsing."""
    act = m.parse({"type": "act", "room": "r", "rev": 1, "choice": choice})
    assert isinstance(act, m.Act) and act.choice == choice


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([*sorted(m.CLIENT_TYPES), "nope"]),
    st.dictionaries(
        st.sampled_from(["id", "room", "rev", "choice", "game", "players", "text", "seat", "token"])
        | keys,
        documents(8),
        max_size=6,
    ),
)
def test_any_frame_parses_or_is_refused_with_our_error(kind: str, fields: dict[str, Any]) -> None:
    frame = {**fields, "type": kind}
    code = None
    try:
        m.parse(frame)
    except RequestError as error:
        code = error.code
    assert code in (None, "bad_request", "unknown_type")
