"""What the stores keep, as typed records, and how stored bytes become them again.

Every stored byte is untrusted here: a blob that does not decode, or decodes to the wrong shape,
raises :class:`CorruptRecordError` naming its room and key, so recovery reports that room and
goes on with the others.

Schema versions. Snapshots and archives carry ``schema_version``. A reader accepts the current
version, migrates an older one step by step through :data:`SNAPSHOT_MIGRATIONS` /
:data:`ARCHIVE_MIGRATIONS` (``{v: function turning a version-v map into a version-v+1 map}``)
and refuses a newer one (a server older than the data must not guess). Version 0 is the format
written before the field existed: the same maps without ``schema_version`` (archives also
without ``chat``, ``meta`` and ``finished``). A change of format adds one entry to a table and
bumps :data:`SCHEMA_VERSION`; the game states inside (``game.dump``) are the engines' business
and are not migrated here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import msgpack

# (the records' encoder is the protocol's: ``msgpack.packb(value, use_bin_type=True)`` through
# one reused Packer per thread, not the new Packer ``packb`` builds at every call)
from protocol.codec import pack as pack
from server.store.errors import CorruptRecordError
from server.store.meta import RoomMeta

SCHEMA_VERSION: Final = 1
"""Version of the snapshot and archive formats this server writes."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]


UNDO: dict[str, Any] = {"undo": True}
"""The choice of a log entry that is an undo (``undo`` request, SPEC section 24): a map with no
``kind``, which no legal choice is, so the log stays ``[seat, choice]`` pairs."""


@dataclass(slots=True, init=False)
class Action:
    """One log entry: ``seat`` chose ``choice`` at ``rev``, or took back its last step
    (:attr:`undo`: ``choice`` is :data:`UNDO`).

    Never changed once made; not a frozen dataclass, whose generated ``__init__`` runs
    interpreted and sets each field through ``object.__setattr__`` (about 4,800 instructions
    per choice): its own ``__init__``, compiled, as :mod:`server.effects`' effects."""

    rev: int
    seat: int
    choice: dict[str, Any]

    def __init__(self, rev: int, seat: int, choice: dict[str, Any]) -> None:
        self.rev, self.seat, self.choice = rev, seat, choice

    @property
    def undo(self) -> bool:
        return is_undo(self.choice)


def is_undo(choice: dict[str, Any]) -> bool:
    """Whether a logged choice is :data:`UNDO`."""
    return "kind" not in choice and choice.get("undo") is True


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A full game state (``game.dump``) after ``rev`` choices."""

    rev: int
    state: dict[str, Any]
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True, slots=True)
class RoomRecord:
    """What recovery needs of one live room: meta, latest snapshot, the actions after it."""

    room: str
    meta: dict[str, Any]
    snapshot: Snapshot | None
    actions: list[Action]
    chat: list[dict[str, Any]] = field(default_factory=list)

    @property
    def info(self) -> RoomMeta:
        """The stored meta, typed (:class:`~server.store.meta.RoomMeta`)."""
        return RoomMeta.from_json(self.meta, self.room)

    @property
    def rev(self) -> int:
        """The last stored rev (0 before the first choice)."""
        if self.actions:
            return self.actions[-1].rev
        return self.snapshot.rev if self.snapshot is not None else 0


@dataclass(slots=True, init=False)
class ArchiveRecord:
    """A finished match: enough to replay it exactly (seed, options, every choice) and its end.

    ``result`` is the game's ``Result.to_json()``, or ``{"abandoned": true, ...}`` for a match
    that was given up (see :mod:`server.room`).

    Never changed once made; not a frozen dataclass (its generated ``__init__``, interpreted,
    sets each of the eleven fields through ``object.__setattr__``: about 22,000 instructions
    at the end of every match the memory store archives): its own ``__init__``, compiled, as
    :class:`Action`'s."""

    room: str
    game: str
    players: int
    options: dict[str, Any]
    seed: int
    actions: list[Action]
    result: dict[str, Any]
    chat: list[dict[str, Any]]
    meta: dict[str, Any]
    finished: float
    schema_version: int = SCHEMA_VERSION

    def __init__(
        self,
        room: str,
        game: str,
        players: int,
        options: dict[str, Any],
        seed: int,
        actions: list[Action],
        result: dict[str, Any],
        chat: list[dict[str, Any]],
        meta: dict[str, Any],
        finished: float,
        schema_version: int = SCHEMA_VERSION,
    ) -> None:
        self.room, self.game, self.players, self.options = room, game, players, options
        self.seed, self.actions, self.result, self.chat = seed, actions, result, chat
        self.meta, self.finished, self.schema_version = meta, finished, schema_version

    @property
    def info(self) -> RoomMeta:
        """The room's meta as it was archived, typed (:class:`~server.store.meta.RoomMeta`)."""
        return RoomMeta.from_json(self.meta, self.room)


