"""A room's side of the store: what it writes when, and what a failure of each write means.

The policy, in one place (the room calls these from its task, so there is one writer per room):

- **Choices** (:meth:`Keeper.append`) are stored before they are applied or acknowledged; a
  failure refuses the choice with ``unavailable``. A failure whose outcome is unknown (a timeout
  or a dropped connection after Redis may have written it, or a refused rev meaning the log is
  ahead of the room) is an :class:`Unsure` refusal (the actor answers the core
  ``Failed(unsure=True)``): before its next commit the room reads :meth:`Keeper.landed`
  (``Store.actions_after``) and applies and broadcasts whatever did land, so the room and its
  log never diverge and nothing is acknowledged that was not stored.
- **Seats** (:meth:`Keeper.seats`): joining needs the new seat's token digest stored (a token
  that a restart would forget is worse than a refused join), so it is refused while the store
  is down; a seat freed by ``leave`` is written on a best-effort basis (a stale digest only lets
  its old holder resume a seat nobody else took).
- **Snapshots** every ``snapshot_every`` revisions and at the end, and **finish** (the archive):
  after the acknowledgement, so failures are logged and never reach a client; whether the
  archive was written is the answer (a failed one the room tries again when the store comes
  back and, failing that, the next server to restore the room: a restored match that is over
  is finished again).
- **Lost storage**: an append or a seat update refused because the room's keys are gone
  (:class:`~server.store.RoomGoneError`: Redis came back empty, or was flushed) answers
  ``storage_lost`` (a seat update that was not required answers True); nothing can be stored
  for this room again, so the room pauses for good instead of answering ``unavailable`` to
  every choice forever.
The keeper keeps no fact about the room: what it learns is in its answers, which the actor
hands to the room's core (:mod:`server.effects`), so the core holds no reference to the keeper.
The actor hands it each store effect as it is (:meth:`Keeper.carry_out`), and gets the answer.

- **Retiring** a room nobody is connected to for ``room_idle_ttl``: a room that never started is
  deleted from the store; a started one is archived as abandoned (``{"abandoned": true, "rev"}``),
  so its choices stay replayable and it is not restored again. (Keeping it for a later restore
  would leave a room the server no longer serves but would resurrect at its next start.)
"""

from __future__ import annotations

from typing import Any

from games.base import Match
from protocol.errors import ErrorCode, RequestError
from server.effects import (
    Answer,
    Append,
    AppendChat,
    Done,
    Effect,
    Failed,
    Finish,
    Keep,
    Landed,
    Retire,
    StoreSeats,
)
from server.room_state import lost_error
from server.store import Action, NotOwnerError, RoomGoneError, RoomMeta, Store, StoreError


class Unsure(RequestError):
    """An append refused with ``unavailable`` that may have been stored anyway."""


