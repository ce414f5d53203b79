"""The room's stored metadata: :meth:`RoomCore.meta` is the record the store would read back.

The core builds the :class:`~server.store.meta.RoomMeta` itself (no map made and parsed back on
every join and at creation); these check, at each point of a room's life, that it is the record
``RoomMeta.from_json`` makes of the stored map as the store's module doc defines it (the room's
``info`` plus tokens, quick, host, bot and clock_state), and that it stores as that map.
"""

from __future__ import annotations

from typing import Any

from server.core import RoomCore
from server.room_state import Gone, RoomState
from server.store import RoomMeta
from tests.server.core.twin import Member, Twin, seated, started, to_move


def _stored_map(core: RoomCore) -> dict[str, Any]:
    """The stored map, made the long way: the room's ``info`` and what only a restore needs."""
    info = core.info()
    info["tokens"] = core.seating.digests()
    info["quick"] = core.settings.quick
    info["host"] = core.settings.host
    info["bot"] = core.settings.bot
    clock_state = core.timekeeper.stored(None)
    if clock_state is not None:
        info["clock_state"] = clock_state
    return info


def _check(core: RoomCore) -> RoomMeta:
    meta = core.meta()
    stored = _stored_map(core)
    assert meta == RoomMeta.from_json(stored)
    assert meta.to_json() == stored
    assert meta.options is not core.settings.options  # (a record never shares the room's map)
    return meta


def test_the_meta_of_an_open_room_is_its_stored_map_as_seats_are_taken_and_left() -> None:
    twin = Twin(3, host="ann")
    twin.open()
    meta = _check(twin.core)
    assert meta.free_seats == 3 and meta.tokens == ("", "", "")
    (ann, bob) = seated(twin, "ann", "bob")
    meta = _check(twin.core)
    assert [s.name for s in meta.seats] == ["ann", "bob", ""]
    assert [s.connected for s in meta.seats] == [True, True, False]
    assert meta.tokens[0] and meta.tokens[1] and not meta.tokens[2]
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    assert _check(twin.core).spectators == 1
    twin.handle(Gone(), bob)
    assert _check(twin.core).seats[1].connected is False
    assert twin.request(ann, {"type": "leave"})["type"] == "ack"
    assert _check(twin.core).seats[0].taken is False


def test_the_meta_of_a_clock_room_with_bots_is_its_stored_map_until_the_match_ends() -> None:
    twin = Twin(3, seed=5, clock={"initial": 30, "increment": 2}, host="ann")
    twin.open()
    (ann,) = seated(twin, "ann")
    assert twin.request(ann, {"type": "start", "bots": True})["type"] == "ack"
    meta = _check(twin.core)
    assert meta.state == "playing" and meta.clock is not None and meta.clock_state is not None
    assert [s.bot_kind for s in meta.seats] == [None, "random", "random"]
    while twin.core.state is RoomState.PLAYING:
        assert to_move(twin) == 0
        twin.advance(1.0)
        twin.request(ann, {"type": "act", "rev": twin.core.rev, "choice": 0})
        assert _check(twin.core).rev == twin.core.rev
    assert _check(twin.core).state == "finished"


def test_the_meta_of_a_started_room_names_its_state_and_rev() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    twin.request(members[seat], {"type": "act", "rev": 0, "choice": 0})
    meta = _check(twin.core)
    assert (meta.state, meta.rev, meta.clock, meta.clock_state) == ("playing", 1, None, None)


def test_info_and_meta_name_every_state_by_its_value() -> None:
    # (the description finds a state's name by identity, not through the enum's Python property)
    twin = Twin()
    core = twin.core
    for state in RoomState:
        core.status.state = state
        assert core.info()["state"] == state.value
        assert core.meta().state == state.value
