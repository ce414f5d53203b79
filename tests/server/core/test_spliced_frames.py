"""The frames the room core splices from compiled code instead of building a frozen dataclass of
:mod:`protocol.frames` and encoding it (a rematch's ``joined`` frames and ``ack``, every ``room``
announcement): the same bytes as the dataclasses' encodings, field by field; and the
announcement a finished room nobody is in would make to no one, left unmade unless a relay
reads the room."""

from __future__ import annotations

import itertools
from typing import Any

from protocol import frames as f
from protocol.codec import pack
from server.effects import Publish, Watch
from server.membership import ack_frame, joined_frame, shared_part
from server.room_state import Moved, RoomState
from tests.server.core.twin import ROOM, Member, Twin, started, to_move

INFO = {
    "room": "r9",
    "game": "tiny",
    "players": 2,
    "state": "playing",
    "seats": [{"name": "ann", "bot": False}, {"name": "bot 2", "bot": True}],
    "spectators": 300,
    "rematch": None,
}
CHATS: tuple[list[dict[str, Any]], ...] = (
    [],
    [{"from": {"seat": 0, "name": "ann"}, "text": "gg", "rev": 12, "ts": 1.5}],
)
VIEW = pack({"shared": {"turn": 1, "board": [1, 2, 3]}, "own": None})


def test_joined_frame_is_the_dataclass_encoding_for_every_combination_of_fields() -> None:
    combos = itertools.product(
        (None, 7, 70_000, "req-1"),  # id
        (None, 0, 3),  # seat
        (None, "0123456789abcdef"),  # hash
        CHATS,
        (None, "t0ken"),
        (None, 0, 1500, 2**40),  # elapsed_ms
        (None, "old"),  # moved_from
    )
    for rid, seat, digest, chat, token, elapsed, moved_from in combos:
        joined = f.Joined(rid, "r9", seat, 41, None, digest, INFO, chat, token, elapsed, moved_from)
        expected = f.encode_frame_with(joined, "view", VIEW)
        shared = shared_part(pack(INFO), chat)
        spliced = joined_frame(
            rid, "r9", seat, 41, digest, shared, token, elapsed, moved_from, VIEW
        )
        assert spliced == expected, (rid, seat, digest, chat, token, elapsed, moved_from)


def test_ack_frame_is_the_dataclass_encoding() -> None:
    for rid, rev in itertools.product((None, 0, 9, "x"), (0, 200)):
        expected = f.encode_frame(f.Ack(rid, "r9", rev, INFO))
        assert ack_frame(rid, "r9", rev, pack(INFO)) == expected


def test_a_room_s_ack_frame_is_the_dataclass_encoding() -> None:
    """rules-checklist: none (protocol). The ``ack`` of ``leave``: the room alone."""
    for rid in (None, 0, 9, "x", 2**40):
        assert ack_frame(rid, "r9") == f.encode_frame(f.Ack(rid, "r9"))


def test_the_room_frame_is_the_dataclass_encoding() -> None:
    twin = Twin(2)
    twin.open()
    seated = Member("ann")
    twin.request(seated, {"type": "join", "name": "ann"})
    (sent,) = [e for e in twin.effects if isinstance(e, Watch)]  # (the one frame to spectators)
    assert sent.data == f.encode_frame(f.RoomInfo(ROOM, twin.core.info()))
    (room,) = seated.of_type("room")
    assert room == f.RoomInfo(ROOM, twin.core.info()).to_wire()


def _finished_and_left(relayed: bool) -> Twin:
    """A finished room whose members all moved to a rematch (``relayed``: a relay reads it)."""
    twin = Twin(2, idle_ttl=60.0)
    twin.core.relayed = relayed
    members = started(twin, "ann", "bob")
    watcher = Member("w")
    assert twin.request(watcher, {"type": "spectate"})["type"] == "joined"
    while twin.core.state is RoomState.PLAYING:
        mover = members[to_move(twin)]
        assert twin.request(mover, {"type": "act", "rev": mover.rev, "choice": 0})["type"] == "ack"
    twin.effects.clear()
    twin.handle(Moved("new", (members[0].conn, members[1].conn, watcher.conn)))
    return twin


def test_a_finished_room_nobody_is_in_announces_nothing_and_still_goes() -> None:
    twin = _finished_and_left(relayed=False)
    assert not any(isinstance(e, (Publish, Watch)) for e in twin.effects), twin.kinds()
    assert twin.core.info()["rematch"] == "new"
    twin.advance(60.0)  # (nobody in it: it closes, as when the frame was made)
    assert twin.core.state is RoomState.CLOSED


def test_a_relayed_room_announces_even_when_nobody_is_in_it() -> None:
    twin = _finished_and_left(relayed=True)
    (published,) = [e for e in twin.effects if isinstance(e, Publish)]
    assert published.kind == b"i"
    assert published.data == f.encode_frame(f.RoomInfo(ROOM, twin.core.info()))