class Keeper:
    def __init__(self, store: Store, room: str, snapshot_every: int, log: Any) -> None:
        self.store = store
        self.room = room
        self.snapshot_every = max(1, snapshot_every)
        self.log = log
        self._due = False
        """A snapshot is due and waits for a settled revision (:meth:`keep`)."""

    async def carry_out(self, effect: Effect, match: Match[Any]) -> Answer:
        """A store effect of the room's core (``match``: the room's, for a snapshot): the call's
        value, or the exception it raised (``unsure``: an :class:`Unsure` append)."""
        try:
            if isinstance(effect, Append):
                await self.append(effect.action, effect.meta)
            elif isinstance(effect, StoreSeats):
                return Done(await self.seats(effect.meta, required=effect.required))
            elif isinstance(effect, Keep):
                return Done(await self.keep(effect.rev, match, effect.extra))
            elif isinstance(effect, Landed):
                return Done(await self.landed(effect.rev))
            elif isinstance(effect, Finish):
                return Done(await self.finish(effect.result))
            elif isinstance(effect, Retire):
                return Done(await self.retire(effect.started, effect.rev))
            elif isinstance(effect, AppendChat):
                await self.store.append_chat(self.room, effect.line)
            else:
                raise AssertionError(f"not a store effect: {effect!r}")
        except Unsure as unsure:  # (a name of its own: see scripts/build_compiled.py)
            return Failed(unsure, unsure=True)
        except Exception as exc:
            return Failed(exc)
        return Done()

    async def append(self, action: Action, meta: dict[str, Any] | None = None) -> None:
        """Store ``action`` (with ``meta``, fields of the room's metadata written in the same
        round trip: a clock room's clocks) or refuse it with ``unavailable``."""
        try:
            if meta:
                await self.store.append(self.room, action, meta)
            else:
                await self.store.append(self.room, action)
        except NotOwnerError as moved:  # the lease moved or lapsed: the cluster sorts it out
            raise RequestError(ErrorCode.UNAVAILABLE, str(moved)) from None
        except RoomGoneError as gone:
            self.log.error("room_storage_lost", rev=action.rev - 1, error=str(gone))
            raise lost_error(self.room, action.rev - 1) from None
        except StoreError as exc:
            self.log.warning("append_failed", rev=action.rev, error=str(exc))
            raise Unsure(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None

    async def landed(self, rev: int) -> list[Action]:
        """The stored actions after ``rev`` (asked after an :class:`Unsure` append)."""
        try:
            return await self.store.actions_after(self.room, rev)
        except StoreError as exc:
            raise RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable ({exc})") from None

    async def seats(self, meta: RoomMeta, *, required: bool) -> bool:
        """Store the room's seats; ``required``: refuse with ``unavailable`` if it fails (or
        ``storage_lost``). Not required: True if the store no longer has the room."""
        try:
            await self.store.update_room(self.room, meta.to_json())
        except NotOwnerError as moved:
            if required:
                raise RequestError(ErrorCode.UNAVAILABLE, str(moved)) from None
            self.log.warning("seats_not_stored", error=str(moved))
        except RoomGoneError as gone:
            if required:
                raise lost_error(self.room, meta.rev) from None
            self.log.warning("seats_not_stored", error=str(gone))
            return True
        except StoreError as exc:
            if required:
                raise RequestError(
                    ErrorCode.UNAVAILABLE, "storage unavailable; try again"
                ) from None
            self.log.warning("seats_not_stored", error=str(exc))
        return False

    def due(self, rev: int, match: Match[Any]) -> bool:
        """Whether :meth:`keep` of ``rev`` has anything to store (a snapshot due and settled,
        or the end), remembering a snapshot that falls due (asked again, the same answer): the
        actor asks it first, so a revision with nothing to store costs no store call."""
        final = match.over
        if not final and rev % self.snapshot_every == 0:
            self._due = True
        return final or (self._due and match.settled)

    async def keep(
        self, rev: int, match: Match[Any], extra: dict[str, Any] | None = None
    ) -> bool | None:
        """Snapshot every ``snapshot_every`` revisions and at the end; archive at the end
        (``extra``: fields the room adds to the archived result, e.g. ``forfeited``).

        A snapshot is taken only where no step is open to an undo (:attr:`Match.settled`): one
        taken between a step and its undo would lose the copy the undo needs, and the undo in
        the log could not be replayed on restore. A due snapshot waits for the next settled
        revision instead (the end of the turn at the latest); ``_due`` remembers it.

        None, or at the end whether the archive was written."""
        if not self.due(rev, match):
            return None
        final = match.over
        self._due = False
        try:
            await self.store.snapshot(self.room, rev, match.game.dump(match.state))
        except StoreError as exc:
            self.log.warning("snapshot_failed", rev=rev, error=str(exc))
        if not final:
            return None
        result = match.result()
        return await self.finish({**({} if result is None else result.to_json()), **(extra or {})})

    async def finish(self, result: dict[str, Any]) -> bool:
        """Archive the match: False if it failed (the room tries again later)."""
        try:
            await self.store.finish(self.room, result)
        except StoreError as exc:
            self.log.warning("finish_failed", error=str(exc))
            return False
        return True

    async def retire(self, started: bool, rev: int) -> bool:
        """The room closes for want of players: forget it, or archive it as abandoned. False if
        the store could not record it: the room must stay (closing it would leave it live in
        the store, and a node would restore it again), and try later. (A room whose store lost
        it asks nothing: nothing of it is left to forget or archive.)"""
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
