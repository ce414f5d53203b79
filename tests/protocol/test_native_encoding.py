"""protocol._diffc's encoders and hash against the ones they stand in for: ``pack``, ``plain`` and
``canonical`` write :mod:`protocol.codec`'s bytes (or hand over where they cannot), ``join_ops``
is :meth:`protocol.patch._OpBytes.join`'s Python, and ``blake2b_state``/``blake2b_hex`` are
hashlib's BLAKE2b-64; no reference leaked.

As :mod:`tests.protocol.test_diffc`: the extension is built with the compiled modules, so these
run in the compiled tier (``OASIS_NATIVE_DIFF=required`` fails them where it is missing) and are
skipped elsewhere, saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import random
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import codec, hashing, patch
from protocol.codec import canonical, pack, unpack
from tests.protocol import test_diffc
from tests.protocol.test_diffc import _EDGES, _INT_EDGES, documents

NATIVE: Any = patch._NATIVE

pytestmark = test_diffc.pytestmark  # (skipped where the extension is not built: the same rule)


def test_the_native_encoders_and_hash_are_what_the_modules_call() -> None:
    """Where the extension is built, the ops are joined, the views encoded and hashed by it."""
    assert NATIVE is not None, "protocol._diffc did not import"
    assert patch._NATIVE_JOIN is NATIVE.join_ops
    assert patch._NATIVE_CANONICAL is NATIVE.canonical
    assert hashing._HEX is NATIVE.blake2b_hex
    assert hashing._STATE is NATIVE.blake2b_state
    assert patch._NATIVE_UNPACK is NATIVE.unpack
    assert codec._NATIVE_PLAIN is NATIVE.plain


def _outcome(function: Any, value: Any) -> Any:
    try:
        return function(value)
    except Exception as exc:
        return type(exc)


class _Str(str):
    pass


class _Int(int):
    pass


_DEEP: Any = 1
for _ in range(150):
    _DEEP = [_DEEP]
_REFUSED: list[Any] = [[_Str("a")], {_Str("k"): 1}, [_Int(3)], (1, 2), [(1,)], [2**64]]
_REFUSED += [{1: 2}, ["\ud800"], {"\ud800": 1}, _DEEP, [b"x"], {"a": {"b": [1, {2: 3}]}}]
_FLOATS: list[Any] = [0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 1e300, 5e-324]
_SORTING: list[Any] = [
    {"b": 1, "a": 2, "ab": 3, "B": 4, "": 5},
    {"é": 1, "e": 2, "€": 3, "\U0001f600": 4, "z": 5, "\uffff": 6},
    {f"k{i}": {f"j{40 - j}": j for j in range(40)} for i in range(40, 0, -1)},  # (off the stack)
    {"x": [{"d": 1, "c": [{"f": 2, "e": 3}]}]},
]


@pytest.mark.parametrize(
    "value", _EDGES + _FLOATS + _REFUSED + _SORTING, ids=lambda v: repr(v)[:40]
)
def test_pack_and_canonical_write_the_codec_s_bytes(value: Any) -> None:
    """Every boundary of msgpack's forms, the floats' odd values, the maps' key orders; and
    what the C does not write (a subclass, a tuple, a non-string key, bytes, a lone surrogate,
    deep nesting, an int beyond 64 bits): ``pack`` hands it to pack (the same bytes or the same
    error), ``canonical`` gives None."""
    assert _outcome(NATIVE.pack, value) == _outcome(pack, value)
    written = NATIVE.canonical(value)
    if written is None:
        assert NATIVE.counted_size(value) is None
    else:
        assert written == canonical(value)


def _msgpack(value: Any) -> bytes:
    """What :func:`protocol.codec.pack` stands for: msgpack's own bytes."""
    written: bytes = msgpack.packb(value, use_bin_type=True)
    return written


