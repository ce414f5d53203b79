"""The HTTP side of the port: what a request that is not a finished WebSocket upgrade gets.

``/healthz`` (the process answers), ``/readyz`` (accepting and the store is usable and durable:
503 while shutting down, while Redis cannot be written, and while it does not persist, see
:mod:`server.store.redis` "Durability"), ``/metrics`` (Prometheus) and the game data, ``/games``
and ``/games/<name>`` (:mod:`server.gamedata`), and the browser client's pages and files
(:mod:`server.web`) for requests that are not a WebSocket handshake. A handshake from an address
that already holds its share of connections is answered 429; any other goes on to the upgrade
(None). Called by websockets as ``process_request`` (:meth:`server.app.App._http`).
"""

from __future__ import annotations

import http
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server import gamedata
from server.web import to_response, wants_websocket

if TYPE_CHECKING:
    from server.app import App


def answer(app: App, ws: ServerConnection, request: Request) -> Response | None:
    """The response to ``request``, or None to let the WebSocket upgrade proceed."""
    path = request.path.split("?", 1)[0]
    if path == "/healthz":
        return ws.respond(http.HTTPStatus.OK, "ok\n")
    if path == "/readyz":
        if app.stopping or not app.store.ready():
            return ws.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, "not ready\n")
        problem = app.store.problem()
        if problem:  # (logged by the store when it finds it)
            return ws.respond(http.HTTPStatus.SERVICE_UNAVAILABLE, f"not ready: {problem}\n")
        return ws.respond(http.HTTPStatus.OK, "ready\n")
    if path == "/metrics":
        body, content_type = app.metrics.render()
        response = ws.respond(http.HTTPStatus.OK, body.decode())
        del response.headers["Content-Type"]
        response.headers["Content-Type"] = content_type
        return response
    if not wants_websocket(request.headers.get("Upgrade")):
        data = gamedata.answer(path, request.headers.get("If-None-Match"))
        if data is not None:
            return to_response(data)
        page = app.web.answer(request.path, request.headers.get("If-None-Match"))
        return to_response(page)
    if app.ips.full(app.address(ws, request)):
        app.metrics.rejected.labels("per_ip").inc()
        return ws.respond(http.HTTPStatus.TOO_MANY_REQUESTS, "too many connections\n")
    return None
