"""msgpack framing: every WebSocket binary frame is one msgpack map with a ``type`` string.

Decoding untrusted bytes never raises anything but :class:`~protocol.errors.FrameError`: the
limits below are enforced while unpacking (msgpack's own length limits) and then by one
iterative walk (depth, allowed types, string keys), so no input can hang the decoder, exhaust
memory beyond the frame's own size, or escape with a library exception. The codes do not depend
on where the unpacker gives up: nesting past its own stack (1,024 levels) is ``too_deep`` like
any nesting past ``max_depth``, and a map or array used as a map key (which the unpacker cannot
even build) is ``bad_type`` like any other non-string key. A small frame is first tried by a
quicker decoder that vouches for a value only when the walk proves it the frame's whole content
within every limit (:func:`_quick`); anything else, every error included, takes the path above.

Allowed types: nil, bool, int (64-bit), float, str (UTF-8), array, map with string keys. Binary
and extension types are refused. Encoding trusts its input (it is ours) but uses the same types.

The *canonical* encoding (used by the view hash, SPEC section 4) is the msgpack of the same value
with every map's keys in ascending order of their UTF-8 bytes; ints use their smallest form and
floats are always 64-bit, as msgpack does by default. This module is its one writer:
:func:`canonical` encodes a whole value, :func:`canonical_map` and :func:`canonical_array` splice
values already encoded under the one container header writer (:func:`map_header`,
:func:`array_header`), so the server and the clients can re-encode only what changed
(:mod:`protocol.tree`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import msgpack
import ormsgpack

from protocol.errors import ErrorCode, FrameError

__all__ = [
    "DEFAULT_LIMITS",
    "Limits",
    "array_header",
    "array_length",
    "canonical",
    "canonical_array",
    "canonical_copy",
    "canonical_key",
    "canonical_map",
    "check_value",
    "decode",
    "encode",
    "map_header",
    "pack",
    "unpack",
]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one incoming frame. The defaults suit client-to-server frames."""

    max_frame_bytes: int = 64 * 1024
    max_depth: int = 16
    max_container: int = 1024
    max_str: int = 16 * 1024

    def to_json(self) -> dict[str, int]:
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "max_depth": self.max_depth,
            "max_container": self.max_container,
            "max_str": self.max_str,
        }


DEFAULT_LIMITS: Final = Limits()


_local: Final = threading.local()

_PLAIN: Final = (
    ormsgpack.OPT_PASSTHROUGH_BIG_INT
    | ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_SUBCLASS
    | ormsgpack.OPT_PASSTHROUGH_UUID
)
"""ormsgpack encodes only the plain types natively (str keys, int, float, str, bytes, bool,
None, list, tuple, dict, in their insertion order) and refuses everything else (a subclass such
as a ``StrEnum``, an int beyond 64 bits), which then takes msgpack's Packer."""
_packb: Final = ormsgpack.packb
_unpackb: Final = ormsgpack.unpackb
"""(Bound once: compiled, ``ormsgpack.packb`` is a module attribute looked up at every call.)"""


def _native_plain() -> Any:
    """``protocol._diffc``'s ``plain`` (this module's :func:`pack` of the plain types, written in
    C, or None for a value it does not write), or None where the extension is not built."""
    try:
        native = importlib.import_module("protocol._diffc")
    except ImportError:
        return None
    return getattr(native, "plain", None)


_NATIVE_PLAIN: Final[Any] = _native_plain()


def pack(value: Any) -> bytes:
    """``msgpack.packb(value, use_bin_type=True)``: the same bytes, from compiled code.

    The plain types (all the server sends) are written in C where the compiled build made
    ``protocol._diffc`` (its ``plain``: one C call, where ormsgpack's costs about 2,000
    instructions before its first byte; tested against msgpack's bytes), else encoded by
    ormsgpack, about twice as fast as msgpack's Packer on a patch's ops and frames
    (BENCHMARKS.md, "The wire through ormsgpack"); anything either refuses (:data:`_PLAIN`)
    goes through one reused msgpack Packer per thread (``msgpack.packb`` builds a new Packer at
    every call, which costs more than encoding a small value). A string or an int is written by
    :func:`_scalar`, nil and the booleans are constants, as in :func:`canonical`.
    """
    kind = type(value)
    if kind is str or kind is int:
        return _scalar(value)
    if value is None or kind is bool:
        return _NIL if value is None else _TRUE if value else _FALSE
    if _NATIVE_PLAIN is not None:
        enc: bytes | None = _NATIVE_PLAIN(value)
        if enc is not None:
            return enc
    try:
        return _packb(value, option=_PLAIN)
    except TypeError:
        return _msgpack_pack(value)


