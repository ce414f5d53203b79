"""protocol.codec: frames decode to a typed map or raise FrameError, nothing else escapes."""

from __future__ import annotations

import contextlib
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import (
    _QUICK_BYTES,
    DEFAULT_LIMITS,
    Limits,
    _decode,
    _quick,
    _reference_canonical,
    array_header,
    array_length,
    canonical,
    canonical_map,
    decode,
    encode,
    map_header,
    pack,
    unpack,
)
from protocol.errors import ErrorCode, FrameError, ProtocolError
from tests.protocol.strategies import documents


def _code(data: Any, limits: Limits = DEFAULT_LIMITS) -> ErrorCode:
    with pytest.raises(FrameError) as info:
        decode(data, limits)
    return info.value.code


def test_round_trip_of_a_frame() -> None:
    frame = {"type": "act", "id": 7, "room": "r1", "rev": 3, "choice": {"kind": "x", "n": -1.5}}
    assert decode(encode(frame)) == frame


def test_oversized_frames_are_refused_before_decoding() -> None:
    data = encode({"type": "chat", "text": "x" * 2000})
    assert _code(data, Limits(max_frame_bytes=1000)) == ErrorCode.FRAME_TOO_LARGE


def test_deep_nesting_is_refused() -> None:
    value: Any = 1
    for _ in range(40):
        value = [value]
    assert _code(encode({"type": "x", "v": value})) == ErrorCode.TOO_DEEP
    assert _code(b"\x91" * 60000 + b"\x01") == ErrorCode.TOO_DEEP


@pytest.mark.parametrize("levels", [17, 1024, 1025, 5000, 60000])
def test_nesting_past_the_unpackers_own_stack_is_too_deep_too(levels: int) -> None:
    # msgpack gives up past 1,024 levels with its own error: still too_deep (issue 14).
    data = b"\x82\xa4type\xa1x\xa1v" + b"\x91" * levels + b"\xc0"
    assert _code(data) == ErrorCode.TOO_DEEP


@pytest.mark.parametrize(
    "key",
    [b"\x80", b"\x81\xa1a\x01", b"\x90", b"\x92\x01\x02"],
    ids=["map", "map1", "list", "list2"],
)
def test_a_container_used_as_a_map_key_is_bad_type(key: bytes) -> None:
    data = b"\x82\xa4type\xa1x" + key + b"\x01"
    assert _code(data) == ErrorCode.BAD_TYPE


def test_big_containers_are_refused() -> None:
    frame = encode({"type": "x", "v": list(range(5000))})
    assert _code(frame) == ErrorCode.CONTAINER_TOO_LARGE
    assert _code(encode({"type": "x", "s": "y" * 20000})) == ErrorCode.CONTAINER_TOO_LARGE


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (msgpack.packb({"type": "x", "b": b"bin"}), ErrorCode.BAD_TYPE),
        (msgpack.packb({"type": "x", "e": msgpack.ExtType(1, b"")}), ErrorCode.BAD_TYPE),
        (msgpack.packb({"type": "x", 1: 2}), ErrorCode.BAD_TYPE),
        (msgpack.packb([1, 2]), ErrorCode.BAD_ENVELOPE),
        (msgpack.packb({"kind": "x"}), ErrorCode.BAD_ENVELOPE),
        (msgpack.packb({"type": ""}), ErrorCode.BAD_ENVELOPE),
        (msgpack.packb({"type": 3}), ErrorCode.BAD_ENVELOPE),
        (b"", ErrorCode.MALFORMED_FRAME),
        (b"\xc1", ErrorCode.MALFORMED_FRAME),
        (msgpack.packb({"type": "x"}) + b"\x00", ErrorCode.MALFORMED_FRAME),
        (b"\x81\xa4type", ErrorCode.MALFORMED_FRAME),
        (b"\x81\xa2\xff\xfe\x01", ErrorCode.MALFORMED_FRAME),
        ("text frame", ErrorCode.TEXT_FRAME),
    ],
)
def test_each_kind_of_bad_frame_has_its_code(data: Any, code: ErrorCode) -> None:
    assert _code(data) == code


def test_frame_errors_carry_close_codes() -> None:
    with pytest.raises(FrameError) as info:
        decode(b"\xc1")
    assert info.value.close_code == 1002
    assert ProtocolError(ErrorCode.NOT_FOUND, "no room").close_code is None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_decode_or_raise_frame_error(data: bytes) -> None:
    try:
        frame = decode(data)
    except FrameError:
        return
    assert isinstance(frame, dict)
    assert isinstance(frame["type"], str)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_mutated_frames_decode_or_raise_frame_error(doc: Any, data: st.DataObject) -> None:
    raw = bytearray(encode({"type": "act", "payload": doc}))
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if action == "flip" and raw:
            raw[at] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del raw[at:]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    with contextlib.suppress(FrameError):
        decode(bytes(raw))