# Migrations ------------------------------------------------------------------------------------


def _snapshot_0_to_1(data: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": 1, "rev": data.get("rev"), "state": data.get("state")}


def _archive_0_to_1(data: dict[str, Any]) -> dict[str, Any]:
    return {
        **data,
        "schema_version": 1,
        "chat": data.get("chat", []),
        "meta": data.get("meta", {}),
        "finished": data.get("finished", 0.0),
    }


SNAPSHOT_MIGRATIONS: Final[dict[int, Migration]] = {0: _snapshot_0_to_1}
ARCHIVE_MIGRATIONS: Final[dict[int, Migration]] = {0: _archive_0_to_1}


def migrate(
    room: str,
    what: str,
    data: dict[str, Any],
    migrations: dict[int, Migration],
    current: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """``data`` brought to version ``current`` (a missing version is 0), or CorruptRecordError."""
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise CorruptRecordError(room, f"{what}: schema_version {version!r} is not a number")
    if version > current:
        raise CorruptRecordError(
            room, f"{what}: schema_version {version} is newer than this server's {current}"
        )
    while version < current:
        step = migrations.get(version)
        if step is None:
            raise CorruptRecordError(
                room,
                f"{what}: no migration from schema_version {version}, this server reads {current}",
            )
        try:
            data = step(data)
        except Exception as exc:  # a migration meets data of a shape it does not expect
            raise CorruptRecordError(
                room, f"{what}: migration from {version} failed: {type(exc).__name__}"
            ) from None
        version += 1
    return data


# Encoding (``pack``: the protocol's, imported above) ----------------------------------------


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False, use_list=True)


def snapshot_blob(rev: int, state: dict[str, Any]) -> bytes:
    return pack({"schema_version": SCHEMA_VERSION, "rev": rev, "state": state})


def archive_blob(
    room: str,
    meta: dict[str, Any],
    actions: list[Any],
    result: dict[str, Any],
    chat: list[Any],
    finished: float,
) -> bytes:
    """An archive map: ``actions`` are ``[seat, choice]`` pairs in rev order."""
    info = RoomMeta.from_json(meta, room)
    return pack(
        {
            "schema_version": SCHEMA_VERSION,
            "room": room,
            "game": info.game,
            "players": info.players,
            "options": info.options,
            "seed": info.seed,
            "actions": actions,
            "result": result,
            "chat": chat,
            "meta": meta,
            "finished": finished,
        }
    )


def archive_head(room: str) -> bytes:
    """The first bytes of :func:`archive_blob`'s map (its size, ``schema_version`` and
    ``room``), from which :data:`~server.store.scripts.ARCHIVE` packs the rest in Redis."""
    return (
        b"\x8b"  # a map of 11 entries: keep in step with archive_blob
        + pack("schema_version")
        + pack(SCHEMA_VERSION)
        + pack("room")
        + pack(room)
    )


# Decoding --------------------------------------------------------------------------------------


def decode(room: str, where: str, blob: bytes) -> Any:
    try:
        return unpack(blob)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise CorruptRecordError(room, f"{where}: not msgpack ({type(exc).__name__})") from None


def unpack_fields(room: str, raw: dict[bytes, bytes]) -> dict[str, Any]:
    return {name.decode(): decode(room, f"meta field {name!r}", v) for name, v in raw.items()}


def action(room: str, rev: int, blob: bytes) -> Action:
    value = decode(room, f"action {rev}", blob)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], int)
        or not isinstance(value[1], dict)
    ):
        raise CorruptRecordError(room, f"action {rev}: not [seat, choice]")
    return Action(rev, value[0], value[1])


