"""The relay's formats (:mod:`server.relay.wire`): every writer read back by its reader, and
what a reader makes of bytes no writer made."""

from __future__ import annotations

from protocol.codec import pack
from server.relay import wire
from server.store import keys


def test_a_message_reads_back_as_its_kind_rev_and_frame() -> None:
    """rules-checklist: none (transport)."""
    data = wire.message(wire.PATCH, 2**40, b"\x81\xa1a\x01")
    assert data[: wire.HEAD.size] == b"p" + (2**40).to_bytes(8, "big")
    assert wire.parse_message(data) == (wire.PATCH, 2**40, b"\x81\xa1a\x01")
    assert wire.parse_message(wire.message(wire.STATE, 7)) == (wire.STATE, 7, b"")


def test_the_room_of_a_channel_is_its_hash_tag() -> None:
    """rules-checklist: none (transport)."""
    assert wire.room_of(keys.spectate("oasis", "r-12")) == "r-12"


def test_an_announcement_reads_back_and_bad_bytes_never_raise() -> None:
    """rules-checklist: none (transport)."""
    data = wire.announcement(wire.KEEP, "node-1:8765", "room9")
    assert data == b"keep|node-1:8765|room9"
    assert wire.parse_announcement(data) == (wire.KEEP, "node-1:8765", "room9")
    assert wire.parse_announcement(b"open|\xff|r") == (wire.OPEN, "\ufffd", "r")
    assert wire.parse_announcement(b"bye") == (wire.BYE, "", "")


def test_a_chat_line_reads_back_and_anything_else_is_none() -> None:
    """rules-checklist: none (transport)."""
    assert wire.parse_chat_line(wire.chat_line("r", "s1", "hi")) == ("r", "s1", "hi")
    assert wire.parse_chat_line(pack([1, 2])) is None
    assert wire.parse_chat_line(pack(5)) is None


def test_the_state_key_is_read_only_with_a_view_and_a_rev() -> None:
    """rules-checklist: none (transport)."""
    raw = {b"rev": b"12", b"hash": b"abc", b"view": pack({"shared": {}, "own": None})}
    assert wire.parse_state(raw) == (12, {"shared": {}, "own": None}, "abc", {})
    raw[b"info"] = pack({"spectator_delay": 0.0})
    assert wire.parse_state(raw) == (
        12,
        {"shared": {}, "own": None},
        "abc",
        {"spectator_delay": 0.0},
    )
    assert wire.parse_state({b"rev": b"12", b"hash": b"abc"}) is None
    assert wire.parse_state({}) is None and wire.parse_state(None) is None


def test_a_count_counts_until_it_expires_and_malformed_ones_count_nothing() -> None:
    """rules-checklist: none (transport)."""
    value = wire.count_value(4, 100.0)
    assert value == "4|100.000"
    assert wire.live_count(value.encode(), 99.5) == 4
    assert wire.live_count(value, 100.0) == 4
    assert wire.live_count(value, 100.5) == 0
    assert wire.live_count(b"x|100", 1.0) == 0
    assert wire.live_count(b"4", 1.0) == 0
