"""A protocol session over one WebSocket: hello, requests and answers, views, resume after a drop.

:class:`Session` is the thin asyncio shell around :class:`protocol.mirror.Mirror`: a reader task
decodes each frame, hands answers to the request waiting on their ``id``, feeds room frames to the
room's mirror (sending ``sync`` when the mirror asks), and wakes everyone waiting for a change.

A connection that drops without our asking (network, server restart) is reopened with a backoff;
then ``hello`` again and every room is resumed: seats with their token and last revision,
spectators with ``spectate`` and their revision (SPEC section 11). Requests in flight at the drop
fail with :class:`ConnectionLost` (their answer may never come; the view will tell what
happened). Server ``error`` answers raise :class:`ServerError` with the stable code.

Several nodes (SPEC section 18): a ``redirect`` answer moves the session to the node it names
(reconnect there, resume every room, send the request again); an unsolicited ``redirect`` or a
``bye`` with a ``url`` moves it the same way. Connections carry ``?room=<id>`` when the session is
about one room, so a load balancer that hashes on it sends them to the room's node. Reconnecting
after a drop alternates between the node last used and the address the session was opened with
(``home``, e.g. the load balancer), so the rooms of a node that died are found wherever another
node took them over.

Rematches (SPEC section 9, protocol 1.5): :meth:`Session.rematch` asks for the next match of
a finished room. Whoever asked, the server moves every member into the new room with an unasked
``joined`` (no ``id``) whose ``moved_from`` names the finished room; the session keeps the new
room's mirror (a seat's new token in it, for resume), records the move in
:attr:`Session.moves`, old room to new, and forgets the old room (it sends nothing more, and is
not resumed after a drop). An unasked ``joined`` without ``moved_from`` is no move. Asking
again (another seat asked at the same time, a retry) is answered as the first ask, after our
own ``joined``: the same room; a ``not_allowed`` is a real refusal. Who was not moved (a player
who had left and came back, the spectators of a room with ``spectator_delay``) reads the new
room in the finished room's ``info.rematch`` and goes there with :meth:`Session.follow_rematch`
(a spectator spectates it, a player takes its old seat there, free for it), a move of its own.

A keepalive task sends ``ping`` every half ``idle_timeout`` so a connection in no room is not
dropped as idle (SPEC section 6; seats and spectators are not closed for idleness at all).

Pacing: every frame the session sends waits its turn under the server's ``welcome.limits``
(``rate_per_second``, ``rate_burst``), with a margin (:data:`PACE_SHARE` of the rate, half the
burst), so a fast client (``oasis bots``) is never closed with ``rate_limited``: a generic cell
rate algorithm, where each send reserves its slot before it sleeps, so concurrent senders on one
session stay under the limit together.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from protocol import PROTOCOL_VERSION
from protocol.codec import Limits, decode, encode
from protocol.errors import ProtocolError
from protocol.mirror import Mirror, Update

DEFAULT_SERVER = "ws://127.0.0.1:8765"
CLIENT_NAME = "oasis-cli/0.1"
ANSWER_TIMEOUT = 30.0
MAX_REDIRECTS = 5
HASH_RULE = 2
"""The view hash rule asked for (SPEC section 4): the server hashes the shared part once."""
"""Redirects followed for one request before the session gives up on it."""
RECONNECT_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 10.0, 10.0)
"""Seconds between reconnection attempts (about a minute in all) before the session gives up."""

PACE_SHARE = 0.8
"""The share of the server's ``rate_per_second`` a session uses (the rest is margin: clocks of
two machines, frames the session does not pace such as ``hello``)."""

_FROM_SERVER = Limits(max_frame_bytes=1 << 28, max_depth=64, max_container=1 << 20, max_str=1 << 24)
"""Server frames may be large (full views); the decoder still refuses non-protocol types."""


class ClientError(Exception):
    """Base of what a session raises; ``str()`` is a sentence for the user."""


class ServerError(ClientError):
    """The server refused a request with an ``error`` frame."""

    def __init__(self, code: str, message: str, frame: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.frame = frame or {}


class ConnectionLost(ClientError):
    """The connection dropped before the answer came (or could not be opened again)."""


Listener = Callable[[str, dict[str, Any], Update], None]
"""Called with (room, frame, update) for every room frame, after the mirror took it."""


class Session:
    """One connection to a server, possibly reopened, holding the mirrors of its rooms."""

    def __init__(self, url: str, name: str = CLIENT_NAME, *, reconnect: bool = True) -> None:
        self.url = url
        self.home = url
        """The address the session was opened with; reconnecting falls back to it."""
        self.name = name
        self.reconnect = reconnect
        self.reconnect_delays: tuple[float, ...] = RECONNECT_DELAYS
        self.rooms: dict[str, Mirror] = {}
        self.welcome: dict[str, Any] = {}
        self.hash_rule = 1
        """The view hash rule of this session's frames (SPEC section 4), from ``welcome``."""
        self.listeners: list[Listener] = []
        self.notices: list[Callable[[str], None]] = []
        """Called with a sentence about the connection (dropped, resumed, bye, violations)."""
        self.problems: list[str] = []
        self.errors: dict[str, int] = {}
        """Unsolicited ``error`` frames and failed answers, counted by code."""
        self.moves: dict[str, str] = {}
        """Rooms a rematch moved the session out of, each to the room it moved it into."""
        self.closed = False
        self.version = 0
        """Grows with every frame and connection event; waiters compare it to what they saw."""
        self._reconnecting = False
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._keepalive: asyncio.Task[None] | None = None
        self._gone: asyncio.Future[None] | None = None
        self._lost: BaseException | None = None
        self._next_url = ""
        """Where the next (re)connection goes first (a ``redirect`` or a ``bye`` named it)."""
        self._room_hint = ""
        self._following = False
        self._moved = ""
        """What the last unasked redirect said (its room and reason), until the session is back."""
        self.connections = 0
        """Connections opened so far (each one after a drop or a redirect has resumed the
        rooms)."""
        self.pace = True
        """Send under the server's ``welcome.limits`` (see "Pacing")."""
        self._tat = 0.0
        """The pacing's theoretical arrival time of the next frame (loop time)."""

    # Opening and closing ---------------------------------------------------------------------

    async def open(self) -> Session:
        await self._connect()
        self._keepalive = asyncio.get_running_loop().create_task(self._ping_loop())
        return self

    async def _connect(self) -> None:
        try:
            ws = await connect(
                self._with_room(self.url),
                max_size=None,
                open_timeout=10,
                compression=None,
                ping_interval=20,
                close_timeout=2,  # a node that died or hangs must not hold a move for long
            )
        except InvalidURI as exc:
            raise ClientError(f"{self.url!r} is not a WebSocket URL (ws://host:port)") from exc
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise ConnectionLost(f"cannot reach {self.url}: {_reason(exc)}") from exc
        self._ws = ws
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))
        self.welcome = await self.request(
            {
                "type": "hello",
                "version": PROTOCOL_VERSION,
                "client": self.name[:64],
                "hash_rule": HASH_RULE,
            }
        )
        # The rule the server confirmed (SPEC section 4): an older server says none, rule 1.
        self.hash_rule = HASH_RULE if self.welcome.get("hash_rule") == HASH_RULE else 1
        for mirror in self.rooms.values():
            mirror.hash_rule = self.hash_rule

    async def close(self) -> None:
        self.closed = True
        if self._keepalive is not None:
            self._keepalive.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5)
        self._fail_pending(ConnectionLost("the session was closed"))

    async def __aenter__(self) -> Session:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def gone(self) -> BaseException | None:
        """Why the session ended for good (could not reconnect), or None while it lives."""
        return self._lost

    # Requests ------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """The connection is open now (False while it is lost or being reopened)."""
        ws = self._ws
        return ws is not None and ws.close_code is None and not self._reconnecting

    async def _paced(self) -> None:
        """Wait for this frame's turn under the server's rate limit (see "Pacing")."""
        limits = self.welcome.get("limits")
        if not self.pace or not isinstance(limits, dict):
            return
        rate, burst = limits.get("rate_per_second"), limits.get("rate_burst")
        if not isinstance(rate, int | float) or not isinstance(burst, int | float) or rate <= 0:
            return
        interval = 1.0 / (rate * PACE_SHARE)
        tolerance = max(0.0, (burst // 2 - 1)) * interval
        now = asyncio.get_running_loop().time()
        tat = max(self._tat, now)
        self._tat = tat + interval
        wait = tat - tolerance - now
        if wait > 0:
            await asyncio.sleep(wait)

    async def send(self, frame: dict[str, Any]) -> None:
        await self._paced()
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected")
        try:
            await ws.send(encode(frame))
        except ConnectionClosed as exc:
            raise ConnectionLost("the connection dropped") from exc

    def _with_room(self, url: str) -> str:
        """``url`` with ``?room=<id>`` when the session is about exactly one room."""
        rooms = list(self.rooms) or ([self._room_hint] if self._room_hint else [])
        if len(rooms) != 1:
            return url
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "room"] + [("room", rooms[0])]
        return urlunsplit(parts._replace(query=urlencode(query)))

    async def request(
        self, frame: dict[str, Any], patience: float = ANSWER_TIMEOUT
    ) -> dict[str, Any]:
        """Send ``frame`` with a fresh id and return its answer; an ``error`` answer raises.

        A ``redirect`` answer moves the session to the node it names and sends ``frame`` again
        there (up to :data:`MAX_REDIRECTS` times)."""
        for _ in range(MAX_REDIRECTS):
            answer = await self._request_once(frame, patience)
            if answer.get("type") != "redirect":
                return answer
            room = frame.get("room")
            await self.follow(str(answer.get("url") or ""), room if isinstance(room, str) else "")
        raise ClientError(f"{frame['type']} was redirected {MAX_REDIRECTS} times; giving up")

    async def follow(self, url: str, room: str = "") -> None:
        """Move to the node at ``url`` ("": the one the session was opened with) and resume
        every room there; return once that is done (or raise ConnectionLost)."""
        self._next_url = url or self.home
        self._room_hint = room
        seen = self.connections
        self._following = True
        ws = self._ws
        if ws is not None:
            await ws.close()
        else:
            asyncio.get_running_loop().create_task(self._reconnect())
        await self.wait(lambda: self.connections != seen)

    async def _request_once(self, frame: dict[str, Any], patience: float) -> dict[str, Any]:
        rid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        try:
            await self.send({**frame, "id": rid})
            async with asyncio.timeout(patience):
                answer = await future
        except TimeoutError:
            raise ConnectionLost(f"no answer to {frame['type']} within {patience:g} s") from None
        finally:
            self._pending.pop(rid, None)
        if answer.get("type") == "error":
            code = str(answer.get("code", "?"))
            self.errors[code] = self.errors.get(code, 0) + 1
            raise ServerError(code, str(answer.get("message", "")), answer)
        return answer

    async def sync(self, room: str) -> None:
        """Ask for the full view of ``room`` (its answer goes through the mirror)."""
        with contextlib.suppress(ClientError):
            await self.request({"type": "sync", "room": room})

    # Rooms ----------------------------------------------------------------------------------

    def mirror(self, room: str) -> Mirror:
        mirror = self.rooms.get(room)
        if mirror is None:
            mirror = self.rooms[room] = Mirror(room, hash_rule=self.hash_rule)
        return mirror

    async def join(self, frame: dict[str, Any]) -> Mirror:
        """Send a ``join``, ``quick`` or ``spectate`` request; the room's mirror once joined."""
        answer = await self.request(frame)
        if answer.get("type") != "joined" or not isinstance(answer.get("room"), str):
            raise ClientError(f"the server answered {answer.get('type')!r} to {frame['type']}")
        return self.rooms[answer["room"]]

    def forget(self, room: str) -> None:
        """Stop following ``room`` (no resume after a drop)."""
        self.rooms.pop(room, None)

    async def rematch(self, room: str) -> Mirror:
        """Ask for the next match of the finished ``room`` (SPEC section 9); the new room's
        mirror, which the server moved us into before it answered (its ``joined`` comes first,
        also when another seat asked first). A refusal raises :class:`ServerError`."""
        answer = await self.request({"type": "rematch", "room": room})
        new = answer.get("room")
        if not isinstance(new, str) or new not in self.rooms:
            raise ClientError(f"the server made room {new} but did not move us into it")
        return self.rooms[new]

    async def follow_rematch(self, room: str) -> Mirror:
        """Go to the rematch of the finished ``room`` we were not moved into, as its
        ``info.rematch`` names it (SPEC section 9): a spectator spectates it, a player takes its
        old seat there under its old name (the seat was left free for it). Then the finished
        room is left and the move recorded in :attr:`moves`, as a move of the server's is; the
        new room's mirror. A seat taken since, a room closed: :class:`ServerError`."""
        mirror = self.rooms.get(room)
        new = mirror.info.get("rematch") if mirror is not None else None
        if mirror is None or not isinstance(new, str):
            raise ClientError(f"room {room} has no rematch to go to")
        frame: dict[str, Any] = {"type": "spectate", "room": new}
        if mirror.seat is not None:
            frame = {"type": "join", "room": new, "seat": mirror.seat}
            seats = mirror.info.get("seats") or []
            entry = seats[mirror.seat] if mirror.seat < len(seats) else None
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"]:
                frame["name"] = entry["name"]
        followed = await self.join(frame)
        with contextlib.suppress(ClientError):
            await self.request({"type": "leave", "room": room}, patience=5)
        self.forget(room)
        self.moves[room] = new
        self.version += 1
        async with self._changed:
            self._changed.notify_all()
        return followed

    async def wait(self, predicate: Callable[[], bool], patience: float | None = None) -> None:
        """Return once ``predicate()`` holds; it is re-checked after every frame and every drop.

        Raises TimeoutError after ``patience`` seconds (None: wait for ever).
        """
        async with asyncio.timeout(patience), self._changed:
            while not predicate():
                if self._lost is not None:
                    raise ConnectionLost(str(self._lost))
                await self._changed.wait()

    async def changed(self, seen: int) -> None:
        """Return once :attr:`version` differs from ``seen`` (a frame or a connection event)."""
        await self.wait(lambda: self.version != seen)

    # Reading ----------------------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for data in ws:
                await self._frame(data)
        except ConnectionClosed:
            pass
        finally:
            await self._dropped(ws)

    async def _frame(self, data: str | bytes) -> None:
        if isinstance(data, str):
            self._problem("the server sent a text frame; protocol frames are binary")
            return
        try:
            frame = decode(data, _FROM_SERVER)
        except ProtocolError as exc:
            self._problem(f"undecodable frame from the server ({exc.message})")
            return
        rid = frame.get("id")
        if isinstance(rid, int) and rid in self._pending:
            # Answers that are also room frames (joined, state) update the mirror first, so the
            # requester sees the new view as soon as it has its answer.
            self._room_frame(frame)
            future = self._pending[rid]
            if not future.done():
                future.set_result(frame)
        else:
            kind = frame.get("type")
            room = frame.get("room")
            self._room_frame(frame)
            moved = frame.get("moved_from") if kind == "joined" else None
            if isinstance(moved, str) and moved != room and room in self.rooms:
                self.moves[moved] = room  # an unasked joined: a rematch moved us (SPEC 9)
                self.forget(moved)
            if kind == "error":
                code = str(frame.get("code", "?"))
                self.errors[code] = self.errors.get(code, 0) + 1
                self._notice(f"server error {code}: {frame.get('message', '')}")
            elif kind == "bye":
                self._notice(f"the server says goodbye: {frame.get('reason', '')}")
                if frame.get("url"):
                    self._next_url = str(frame["url"])
            elif kind == "redirect":
                # A room of ours moved (its node lost or gave up the lease): follow it.
                why = frame.get("reason") or "it moved"
                self._moved = f"room {frame.get('room')}: {why}"
                self._notice(f"{self._moved}; following it")
                self._next_url = str(frame.get("url") or "") or self.home
                self._following = True
                if self._ws is not None:
                    asyncio.get_running_loop().create_task(self._ws.close())
        self.version += 1
        async with self._changed:
            self._changed.notify_all()

    def _room_frame(self, frame: dict[str, Any]) -> None:
        room = frame.get("room")
        kind = frame.get("type")
        if not isinstance(room, str) or kind not in ("joined", "state", "patch", "room", "chat"):
            return
        if kind == "joined":
            mirror = self.mirror(room)
        else:
            found = self.rooms.get(room)
            if found is None:
                return
            mirror = found
        update = mirror.on_frame(frame)
        if update.problem:
            self._problem(f"room {room}: {update.problem}")
        if update.need_sync:
            asyncio.get_running_loop().create_task(self.sync(room))
        for listener in list(self.listeners):
            try:
                listener(room, frame, update)
            except Exception as exc:  # a display bug must not stop the session reading
                self._problem(f"cannot show a {kind} frame of room {room}: {exc!r}")

    def _problem(self, text: str) -> None:
        self.problems.append(text)
        self._notice(f"protocol problem: {text}")

    def _notice(self, text: str) -> None:
        for notice in list(self.notices):
            notice(text)

    def _fail_pending(self, exc: ClientError) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: the requester may already be gone

    # Reconnecting --------------------------------------------------------------------------

    async def _dropped(self, ws: ClientConnection) -> None:
        if self._ws is not ws:
            return
        self._fail_pending(ConnectionLost("the connection dropped"))
        self.version += 1
        if self.closed or self._reconnecting:
            return
        if not self.reconnect and not self._following:
            self._lost = ConnectionLost(f"the server closed the connection ({_close_text(ws)})")
        else:
            if not self._following:  # (a redirect we follow closed it: its notice said why)
                self._notice(f"connection lost ({_close_text(ws)}); reconnecting")
            asyncio.get_running_loop().create_task(self._reconnect())
        async with self._changed:
            self._changed.notify_all()

    async def _reconnect(self) -> None:
        self._reconnecting = True
        try:
            await self._reconnect_loop()
        finally:
            self._reconnecting = False

    async def _reconnect_loop(self) -> None:
        last: BaseException | None = None
        previous = self.url
        for attempt, delay in enumerate(self.reconnect_delays):
            await asyncio.sleep(0 if self._following and not attempt else delay)
            if self.closed:
                return
            if self._next_url:
                self.url, self._next_url = self._next_url, ""
            else:  # the node we used, then the address we started from, and so on
                self.url = previous if attempt % 2 == 0 else self.home
            try:
                await self._connect()
                await self._resume_rooms()
            except ClientError as exc:
                last = exc
                if self._ws is not None:
                    await self._ws.close()
                continue
            self._following = False
            self._room_hint = ""
            self.connections += 1
            # (the notice that stays on screen: it says why too, when a redirect was the cause)
            moved, self._moved = self._moved, ""
            self._notice(f"{moved}; rooms resumed" if moved else "reconnected; rooms resumed")
            return
        self._lost = ConnectionLost(f"gave up reconnecting to {self.url}: {last}")
        self._notice(str(self._lost))
        self.version += 1
        async with self._changed:
            self._changed.notify_all()

    async def _resume_rooms(self) -> None:
        for room, mirror in list(self.rooms.items()):
            frame: dict[str, Any]
            if mirror.token is not None:
                frame = {"type": "join", "room": room, "token": mirror.token}
            elif mirror.spectator:
                frame = {"type": "spectate", "room": room}
            else:
                continue
            if mirror.view is not None and mirror.rev >= 0:
                frame["rev"] = mirror.rev
            try:
                answer = await self._request_once(frame, ANSWER_TIMEOUT)
            except ServerError as exc:
                self._notice(f"could not resume room {room}: {exc}")
                continue
            if answer.get("type") == "redirect":
                # Another node serves it (or will, once the dead owner's lease expires).
                self._next_url = str(answer.get("url") or "")
                raise ConnectionLost(f"room {room} is served at {answer.get('url') or '?'}")

    async def _ping_loop(self) -> None:
        while not self.closed:
            idle = self.welcome.get("limits", {}).get("idle_timeout", 300)
            period = float(idle) / 2 if isinstance(idle, int | float) and idle > 0 else 150.0
            await asyncio.sleep(max(period, 1.0))
            with contextlib.suppress(ClientError):
                await self.request({"type": "ping"}, patience=period)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text


def _close_text(ws: ClientConnection) -> str:
    code, reason = ws.close_code, ws.close_reason
    if code is None:
        return "no close frame"
    return f"close code {code}" + (f": {reason}" if reason else "")
