"""Per-audience views of one room, and the patch frames of each revision.

DESIGN "Where the time goes": the shared part of the view is diffed, canonically encoded and its
ops encoded once per revision; only the small own parts are diffed per seat; each audience's
frame is encoded once (then written to every socket of that audience). The view hash of an
audience is BLAKE2b of ``canonical_map({"own": own_bytes, "shared": shared_bytes})``, so the
shared part is never encoded twice.

A room may add *room-level parts*: further top-level entries of every audience's document (the
same for all, like ``clock``, :mod:`server.clock`). They are diffed with the shared part (their
ops go with the shared ops, prefixed ``/<name>``) and hashed as one more key of the map.

The cached "previous" documents are rebuilt from their canonical bytes rather than kept as the
objects a game returned: an engine may hand out lists that it later mutates, and a decoded copy
costs one C-speed unpack.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgpack

from games.base import Event, Match, own_part, shared_part
from protocol.codec import canonical, canonical_map
from protocol.messages import encode_ops, encode_patch
from protocol.patch import Op, diff, hash_bytes

_NONE = canonical(None)


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def _prefixed(ops: list[Op], prefix: str) -> list[Op]:
    for op in ops:
        op["path"] = prefix + op["path"]
    return ops


@dataclass(frozen=True, slots=True)
class Revision:
    """Everything sent for one revision: a frame per seat and one for the spectators."""

    rev: int
    seat_frames: tuple[bytes, ...]
    spectator_frame: bytes
    spectator_ops: list[Op]
    spectator_hash: str
    at: float


class Views:
    """The last view every audience was sent, kept as canonical bytes plus a decoded copy."""

    def __init__(
        self, room: str, match: Match[Any], players: int, parts: dict[str, Any] | None = None
    ) -> None:
        self.room = room
        self.match = match
        self.players = players
        self.parts: dict[str, Any] = {}
        self.parts_enc: dict[str, bytes] = {}
        self.set_parts(parts or {})
        self._load()

    def set_parts(self, parts: dict[str, Any]) -> None:
        """Replace the room-level parts without a patch (before anyone was sent the view)."""
        self.parts_enc = {name: canonical(value) for name, value in parts.items()}
        self.parts = {name: _unpack(enc) for name, enc in self.parts_enc.items()}

    def _load(self) -> None:
        match = self.match
        decision = match.decision
        self.shared_enc = canonical(shared_part(match.game, match.state, decision))
        self.shared: Any = _unpack(self.shared_enc)
        self.own_enc = [
            canonical(own_part(match.game, match.state, s, decision)) for s in range(self.players)
        ]
        self.own: list[Any] = [_unpack(b) for b in self.own_enc]

    def hash_for(self, seat: int | None) -> str:
        own = _NONE if seat is None else self.own_enc[seat]
        return hash_bytes(canonical_map({**self.parts_enc, "shared": self.shared_enc, "own": own}))

    def full(self, seat: int | None) -> tuple[dict[str, Any], str]:
        """A fresh copy of ``seat``'s current view document and its hash."""
        own = None if seat is None else _unpack(self.own_enc[seat])
        doc = {name: _unpack(enc) for name, enc in self.parts_enc.items()}
        doc.update(shared=_unpack(self.shared_enc), own=own)
        return doc, self.hash_for(seat)

    def advance(
        self, rev: int, events: list[Event], parts: dict[str, Any] | None = None
    ) -> Revision:
        """Diff every audience after the match changed; build one frame per audience.

        ``parts``: the room-level parts as they are now (omitted: unchanged)."""
        match = self.match
        decision = match.decision
        shared_enc = canonical(shared_part(match.game, match.state, decision))
        shared_new = _unpack(shared_enc)
        shared_ops = _prefixed(diff(self.shared, shared_new), "/shared")
        for name, value in (parts or {}).items():
            enc = canonical(value)
            if enc != self.parts_enc.get(name):
                new = _unpack(enc)
                if name in self.parts:
                    shared_ops += _prefixed(diff(self.parts[name], new), "/" + name)
                else:
                    shared_ops.append({"op": "add", "path": "/" + name, "value": new})
                self.parts[name], self.parts_enc[name] = new, enc
        shared_bytes = encode_ops(shared_ops)
        count = len(shared_ops)
        self.shared, self.shared_enc = shared_new, shared_enc
        frames: list[bytes] = []
        for seat in range(self.players):
            own_enc = canonical(own_part(match.game, match.state, seat, decision))
            if own_enc == self.own_enc[seat]:
                own_ops: list[Op] = []
            else:
                own_new = _unpack(own_enc)
                own_ops = _prefixed(diff(self.own[seat], own_new), "/own")
                self.own[seat], self.own_enc[seat] = own_new, own_enc
            seen = [e.project(seat) for e in events]
            frames.append(
                encode_patch(
                    self.room, rev, shared_bytes, count, own_ops, self.hash_for(seat), seen
                )
            )
        spectator_hash = self.hash_for(None)
        spectator = encode_patch(
            self.room,
            rev,
            shared_bytes,
            count,
            [],
            spectator_hash,
            [e.project(None) for e in events],
        )
        return Revision(rev, tuple(frames), spectator, shared_ops, spectator_hash, time.monotonic())