def test_plain_writes_msgpack_s_bytes_and_hands_the_rest_to_the_codec() -> None:
    """``plain``, the codec's first try: msgpack's own bytes for every plain value, and None for
    what the C does not write (the codec then encodes it with ormsgpack or msgpack, as before:
    the same bytes or the same error as the native ``pack``, which calls the codec there)."""
    for value in _EDGES + _FLOATS + _SORTING:
        assert NATIVE.plain(value) == _msgpack(value) == pack(value), value
    for value in _REFUSED:
        assert NATIVE.plain(value) is None, value
        assert _outcome(pack, value) == _outcome(NATIVE.pack, value)


def test_canonical_writes_what_it_counts() -> None:
    """Every plain value is written (None only where the count hands over)."""
    for value in _EDGES + _FLOATS + _SORTING:
        assert NATIVE.canonical(value) is not None, value
    for value in _REFUSED:
        assert NATIVE.canonical(value) is None, value


@settings(max_examples=300, deadline=None)
@given(documents())
def test_random_documents_are_written_as_the_codec_writes_them(value: Any) -> None:
    assert NATIVE.pack(value) == pack(value) == _msgpack(value)
    assert NATIVE.plain(value) in (None, _msgpack(value))
    assert NATIVE.canonical(value) == canonical(value)


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it (1, 1.0 and True apart; nan comparable)."""
    if type(value) is list:
        return ["list", [_typed(item) for item in value]]
    if type(value) is dict:
        return ["dict", [(_typed(key), _typed(item)) for key, item in value.items()]]
    return [type(value).__name__, repr(value)]


_MISSING = object()


@pytest.mark.parametrize(
    "value",
    _EDGES + _FLOATS + _SORTING + [[(1, 2)], {"k": {"é": 1, "x" * 40: [None]}}],
    ids=lambda v: repr(v)[:40],
)
def test_unpack_gives_the_codec_s_values(value: Any) -> None:
    """Every boundary of msgpack's forms and the floats' odd values (a float32 too), decoded to
    the same values of the same types, in the same key order."""
    for data in (pack(value), canonical(value)):
        assert _typed(NATIVE.unpack(data, _MISSING)) == _typed(unpack(data))
    assert _typed(patch._unpack(canonical(value))) == _typed(unpack(canonical(value)))
    float32 = b"\xca\x3f\xc0\x00\x00"
    assert _typed(NATIVE.unpack(float32, _MISSING)) == _typed(unpack(float32)) == ["float", "1.5"]


@settings(max_examples=300, deadline=None)
@given(documents())
def test_random_documents_are_decoded_as_the_codec_decodes_them(value: Any) -> None:
    data = canonical(value)
    assert _typed(NATIVE.unpack(data, _MISSING)) == _typed(unpack(data))


@pytest.mark.parametrize(
    "data",
    [b"", b"\xc1", b"\xc4\x01a", b"\xd4\x01\x02", b"\x81\x01\x02", b"\xa2\xff\xfe", b"\x92\x01",
     b"\xdd\xff\xff\xff\xff", b"\xc0\xc0", b"\x91" * 150 + b"\xc0", b"\x81\xa1k\xc7\x01\x01a"],
)  # fmt: skip
def test_what_unpack_does_not_decode_is_the_codec_s_to_decode(data: bytes) -> None:
    """Bin, ext, a never-used byte, a key that is not a str, invalid UTF-8, bytes missing or
    left over, deep nesting: the default back, and :func:`protocol.patch._unpack` gives what
    the codec gives (a value, or its error)."""
    assert NATIVE.unpack(data, _MISSING) is _MISSING
    assert _outcome(patch._unpack, data) == _outcome(unpack, data)


def test_map_keys_are_decoded_from_the_cache_as_equal_strings() -> None:
    """A cached key is the same str for the same bytes, and never another key's (many keys
    of one length, colliding in the cache's slots, each decoded as itself)."""
    keys = [f"{i:05d}" for i in range(5000)] + ["", "a", "k" * 32, "k" * 33]
    data = canonical({key: i for i, key in enumerate(keys)})
    first = NATIVE.unpack(data, _MISSING)
    again = NATIVE.unpack(data, _MISSING)
    assert list(first) == sorted(keys) and first == again == unpack(data)
    assert NATIVE.unpack(canonical({"a": 1}), _MISSING) == {"a": 1}


