"""Who is in a room: seats (joining, resuming with a token, leaving), spectators, stand-ins.

:class:`Seating` is the seats and the bookkeeping of who is connected to which, no I/O.
:func:`missed` is the rule a resume or a late spectator catches up by: the buffered frames of
the revisions it missed, or the full view when the buffer no longer has them all.

:class:`Membership` is the room core's membership component: ``join`` (and a resume with a
token), ``spectate``, ``sync``, ``leave``, a connection gone, a rematch's members moving in
(:meth:`Membership.admit`) and out (:meth:`Membership.moved`), and the grace periods of the
seats whose player is gone (stand-ins, :mod:`server.takeover`). It owns the seating and the
stand-ins, and lets spectators in and out of the core's :class:`~server.spectators.Spectators`;
it puts its frames in the room's outbox and yields the store effects it waits for (a seat taken
is stored before it is answered).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from protocol import frames as f
from protocol import messages as m
from protocol.codec import map_header, pack
from protocol.errors import ErrorCode, RequestError
from server.chat import ChatLog
from server.effects import Forward, Outbox, Send, Steps, StoreSeats
from server.play import Play
from server.room_state import (
    Admit,
    Announce,
    Moved,
    RoomSettings,
    RoomState,
    Status,
    Tuning,
    detached,
)
from server.seats import Seat, Seating, missed
from server.spectators import Spectators
from server.store.meta import RoomMeta
from server.takeover import STANDIN_KIND, Standins, TakeoverDue
from server.timekeeping import Timekeeper

if TYPE_CHECKING:
    from server.member import Member

SPECTATORS_ANNOUNCED_AT_ONCE: Final = 64
"""Up to this many spectators, one coming or going is announced (``room``) at once; past it, at
most once every ``SPECTATOR_ANNOUNCE_EVERY`` seconds: 10,000 spectators arriving one by one
must not cost every member 10,000 frames."""
SPECTATOR_ANNOUNCE_EVERY: Final = 0.5

_JOINED_HEAD: Final = pack("type") + pack("joined") + pack("room")
_ACK_HEAD: Final = pack("type") + pack("ack") + pack("room")
_SEAT_KEY: Final = pack("seat")
_REV_KEY: Final = pack("rev")
_HASH_KEY: Final = pack("hash")
_INFO_KEY: Final = pack("info")
_CHAT_KEY: Final = pack("chat")
_TOKEN_KEY: Final = pack("token")
_ELAPSED_KEY: Final = pack("elapsed_ms")
_MOVED_FROM_KEY: Final = pack("moved_from")
_ID_KEY: Final = pack("id")
_VIEW_KEY: Final = pack("view")
"""(The fixed parts of the ``joined`` and ``ack`` frames :func:`joined_frame` and
:func:`ack_frame` splice.)"""


def shared_part(info: bytes, chat: list[dict[str, Any]]) -> bytes:
    """The ``info`` (``pack`` of the room's info) and ``chat`` fields of ``joined`` frames,
    encoded once for all the frames of one command that carry the same room and chat lines (a
    rematch's seats: the room's info is most of each frame's bytes, and its encoding most of
    each frame's cost)."""
    return b"".join((_INFO_KEY, info, _CHAT_KEY, pack(chat)))


def joined_frame(
    rid: m.RequestId,
    room: str,
    seat: int | None,
    rev: int,
    view_hash: str | None,
    shared: bytes,
    token: str | None,
    elapsed_ms: int | None,
    moved_from: str | None,
    view: bytes,
) -> bytes:
    """The bytes of ``f.encode_frame_with(f.Joined(rid, room, seat, rev, None, view_hash, info,
    chat, token, elapsed_ms, moved_from), "view", view)`` (``shared``: :func:`shared_part` of
    ``info`` and ``chat``), spliced from compiled code: the frozen dataclass (its generated
    ``__init__`` runs interpreted and sets each field through ``object.__setattr__``) and its
    interpreted ``to_wire`` cost more than encoding the frame
    (tests/server/core/test_spliced_frames.py holds the bytes equal). The fields in
    ``to_wire``'s order, ``view`` last."""
    parts = [
        b"",  # (the map's header, once its fields are counted)
        _JOINED_HEAD,
        pack(room),
        _SEAT_KEY,
        pack(seat),
        _REV_KEY,
        pack(rev),
        _HASH_KEY,
        pack(view_hash),
        shared,
    ]
    fields = 8  # type, room, seat, rev, hash, info, chat, view
    if token is not None:
        parts.append(_TOKEN_KEY)
        parts.append(pack(token))
        fields += 1
    if elapsed_ms is not None:
        parts.append(_ELAPSED_KEY)
        parts.append(pack(elapsed_ms))
        fields += 1
    if moved_from is not None:
        parts.append(_MOVED_FROM_KEY)
        parts.append(pack(moved_from))
        fields += 1
    if rid is not None:
        parts.append(_ID_KEY)
        parts.append(pack(rid))
        fields += 1
    parts.append(_VIEW_KEY)
    parts.append(view)
    parts[0] = map_header(fields)
    return b"".join(parts)


def ack_frame(
    rid: m.RequestId, room: str, rev: int | None = None, info: bytes | None = None
) -> bytes:
    """The bytes of ``f.encode_frame(f.Ack(rid, room, rev, info_map))`` (``info``: ``pack`` of
    the map, encoded once for the ``joined`` frames beside it), keys in ``to_wire``'s order:
    the frozen dataclass (its generated ``__init__`` interpreted) and its interpreted
    ``to_wire`` cost more than the frame's few bytes (every ``join``, and every ``leave`` of a
    new match's requests, which acks with the room alone)."""
    parts = [b"", _ACK_HEAD, pack(room)]
    fields = 2
    if rev is not None:
        parts.append(_REV_KEY)
        parts.append(pack(rev))
        fields += 1
    if info is not None:
        parts.append(_INFO_KEY)
        parts.append(info)
        fields += 1
    if rid is not None:
        parts.append(_ID_KEY)
        parts.append(pack(rid))
        fields += 1
    parts[0] = map_header(fields)
    return b"".join(parts)


class Announcer(Protocol):
    """Tells the room what it is now (``info``: the room's info if the caller just made it)."""

    def __call__(self, info: dict[str, Any] | None = None) -> None: ...


class Membership:
    """Who is in one room (see the module doc): the seats' holders, the spectators, the
    stand-ins' grace periods."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        tuning: Tuning,
        *,
        seating: Seating,
        spectators: Spectators,
        play: Play,
        timekeeper: Timekeeper,
        chat: ChatLog,
        status: Status,
        out: Outbox,
        announce: Announcer,
        info: Callable[[], dict[str, Any]],
        meta: Callable[[], RoomMeta],
        wall: Callable[[], float],
        log: Any,
        seed: int,
    ) -> None:
        self.room = room_id
        self.settings = settings
        self.seating = seating
        self.standins = Standins(settings.players, tuning.takeover_grace, settings.game, seed)
        self._play = play
        self._clocks = timekeeper
        self._chat = chat
        self._status = status
        self._out = out
        self._announce = announce
        self._info = info
        self._meta = meta
        self._wall = wall
        self._log = log
        self._announcing = False
        """A batched announcement of spectators is armed."""
        self.spectators = spectators
        self.restart_feed()

    def detach(self) -> None:
        """The room closed: let go of the core's method (:meth:`server.core.RoomCore.detach`)."""
        self._announce = detached

    def restart_feed(self) -> None:
        """The spectators' feed starts at the current rev (the view is computed only for a
        delayed one)."""
        if self.spectators.delayed:
            view, view_hash = self._play.views.full(None)
            self.spectators.restart(view, view_hash, self._play.rev)

    def members(self) -> list[Member]:
        """Every connection in the room: the seats' and the spectators'."""
        out = self.seating.connected()
        out.extend(self.spectators)
        return out

    def here(self) -> bool:
        """Anybody is connected (a seat or a spectator)."""
        return bool(self.seating.connected()) or len(self.spectators) > 0

    # Seats ------------------------------------------------------------------------------------

    def join(self, conn: Member, req: m.Join) -> Steps:
        if req.token is not None:
            self._resume(conn, req, req.token)
            return
        if self.room in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.room}")
        status = self._status
        if status.state is not RoomState.OPEN:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"room {self.room} is {status.state.value}")
        seat = self.seating.pick(req.seat)
        token = seat.claim(req.name, conn)
        try:
            yield StoreSeats(self._meta(), required=True)
        except RequestError:
            seat.release()
            raise
        conn.rooms[self.room] = seat.index
        self._log.info("seat_taken", seat=seat.index, conn=conn.session)
        play = self._play
        enc, view_hash = play.views.document(seat.index, conn.hash_rule)
        info = self._info()
        frame = self._joined_frame(req.id, seat.index, token, play.rev, view_hash, info, None, enc)
        self._out.send((conn,), frame)
        self._announce(info)  # (the same room as the joined frame's: made once)
        if self.settings.quick and self.seating.free() == 0:
            yield from play.begin()

    def _resume(self, conn: Member, req: m.Join, token: str) -> None:
        old = self.seating.resume(conn, token, req.seat)
        if old is not None:
            error = f.ErrorFrame.of(
                None, ErrorCode.NOT_ALLOWED, "seat resumed elsewhere", self.room
            )
            self._out.reply(old, error)
        self.spectators.discard(conn)
        index = conn.rooms[self.room]
        assert index is not None
        if self.standins.back(self.seating.seats[index]):
            self._play.auto.bots.pop(index, None)
            self._log.info("seat_handed_back", seat=index)
        self._log.info("seat_resumed", seat=index, conn=conn.session, since=req.rev)
        info = self._send_joined(conn, req.id, index, req.rev, self._play.rev)
        self._announce(info)

    def _send_joined(
        self,
        conn: Member,
        rid: m.RequestId,
        seat: int | None,
        since: int | None,
        upto: int,
        info: dict[str, Any] | None = None,
        moved_from: str | None = None,
    ) -> dict[str, Any]:
        """A ``joined``, then either the full view or the missed patches from the buffer; the
        room's info it carries (``info``: the room's, if the caller just made it;
        ``moved_from``: as in :meth:`_joined`)."""
        frames = missed(self._play.buffer, seat, since, upto, conn.hash_rule)
        out = self._out
        if frames is None:
            if seat is None and self.settings.spectator_delay > 0:
                view, _, view_hash = self.spectators.delayed_view()
                joined = self._joined(rid, seat, None, upto, view, view_hash, info, moved_from)
                out.reply(conn, joined)
            else:
                enc, view_hash = self._play.views.document(seat, conn.hash_rule)
                if info is None:
                    info = self._info()
                frame = self._joined_frame(rid, seat, None, upto, view_hash, info, moved_from, enc)
                out.send((conn,), frame)
                return info
            return joined.info
        assert since is not None
        joined = self._joined(rid, seat, None, since, None, None, info, moved_from)
        out.reply(conn, joined)
        for frame in frames:
            out.add(Send((conn,), frame))
        return joined.info

    def _joined(
        self,
        rid: m.RequestId,
        seat: int | None,
        token: str | None,
        rev: int,
        view: dict[str, Any] | None,
        view_hash: str | None,
        info: dict[str, Any] | None = None,
        moved_from: str | None = None,
    ) -> f.Joined:
        """A ``joined`` frame (``info``: the room's, if the caller just made it; ``moved_from``:
        the finished room a rematch moved the member out of)."""
        delay = self.spectators.delay if seat is None else None
        chat = self._chat.recent(delay, self._wall())
        elapsed = self._clocks.elapsed(self._out.now)
        if info is None:
            info = self._info()
        return f.Joined(
            rid, self.room, seat, rev, view, view_hash, info, chat, token, elapsed, moved_from
        )

    def _joined_frame(
        self,
        rid: m.RequestId,
        seat: int | None,
        token: str | None,
        rev: int,
        view_hash: str,
        info: dict[str, Any],
        moved_from: str | None,
        view: bytes,
    ) -> bytes:
        """The bytes of :meth:`_joined`'s frame with its full view ``view`` (encoded), spliced
        (:func:`joined_frame`)."""
        delay = self.spectators.delay if seat is None else None
        chat = self._chat.recent(delay, self._wall())
        elapsed = self._clocks.elapsed(self._out.now)
        shared = shared_part(pack(info), chat)
        return joined_frame(
            rid, self.room, seat, rev, view_hash, shared, token, elapsed, moved_from, view
        )

    # Spectators, sync -------------------------------------------------------------------------

    def spectate(self, conn: Member, req: m.Spectate) -> None:
        if self.room in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"already in room {self.room}")
        self.spectators.add(conn)
        conn.rooms[self.room] = None
        upto = self.spectators.delayed_view()[1] if self.spectators.delayed else self._play.rev
        info = self._send_joined(conn, req.id, None, req.rev, upto)
        self.announce_spectators(info)

    def announce_spectators(self, info: dict[str, Any] | None = None) -> None:
        """A spectator came or went: announced at once in a small audience, else batched
        (``info``: the room's, if the caller just made it)."""
        if len(self.spectators) <= SPECTATORS_ANNOUNCED_AT_ONCE:
            self._announce(info)
        elif not self._announcing:
            self._announcing = True
            self._out.later(SPECTATOR_ANNOUNCE_EVERY, Announce())

    def announced(self) -> None:
        """The batched announcement's timer fired."""
        self._announcing = False
        if self._status.state is not RoomState.CLOSED:
            self._announce()

    def sync(self, conn: Member, rid: m.RequestId) -> None:
        if self.room not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.room} first")
        seat = conn.rooms[self.room]
        if seat is None and self.settings.spectator_delay > 0:
            doc, rev, view_hash = self.spectators.delayed_view()
            self._out.reply(conn, f.State(rid, self.room, rev, doc, view_hash))
            return
        play = self._play
        enc, view_hash = play.views.document(seat, conn.hash_rule)
        elapsed = self._clocks.elapsed(self._out.now)
        state = f.State(rid, self.room, play.rev, {}, view_hash, elapsed)
        self._out.send((conn,), f.encode_frame_with(state, "view", enc))

    # Leaving ----------------------------------------------------------------------------------

    def leave(self, conn: Member, req: m.Leave) -> Steps:
        if self.room not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"not in room {self.room}")
        spectator = conn.rooms[self.room] is None
        yield from self._drop(conn)
        self._out.send((conn,), ack_frame(req.id, self.room))
        if spectator:
            self.announce_spectators()
        else:
            self._announce()

    def gone(self, conn: Member) -> Steps:
        if self.room in conn.rooms:
            spectator = conn.rooms[self.room] is None
            yield from self._drop(conn)
            if spectator:
                self.announce_spectators()
            else:
                self._announce()

    def _drop(self, conn: Member) -> Steps:
        index = conn.rooms.pop(self.room, None)
        self.spectators.discard(conn)
        if index is None:
            return
        seat = self.seating.seats[index]
        state = self._status.state
        self._log.info("seat_left", seat=index, conn=conn.session, state=state.value)
        if seat.conn is conn:
            if state is RoomState.OPEN:
                seat.release()
                yield StoreSeats(self._meta(), required=False)
            else:
                seat.conn = None
                if state is RoomState.PLAYING:
                    self.await_takeover(index)

    # A rematch (SPEC section 9) ---------------------------------------------------------------

    def admit(self, conn: Member, req: Admit) -> Steps:
        """The members of the finished room ``req.source`` move into this new room (open, nobody
        in it yet): each player to the seat of the same number under the same name, with a new
        token, each spectator a spectator; a member no longer in ``source`` as the lobby saw it
        is left out. The seats are stored (with the start, when every seat is then taken: the
        match starts at once) before anyone is told; then each member gets ``joined`` (no
        ``id``: unasked; ``moved_from``: ``source``), the requester ``conn`` its ``ack``, and
        the finished room is told who moved out (:class:`~server.room_state.Moved`). Nothing is
        announced (``room``): the ``joined`` frames carry the room as it is."""
        source, room = req.source, self.room
        claimed: list[tuple[Member, Seat, str]] = []
        for member, index, name in req.seats:
            seat = self.seating.seats[index]
            if (
                member.rooms.get(source, -1) == index
                and room not in member.rooms
                and not seat.taken
            ):
                claimed.append((member, seat, seat.claim(name, member)))
        try:
            if claimed and self.seating.free() == 0:
                yield from self._play.begin(announce=False)
            elif claimed:
                yield StoreSeats(self._meta(), required=True)
        except RequestError:
            for _, seat, _ in claimed:
                seat.release()
            raise
        watchers: list[Member] = []
        for member in req.spectators:
            if source in member.rooms and member.rooms[source] is None and room not in member.rooms:
                try:
                    self.spectators.add(member)
                except RequestError:  # (a full node: this one stays where it was)
                    continue
                member.rooms[room] = None
                watchers.append(member)
        play, out = self._play, self._out
        info = self._info()
        encoded = pack(info)  # (the frames below carry the same info: encoded once)
        if claimed:
            # What every seat's ``joined`` shares (as :meth:`_joined` makes it), made once.
            chat = self._chat.recent(None, self._wall())
            elapsed = self._clocks.elapsed(out.now)
            rev = play.rev
            shared = shared_part(encoded, chat)
            for member, seat, token in claimed:
                index = seat.index
                member.rooms[room] = index
                enc, view_hash = play.views.document(index, member.hash_rule)
                frame = joined_frame(
                    None, room, index, rev, view_hash, shared, token, elapsed, source, enc
                )
                out.send((member,), frame)
        if self.spectators.delayed:
            upto = self.spectators.delayed_view()[1]
            for member in watchers:
                self._send_joined(member, None, None, None, upto, info, source)
        elif watchers:
            # Every spectator's ``joined`` is the same frame (the spectators' document and hash
            # are the same under both hash rules): made once, the same bytes to each.
            enc, view_hash = play.views.document(None)
            chat = self._chat.recent(self.spectators.delay, self._wall())
            elapsed = self._clocks.elapsed(out.now)
            shared = shared_part(encoded, chat)
            frame = joined_frame(
                None, room, None, play.rev, view_hash, shared, None, elapsed, source, enc
            )
            out.send(tuple(watchers), frame)
        out.add(Send((conn,), ack_frame(req.id, room, play.rev, encoded)))
        moved = [member for member, _, _ in claimed] + watchers
        self._log.info(
            "rematch_joined", source=source, seats=[seat.index for _, seat, _ in claimed],
            spectators=len(watchers),
        )  # fmt: skip
        out.add(Forward(source, Moved(room, tuple(moved))))

    def again(self, conn: Member, req: m.Rematch) -> None:
        """``rematch`` of the finished room ``req.room`` once this room was made as its rematch
        (the lobby hands it here, behind the move): ``ack`` as the first asker got, to a member
        moved here (its ``joined`` came first); else ``not_allowed`` naming this room."""
        if self.room not in conn.rooms:
            raise RequestError(
                ErrorCode.NOT_ALLOWED,
                f"room {req.room} has had its rematch: room {self.room}",
            )
        self._out.reply(conn, f.Ack(req.id, self.room, self._play.rev, self._info()))

    def moved(self, command: Moved) -> None:
        """A rematch took ``command.members`` into room ``command.to``: they leave this finished
        room, told nothing more by it (their seats stay theirs, as after any match). Whoever is
        still here (a player who had left and resumes, a delayed room's spectators, who stay
        until their feed has shown the end) reads the rematch's room in ``info.rematch``."""
        room = self.room
        status = self._status
        status.rematch = command.to
        seats = self.seating.seats
        # (every seat a person holds is held by a connection that moves now: nobody left)
        holders = [seat.conn for seat in seats if seat.token_digest and not seat.bot]
        status.everyone_moved = all(
            conn is not None and conn in command.members for conn in holders
        )
        left = 0
        for member in command.members:
            index = member.rooms.pop(room, -1)
            if index == -1:
                continue
            left += 1
            if index is None:
                self.spectators.discard(member)
            else:
                seat = self.seating.seats[index]
                if seat.conn is member:
                    seat.conn = None
        self._log.info("moved_out", to=command.to, members=left)
        self._announce()

    # Stand-ins (server.takeover) --------------------------------------------------------------

    def await_takeover(self, index: int) -> None:
        """Seat ``index`` has no connection now: start its grace period."""
        due = self.standins.gone(index)
        if due is not None:  # (cancelled if the room closes first)
            self._out.later(self.standins.grace, due)

    def takeover_due(self, due: TakeoverDue) -> None:
        playing = self._status.state is RoomState.PLAYING
        bot = self.standins.take_over(due, self.seating.seats[due.seat], playing)
        if bot is None:
            return
        self._play.auto.bots[due.seat] = bot
        self._log.info("seat_taken_over", seat=due.seat, kind=STANDIN_KIND)
        self._announce()
        self._play.auto.next()
