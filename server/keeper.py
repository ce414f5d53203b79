"""A room's side of the store: what it writes when, and what a failure of each write means.

The policy, in one place (the room calls these from its task, so there is one writer per room):

- **Choices** (:meth:`Keeper.append`) are stored before they are applied or acknowledged; a
  failure refuses the choice with ``unavailable``. A failure whose outcome is unknown (a timeout
  or a dropped connection after Redis may have written it, or a refused rev meaning the log is
  ahead of the room) marks the keeper *unsure*: before its next commit the room reads
  :meth:`Keeper.landed` (``Store.actions_after``) and applies and broadcasts whatever did land,
  so the room and its log never diverge and nothing is acknowledged that was not stored.
- **Seats** (:meth:`Keeper.seats`): joining needs the new seat's token digest stored (a token
  that a restart would forget is worse than a refused join), so it is refused while the store
  is down; a seat freed by ``leave`` is written on a best-effort basis (a stale digest only lets
  its old holder resume a seat nobody else took).
- **Snapshots** every ``snapshot_every`` revisions and at the end, and **finish** (the archive):
  after the acknowledgement, so failures are logged and never reach a client; a failed finish
  is retried when the store comes back and, failing that, by the next server to restore the
  room (a restored match that is over is finished again).
- **Lost storage**: an append or a seat update refused because the room's keys are gone
  (:class:`~server.store.RoomGoneError`: Redis came back empty, or was flushed) sets
  :attr:`Keeper.lost` and answers ``storage_lost``; nothing can be stored for this room again,
  so the room pauses for good instead of answering ``unavailable`` to every choice forever.
- **Retiring** a room nobody is connected to for ``room_idle_ttl``: a room that never started is
  deleted from the store; a started one is archived as abandoned (``{"abandoned": true, "rev"}``),
  so its choices stay replayable and it is not restored again. (Keeping it for a later restore
  would leave a room the server no longer serves but would resurrect at its next start.)
"""

from __future__ import annotations

from typing import Any

from games.base import Match
from protocol.errors import ErrorCode, RequestError
from server.store import Action, NotOwnerError, RoomGoneError, RoomMeta, Store, StoreError


class Keeper:
    def __init__(self, store: Store, room: str, snapshot_every: int, log: Any) -> None:
        self.store = store
        self.room = room
        self.snapshot_every = max(1, snapshot_every)
        self.log = log
        self.unsure = False
        """An append failed and may have been stored anyway: read back before the next one."""
        self.finish_pending: dict[str, Any] | None = None
        """The result of a match whose archive could not be written yet."""
        self.lost = False
        """The store no longer holds this room (see "Lost storage")."""
        self._due = False
        """A snapshot is due and waits for a settled revision (:meth:`keep`)."""

    def lost_error(self, rev: int) -> RequestError:
        return RequestError(
            ErrorCode.STORAGE_LOST,
            f"the storage lost room {self.room} (its last acknowledged rev was {rev}); "
            "the match cannot go on",
        )

    async def append(self, action: Action, meta: dict[str, Any] | None = None) -> None:
        """Store ``action`` (with ``meta``, fields of the room's metadata written in the same
        round trip: a clock room's clocks) or refuse it with ``unavailable``."""
        try:
            if meta:
                await self.store.append(self.room, action, meta)
            else:
                await self.store.append(self.room, action)
        except NotOwnerError as exc:  # the lease moved or lapsed: the cluster sorts it out
            raise RequestError(ErrorCode.UNAVAILABLE, str(exc)) from None
        except RoomGoneError as exc:
            self.lost = True
            self.log.error("room_storage_lost", rev=action.rev - 1, error=str(exc))
            raise self.lost_error(action.rev - 1) from None
        except StoreError as exc:
            self.unsure = True
            self.log.warning("append_failed", rev=action.rev, error=str(exc))
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None

    async def landed(self, rev: int) -> list[Action]:
        """The stored actions after ``rev`` if an earlier append's outcome is unknown, else []."""
        if not self.unsure:
            return []
        try:
            actions = await self.store.actions_after(self.room, rev)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable ({exc})") from None
        self.unsure = False
        if actions:
            self.log.warning("adopting_landed_actions", revs=[a.rev for a in actions])
        return actions

    async def seats(self, meta: RoomMeta, *, required: bool) -> None:
        """Store the room's seats; ``required``: refuse with ``unavailable`` if it fails."""
        try:
            await self.store.update_room(self.room, meta.to_json())
        except NotOwnerError as exc:
            if required:
                raise RequestError(ErrorCode.UNAVAILABLE, str(exc)) from None
            self.log.warning("seats_not_stored", error=str(exc))
        except RoomGoneError as exc:
            self.lost = True
            if required:
                raise self.lost_error(meta.rev) from None
            self.log.warning("seats_not_stored", error=str(exc))
        except StoreError as exc:
            if required:
                raise RequestError(
                    ErrorCode.UNAVAILABLE, "storage unavailable; try again"
                ) from None
            self.log.warning("seats_not_stored", error=str(exc))

    async def keep(self, rev: int, match: Match[Any], extra: dict[str, Any] | None = None) -> None:
        """Snapshot every ``snapshot_every`` revisions and at the end; archive at the end
        (``extra``: fields the room adds to the archived result, e.g. ``forfeited``).

        A snapshot is taken only where no step is open to an undo (:attr:`Match.settled`): one
        taken between a step and its undo would lose the copy the undo needs, and the undo in
        the log could not be replayed on restore. A due snapshot waits for the next settled
        revision instead (the end of the turn at the latest); ``_due`` remembers it."""
        final = match.over
        if not final and rev % self.snapshot_every == 0:
            self._due = True
        if not final and not (self._due and match.settled):
            return
        self._due = False
        try:
            await self.store.snapshot(self.room, rev, match.game.dump(match.state))
        except StoreError as exc:
            self.log.warning("snapshot_failed", rev=rev, error=str(exc))
        if final:
            result = match.result()
            await self.finish({**({} if result is None else result.to_json()), **(extra or {})})

    async def finish(self, result: dict[str, Any]) -> bool:
        """Archive the match; on failure remember to try again (:meth:`retry`)."""
        try:
            await self.store.finish(self.room, result)
        except StoreError as exc:
            self.finish_pending = result
            self.log.warning("finish_failed", error=str(exc))
            return False
        self.finish_pending = None
        return True

    async def retry(self) -> None:
        if self.finish_pending is not None:
            await self.finish(self.finish_pending)

    async def retire(self, started: bool, rev: int) -> bool:
        """The room closes for want of players: forget it, or archive it as abandoned. False if
        the store could not record it: the room must stay (closing it would leave it live in
        the store, and a node would restore it again), and try later."""
        if self.lost:
            return True  # nothing of it is left to forget or archive
        try:
            if started:
                await self.store.finish(self.room, {"abandoned": True, "rev": rev})
            else:
                await self.store.delete(self.room)
        except RoomGoneError:
            return True  # (already archived or deleted: nothing left to retire)
        except StoreError as exc:
            self.log.warning("retire_failed", started=started, error=str(exc))
            return False
        return True
