"""``oasis-server``: read the configuration, run the server until SIGTERM or SIGINT.

On Linux the event loop is uvloop when it is installed (DESIGN measured about three times the
throughput of the default loop). A signal starts the graceful stop of :meth:`App.stop`; a second
one is ignored while it runs.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence

from server import logging as oasis_logging
from server.app import App
from server.config import Config, parse_args
from server.store import MemoryStore, Store


async def open_store(config: Config) -> Store:
    """Redis when ``REDIS_URL`` is set, else the in-memory store with a loud warning.

    (Recovery of rooms from Redis and the embedded ``redis-server`` default belong to issue 6.)
    """
    if not config.redis_url:
        oasis_logging.get().warning(
            "memory_store", detail="no REDIS_URL: rooms live in memory and die with the process"
        )
        return MemoryStore()
    from server.redis_store import RedisStore

    store = RedisStore(config.redis_url)
    await store.start()
    return store


async def restore_rooms(app: App) -> None:
    """Every unfinished room of a Redis store back in the lobby; failures are logged per room."""
    from server.recovery import restore_all
    from server.redis_store import RedisStore

    if not isinstance(app.store, RedisStore):
        return
    restored, failed = await restore_all(app.store)
    log = oasis_logging.get()
    for item in restored:
        app.lobby.restore(item.record.room, item.record.meta, item.match, item.rev)
    for error in failed:
        log.error("room_not_restored", room=error.room, error=str(error))
    log.info("rooms_restored", restored=len(restored), failed=len(failed))


async def run(config: Config) -> None:
    app = App(config, await open_store(config))
    await restore_rooms(app)
    await app.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await app.stop()


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(argv)
    oasis_logging.configure(config.log_format, config.log_level)
    try:
        import uvloop
    except ImportError:
        asyncio.run(run(config))
    else:
        uvloop.run(run(config))
    sys.exit(0)


if __name__ == "__main__":
    main()