def _outcome(decoder: Any, data: bytes, limits: Limits) -> Any:
    """What a decoder makes of ``data``: the frame (with its types, so that ``1``, ``1.0`` and
    ``True`` differ) or the error's code and message."""
    try:
        frame = decoder(data, limits)
    except FrameError as error:
        return ("error", error.code, error.message)
    return ("frame", canonical(frame), repr(frame))


_SMALL = Limits(max_depth=3, max_container=3, max_str=5)
"""Limits a random frame often breaks: the quick path must leave each to the reference path."""


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_the_quick_path_decodes_as_the_reference_path(doc: Any, data: st.DataObject) -> None:
    # decode's quick path (ormsgpack, then the least size of the value against the frame's
    # length) gives what the reference path gives, frame or error code and message, for frames
    # well formed, mutated, in longer forms than needed or with bytes after the value.
    forms = [encode({"type": "act", "payload": doc}), encode(doc)]
    with contextlib.suppress(OverflowError):  # (floats as 32-bit: the shorter form)
        forms.append(msgpack.packb({"type": "act", "payload": doc}, use_single_float=True))
    raw = bytearray(data.draw(st.sampled_from(forms)))
    for _ in range(data.draw(st.integers(0, 3))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "append"]))
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if action == "flip" and raw:
            raw[at] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del raw[at:]
        elif action == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        else:
            raw += data.draw(st.binary(min_size=1, max_size=8))
    limits = data.draw(st.sampled_from([DEFAULT_LIMITS, _SMALL]))
    assert _outcome(decode, bytes(raw), limits) == _outcome(_decode, bytes(raw), limits)


@pytest.mark.parametrize(
    "data",
    [
        encode({"type": "x"}) + b"\x00",  # a byte after the value
        encode({"type": "x", "n": 1}) + b"\xc0",
        # a 32-bit float and four bytes more: as long as the value with a 64-bit float
        msgpack.packb({"type": "x", "f": 1.5}, use_single_float=True) + bytes(4),
        b"\x82\xa4type\xa1x\xa1n\xd0\x01",  # 1 as int8: longer than needed
        b"\x82\xa4type\xa1x\xa1n\xcb" + bytes(8),  # 0.0 as float64
        b"\x83\xa4type\xa1x\xa1n\x01\xa1n\x02",  # a key twice
        b"\xde\x00\x01\xa4type\xa1x",  # a map16 header for one entry
        msgpack.packb({"type": "x", "b": b"bin"}),
        msgpack.packb({"type": "x", 1: 2}),
        encode({"type": "x", "s": "é" * 10}),
    ],
)
def test_the_quick_path_declines_what_it_cannot_vouch_for(data: bytes) -> None:
    # Each is decoded (or refused) exactly as by the reference path.
    assert len(data) <= _QUICK_BYTES
    for limits in (DEFAULT_LIMITS, _SMALL):
        assert _outcome(decode, data, limits) == _outcome(_decode, data, limits)
    assert _code(encode({"type": "x"}) + b"\x00") == ErrorCode.MALFORMED_FRAME


def test_the_quick_path_takes_the_frames_clients_send() -> None:
    # (what it is for: an act, a chat line; a frame it declined would merely cost more)
    for frame in (
        {"type": "act", "id": 7, "room": "r-1", "rev": 3, "choice": 2, "hash": "ab" * 8},
        {"type": "chat", "id": 8, "room": "r-1", "text": "gg, see you tomorrow"},
        {"type": "act", "id": 9, "room": "r-1", "rev": 4, "choice": {"kind": "x", "n": -100}},
    ):
        data = encode(frame)
        assert _quick(data, len(data), DEFAULT_LIMITS) == frame


def test_canonical_sorts_keys_at_every_level() -> None:
    a = {"b": {"y": 1, "x": 2}, "a": [{"d": 1, "c": 2}]}
    b = {"a": [{"c": 2, "d": 1}], "b": {"x": 2, "y": 1}}
    assert canonical(a) == canonical(b)
    assert msgpack.unpackb(canonical(a)) == a
    assert list(msgpack.unpackb(canonical(a))) == ["a", "b"]


@given(documents(), documents())
def test_canonical_map_of_encoded_parts_equals_canonical_of_the_map(a: Any, b: Any) -> None:
    parts = {"shared": canonical(a), "own": canonical(b)}
    assert canonical_map(parts) == canonical({"own": b, "shared": a})


@given(
    st.dictionaries(
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
        st.integers(0, 9),
        max_size=12,
    )
)
def test_canonical_key_order_is_utf8_byte_order(doc: dict[str, int]) -> None:
    keys = list(msgpack.unpackb(canonical(doc)))
    assert keys == sorted(doc, key=lambda k: k.encode("utf-8"))