def _msgpack_pack(value: Any) -> bytes:
    try:
        packer = _local.packer
    except AttributeError:
        packer = _local.packer = msgpack.Packer(use_bin_type=True)
    return packer.pack(value)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    """Decode trusted bytes (our own encodings, kept between revisions); never for input.

    ormsgpack decodes them about 1.6 times as fast as msgpack (the same values: maps with
    string keys, lists, str, int, float, bool, None); what it refuses (a map key that is not a
    string, an extension type) msgpack decodes as before."""
    try:
        return _unpackb(data)
    except (TypeError, ValueError):  # (ormsgpack.MsgpackDecodeError is a ValueError)
        return msgpack.unpackb(data, raw=False, strict_map_key=False)


def encode(message: Mapping[str, Any]) -> bytes:
    """Encode one frame (trusted input: our own messages)."""
    return pack(message)


def decode(data: object, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Decode one untrusted frame into a map with a string ``type``, or raise FrameError.

    ``data`` is whatever the socket gave (a text frame is a ``str``): typed ``object`` so that a
    compiled build (``scripts/build-compiled``) checks it here too, not at the call."""
    if not isinstance(data, (bytes, bytearray, memoryview)):  # (a tuple: no union made per call)
        raise FrameError(ErrorCode.TEXT_FRAME, "frames are binary msgpack, not text")
    size = len(data)
    if size > limits.max_frame_bytes:
        raise FrameError(
            ErrorCode.FRAME_TOO_LARGE,
            f"frame of {size} bytes; the limit is {limits.max_frame_bytes}",
        )
    if size <= _QUICK_BYTES:
        frame = _quick(data, size, limits)
        if frame is not None:
            return frame
    return _decode(data, limits)


def _decode(data: bytes | bytearray | memoryview, limits: Limits) -> dict[str, Any]:
    """:func:`decode` by the reference path: msgpack's unpacker with the limits, then
    :func:`check_value` (every error found and named here)."""
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=False,
            max_str_len=limits.max_str,
            max_bin_len=0,
            max_ext_len=0,
            max_array_len=limits.max_container,
            max_map_len=limits.max_container,
        )
    except msgpack.StackError:  # deeper than the unpacker's own stack (1,024 levels)
        raise FrameError(ErrorCode.TOO_DEEP, f"nesting deeper than {limits.max_depth}") from None
    except TypeError as wrong:
        if "unhashable" in str(wrong):  # a map or an array used as a map key
            raise FrameError(ErrorCode.BAD_TYPE, "map keys must be strings") from None
        raise FrameError(
            ErrorCode.MALFORMED_FRAME, f"not one msgpack value: {type(wrong).__name__}"
        ) from None
    except ValueError as refused:
        text = str(refused)
        if "max_bin_len" in text or "max_ext_len" in text:
            raise FrameError(
                ErrorCode.BAD_TYPE, "binary and extension types are not allowed"
            ) from None
        if "exceeds max_" in text:
            raise FrameError(ErrorCode.CONTAINER_TOO_LARGE, text) from None
        raise FrameError(ErrorCode.MALFORMED_FRAME, f"not one msgpack value: {text}") from None
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise FrameError(
            ErrorCode.MALFORMED_FRAME, f"not one msgpack value: {type(exc).__name__}"
        ) from None
    check_value(value, limits)
    if not isinstance(value, dict):
        raise FrameError(ErrorCode.BAD_ENVELOPE, "a frame is a map")
    kind = value.get("type")
    if not isinstance(kind, str) or not kind:
        raise FrameError(ErrorCode.BAD_ENVELOPE, "a frame needs a string 'type'")
    return value


def check_value(value: object, limits: Limits = DEFAULT_LIMITS) -> None:
    """Check depth, types and string keys of a decoded value without recursion."""
    max_depth = limits.max_depth
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict:
            if depth > max_depth:
                raise FrameError(ErrorCode.TOO_DEEP, f"nesting deeper than {max_depth}")
            mapping = cast(dict[object, object], item)  # (typed: compiled, the dict's own loop)
            for key, child in mapping.items():
                if type(key) is not str:
                    raise FrameError(ErrorCode.BAD_TYPE, "map keys must be strings")
                ct = type(child)
                if ct is dict or ct is list:
                    stack.append((child, depth + 1))
                elif ct not in _SCALARS:
                    raise FrameError(ErrorCode.BAD_TYPE, f"{ct.__name__} not allowed")
        elif kind is list:
            if depth > max_depth:
                raise FrameError(ErrorCode.TOO_DEEP, f"nesting deeper than {max_depth}")
            for child in cast(list[object], item):
                ct = type(child)
                if ct is dict or ct is list:
                    stack.append((child, depth + 1))
                elif ct not in _SCALARS:
                    raise FrameError(ErrorCode.BAD_TYPE, f"{ct.__name__} not allowed")
        elif kind not in _SCALARS:
            raise FrameError(ErrorCode.BAD_TYPE, f"{kind.__name__} not allowed")


_SCALARS: Final = frozenset({type(None), bool, int, float, str})

_QUICK_BYTES: Final = 1024
"""Frames up to this size try :func:`_quick` first (an ``act``, a ``chat`` line, most requests:
20 to 200 bytes); a larger one, or one it declines, takes the reference path."""


def _quick(
    data: bytes | bytearray | memoryview, size: int, limits: Limits
) -> dict[str, Any] | None:
    """A small frame decoded by ormsgpack, or None when it cannot vouch for the result (then
    :func:`_decode` decodes it again and finds the error, if any: every frame it refuses is
    refused with the reference path's code and message).

    msgpack's unpacker with its keyword limits costs about twice ormsgpack's call on an
    ``act`` (10,500 against 5,100 instructions, compiled). ormsgpack has no limits and takes a
    value followed by more bytes; so its value counts only when :func:`_least_size` (which
    checks every limit :func:`_decode` enforces, and the types) adds up to the frame's length.
    That sum is at most the length of *any* msgpack encoding of the value (each header and
    number in its shortest form, each float as 32-bit, each character of a string as one
    byte); the frame is such an encoding (of the value as read, map entries read twice
    included) followed perhaps by more bytes, so an equal sum leaves no room for any. A frame
    that sum falls short of (a float as 64-bit, a string of other than ASCII) is merely
    declined. Bounded: at most :data:`_QUICK_BYTES` bytes, every value at least one
    of them."""
    try:
        value = _unpackb(data)
    except Exception:  # (ormsgpack's own errors, and any other: the reference path names them)
        return None
    if type(value) is not dict:
        return None
    frame: dict[str, Any] = value
    kind = frame.get("type")
    if type(kind) is not str or not kind or _least_size(frame, limits) != size:
        return None
    return frame


def _least_size(value: dict[str, Any], limits: Limits) -> int:
    """The fewest bytes any msgpack encoding of ``value`` takes, or -1 if it breaks a limit of
    :func:`_decode` or holds a type it refuses (see :func:`_quick`). The walk of
    :func:`check_value`, with sizes.

    A string counts one byte per character, its header by that count: the least its UTF-8 can
    take (a string of other than ASCII characters makes the sum short of the frame, which is
    then declined, as is one of more characters than ``max_str``, whose bytes are more)."""
    max_depth, max_container, max_str = limits.max_depth, limits.max_container, limits.max_str
    total = 0
    stack: list[tuple[object, int]] = []
    item: object = value
    depth = 1
    while True:
        if depth > max_depth:
            return -1
        if type(item) is dict:
            mapping = cast(dict[object, object], item)
            n = len(mapping)
            if n > max_container:
                return -1
            total += 1 if n < 16 else 3 if n < 0x10000 else 5
            for key, child in mapping.items():
                if type(key) is not str:
                    return -1
                k = len(key)
                if k > max_str:
                    return -1
                total += _str_form(k)
                used = _least_scalar(child, max_str)
                if used >= 0:
                    total += used
                elif used == _CONTAINER:
                    stack.append((child, depth + 1))
                else:
                    return -1
        else:
            items = cast(list[object], item)
            n = len(items)
            if n > max_container:
                return -1
            total += 1 if n < 16 else 3 if n < 0x10000 else 5
            for child in items:
                used = _least_scalar(child, max_str)
                if used >= 0:
                    total += used
                elif used == _CONTAINER:
                    stack.append((child, depth + 1))
                else:
                    return -1
        if not stack:
            return total
        item, depth = stack.pop()


_CONTAINER: Final = -2
"""(:func:`_least_scalar` of a map or a list: walked by :func:`_least_size`'s loop.)"""


def _least_scalar(value: object, max_str: int) -> int:
    """The fewest bytes of a scalar (as :func:`_least_size` counts a string), :data:`_CONTAINER`
    for a map or a list, or -1 for a string of more than ``max_str`` characters or a type
    :func:`_decode` refuses."""
    kind = type(value)
    if kind is str:
        n = len(cast(str, value))
        return -1 if n > max_str else _str_form(n)
    if kind is int:
        return _int_size(cast(int, value))
    if kind is dict or kind is list:
        return _CONTAINER
    if value is None or kind is bool:
        return 1
    if kind is float:
        return 5
    return -1


def _str_form(n: int) -> int:
    """The bytes of a string of ``n`` UTF-8 bytes in msgpack's shortest string form (the forms
    :func:`pack` writes; also :mod:`protocol.patch`'s size rule's)."""
    return n + (1 if n < 32 else 2 if n < 0x100 else 3 if n < 0x10000 else 5)


def _int_size(n: int) -> int:
    """``len(pack(n))``: ``n`` in msgpack's shortest form, or 0 beyond 64 bits (which ``pack``
    refuses; a decoded int never is). Also :mod:`protocol.patch`'s size rule's."""
    if n >= 0:
        if n < 0x80:
            return 1
        if n < 0x100:
            return 2
        if n < 0x10000:
            return 3
        if n < 0x100000000:
            return 5
        return 9 if n < 0x10000000000000000 else 0
    if n >= -32:
        return 1
    if n >= -0x80:
        return 2
    if n >= -0x8000:
        return 3
    if n >= -0x80000000:
        return 5
    return 9 if n >= -0x8000000000000000 else 0


def _sorted(value: Any) -> Any:
    """A copy with every map's keys in order; only containers are rebuilt.

    Python orders ``str`` by code point, which is exactly the order of their UTF-8 bytes, so
    plain ``sorted`` gives the canonical key order without encoding any key.
    """
    kind = type(value)
    if kind is dict:
        out = {}
        for key in sorted(value):
            child = value[key]
            ct = type(child)
            out[key] = _sorted(child) if ct is dict or ct is list or ct is tuple else child
        return out
    if kind is list or kind is tuple:
        return [_sorted(child) if type(child) in _CONTAINERS else child for child in value]
    return value


_CONTAINERS: Final = frozenset({dict, list, tuple})


_CANONICAL: Final = ormsgpack.OPT_SORT_KEYS | _PLAIN
""":data:`_PLAIN` with every map's keys sorted; what ormsgpack refuses takes the reference
path."""


def canonical(value: Any) -> bytes:
    """The canonical msgpack encoding of a JSON-like value (sorted map keys).

    Encoded in compiled code by ormsgpack with its key sorting, about 9 times faster than
    sorting a copy in Python (an Ishtar view: 6.5 against 57 us); the bytes are those of the
    reference path, msgpack of :func:`_sorted`'s copy (tested value by value, edge sizes
    included). A value ormsgpack refuses (a non-string key, an int beyond 64 bits, another type)
    takes the reference path, which encodes it or raises as msgpack does. A string or an int is
    written by :func:`_scalar`, nil, the booleans and the empty list are constants (the call to
    ormsgpack would cost more than their encoding: a view's ``result``, a seat's ``undo``, the
    ``choices`` of a seat that has none).
    """
    kind = type(value)
    if kind is str or kind is int:
        return _scalar(value)
    if value is None or kind is bool:
        return _NIL if value is None else _TRUE if value else _FALSE
    if kind is list and not value:  # (a seat's choices, mostly: no call to the encoder)
        return _EMPTY_ARRAY
    try:
        return _packb(value, option=_CANONICAL)
    except TypeError:
        return _reference_canonical(value)


def _reference_canonical(value: Any) -> bytes:
    """:func:`canonical` the slow and obvious way: msgpack of a copy with its keys sorted."""
    return _msgpack_pack(_sorted(value))


def canonical_copy(value: Any) -> tuple[Any, bytes]:
    """A copy of ``value`` that shares no container with it (tuples become lists), and the
    canonical encoding of both.

    The copy is what decoding the encoding would give, without decoding it: the server keeps it
    as the previous value of a room-level part (a clock) to diff against, safe from a caller that
    later mutates its lists.
    """
    return _sorted(value), canonical(value)


_EMPTY_ARRAY: Final = b"\x90"
"""msgpack's empty array."""
_NIL: Final = b"\xc0"
_FALSE: Final = b"\xc2"
_TRUE: Final = b"\xc3"
"""msgpack's nil, false and true (one byte each)."""
_FIX: Final = tuple(bytes([i]) for i in range(256))
"""Every one-byte string, for the fix headers."""


def _scalar(value: str | int) -> bytes:
    """msgpack's encoding of a string or an int, written here: a view's fields and a frame's
    room, revision and hash are mostly these, and ormsgpack's call costs several times the
    encoding of one (msgpack's forms exactly, tested at every boundary; an int beyond 64 bits
    raises ``OverflowError`` as msgpack does)."""
    if type(value) is str:
        data = value.encode()
        n = len(data)
        if n < 32:
            return _FIX[0xA0 | n] + data
        if n < 0x100:
            return b"\xd9" + _FIX[n] + data
        if n < 0x10000:
            return b"\xda" + n.to_bytes(2, "big") + data
        return b"\xdb" + n.to_bytes(4, "big") + data
    n = int(value)
    if n >= 0:
        if n < 0x80:
            return _FIX[n]
        if n < 0x100:
            return b"\xcc" + _FIX[n]
        if n < 0x10000:
            return b"\xcd" + n.to_bytes(2, "big")
        if n < 0x100000000:
            return b"\xce" + n.to_bytes(4, "big")
        if n < 0x10000000000000000:
            return b"\xcf" + n.to_bytes(8, "big")
        raise OverflowError("Integer value out of range")
    if n >= -32:
        return _FIX[n & 0xFF]
    if n >= -0x80:
        return b"\xd0" + n.to_bytes(1, "big", signed=True)
    if n >= -0x8000:
        return b"\xd1" + n.to_bytes(2, "big", signed=True)
    if n >= -0x80000000:
        return b"\xd2" + n.to_bytes(4, "big", signed=True)
    if n >= -0x8000000000000000:
        return b"\xd3" + n.to_bytes(8, "big", signed=True)
    raise OverflowError("Integer value out of range")


def map_header(n: int) -> bytes:
    """The msgpack header of a map of ``n`` entries (to splice pre-encoded entries after it)."""
    return _header(n, 0x80, b"\xde", b"\xdf")


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items (to splice pre-encoded items after it)."""
    return _header(n, 0x90, b"\xdc", b"\xdd")


def _header(n: int, fix: int, wide16: bytes, wide32: bytes) -> bytes:
    """A msgpack container header: the fix form below 16, else a 16- or 32-bit count."""
    if n < 16:
        return _FIX[fix | n]
    if n < 1 << 16:
        return wide16 + n.to_bytes(2, "big")
    return wide32 + n.to_bytes(4, "big")


def array_length(encoded: bytes) -> tuple[int, int] | None:
    """The item count of an encoded msgpack array and the size of its header, read from the
    header (None: not an array)."""
    first = encoded[0]
    if 0x90 <= first <= 0x9F:
        return first & 0x0F, 1
    if first == 0xDC:
        return int.from_bytes(encoded[1:3], "big"), 3
    if first == 0xDD:
        return int.from_bytes(encoded[1:5], "big"), 5
    return None


def canonical_map(encoded_values: Mapping[str, bytes]) -> bytes:
    """The canonical encoding of a map whose values are already canonically encoded.

    Python orders ``str`` by code point, which is exactly the order of their UTF-8 bytes, so
    plain ``sorted`` gives the canonical key order. Lets the server hash
    ``{"own": ..., "shared": ...}`` without encoding the shared part again for every audience.
    """
    keys = _KEYS
    parts = [map_header(len(encoded_values))]
    for key in sorted(encoded_values):
        enc = keys.get(key)
        if enc is None:
            enc = _key(key)
        parts.append(enc)
        parts.append(encoded_values[key])
    return b"".join(parts)


_KEYS: Final[dict[str, bytes]] = {}
"""The encodings of map keys seen by :func:`canonical_map` (a view's field names, a room's
parts: a few hundred), so that a revision does not encode the same keys again and again."""
_KEYS_MAX: Final = 4096
"""Past this many keys (a map keyed by something unbounded) the others are encoded each time."""


def canonical_key(key: str) -> bytes:
    """The encoding of a map key (a string), from the cache of :func:`canonical_map`."""
    enc = _KEYS.get(key)
    return _key(key) if enc is None else enc


def _key(key: str) -> bytes:
    enc = pack(key)
    if len(_KEYS) < _KEYS_MAX:
        _KEYS[key] = enc
    return enc


def canonical_array(encoded_items: list[bytes]) -> bytes:
    """The canonical encoding of a list whose items are already canonically encoded."""
    return array_header(len(encoded_items)) + b"".join(encoded_items)
