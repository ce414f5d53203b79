"""A rematch inside the room cores (SPEC section 9), at chosen moments: the new room's
:class:`~server.room_state.Admit` and the finished room's :class:`~server.room_state.Moved`.

The socket tests (tests/server/test_rematch.py) play whole rematches; these hold what they
cannot time: a member who left the finished room before the move, a store that refuses the
seats, the order of what the new room does.
"""

from __future__ import annotations

from protocol.errors import ErrorCode, RequestError
from server.effects import Failed, Forward, StoreSeats
from server.room_state import Admit, Moved, RoomState
from tests.server.core.twin import ROOM, Member, Twin, started, to_move

OLD = "old"


def _movers(*seats: int) -> list[Member]:
    """Members of the finished room ``OLD``, holding ``seats`` there."""
    out = []
    for index in seats:
        member = Member(f"p{index}")
        member.rooms[OLD] = index
        out.append(member)
    return out


def test_admit_seats_the_players_stores_and_starts_before_anyone_is_told() -> None:
    twin = Twin(3)
    twin.open()
    a, b, c = _movers(0, 1, 2)
    watcher = Member("w")
    watcher.rooms[OLD] = None
    seats = tuple((m.conn, i, f"n{i}") for i, m in enumerate((a, b, c)))
    twin.handle(Admit(7, OLD, seats, (watcher.conn,)), b)
    assert twin.core.state is RoomState.PLAYING
    kinds = twin.kinds()
    first_frame = kinds.index("Send")
    assert "StoreSeats" in kinds[:first_frame]  # (stored, the start with it, before a frame)
    stored = next(e for e in twin.effects if isinstance(e, StoreSeats))
    assert stored.meta.state == "playing" and all(stored.meta.tokens)
    for index, member in enumerate((a, b, c)):
        (joined,) = member.of_type("joined")
        assert joined["room"] == ROOM and joined["seat"] == index and "id" not in joined
        assert joined["token"] and joined["info"]["state"] == "playing"
        assert joined["moved_from"] == OLD
        assert member.rooms == {OLD: index, ROOM: index}  # (it leaves OLD when OLD hears of it)
        assert [s["name"] for s in joined["info"]["seats"]] == ["n0", "n1", "n2"]
    assert [f["seat"] for f in watcher.of_type("joined")] == [None]
    assert not any(f["type"] == "room" for m in (a, b, c, watcher) for f in m.frames)
    (ack,) = [f for f in b.frames if f.get("id") == 7]
    assert ack["type"] == "ack" and ack["room"] == ROOM and ack["rev"] == 0
    (forward,) = [e for e in twin.effects if isinstance(e, Forward)]
    assert forward.room == OLD and isinstance(forward.command, Moved)
    assert list(forward.command.members) == [a, b, c, watcher] and forward.command.to == ROOM


def test_a_member_who_left_the_finished_room_is_not_moved_and_its_seat_stays_free() -> None:
    twin = Twin(3)
    twin.open()
    a, b, c = _movers(0, 1, 2)
    del b.rooms[OLD]  # (it left the finished room after the lobby looked)
    seats = tuple((m.conn, i, f"n{i}") for i, m in enumerate((a, b, c)))
    twin.handle(Admit(1, OLD, seats, ()), a)
    assert twin.core.state is RoomState.OPEN
    assert [s.taken for s in twin.core.seating.seats] == [True, False, True]
    assert b.frames == [] and ROOM not in b.rooms
    (ack,) = [f for f in a.frames if f.get("id") == 1]
    assert ack["info"]["state"] == "open"
    (forward,) = [e for e in twin.effects if isinstance(e, Forward)]
    assert isinstance(forward.command, Moved) and list(forward.command.members) == [a, c]


def test_seats_the_store_refuses_are_released_and_nobody_is_moved() -> None:
    twin = Twin(2)
    twin.open()
    a, b = _movers(0, 1)
    # (the keeper answers a store that cannot record seats so: server.keeper)
    twin.fail[StoreSeats] = Failed(RequestError(ErrorCode.UNAVAILABLE, "storage unavailable"))
    seats = tuple((m.conn, i, f"n{i}") for i, m in enumerate((a, b)))
    twin.handle(Admit(3, OLD, seats, ()), a)
    (answer,) = [f for f in a.frames if f.get("id") == 3]
    assert answer["type"] == "error" and answer["code"] == "unavailable", answer
    assert not any(s.taken for s in twin.core.seating.seats)
    assert twin.core.state is RoomState.OPEN
    assert a.rooms == {OLD: 0} and b.frames == []
    assert not any(isinstance(e, Forward) for e in twin.effects)


def test_moved_members_leave_the_finished_room_silently_and_it_goes_when_empty() -> None:
    twin = Twin(2, idle_ttl=60.0)
    members = started(twin, "ann", "bob")
    watcher, stays = Member("w"), Member("v")
    for spectator in (watcher, stays):
        assert twin.request(spectator, {"type": "spectate"})["type"] == "joined"
    while twin.core.state is RoomState.PLAYING:
        mover = members[to_move(twin)]
        assert twin.request(mover, {"type": "act", "rev": mover.rev, "choice": 0})["type"] == "ack"
    for member in (*members, watcher, stays):
        member.take()
    twin.handle(Moved("new", (members[0].conn, members[1].conn, watcher.conn)))
    assert all(ROOM not in m.rooms for m in (*members, watcher))
    assert [m.frames for m in (*members, watcher)] == [[], [], []]
    assert [s.conn for s in twin.core.seating.seats] == [None, None]
    (room,) = stays.of_type("room")  # (the one left is told who is here now)
    assert room["info"]["spectators"] == 1
    assert twin.request(stays, {"type": "leave"})["type"] == "ack"
    twin.advance(60.0)
    assert twin.core.state is RoomState.CLOSED