def _python_join(ops: list[Any], enc: dict[int, bytes]) -> bytes:
    return b"".join(enc[id(op)] if id(op) in enc else pack(op) for op in ops)


@settings(max_examples=200, deadline=None)
@given(st.lists(documents(6), min_size=0, max_size=40), st.randoms(use_true_random=False))
def test_join_ops_is_the_python_join(values: list[Any], rng: random.Random) -> None:
    """Some ops' encodings recorded (as the size rule and the choices' splice record them,
    perhaps not pack's own bytes: a map in canonical key order), the others written: the same
    bytes as the Python, in order, and as many ops as a list holds on and off the stack."""
    ops: list[Any] = []
    for i, value in enumerate(values):
        ops.append({"op": "replace", "path": f"/a/{i}", "value": value})
        ops.append({"op": "remove", "path": f"/b/{i}"})
    ops.append({"op": "add", "path": "/c", "value": (1, 2)})  # (a tuple: pack's own bytes)
    enc = {id(op): canonical(op) for op in ops if rng.random() < 0.3}
    expected = _python_join(ops, enc)
    assert NATIVE.join_ops(ops, enc) == expected
    packed = patch._OpBytes()
    packed.enc.update(enc)
    assert packed.join(ops) == expected


def test_join_ops_raises_what_pack_raises() -> None:
    for bad in ({"op": "add", "path": "/x", "value": 2**64}, {"op": "add", "path": "\ud800"}):
        ops = [{"op": "remove", "path": "/a"}, bad]
        with pytest.raises((OverflowError, UnicodeEncodeError, TypeError)):
            pack(bad)
        with pytest.raises((OverflowError, UnicodeEncodeError, TypeError)):
            NATIVE.join_ops(ops, {})
    op = {"op": "remove", "path": "/a"}
    with pytest.raises(TypeError):  # (an encoding recorded that is not bytes)
        NATIVE.join_ops([op], {id(op): "no"})
    with pytest.raises(TypeError):
        NATIVE.join_ops((), {})


