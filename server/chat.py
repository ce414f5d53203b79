"""Room chat: who may speak how often, the recent lines a newcomer is shown, and saying a line.

Chat is rate-limited per connection and room with a token bucket (``per_minute`` lines, bursts
of up to 5), refused with ``slow_down`` rather than ``rate_limited`` because a chatty player
is not abusing the connection and must not lose it. Every member counts, spectators too (a
spectator's bucket is its connection's). On top of that, the whole room may carry at most
``room_per_minute`` lines a minute from all its members together (bursts of 10), so that many
connections cannot flood a room's members either: beyond it, ``quota_exceeded`` with ``limit``
``room_chat_per_minute``. The room keeps the last ``keep`` lines in
memory (the store keeps them with the match); a spectator of a delayed room is only shown seats'
lines older than the delay, like the feed itself.

Nothing here reads a clock: the rates take ``now`` (the room's monotonic time) and the lines'
``ts`` and the delay's cut-off take ``wall`` (seconds since the epoch), both given by the caller
(:class:`Chat` gets them from the room core, which gets them from its actor).

:class:`Chat` is the room core's chat component: a member's line (``chat``) and a relayed
spectator's (:class:`~server.room_state.RelayedChat`), stored (:class:`~server.effects.AppendChat`)
before it is sent.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Final

from protocol import frames as f
from protocol import messages as m
from protocol.codec import encode
from protocol.errors import ErrorCode, QuotaExceeded, RequestError
from server.effects import AppendChat, Outbox, Publish, Steps
from server.limits import TokenBucket
from server.quotas import Quotas
from server.room_state import RelayedChat, RoomSettings, Tuning
from server.seats import Seating
from server.spectators import Spectators
from server.store.errors import StoreError

if TYPE_CHECKING:
    from server.member import Member

SHOWN_ON_JOIN: Final = 50


ROOM_BURST: Final = 10
MAX_BUCKETS: Final = 1024
"""Speakers' buckets kept per room before the refilled ones are dropped."""


class ChatLog:
    def __init__(self, per_minute: int, keep: int, room_per_minute: int = 0) -> None:
        self.per_minute = per_minute
        self.room_per_minute = room_per_minute
        self.lines: deque[dict[str, Any]] = deque(maxlen=max(1, keep))
        self._buckets: dict[str, TokenBucket] = {}
        self._room: TokenBucket | None = None

    def check_rate(self, session: str, now: float, quotas: Quotas | None = None) -> None:
        """Spend a line of ``session`` and of the room at ``now`` (monotonic), or refuse it."""
        bucket = self._buckets.get(session)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._prune(now)
            bucket = TokenBucket(self.per_minute / 60.0, min(5, self.per_minute), stamp=now)
            self._buckets[session] = bucket
        if not bucket.take(now):
            raise RequestError(
                ErrorCode.SLOW_DOWN, f"at most {self.per_minute} chat lines a minute"
            )
        room = self._room
        if room is None and self.room_per_minute > 0:
            rate = self.room_per_minute
            room = self._room = TokenBucket(rate / 60.0, min(ROOM_BURST, rate), stamp=now)
        if room is not None and not room.take(now):
            bucket.tokens += 1.0  # this line was not said: the speaker keeps its token
            message = f"at most {self.room_per_minute} chat lines a minute in one room"
            if quotas is not None:
                raise quotas.refuse("room_chat_per_minute", message)
            raise QuotaExceeded("room_chat_per_minute", message)

    def _prune(self, now: float) -> None:
        rate = self.per_minute / 60.0
        for key, b in list(self._buckets.items()):
            if b.tokens + (now - b.stamp) * rate >= b.burst:
                del self._buckets[key]

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def recent(self, spectator_delay: float | None, wall: float) -> list[dict[str, Any]]:
        """The last lines for a seat (``None``) or a spectator of a room with that delay, at
        ``wall`` (seconds since the epoch, the lines' ``ts``)."""
        lines = list(self.lines)[-SHOWN_ON_JOIN:]
        if spectator_delay:
            cutoff = wall - spectator_delay
            lines = [line for line in lines if line["from"]["seat"] is None or line["ts"] <= cutoff]
        return lines


class Chat:
    """The chat of one room (its lines in :attr:`log`): checked, stored, then sent."""

    def __init__(
        self,
        room_id: str,
        settings: RoomSettings,
        tuning: Tuning,
        *,
        seating: Seating,
        spectators: Spectators,
        out: Outbox,
        quotas: Quotas | None,
        epoch: float,
        logger: Any,
    ) -> None:
        self.room = room_id
        self.settings = settings
        self.log = ChatLog(tuning.chat_per_minute, tuning.chat_log, tuning.room_chat_per_minute)
        self._seating = seating
        self._spectators = spectators
        self._out = out
        self._quotas = quotas
        self._epoch = epoch
        """The wall-clock time at the room's time 0 (a line's ``ts`` is ``epoch + now``)."""
        self._logger = logger

    def wall(self) -> float:
        """The wall-clock time of the command being handled."""
        return self._epoch + self._out.now

    def chat(self, conn: Member, req: m.Chat, rev: int) -> Steps:
        if self.room not in conn.rooms:
            raise RequestError(ErrorCode.NOT_ALLOWED, f"join or spectate room {self.room} first")
        seat = conn.rooms[self.room]
        if seat is None and not self.settings.spectator_chat:
            raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
        self.log.check_rate(conn.session, self._out.now, self._quotas)
        if seat is not None:
            name = self._seating.seats[seat].name
        else:
            name = f"spectator {conn.session[:6]}"
        try:
            yield from self._say(seat, name, req.text, rev)
        except StoreError:
            raise RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again") from None
        self._out.reply(conn, f.Ack(req.id, self.room))

    def relayed(self, command: RelayedChat, rev: int) -> Steps:
        """A line of a spectator another node relays this room to, forwarded by that node
        (:mod:`server.relay`, which answered the spectator): the same rules as here, then said
        as a spectator's. A refusal has nobody to answer to: it is logged."""
        try:
            if not self.settings.spectator_chat:
                raise RequestError(ErrorCode.NOT_ALLOWED, "spectators may not chat in this room")
            self.log.check_rate(command.session, self._out.now, self._quotas)
            yield from self._say(None, f"spectator {command.session[:6]}", command.text, rev)
        except (RequestError, StoreError) as exc:
            self._logger.info("relayed_chat_refused", session=command.session[:6], error=str(exc))

    def _say(self, seat: int | None, name: str, text: str, rev: int) -> Steps:
        """Store a chat line, then send it to the seats, the spectators and the relays (a
        spectator's line is not delayed); :class:`StoreError`: it was not said."""
        line = f.ChatLine(self.room, seat, name, text, rev, self.wall()).to_wire()
        yield AppendChat(line)
        self.log.add(line)
        data = encode(line)
        out = self._out
        out.send(self._seating.connected(), data)
        if seat is None:
            self._spectators.now(data)
        else:
            self._spectators.send(data, None)
        out.add(Publish(b"c", data))
