"""``oasis replay ROOM``: play a finished match again from its archive and print what happened.

The archive holds the seed, options and every choice (:mod:`server.store.records`); the engines are
deterministic, so re-executing the choices gives the live match again. Output, one JSON object
per line (keys sorted, no spaces, so the lines compare byte for byte with the events a live
spectator received, rendered the same way by :func:`line`):

- per revision: ``{"rev", "seat", "choice", "events"}``, ``events`` as spectators saw them
  (each event projected for the spectator audience, exactly the ``events`` of its patch frame);
- last: ``{"room", "game", "players", "seed", "revs", "result", "stored_result", "view_hash",
  "matches_archive"}``: the replayed result (``Result.to_json()``), the one stored at the end of
  the live match, the hash of the final spectator view (the ``hash`` of the last patch the live
  spectators got) and whether the replayed result (with the seats forfeited on time, as the room
  archives it) equals the stored one.

The view hash is the live room's own (:meth:`server.views.Views.hash_for`,
:mod:`protocol.hashing`; a spectator's hash is the same under both rules of SPEC section 4): the
spectators' document is the shared part beside the room-level
parts, so in a room with clocks it covers the final clock part too, as the archive's meta kept
it (:func:`server.clock.stored_clocks`).

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

from games.base import Match
from protocol.errors import RequestError
from server import logging as oasis_logging
from server.clock import Clocks, stored_clocks
from server.embedded_redis import DEFAULT_DIRECTORY, running_url, start_embedded
from server.recovery import RecoveryError, replay
from server.store import ArchiveRecord, StoreError
from server.store.redis import RedisStore
from server.views import Views


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


def spectator_hash(room: str, match: Match[Any], players: int, clocks: Clocks | None) -> str:
    """The view hash of the spectators' view (SPEC section 4), as the live room computes it."""
    parts = None if clocks is None else clocks.parts(match.to_move)
    return Views(room, match, players, parts).hash_for(None)


def render(archive: ArchiveRecord, out: TextIO) -> bool:
    """Replay ``archive`` and print it; True when the result equals the stored one."""
    played = replay(archive)
    try:
        clocks = stored_clocks(archive.info, archive.players)
    except RequestError as exc:
        raise RecoveryError(archive.room, f"its clock settings: {exc.message}") from None
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
    extra = {} if clocks is None else clocks.result_extra()
    matches = (result is None and abandoned) or (
        result is not None and {**result, **extra} == archive.result
    )
    summary = {
        "room": archive.room,
        "game": archive.game,
        "players": archive.players,
        "seed": archive.seed,
        "revs": len(archive.actions),
        "result": result,
        "stored_result": archive.result,
        "view_hash": spectator_hash(archive.room, played.match, archive.players, clocks),
        "matches_archive": matches,
    }
    print(line(summary), file=out, flush=True)
    return matches


async def load(url: str, room: str) -> ArchiveRecord | None:
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
