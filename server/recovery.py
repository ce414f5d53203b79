"""Rebuild matches from what the store kept: live rooms after a restart, archives for replays.

The engines are deterministic (the generator lives in the state), so a match is its latest
snapshot plus the choices after it, or, with no snapshot yet, ``Match.new`` from the seed and
options in the room's meta plus every choice. An undo is an entry of the log like a choice
(:data:`server.store.UNDO`), replayed by :meth:`Match.undo`; snapshots are taken only where no
step is open to an undo (:meth:`server.keeper.Keeper.keep`), so the steps an undo in the tail
takes back are in the tail too.

Two ways to replay (a decision, for restore speed):

- **Live rooms** (:func:`rebuild`, every restart) replay their log tail through the trusted
  :meth:`Match.push`. The log holds only choices the room resolved (:meth:`Match.resolve`)
  before storing them, written in rev order by a fenced script that refuses gaps, and the record
  decoder already refuses malformed bytes; listing the legal choices again at every step was
  most of the restore time (Ishtar: 138 us a step against 8 us for ``apply``). Each step is still
  checked against the seat to move (``push`` refuses a choice stored for the wrong seat), and
  any exception the engine raises on a choice that does not fit its state is reported as that
  room's error, with the rev. What this does not catch is a well-formed choice, for the right
  seat, that is not legal and that the engine applies anyway; a rule change under stored
  matches is what ``schema_version`` migrations are for.
- **Archives** (:func:`replay`: ``oasis replay``, replay rooms) go through :meth:`Match.act`, the
  checked path: a stored choice that is no longer legal is reported instead of silently
  producing another match, and the events of every rev are kept.

Every failure is a :class:`RecoveryError` naming the room; :func:`restore_all` collects them per
room so one bad room never stops the others from loading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games import registry
from games.base import Event, Match, Result
from games.errors import GameError, OptionsError, SnapshotError
from server.store import (
    Action,
    ArchiveRecord,
    CorruptRecordError,
    RoomMeta,
    RoomRecord,
    StoreError,
)
from server.store.redis import RedisStore


class RecoveryError(Exception):
    """A stored room or archive that cannot be turned back into its match."""

    def __init__(self, room: str, detail: str) -> None:
        super().__init__(f"room {room}: {detail}")
        self.room = room


@dataclass(frozen=True, slots=True)
class Restored:
    """A live room brought back: its record (meta, chat...) and its match at ``rev``."""

    record: RoomRecord
    match: Match[Any]
    rev: int


@dataclass(frozen=True, slots=True)
class Replay:
    """A finished match played again: the final match, the events of each rev, the result."""

    match: Match[Any]
    events: list[list[Event]]
    result: Result | None


def rebuild(record: RoomRecord) -> Match[Any]:
    """The match of a live room at ``record.rev``: snapshot (or a fresh setup) plus the tail."""
    meta = record.info
    game = _game(record.room, meta.game)
    snapshot = record.snapshot
    try:
        if snapshot is not None:
            match: Match[Any] = Match(game, game.load(snapshot.state))
        else:
            match = Match.new(game, *_setup(record.room, meta))
    except (SnapshotError, OptionsError) as exc:
        raise RecoveryError(record.room, f"cannot set the match up: {exc}") from None
    _fast_forward(record.room, match, record.actions)
    return match


def replay(record: ArchiveRecord) -> Replay:
    """Play an archived match again from its seed, options and every choice."""
    game = _game(record.room, record.game)
    try:
        match: Match[Any] = Match.new(game, record.players, record.options, record.seed)
    except OptionsError as exc:
        raise RecoveryError(record.room, f"cannot set the match up: {exc}") from None
    events: list[list[Event]] = []
    _replay(record.room, match, record.actions, events)
    return Replay(match, events, match.result())


def replay_archive(record: ArchiveRecord) -> tuple[list[list[Event]], Result | None]:
    """The events of every rev (``events[rev - 1]``) and the result of an archived match.

    The caller (``oasis replay ROOM``) compares the result with the stored one.
    """
    played = replay(record)
    return played.events, played.result


async def restore_all(store: RedisStore) -> tuple[list[Restored], list[RecoveryError]]:
    """Every unfinished room rebuilt; the rooms that could not be, each with why.

    Reads are batched (:meth:`RedisStore.load_rooms`); a Redis failure is not a per-room error
    and propagates as StoreError.
    """
    rooms = await store.unfinished_rooms()
    loaded = await store.load_rooms(rooms)
    restored: list[Restored] = []
    failed: list[RecoveryError] = []
    for room in rooms:
        found = loaded[room]
        if found is None:
            continue  # finished or deleted between the two reads
        if isinstance(found, CorruptRecordError):
            failed.append(RecoveryError(room, str(found).removeprefix(f"room {room}: ")))
            continue
        try:
            restored.append(Restored(found, rebuild(found), found.rev))
        except RecoveryError as exc:
            failed.append(exc)
        except (StoreError, GameError, KeyError, TypeError, ValueError) as exc:
            failed.append(RecoveryError(room, f"{type(exc).__name__}: {exc}"))
    return restored, failed


def _game(room: str, name: object) -> Any:
    if not isinstance(name, str):
        raise RecoveryError(room, f"meta names no game ({name!r})")
    try:
        return registry.get(name)
    except OptionsError as exc:
        raise RecoveryError(room, str(exc)) from None


def _setup(room: str, meta: RoomMeta) -> tuple[int, Mapping[str, object], int]:
    players, options, seed = meta.players, meta.options, meta.seed
    if players is None or seed is None or options is None:
        raise RecoveryError(room, "meta lacks players, options or seed, and there is no snapshot")
    return players, options, seed


def _fast_forward(room: str, match: Match[Any], actions: list[Action]) -> None:
    """Push a live room's stored tail through the trusted path (see the module doc); an undo
    entry takes the seat's last step back (:meth:`Match.undo`, which checks it may)."""
    for action in actions:
        try:
            if action.undo:
                match.undo(action.seat)
            else:
                match.push(action.seat, action.choice)
        except Exception as exc:  # the wrong seat, or an engine fed a choice that does not fit
            detail = str(exc) if isinstance(exc, GameError) else f"{type(exc).__name__}: {exc}"
            raise RecoveryError(
                room, f"rev {action.rev} (seat {action.seat}, {action.choice!r}): {detail}"
            ) from None


def _replay(
    room: str, match: Match[Any], actions: list[Action], events: list[list[Event]] | None
) -> None:
    for action in actions:
        try:
            if action.undo:
                happened = match.undo(action.seat)
            else:
                happened = match.act(action.seat, action.choice)
        except GameError as exc:
            raise RecoveryError(
                room, f"rev {action.rev} (seat {action.seat}, {action.choice!r}): {exc}"
            ) from None
        if events is not None:
            events.append(happened)
