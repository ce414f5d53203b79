"""One parsed request of a connection to what serves it: the connection itself (``hello``,
``ping``), the lobby (listing, ``create``, ``replay``, ``quick``, ``rematch``), the cluster or
the relay when another node holds the room, else the room's inbox.

:func:`handle_now` serves, without awaiting, every request that needs no await (``hello``,
``ping``, a listing of this node only, a request of a room this node serves, see
:func:`awaits`): the read path's fast path (:mod:`server.reader`). :func:`dispatch` serves any
request, awaiting what must be awaited (the store, the cluster, the relay). Costly requests
spend their quota (:mod:`server.quotas`) before any work. Errors are raised (``RequestError``
and the others): the caller turns them into one ``error`` frame
(:func:`server.errors.wire_error`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from games import registry
from protocol import PROTOCOL_MINOR, PROTOCOL_VERSION
from protocol import frames as f
from protocol import messages as m
from protocol.errors import ErrorCode, RequestError
from protocol.hashing import HASH_RULES
from server.connection import Connection
from server.store import StoreError

if TYPE_CHECKING:
    from server.app import App

SERVER_NAME: Final = "oasis/0.1"

_AWAITED: Final = (m.Create, m.Replay, m.Quick, m.Rematch)
"""Requests that always await (the store, the lobby's quick search)."""


def awaits(app: App, conn: Connection, req: m.Request) -> bool:
    """Whether serving ``req`` may await (then only :func:`dispatch` serves it).

    A room request on a node with a cluster or a relay awaits only if this node does not serve
    the room (the cluster may redirect it or claim it, the relay serve it): for a room in this
    node's lobby that ``conn`` does not watch through the relay, :func:`dispatch` would hand it
    to the room without awaiting anything, as :func:`handle_now` does."""
    # (isinstance of a compiled class: a check of the type compiled code holds; ``type(req) is
    # m.Act`` looked ``m`` up in the module's globals, then its ``Act``, at every call)
    if not isinstance(req, m.Act):  # (the request of nearly every action: a room's, see below)
        if isinstance(req, (m.Hello, m.Ping)):
            return False
        if isinstance(req, m.ListRooms):
            return app.cluster is not None
        if isinstance(req, _AWAITED):  # (a tuple of classes: about 1,000 instructions)
            return True
    relay = app.relay
    if relay is None and app.cluster is None:
        return False
    room = req.room
    return room not in app.lobby.rooms or (relay is not None and relay.serves(conn, room))


def handle_now(app: App, conn: Connection, req: m.Request) -> None:
    """Serve ``req``, one that does not :func:`awaits`, without awaiting."""
    if app.stopping and not isinstance(req, m.Ping):
        raise RequestError(ErrorCode.UNAVAILABLE, "the server is shutting down")
    if isinstance(req, m.Act):  # (nearly every request: to its room without the checks below)
        _submit(app, conn, req)
    elif isinstance(req, m.Hello):
        if req.version != PROTOCOL_VERSION:
            raise RequestError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {req.version}",
            )
        conn.client = req.client or "unnamed"
        conn.hash_rule = req.hash_rule if req.hash_rule in HASH_RULES else 1
        conn.send(
            f.Welcome(
                req.id,
                conn.session,
                PROTOCOL_VERSION,
                SERVER_NAME,
                {**app.limits.to_json(), **app.config.limits()},
                registry.names(),
                PROTOCOL_MINOR,
                conn.hash_rule,
            )
        )
    elif isinstance(req, m.Ping):
        conn.send(f.Pong(req.id, time.time()))
    elif isinstance(req, m.ListRooms):
        app.quotas.spend("list", conn.session, conn.ip)
        listing, after = app.lobby.page(req)
        conn.send(f.Rooms(req.id, listing, after))
    else:
        assert not isinstance(req, _AWAITED)
        if isinstance(req, m.Start) and req.bots:
            app.quotas.spend("create", conn.session, conn.ip)
        _submit(app, conn, req)


def _submit(app: App, conn: Connection, req: m.RoomRequest) -> None:
    """``req`` to its room's inbox itself (``Room.submit``, interpreted, would only hand it
    on), the room found in the lobby's map as ``Lobby.get`` finds it, without its Python
    frame."""
    room = app.lobby.rooms.get(req.room)
    if room is None:
        room = app.lobby.get(req.room)  # (raises the lobby's own not_found)
    room.inbox.submit(conn, req)


async def dispatch(app: App, conn: Connection, req: m.Request) -> None:
    """Serve ``req``, awaiting what it needs."""
    if not awaits(app, conn, req):
        handle_now(app, conn, req)
        return
    if app.stopping:
        raise RequestError(ErrorCode.UNAVAILABLE, "the server is shutting down")
    if isinstance(req, m.ListRooms):
        assert app.cluster is not None
        app.quotas.spend("list", conn.session, conn.ip)
        listing, after = await app.cluster.page(req)
        conn.send(f.Rooms(req.id, listing, after))
    elif isinstance(req, m.Create):
        app.quotas.spend("create", conn.session, conn.ip)
        try:
            room = await app.lobby.create(req, conn.session, conn=conn)
        except StoreError as exc:
            raise _unstored(exc) from None
        conn.send(f.Ack(req.id, room.id, 0, room.info()))
    elif isinstance(req, m.Replay):
        app.quotas.spend("replay", conn.session, conn.ip)
        await app.lobby.replay(req, conn)
    elif isinstance(req, m.Quick):
        # The game first: a quick match nobody can play reads nothing from the store. A
        # quick searches the lobby (across nodes, Redis's index): it spends a listing.
        registry.get(req.game).check_options(req.players, {})
        app.quotas.spend("list", conn.session, conn.ip)
        if app.cluster is not None and await app.cluster.quick(conn, req):
            return
        try:
            room = await app.lobby.quick(req, conn.session, conn)
        except StoreError as exc:
            raise _unstored(exc) from None
        room.submit(conn, m.Join(req.id, room.id, None, req.name, None, None))
    else:
        assert not isinstance(req, (m.Hello, m.Ping))
        if isinstance(req, m.Start) and req.bots:
            app.quotas.spend("create", conn.session, conn.ip)
        if app.relay is not None and await _relayed(app, conn, req):
            return
        if app.cluster is not None and await app.cluster.route(conn, req.room, req.id):
            return
        if isinstance(req, m.Rematch):
            try:
                await app.lobby.rematch(req, conn)
            except StoreError as exc:
                raise _unstored(exc) from None
        else:
            app.lobby.get(req.room).submit(conn, req)


def _unstored(exc: StoreError) -> RequestError:
    """A new room the store could not record (``create``, ``quick``, ``rematch``): nothing was
    made, and the answer is ``unavailable`` (SPEC section 16), not ``internal``."""
    return RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable ({exc})")


async def _relayed(app: App, conn: Connection, req: m.RoomRequest) -> bool:
    """A relay spectator's request, or a ``spectate`` of a room another node holds: served
    here by the relay (:mod:`server.relay`), not redirected."""
    relay, cluster = app.relay, app.cluster
    assert relay is not None
    if relay.serves(conn, req.room):
        return await relay.handle(conn, req, None)
    if not isinstance(req, m.Spectate) or cluster is None or req.room in app.lobby.rooms:
        return False
    if "{" in req.room or "}" in req.room:
        return False
    try:
        holder = await cluster.leases.holder(req.room)
    except StoreError as exc:
        raise RequestError(ErrorCode.UNAVAILABLE, f"storage unavailable ({exc})") from None
    if holder is None or holder.node == cluster.node:
        return False
    return await relay.handle(conn, req, holder.node)
