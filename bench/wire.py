"""The wire's hot paths in process, per game: canonical encoding, view hash, the server's
``Views.advance``, and a client's mirror taking each patch (path-copying apply + view hash).

Plays seeded random 4-seat matches as a room does (no sockets, no store) and prints, per game,
CPU microseconds per call (``time.process_time``, best of ``--repeat`` runs of the same matches):

- ``canonical``: :func:`protocol.codec.canonical` of seat 0's whole view document;
- ``view_hash``: :func:`protocol.hashing.view_hash` of the same document;
- ``advance``: one :meth:`server.views.Views.advance` (every audience's frame of a revision);
- ``hash_for``: one audience's hash from the kept bytes (:meth:`Views.hash_for`);
- ``mirror``: one ``patch`` frame taken by a client's :class:`protocol.mirror.Mirror` (seat 0
  and a spectator), hash checked;
- ``act`` / ``push``: applying a choice the room has just resolved, checked again
  (``Match.act``, what the room did before ``Match.push``) or pushed (``Match.push``).

    .venv/bin/python bench/wire.py [--matches N] [--games yspahan,ishtar] [--repeat R]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games import registry
from games.base import Match
from games.rng import Rng
from protocol.codec import canonical
from protocol.hashing import view_hash
from protocol.mirror import Mirror
from server.views import Revision, Views

SEATS = 4


def _matches(game_name: str, matches: int) -> list[tuple[Views, list[Revision], list[Any]]]:
    """Each match's views (at the start), its revisions and seat 0's documents along the way."""
    game = registry.get(game_name)
    out = []
    for seed in range(1, matches + 1):
        match = Match.new(game, SEATS, {}, seed)
        room = Views(f"room-{seed:04d}", match, SEATS)
        chooser = Rng.from_seed(seed ^ 0x5EED)
        revisions, docs = [], [room.full(0)[0]]
        rev = 0
        while (decision := match.decision) is not None:
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            rev += 1
            revisions.append(room.advance(rev, events))
            docs.append(room.full(0)[0])
        out.append((room, revisions, docs))
    return out


def _clock(work: Callable[[], int], repeat: int) -> float:
    """CPU microseconds per unit of ``work`` (which returns how many units it did), best run."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        units = work()
        best = min(best, (time.process_time() - start) / max(1, units))
    return best * 1e6


def measure(game_name: str, matches: int, repeat: int) -> dict[str, float]:
    played = _matches(game_name, matches)
    docs = [doc for _, _, match_docs in played for doc in match_docs]

    def encode() -> int:
        for doc in docs:
            canonical(doc)
        return len(docs)

    def hashing() -> int:
        for doc in docs:
            view_hash(doc)
        return len(docs)

    def hash_for() -> int:
        count = 0
        for room, _, _ in played:
            for seat in (0, 1, 2, 3, None):
                room.hash_for(seat)
                count += 1
        return count

    def mirror() -> int:
        count = 0
        for room, revisions, _ in played:
            for spectator in (False, True):
                frames = [
                    msgpack.unpackb(r.spectator_frame if spectator else r.seat_frames[0])
                    for r in revisions
                ]
                copy = Mirror(room.room)
                copy.on_frame(_first(room, spectator))
                start = time.process_time()
                for frame in frames:
                    copy.on_frame(frame)
                spent.append(time.process_time() - start)
                assert copy.resyncs == 0
                count += len(frames)
        return count

    spent: list[float] = []
    return {
        "revisions": sum(len(r) for _, r, _ in played),
        "canonical": _clock(encode, repeat),
        "view_hash": _clock(hashing, repeat),
        "advance": _timed(lambda: _advance(game_name, matches, spent), spent, repeat),
        "hash_for": _clock(hash_for, repeat),
        "mirror": _timed(mirror, spent, repeat),
        "act": _timed(lambda: _apply(game_name, matches, spent, pushed=False), spent, repeat),
        "push": _timed(lambda: _apply(game_name, matches, spent, pushed=True), spent, repeat),
    }


def _apply(game_name: str, matches: int, spent: list[float], *, pushed: bool) -> int:
    """Every match again, as the room runs a choice: resolve it (untimed), then apply it with
    ``push`` or with a second check (``act``), timed into ``spent``; the choices made."""
    game = registry.get(game_name)
    count = 0
    for seed in range(1, matches + 1):
        match = Match.new(game, SEATS, {}, seed)
        chooser = Rng.from_seed(seed ^ 0x5EED)
        while (decision := match.decision) is not None:
            legal = match.resolve(decision.seat, chooser.below(len(decision.choices)))
            start = time.process_time()
            if pushed:
                match.push(decision.seat, legal)
            else:
                match.act(decision.seat, legal)
            spent.append(time.process_time() - start)
            count += 1
    return count


def _advance(game_name: str, matches: int, spent: list[float]) -> int:
    """Every match again, timing only ``advance`` (into ``spent``); the revisions made."""
    game = registry.get(game_name)
    count = 0
    for seed in range(1, matches + 1):
        match = Match.new(game, SEATS, {}, seed)
        room = Views(f"room-{seed:04d}", match, SEATS)
        chooser = Rng.from_seed(seed ^ 0x5EED)
        rev = 0
        while (decision := match.decision) is not None:
            events = match.act(decision.seat, chooser.below(len(decision.choices)))
            rev += 1
            start = time.process_time()
            room.advance(rev, events)
            spent.append(time.process_time() - start)
        count += rev
    return count


def _timed(work: Callable[[], int], spent: list[float], repeat: int) -> float:
    """CPU microseconds per unit of ``work``, counting only what it put in ``spent``."""
    best = float("inf")
    for _ in range(repeat):
        spent.clear()
        units = work()
        best = min(best, sum(spent) / max(1, units))
    return best * 1e6


def _first(room: Views, spectator: bool) -> dict[str, Any]:
    """A ``joined`` frame with the audience's view at rev 0 (rebuilt: ``room`` is at the end)."""
    game = room.match.game
    start = Views(room.room, Match.new(game, SEATS, {}, int(room.room.split("-")[1])), SEATS)
    view, digest = start.full(None if spectator else 0)
    return {"type": "joined", "room": room.room, "seat": None if spectator else 0, "rev": 0,
            "view": view, "hash": digest, "info": {}, "chat": []}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--games", default="yspahan,ishtar")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name in args.games.split(","):
        r = measure(name, args.matches, args.repeat)
        print(
            f"{name:<8} {r['revisions']:>6} revisions  canonical {r['canonical']:6.1f} us  "
            f"view_hash {r['view_hash']:6.1f} us  advance {r['advance']:6.1f} us  "
            f"hash_for {r['hash_for']:5.2f} us  mirror {r['mirror']:6.1f} us  "
            f"act {r['act']:5.1f} us  push {r['push']:5.1f} us"
        )


if __name__ == "__main__":
    main()
