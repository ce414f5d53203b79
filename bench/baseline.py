"""The physical limit of this stack: a websockets server with no game logic at all.

Every connection joins the room named by its URL path (``ws://127.0.0.1:PORT/<room>``); every
frame a connection sends is written, unchanged, to every socket of its room (the sender
included, which is its acknowledgement). No decoding, no state, no persistence: what is left is
the cost of the event loop, the WebSocket framing and the kernel's loopback, which is the ceiling
any Oasis figure is compared with. The sockets are served with the same options as Oasis
(``server/app.py``: no compression, ``max_queue`` 16) and frames are written with
``websockets.asyncio.server.broadcast``, the same non-blocking write the Oasis rooms use.

    .venv/bin/python bench/baseline.py --port 8800 --loop uvloop
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed


class Rooms:
    """Room name -> its open sockets."""

    def __init__(self) -> None:
        self.rooms: dict[str, set[ServerConnection]] = {}

    async def handle(self, ws: ServerConnection) -> None:
        name = ws.request.path if ws.request is not None else "/"
        members = self.rooms.setdefault(name, set())
        members.add(ws)
        try:
            async for message in ws:
                broadcast(members, message)
        except ConnectionClosed:
            pass
        finally:
            members.discard(ws)
            if not members:
                self.rooms.pop(name, None)


async def serve_forever(host: str, port: int) -> None:
    rooms = Rooms()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serve(
        rooms.handle, host, port, compression=None, max_queue=16, backlog=1024
    ) as server:
        await stop.wait()
        server.close(close_connections=False)


def raise_fd_limit() -> None:
    """Up to the hard limit: the idle-socket run holds thousands of sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8800)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="uvloop")
    args = parser.parse_args()
    raise_fd_limit()
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(serve_forever(args.host, args.port))
    else:
        asyncio.run(serve_forever(args.host, args.port))


if __name__ == "__main__":
    main()
