"""RoomMeta, the typed room metadata: the map a room stores round-trips, and any stored map
(partial, older, garbage) reads without raising, each bad field at its default."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.store import RoomMeta, SeatMeta
from server.store.meta import replay_fields
from tests.server.persistence.conftest import tiny_meta


def _seat(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "seat": i,
        "name": "",
        "taken": False,
        "bot": False,
        "connected": False,
        "bot_kind": None,
        "standin": False,
        "forfeited": False,
    } | extra


def _written(**extra: Any) -> dict[str, Any]:
    """A meta as a started room with clocks writes it (``Room.meta()`` and the seed)."""
    return {
        "room": "r1",
        "game": "yspahan",
        "players": 2,
        "options": {"edition": "base"},
        "public": False,
        "state": "playing",
        "rev": 12,
        "seats": [
            _seat(0, name="ann", taken=True, connected=True),
            _seat(1, bot=True, bot_kind="heuristic", connected=True),
        ],
        "spectators": 3,
        "spectator_delay": 5,
        "spectator_chat": False,
        "paused": False,
        "clock": {"initial": 300, "increment": 5, "on_timeout": "bot"},
        "tokens": ["ab" * 16, ""],
        "quick": True,
        "host": "ann",
        "bot": "heuristic",
        "clock_state": {"remaining_ms": [1000, 2000], "running": 0},
        "seed": 42,
    } | extra


def test_the_map_a_room_stores_round_trips() -> None:
    for data in (_written(), _written(replay_of="old", paused=True)):
        assert RoomMeta.from_json(data).to_json() == data
    lean = tiny_meta("t")  # (seats of the tests' own shape: they gain the defaults)
    meta = RoomMeta.from_json(lean)
    assert RoomMeta.from_json(meta.to_json()) == meta and meta.seed == 7


def test_fields_are_typed_on_the_way_in() -> None:
    meta = RoomMeta.from_json(_written())
    assert meta.seats[1] == SeatMeta(1, bot=True, bot_kind="heuristic", connected=True)
    assert meta.free_seats == 1 and meta.tokens == ("ab" * 16, "")
    assert (
        meta.seed == 42
        and meta.players == 2
        and meta.clock_state
        == {
            "remaining_ms": [1000, 2000],
            "running": 0,
        }
    )


def test_a_partial_meta_takes_the_defaults() -> None:
    """A listing reads a few fields of another node's room; a room older than a field lacks it."""
    meta = RoomMeta.from_json({"game": "tiny", "seats": [{"taken": True}, {}]}, room="r9")
    assert (meta.room, meta.game, meta.state, meta.public, meta.free_seats) == (
        "r9",
        "tiny",
        "open",
        True,
        1,
    )
    assert meta.players is None and meta.seed is None and meta.options == {}
    assert meta.bot == "random" and meta.clock is None and meta.clock_state is None
    assert "seed" not in meta.to_json() and "clock" not in meta.to_json()


def test_a_field_of_the_wrong_type_is_read_as_missing() -> None:
    meta = RoomMeta.from_json(
        {
            "game": 7,
            "players": "3",
            "options": [1],
            "seed": True,
            "seats": "x",
            "tokens": [1, "ab"],
            "state": None,
            "clock": "fast",
        }
    )
    assert meta.game is None and meta.players is None and meta.options is None
    assert meta.seed is None and meta.seats == () and meta.tokens == ("", "ab")
    assert meta.state == "open" and meta.clock is None


JSONish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
FIELDS = st.sampled_from([*sorted(_written()), "replay_of", "other"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(FIELDS, JSONish, max_size=12))
def test_any_stored_map_is_read_without_raising(data: dict[str, Any]) -> None:
    meta = RoomMeta.from_json(data, room="r")
    assert RoomMeta.from_json(meta.to_json()) == meta


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(FIELDS, JSONish, max_size=12))
def test_the_replay_fields_read_as_the_whole_meta_reads_them(data: dict[str, Any]) -> None:
    """The memory store's archive reads only these four (``replay_fields``), as ``from_json``."""
    meta = RoomMeta.from_json(data, room="r")
    assert replay_fields(data) == (meta.game, meta.players, meta.options, meta.seed)
    assert replay_fields(_written(seed=5)) == ("yspahan", 2, {"edition": "base"}, 5)


def test_a_record_made_without_options_has_a_map_of_its_own() -> None:
    """(``RoomMeta``'s own ``__init__``, compiled, makes the default map per record.)"""
    first, second = RoomMeta("r1", "tiny", 2), RoomMeta("r2", "tiny", 2)
    assert first.options == {} and first.options is not second.options
    assert SeatMeta(3) == SeatMeta(3, "", False, False, False, None, False, False)


def test_a_stored_int_stays_an_int() -> None:
    """A number stored as an int is written back as one, compiled too (``int | float``: a
    compiled ``float`` field would make it ``3.0``, other bytes in the store)."""
    written = RoomMeta.from_json(_written(spectator_delay=3)).to_json()
    assert type(written["spectator_delay"]) is int and written["spectator_delay"] == 3
    assert type(RoomMeta.from_json(_written(spectator_delay=2.5)).spectator_delay) is float