def _blake2b(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


@pytest.fixture(params=[True, False], ids=["simd", "scalar"])
def compression(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Each test of the hash twice: with the compression's AVX2 code where the CPU has it,
    then with the scalar code forced (``blake2b_simd``), so that both stay tested."""
    before = NATIVE.blake2b_simd(request.param)
    try:
        yield NATIVE.blake2b_simd(request.param)
    finally:
        NATIVE.blake2b_simd(before)


def test_blake2b_is_hashlib_s_at_every_length_and_split(compression: bool) -> None:
    """Every length over three blocks, cut anywhere between the state, the value and what
    follows it (the block boundaries the buffering must get right included), by both
    compressions."""
    rng = random.Random(21)
    for length in range(0, 3 * 128 + 3):
        data = rng.randbytes(length)
        cuts = {0, 1, length // 2, length - 1, length, 127, 128, 129, 256}
        for first in sorted(c for c in cuts if 0 <= c <= length):
            state = NATIVE.blake2b_state(data[:first])
            for second in sorted(c for c in cuts if first <= c <= length):
                got = NATIVE.blake2b_hex(state, data[first:second], data[second:])
                assert got == _blake2b(data), (length, first, second)
    assert NATIVE.blake2b_hex(NATIVE.blake2b_state(), b"", b"") == _blake2b(b"")
    long = rng.randbytes(100_000)
    assert NATIVE.blake2b_hex(NATIVE.blake2b_state(long[:7]), long[7:], b"") == _blake2b(long)


def test_blake2b_takes_any_buffer_and_leaves_its_state_as_it_was() -> None:
    state = NATIVE.blake2b_state(bytearray(b"abc"))
    copy = bytes(state)
    assert NATIVE.blake2b_hex(state, memoryview(b"def"), bytearray(b"g")) == _blake2b(b"abcdefg")
    assert NATIVE.blake2b_hex(state, b"", b"") == _blake2b(b"abc")
    assert state == copy
    with pytest.raises(TypeError):
        NATIVE.blake2b_hex(b"not a state", b"", b"")
    with pytest.raises(TypeError):
        NATIVE.blake2b_hex(state, "text", b"")


def test_the_view_hashes_are_hashlib_s() -> None:
    """The hashers, with the C where it is built, give the hashes of hashlib's BLAKE2b."""
    own = canonical({"choices": [], "private": {"hand": [1, 4]}, "seat": 2, "undo": False})
    spectators = _blake2b(b"spectators")
    assert hashing.hash_bytes(own) == _blake2b(own)
    assert hashing.ChainedHasher(spectators).hash(own) == _blake2b(bytes.fromhex(spectators) + own)
    entries = {"clock": canonical(3), "shared": canonical({"a": [1] * 200})}
    for key in ("own", "zz", "a"):
        hasher = hashing.DocumentHasher(entries, key)
        for value in (own, b"\xc0", canonical("x" * 300)):
            assert hasher.hash(value) == hashing.document_hash({**entries, key: value})
            assert hasher.hash(value) == hashing.hash_bytes(canonical_map({**entries, key: value}))


def canonical_map(entries: dict[str, bytes]) -> bytes:
    from protocol.codec import canonical_key, map_header

    keys = sorted(entries)
    return map_header(len(keys)) + b"".join(canonical_key(k) + entries[k] for k in keys)


def test_the_encoders_and_hash_leak_no_reference() -> None:
    """Many calls (written, handed over, raising half-way) leave every input's reference count
    and the memory as they were."""
    doc: dict[str, Any] = {"b": [1, 2.5, "é" * 40, None, True], "a": {"y": [{}], "x": 2**63}}
    refused: list[Any] = [(1, 2), {"k": [1, 2**64]}]
    ops: list[Any] = [{"op": "add", "path": "/a", "value": doc}, {"op": "remove", "path": "/b"}]
    ops += [{"op": "add", "path": f"/{i}", "value": i} for i in range(20)]
    enc = {id(ops[1]): pack(ops[1])}
    bad = [{"op": "add", "path": "/x", "value": 2**64}]
    state = NATIVE.blake2b_state(b"x" * 200)
    encoded = canonical({**doc, "c": [{"key": "value", "n": 1.5}] * 20})
    watched = [doc, doc["b"], doc["a"], refused, *refused, ops, enc, bad, state, encoded, *ops]

    def run() -> None:
        NATIVE.pack(doc)
        NATIVE.plain(doc)
        NATIVE.canonical(doc)
        for value in refused:
            NATIVE.canonical(value)
            NATIVE.plain(value)
            with contextlib.suppress(OverflowError):
                NATIVE.pack(value)
        NATIVE.join_ops(ops, enc)
        try:  # (not pytest.raises: what it keeps would count as a leak below)
            NATIVE.join_ops(ops + bad, enc)
        except OverflowError:
            pass
        else:
            raise AssertionError("no error")
        NATIVE.blake2b_hex(state, b"y" * 300, b"z")
        NATIVE.unpack(encoded, None)
        NATIVE.unpack(encoded[:-3], None)
        NATIVE.unpack(b"\x82\xa1a\x01\x02\x03", None)  # (a key not a str, half-way)
        NATIVE.blake2b_state(b"w" * 130)

    run()
    test_diffc.assert_no_leak(run, watched)


def test_int_edges_are_written_in_pack_s_forms() -> None:
    for n in _INT_EDGES:
        assert NATIVE.pack(n) == pack(n) == msgpack.packb(n)
        assert NATIVE.pack([n, {"k": n}]) == pack([n, {"k": n}])