def groups(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def snapshot(room: str, raw_snap: dict[bytes, bytes]) -> Snapshot:
    """The snapshot hash (``rev``, ``state``) decoded and migrated to the current version."""
    data = decode(room, "snapshot", raw_snap.get(b"state", b""))
    if not isinstance(data, dict):
        raise CorruptRecordError(room, "snapshot: not a snapshot map")
    data = migrate(room, "snapshot", data, SNAPSHOT_MIGRATIONS)
    if not isinstance(data.get("state"), dict):
        raise CorruptRecordError(room, "snapshot: not a snapshot map")
    rev = data.get("rev")
    if not isinstance(rev, int) or str(rev).encode() != raw_snap.get(b"rev"):
        raise CorruptRecordError(room, "snapshot: its rev does not match")
    return Snapshot(rev, data["state"], SCHEMA_VERSION)


def record(
    room: str,
    raw_meta: dict[bytes, bytes],
    raw_snap: dict[bytes, bytes],
    entries: list[tuple[bytes, dict[bytes, bytes]]],
    length: int,
    raw_chat: list[bytes],
) -> RoomRecord | None:
    """One live room from its keys (None: no meta, the room is not live)."""
    if not raw_meta:
        return None
    meta = unpack_fields(room, raw_meta)
    snap = snapshot(room, raw_snap) if raw_snap else None
    base = snap.rev if snap is not None else 0
    actions: list[Action] = []
    for entry_id, fields in entries:
        rev = entry_rev(room, entry_id)
        if rev <= base:
            continue  # trimmed lazily or snapshotted concurrently: the snapshot covers it
        if rev != base + len(actions) + 1:
            raise CorruptRecordError(room, f"log: rev {rev} follows rev {base + len(actions)}")
        actions.append(action(room, rev, fields.get(b"a", b"")))
    last = base + len(actions)
    if last != length:
        raise CorruptRecordError(room, f"log ends at rev {last} but {length} choices are stored")
    chat = [decode(room, "chat", line) for line in raw_chat]
    return RoomRecord(room, meta, snap, actions, chat)


def entry_rev(room: str, entry_id: bytes) -> int:
    head, _, tail = entry_id.partition(b"-")
    if tail != b"0" or not head.isdigit():
        raise CorruptRecordError(room, f"log: entry id {entry_id!r} is not <rev>-0")
    return int(head)


def archive(room: str, raw: bytes) -> ArchiveRecord:
    data = decode(room, "archive", raw)
    if not isinstance(data, dict):
        raise CorruptRecordError(room, "archive: not a map")
    data = migrate(room, "archive", data, ARCHIVE_MIGRATIONS)
    try:
        actions = [
            Action(i + 1, int(seat), dict(choice))
            for i, (seat, choice) in enumerate(data["actions"])
        ]
        return ArchiveRecord(
            room=room,
            game=str(data["game"]),
            players=int(data["players"]),
            options=dict(data["options"]),
            seed=int(data["seed"]),
            actions=actions,
            result=dict(data["result"]),
            chat=list(data["chat"]),
            meta=dict(data["meta"]),
            finished=float(data["finished"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptRecordError(room, f"archive: {type(exc).__name__}: {exc}") from None