@pytest.mark.parametrize("n", [0, 15, 16, 65535, 65536])
def test_the_spliced_headers_match_msgpack_at_every_size(n: int) -> None:
    """``map_header``/``array_header`` are what msgpack itself writes (fix, 16- and 32-bit)."""
    values = {f"k{i:06d}": i for i in range(n)}
    encoded = {key: canonical(value) for key, value in values.items()}
    assert canonical_map(encoded) == canonical(values)
    items = list(range(n))
    assert array_header(n) + b"".join(canonical(i) for i in items) == canonical(items)
    assert map_header(n) == canonical(values)[: len(map_header(n))]


@given(documents(max_leaves=60))
def test_canonical_is_byte_for_byte_the_reference_encoding(doc: Any) -> None:
    """The compiled encoder (ormsgpack, sorting keys) writes exactly what msgpack writes of a
    sorted copy: the view hash of every client depends on it."""
    assert canonical(doc) == _reference_canonical(doc)


_EDGES: list[Any] = [
    *(2**k + d for k in (4, 5, 7, 8, 15, 16, 31, 32, 63) for d in (-1, 0)),
    *(-(2**k) + d for k in (5, 7, 15, 31, 63) for d in (0, -1) if -(2**k) + d >= -(2**63)),
    2**64 - 1,
    0.0,
    -0.0,
    1.5,
    float("inf"),
    float("-inf"),
    True,
    False,
    None,
    b"bytes",
    *("x" * n for n in (0, 31, 32, 255, 256, 65535, 65536)),
    "é\U0001f600",
    (1, [2, (3,)]),
    (),
    *(list(range(n)) for n in (0, 15, 16, 65535, 65536)),
    *({f"k{i:06d}": i for i in range(n)} for n in (0, 15, 16, 65535, 65536)),
]


@pytest.mark.parametrize("value", _EDGES, ids=lambda v: type(v).__name__)
def test_canonical_matches_the_reference_at_every_encoding_boundary(value: Any) -> None:
    """Every integer, string, array and map size where msgpack changes its form (empty ones
    too: the empty list is a constant); floats with a sign, infinities; tuples (arrays, as
    lists)."""
    assert canonical(value) == _reference_canonical(value)


def test_values_the_compiled_encoder_refuses_take_the_reference_path() -> None:
    """Integer keys and an int subclass: encoded as msgpack does; a too large int raises as
    msgpack does, and so does a type msgpack cannot encode."""
    import enum

    class Colour(enum.IntEnum):
        RED = 3

    for value in ({2: "b", 1: "a"}, {"c": Colour.RED}):
        assert canonical(value) == _reference_canonical(value)
    assert msgpack.unpackb(canonical({2: "b", 1: "a"}), strict_map_key=False) == {1: "a", 2: "b"}
    with pytest.raises(OverflowError):
        canonical(2**64)
    with pytest.raises(TypeError):
        canonical({"when": object()})


@given(documents(max_leaves=60))
def test_pack_is_byte_for_byte_msgpack_and_unpack_its_inverse(doc: Any) -> None:
    """``pack`` (ormsgpack, keys in insertion order) writes exactly what ``msgpack.packb`` does:
    frames, ops and records keep their bytes; ``unpack`` gives back what msgpack decodes."""
    data = pack(doc)
    assert data == msgpack.packb(doc, use_bin_type=True)
    assert unpack(data) == msgpack.unpackb(data, raw=False, strict_map_key=False)


@pytest.mark.parametrize("value", _EDGES, ids=lambda v: type(v).__name__)
def test_pack_matches_msgpack_at_every_encoding_boundary(value: Any) -> None:
    data = pack(value)
    assert data == msgpack.packb(value, use_bin_type=True)
    assert unpack(data) == msgpack.unpackb(data, raw=False, strict_map_key=False)


def test_what_ormsgpack_refuses_is_packed_and_unpacked_as_msgpack_does() -> None:
    """An int subclass, integer keys: msgpack's own bytes; a too large int and an unknown type
    raise as msgpack raises; integer keys and an extension type decode as msgpack decodes."""
    import enum

    class Colour(enum.IntEnum):
        RED = 3

    for value in ({2: "b", 1: "a"}, {"c": Colour.RED}, [Colour.RED]):
        assert pack(value) == msgpack.packb(value, use_bin_type=True)
    with pytest.raises(OverflowError):
        pack(2**64)
    with pytest.raises(TypeError):
        pack({"when": object()})
    assert unpack(msgpack.packb({1: "a"})) == {1: "a"}
    ext = msgpack.packb([msgpack.ExtType(1, b"x")])
    assert unpack(ext) == [msgpack.ExtType(1, b"x")]


@pytest.mark.parametrize("n", [0, 1, 15, 16, 65535, 65536])
def test_array_length_reads_the_header(n: int) -> None:
    encoded = canonical(list(range(n)))
    length = array_length(encoded)
    assert length is not None
    count, size = length
    assert count == n
    assert size == len(array_header(n))
    assert array_length(canonical({"a": 1})) is None
    assert array_length(canonical("text")) is None
