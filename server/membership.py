"""Who is in a room: taking a seat, resuming it with its token, watching, syncing, leaving.

A mixin of :class:`server.room.Room` (its other half: playing, persistence calls, bots), kept
apart because seat and spectator bookkeeping is a concept of its own. Runs only in the room's
task, like everything the room does.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from server.chat import ChatLog
from server.connection import Connection
from server.room_state import RoomSettings, RoomState
from server.seats import Seat, find_by_token
from server.spectators import SpectatorFeed
from server.views import Revision, Views

if TYPE_CHECKING:
    from server.keeper import Keeper


class Membership:
    id: str
    settings: RoomSettings
    state: RoomState
    rev: int
    seats: list[Seat]
    views: Views
    buffer: deque[Revision]
    chat: ChatLog
    spectators: SpectatorFeed
    keeper: Keeper
    log: Any

    def info(self) -> dict[str, Any]:
        raise NotImplementedError

    def meta(self) -> dict[str, Any]:
        raise NotImplementedError

    def free_seats(self) -> int:
        return sum(1 for seat in self.seats if not seat.taken)

    def _announce(self) -> None:
        raise NotImplementedError

    def _announce_spectators(self) -> None:
        raise NotImplementedError

    async def _begin(self, bots: list[Seat] | None = None) -> None:
        raise NotImplementedError

    if TYPE_CHECKING:  # server.takeover's half (a stub here would shadow it in the room's MRO)

        def _hand_back(self, seat: Seat) -> None: ...

        def _await_takeover(self, index: int) -> None: ...

        def _clock_elapsed(self) -> int | None: ...

    def _seat_of(self, conn: Connection) -> Seat:
        seat = conn.rooms.get(self.id)
        if seat is None:
            if conn in self.spectators:
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators never act")
            raise RequestError(ErrorCode.NOT_ALLOWED, f"you hold no seat in room {self.id}")
        return self.seats[seat]

    # Joining, resuming, watching --------------------------------------------------------------

    async def _join(self, conn: Connection, req: m.Join) -> None:
        if req.token is not None:
            self._resume(conn, req, req.token)
            return
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        if self.state is not RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"room {self.id} is {self.state.value}")
        if req.seat is not None:
            if req.seat >= len(self.seats):
                raise RequestError(ErrorCode.BAD_REQUEST, f"no seat {req.seat} in {self.id}")
            seat = self.seats[req.seat]
            if seat.taken:
                raise RequestError(ErrorCode.ROOM_FULL, f"seat {req.seat} is taken")
        else:
            free = [s for s in self.seats if not s.taken]
            if not free:
                raise RequestError(ErrorCode.ROOM_FULL, f"room {self.id} is full")
            seat = free[0]
        token = seat.claim(req.name, conn)
        try:
            await self.keeper.seats(self.meta(), required=True)
        except RequestError:
            seat.release()
            raise
        conn.rooms[self.id] = seat.index
        self.log.info("seat_taken", seat=seat.index, conn=conn.session)
        view, view_hash = self.views.full(seat.index)
        conn.send(self._joined(req.id, seat.index, token, self.rev, view, view_hash))
        self._announce()
        if self.settings.quick and self.free_seats() == 0:
            await self._begin()

    def _resume(self, conn: Connection, req: m.Join, token: str) -> None:
        seat = find_by_token(self.seats, token)
        if seat is None or (req.seat is not None and req.seat != seat.index):
            raise RequestError(ErrorCode.BAD_TOKEN, "no seat of this room has that token")
        if conn.rooms.get(self.id, -1) not in (-1, seat.index):
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        old = seat.conn
        if old is not None and old is not conn:
            old.rooms.pop(self.id, None)
            old.send(
                f.ErrorFrame.of(None, ErrorCode.NOT_ALLOWED, "seat resumed elsewhere", self.id)
            )
        self.spectators.discard(conn)
        seat.conn = conn
        self._hand_back(seat)
        conn.rooms[self.id] = seat.index
        self.log.info("seat_resumed", seat=seat.index, conn=conn.session, since=req.rev)
        self._send_joined(conn, req.id, seat.index, req.rev, self.rev)
        self._announce()

    def _send_joined(
        self, conn: Connection, rid: m.RequestId, seat: int | None, since: int | None, upto: int
    ) -> None:
        """A ``joined``, then either the full view or the missed patches from the buffer."""
        frames = self._missed(seat, since, upto)
        if frames is None:
            if seat is None and self.settings.spectator_delay > 0:
                view, _, view_hash = self.spectators.delayed_view()
            else:
                view, view_hash = self.views.full(seat)
            conn.send(self._joined(rid, seat, None, upto, view, view_hash))
            return
        assert since is not None
        conn.send(self._joined(rid, seat, None, since, None, None))
        for frame in frames:
            conn.send_bytes(frame)

    def _joined(
        self,
        rid: m.RequestId,
        seat: int | None,
        token: str | None,
        rev: int,
        view: dict[str, Any] | None,
        view_hash: str | None,
    ) -> f.Joined:
        chat = self.chat.recent(self.spectators.delay if seat is None else None)
        elapsed = self._clock_elapsed()
        info = self.info()
        return f.Joined(rid, self.id, seat, rev, view, view_hash, info, chat, token, elapsed)

    def _missed(self, seat: int | None, since: int | None, upto: int) -> list[bytes] | None:
        """The frames of revisions ``since+1 .. upto`` if the buffer still holds them all."""
        if since is None or since > upto:
            return None
        if since == upto:
            return []
        if not self.buffer or self.buffer[0].rev > since + 1:
            return None
        return [
            r.spectator_frame if seat is None else r.seat_frames[seat]
            for r in self.buffer
            if since < r.rev <= upto
        ]

    def _spectate(self, conn: Connection, req: m.Spectate) -> None:
        if self.id in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.id}")
        self.spectators.add(conn)
        conn.rooms[self.id] = None
        upto = self.spectators.delayed_view()[1] if self.spectators.delayed else self.rev
        self._send_joined(conn, req.id, None, req.rev, upto)
        self._announce_spectators()

    def _sync(self, conn: Connection, rid: m.RequestId) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.id} first")
        seat = conn.rooms[self.id]
        if seat is None and self.settings.spectator_delay > 0:
            doc, rev, view_hash = self.spectators.delayed_view()
            conn.send(f.State(rid, self.id, rev, doc, view_hash))
            return
        view, view_hash = self.views.full(seat)
        conn.send(f.State(rid, self.id, self.rev, view, view_hash, self._clock_elapsed()))

    async def _leave(self, conn: Connection, req: m.Leave) -> None:
        if self.id not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {self.id}")
        spectator = conn.rooms[self.id] is None
        await self._drop(conn)
        conn.send(f.Ack(req.id, self.id))
        if spectator:
            self._announce_spectators()
        else:
            self._announce()

    async def _gone(self, conn: Connection) -> None:
        if self.id in conn.rooms:
            spectator = conn.rooms[self.id] is None
            await self._drop(conn)
            if spectator:
                self._announce_spectators()
            else:
                self._announce()

    async def _drop(self, conn: Connection) -> None:
        index = conn.rooms.pop(self.id, None)
        self.spectators.discard(conn)
        if index is None:
            return
        seat = self.seats[index]
        self.log.info("seat_left", seat=index, conn=conn.session, state=self.state.value)
        if seat.conn is conn:
            if self.state is RoomState.OPEN:
                seat.release()
                await self.keeper.seats(self.meta(), required=False)
            else:
                seat.conn = None
                if self.state is RoomState.PLAYING:
                    self._await_takeover(index)
