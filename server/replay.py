"""``oasis replay ROOM``: play a finished match again from its archive and print what happened.

The archive holds the seed, options and every choice (:mod:`server.records`); the engines are
deterministic, so re-executing the choices gives the live match again. Output, one JSON object
per line (keys sorted, no spaces, so the lines compare byte for byte with the events a live
spectator received, rendered the same way by :func:`line`):

- per revision: ``{"rev", "seat", "choice", "events"}``, ``events`` as spectators saw them
  (each event projected for the spectator audience, exactly the ``events`` of its patch frame);
- last: ``{"room", "game", "players", "seed", "revs", "result", "view_hash",
  "matches_archive"}``: the replayed result (``Result.to_json()``), the hash of the final
  spectator view (the ``hash`` of the last patch the live spectators got) and whether the
  replayed result equals the one stored at the end of the live match.

Exit code 0 when the replay matches the archive, 2 when it does not (an engine changed its
rules under stored matches), 1 when the room has no archive or the store cannot be read.

Where the archive is read: ``--redis-url`` (default ``REDIS_URL``); without one, the private
Redis of ``oasis-server`` in ``--redis-dir`` (the running server's, or started for the read and
stopped after).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, TextIO

from games.base import shared_part
from protocol.codec import canonical, canonical_map
from protocol.hashing import hash_bytes
from server import logging as oasis_logging
from server.embedded_redis import DEFAULT_DIRECTORY, running_url, start_embedded
from server.records import ArchiveRecord
from server.recovery import RecoveryError, replay
from server.store import StoreError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("room", help="the id of a finished (archived) room")
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", ""), help="env REDIS_URL"
    )
    parser.add_argument(
        "--redis-dir",
        default=os.environ.get("OASIS_REDIS_DIR", str(DEFAULT_DIRECTORY)),
        help="the server's private Redis directory, when no URL is given (env OASIS_REDIS_DIR)",
    )


def line(value: Any) -> str:
    """One output line: JSON with sorted keys and no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spectator_hash(match: Any) -> str:
    """The view hash of the spectators' view (SPEC section 4), as the live room computes it."""
    shared = canonical(shared_part(match.game, match.state, match.decision))
    return hash_bytes(canonical_map({"shared": shared, "own": canonical(None)}))


def render(archive: ArchiveRecord, out: TextIO) -> bool:
    """Replay ``archive`` and print it; True when the result equals the stored one."""
    played = replay(archive)
    for action, events in zip(archive.actions, played.events, strict=True):
        record = {
            "rev": action.rev,
            "seat": action.seat,
            "choice": action.choice,
            "events": [event.project(None) for event in events],
        }
        print(line(record), file=out)
    result = None if played.result is None else played.result.to_json()
    abandoned = bool(archive.result.get("abandoned"))
    matches = (result is None and abandoned) or result == archive.result
    summary = {
        "room": archive.room,
        "game": archive.game,
        "players": archive.players,
        "seed": archive.seed,
        "revs": len(archive.actions),
        "result": result,
        "stored_result": archive.result,
        "view_hash": spectator_hash(played.match),
        "matches_archive": matches,
    }
    print(line(summary), file=out, flush=True)
    return matches


async def load(url: str, room: str) -> ArchiveRecord | None:
    from server.redis_store import RedisStore

    store = RedisStore(url)
    try:
        return await store.load_archive(room)
    finally:
        await store.close()


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    oasis_logging.configure("console", "warning")
    url: str = args.redis_url
    embedded = None
    if not url:
        url = running_url(args.redis_dir) or ""
    if not url:
        embedded = start_embedded(args.redis_dir)
        if embedded is None:
            print("oasis replay: no REDIS_URL and no redis-server to read from", file=sys.stderr)
            return 1
        url = embedded.url
    try:
        archive = asyncio.run(load(url, args.room))
    except StoreError as exc:
        print(f"oasis replay: {exc}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()
    if archive is None:
        print(f"oasis replay: no finished match {args.room!r}", file=sys.stderr)
        return 1
    try:
        return 0 if render(archive, out) else 2
    except RecoveryError as exc:
        print(f"oasis replay: {exc}", file=sys.stderr)
        return 2
