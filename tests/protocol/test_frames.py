"""protocol/frames.py: typed server frames to the wire and back, untrusted maps refused by field,
patch frames spliced from pre-encoded ops exactly as the plain encoding."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import frames as f
from protocol.codec import decode, encode
from protocol.errors import ErrorCode, ServerFrameError
from protocol.patch import diff
from tests.protocol.strategies import documents, keys, related_pairs

INFO = {"room": "r", "game": "yspahan", "state": "open"}
EVERY: list[f.ServerFrame] = [
    f.Welcome(1, "s", 1, "oasis/0.1", {"max_depth": 16}, ["ishtar", "yspahan"]),
    f.Rooms(2, [INFO]),
    f.Joined(3, "r", 0, 4, {"shared": {}, "own": None}, "0" * 16, INFO, [], "token", 1500),
    f.Joined(None, "r", None, 4, None, None, INFO),
    f.State(4, "r", 4, {"shared": {}, "own": None}, "0" * 16, 20),
    f.Patch(
        "r", 5, [{"op": "replace", "path": "/shared/n", "value": 1}], "1" * 16, [{"kind": "x"}]
    ),
    f.Ack(6),
    f.Ack(7, "r", 5, INFO),
    f.ErrorFrame.of(8, ErrorCode.STALE_REV, "you saw rev 4", "r"),
    f.ErrorFrame(None, "internal", "x"),
    f.ChatLine("r", None, "spectator ab", "hi", 5, 1.5),
    f.RoomInfo("r", INFO),
    f.Pong(9, 1700000000.25),
    f.Bye("idle"),
    f.Bye("server shutting down", "ws://127.0.0.1:8766/"),
    f.Redirect(10, "r", "", "moved"),
    f.Pause("r", True, "storage unavailable", 5),
]


@pytest.mark.parametrize("frame", EVERY, ids=lambda frame: type(frame).__name__)
def test_every_frame_goes_to_the_wire_and_back_unchanged(frame: f.ServerFrame) -> None:
    wire = decode(f.encode_frame(frame))
    assert wire["type"] == frame.TYPE
    assert f.parse_frame(wire) == frame
    assert wire == frame.to_wire()


def test_every_server_type_is_covered() -> None:
    assert {frame.TYPE for frame in EVERY} == f.SERVER_TYPES


def test_frames_echo_the_request_id_only_when_given() -> None:
    assert f.Ack(None).to_wire() == {"type": "ack"}
    assert f.Ack(7, "r", 2).to_wire() == {"type": "ack", "room": "r", "rev": 2, "id": 7}
    assert "id" not in f.ErrorFrame.of(None, ErrorCode.INTERNAL, "x").to_wire()
    assert f.ErrorFrame.of(None, ErrorCode.INTERNAL, "x").code == "internal"


def _wire(frame: f.ServerFrame, **changes: Any) -> dict[str, Any]:
    wire = frame.to_wire()
    for name, value in changes.items():
        if value is _DROP:
            del wire[name]
        else:
            wire[name] = value
    return wire


_DROP = object()
JOINED, STATE, PATCH, CHAT = EVERY[2], EVERY[4], EVERY[5], EVERY[10]


@pytest.mark.parametrize(
    ("wire", "field"),
    [
        (_wire(PATCH, rev="5"), "rev"),
        (_wire(PATCH, rev=True), "rev"),
        (_wire(PATCH, ops=_DROP), "ops"),
        (_wire(PATCH, ops=[1]), "ops"),
        (_wire(PATCH, events=[None]), "events"),
        (_wire(PATCH, hash=None), "hash"),
        (_wire(PATCH, room=3), "room"),
        (_wire(JOINED, view=None), "hash"),
        (_wire(JOINED, info=[]), "info"),
        (_wire(JOINED, seat=1.0), "seat"),
        (_wire(JOINED, chat=[3]), "chat"),
        (_wire(JOINED, elapsed_ms="1"), "elapsed_ms"),
        (_wire(STATE, view=None), "view"),
        (_wire(CHAT, **{"from": {"seat": "0", "name": "a"}}), "from"),
        (_wire(CHAT, ts="now"), "ts"),
        (_wire(EVERY[0], games=["a", 1]), "games"),
        (_wire(EVERY[6], id=1.5), "id"),
        (_wire(EVERY[16], paused=1), "paused"),
    ],
)
def test_a_frame_off_the_spec_is_refused_naming_the_field(wire: dict[str, Any], field: str) -> None:
    with pytest.raises(ServerFrameError) as info:
        f.parse_frame(wire)
    assert f"'{field}'" in info.value.message
    assert info.value.code is ErrorCode.MALFORMED_FRAME


def test_unknown_fields_are_ignored_and_unknown_types_refused() -> None:
    assert f.parse_frame({**PATCH.to_wire(), "later": 1}) == PATCH
    with pytest.raises(ServerFrameError, match="unknown server frame type 'news'"):
        f.parse_frame({"type": "news"})


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["type", "room", "rev", "ops", "hash", "view", "info", "seat", "id"])
        | keys,
        st.sampled_from(sorted(f.SERVER_TYPES)) | documents(max_leaves=6),
    )
)
def test_any_map_gives_a_frame_or_a_server_frame_error(wire: dict[str, Any]) -> None:
    try:
        frame = f.parse_frame(wire)
    except ServerFrameError:
        return
    assert f.parse_frame(frame.to_wire()) == frame


@settings(max_examples=60, deadline=None)
@given(related_pairs(), related_pairs(), st.text(max_size=10), st.integers(0, 2**40))
def test_a_spliced_patch_frame_decodes_like_the_plain_encoding(
    shared: tuple[Any, Any], own: tuple[Any, Any], room: str, rev: int
) -> None:
    shared_ops = diff({"s": shared[0]}, {"s": shared[1]})
    own_ops = diff({"o": own[0]}, {"o": own[1]})
    events = [{"kind": "x", "seat": 1}]
    spliced = f.encode_patch(
        room,
        rev,
        [f.encode_ops(shared_ops), f.encode_ops(own_ops)],
        len(shared_ops) + len(own_ops),
        "0" * 16,
        events,
    )
    assert spliced == f.encode_frame(f.Patch(room, rev, shared_ops + own_ops, "0" * 16, events))


def test_a_revision_s_frames_are_encode_patch_s_bytes() -> None:
    """Every frame of :class:`RevisionFrames` (plain, or with own ops or other events) is
    :func:`encode_patch`'s frame byte for byte, for a view hash of 16 hex digits (its header
    spliced in advance) and for hashes of other lengths, ASCII or not."""
    shared_ops = [{"op": "replace", "path": "/shared/x", "value": i} for i in range(3)]
    own_ops = [{"op": "add", "path": "/own/y", "value": [1, "é"]}]
    shared, own = f.encode_ops(shared_ops), f.encode_ops(own_ops)
    public, private = f.encode_events([{"kind": "x"}]), f.encode_events([{"kind": "y", "c": 1}])
    for room, rev in (("r", 1), ("room-" + "x" * 40, 70_000)):
        for count in (0, 3):
            ops = shared if count else b""
            frames = f.RevisionFrames(room, rev, ops, count, public)
            for digest in ("0123456789abcdef", "h", "0" * 17, "é" * 8, "é" * 16):
                assert frames.plain(digest) == f.encode_patch(
                    room, rev, [ops], count, digest, public
                )
                assert frames.with_own(own, 1, digest, private) == f.encode_patch(
                    room, rev, [ops, own], count + 1, digest, private
                )
                assert frames.with_own(b"", 0, digest, private) == f.encode_patch(
                    room, rev, [ops], count, digest, private
                )


def test_the_ack_of_a_choice_is_spliced_byte_for_byte_as_its_frame_encodes() -> None:
    """A choice's ``ack`` spliced from its room's head encoded once: the same bytes as
    ``encode_frame(Ack(...))`` for every kind of request id (none, ints of every msgpack width,
    strings of every length form) and rev."""
    ids: list[int | str | None] = [None, 0, 1, 127, 128, 255, 256, 65_536, 2**32, 2**53]
    ids += [-1, -32, -33, -(2**53)]
    ids += ["", "a", "é" * 20, "i" * 40, "j" * 300]
    for room in ("r1", "room-" + "x" * 40, "sàlle"):
        head = f.ack_head(room)
        for rid in ids:
            for rev in (0, 1, 127, 128, 70_000, 2**32):
                wire = f.encode_ack(head, rev, rid)
                assert wire == f.encode_frame(f.Ack(rid, room, rev)), (room, rid, rev)


def test_many_ops_use_the_long_array_headers() -> None:
    ops = [{"op": "add", "path": f"/{i}", "value": i} for i in range(70_000)]
    frame = f.encode_patch(
        "r", 1, [f.encode_ops(ops[:20]), f.encode_ops(ops[20:])], len(ops), "h", []
    )
    assert frame == encode(
        {"type": "patch", "room": "r", "rev": 1, "ops": ops, "hash": "h", "events": []}
    )
    assert decode(f.encode_patch("r", 1, [f.encode_ops(ops[:17])], 17, "h", []))["ops"] == ops[:17]


@settings(max_examples=60, deadline=None)
@given(documents(), st.booleans(), st.one_of(st.none(), st.integers(0, 10**6)))
def test_a_frame_with_its_view_pre_encoded_decodes_like_the_plain_encoding(
    view: Any, token: bool, elapsed: int | None
) -> None:
    doc = {"shared": view, "own": None}
    joined = f.Joined(3, "r", 0, 4, doc, "0" * 16, INFO, [], "t" if token else None, elapsed)
    spliced = f.encode_frame_with(joined, "view", encode(doc))
    assert decode(spliced) == decode(f.encode_frame(joined))
    state = f.State(None, "r", 4, doc, "1" * 16, elapsed)
    assert (
        decode(f.encode_frame_with(state, "view", encode(doc)))
        == f.State(None, "r", 4, doc, "1" * 16, elapsed).to_wire()
    )


def test_a_frame_spliced_past_fifteen_fields_takes_the_long_map_header() -> None:
    info = {f"k{i}": i for i in range(3)}
    wire = f.Joined(1, "r", 0, 4, None, None, info, [], "t", 5).to_wire()
    wire.update({f"x{i}": i for i in range(20 - len(wire))})

    class Wide:
        """A frame of more than 15 fields (none has as many yet)."""

        def to_wire(self) -> dict[str, Any]:
            return dict(wire)

    spliced = f.encode_frame_with(Wide(), "view", encode({"own": None}))  # type: ignore[arg-type]
    assert decode(spliced) == {**wire, "view": {"own": None}} and spliced[0] == 0xDE
