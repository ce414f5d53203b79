"""``oasis-server``: read the configuration, open the store, restore rooms, serve until a signal.

Start-up, in order:

1. The store. With ``REDIS_URL``, that Redis. Without, a private ``redis-server``
   (:func:`server.embedded_redis.start_embedded`, from the main thread before the event loop,
   because its parent-death signal is tied to the thread that starts it) with its data in
   ``redis_dir``, so the one run command keeps rooms across restarts on a bare machine; with no
   ``redis-server`` installed, the in-memory store and a loud warning.
2. Recovery: every unfinished room whose lease is free (or was this node's) comes back from
   snapshot + log (:mod:`server.cluster`, :mod:`server.recovery`) *before* the server listens,
   so no client ever gets ``not_found`` for a room that exists; rooms other nodes hold stay
   theirs (their clients get ``redirect``).
   While Redis cannot be read the server waits (and logs), it does not start empty.
   The cyclic garbage collector is off while the rooms are rebuilt (they allocate millions of
   long-lived objects, and its full passes over them were 40 % of the restore time of 1,000
   Ishtar rooms). Before they are, what start-up made to keep (the modules, the engines warmed
   by :func:`server.warmup.load_engines` and what they cache, the store's pool) is moved out of
   the collector's reach (:func:`freeze_start_up`). Once they are, the collector's policy for
   serving starts (``OASIS_GC``, :mod:`server.collector`): by default no young collection at
   all, the rooms' objects frozen instead, and a full collection only past a million objects,
   once they may have doubled.
3. Listening; then SIGTERM or SIGINT starts the graceful stop of :meth:`App.stop` (which closes
   the store once every room has finished its inbox), and the private Redis is stopped last
   (SIGTERM: it flushes its AOF).

The event loop is uvloop when it is installed (DESIGN measured about three times the
throughput of the default loop) unless ``OASIS_LOOP=asyncio`` asks for the standard one; with
``OASIS_STORE=memory`` no Redis is used or started (no persistence, the loud warning).
"""

from __future__ import annotations

import asyncio
import gc
import importlib.machinery
import signal
import sys
from collections.abc import Coroutine, Sequence
from typing import Any

from server import logging as oasis_logging
from server.app import App
from server.cluster import Cluster, fence_of
from server.collector import Collector, tune_gc
from server.config import Config, parse_args
from server.embedded_redis import EmbeddedRedis, EmbeddedRedisError, start_embedded
from server.recovery import restore_all
from server.relay import Publisher, Relay
from server.store import MemoryStore, Store, StoreError
from server.store.redis import RedisStore
from server.warmup import load_engines

RESTORE_RETRY_SECONDS = 1.0


def open_store(config: Config, url: str | None) -> Store:
    """The Redis store on ``url``, else the in-memory store with a loud warning."""
    if not url:
        why = (
            "OASIS_STORE=memory" if config.store == "memory" else "no REDIS_URL and no redis-server"
        )
        oasis_logging.get().warning(
            "memory_store",
            detail=f"NO PERSISTENCE: {why}; rooms live in memory and die with the process",
        )
        return MemoryStore()
    return RedisStore(
        url,
        timeout=config.redis_timeout,
        chat_keep=config.chat_log,
        cluster=config.redis_cluster and url == config.redis_url,
        allow_volatile=config.allow_volatile_redis,
        archive_ttl=config.archive_ttl_days * 86400.0,
        fence=fence_of(config),  # the node's lease token: the cluster's leases use it
    )


async def restore_rooms(app: App, stop: asyncio.Event | None = None) -> None:
    """Every unfinished room of a Redis store back in the lobby; failures are logged per room.

    A Redis that cannot be read is waited for (every second) until ``stop`` is set."""
    if not isinstance(app.store, RedisStore):
        return
    log = oasis_logging.get()
    while True:
        try:
            restored, failed = await restore_all(app.store)
            break
        except StoreError as exc:
            log.error("restore_waiting_for_redis", error=str(exc))
            if stop is not None and stop.is_set():
                return
            await asyncio.sleep(RESTORE_RETRY_SECONDS)
    for item in restored:
        record = item.record
        app.lobby.restore(record.room, record.info, item.match, item.rev, record.chat)
    for error in failed:
        log.error("room_not_restored", room=error.room, error=str(error))
    log.info("rooms_restored", restored=len(restored), failed=len(failed))


def freeze_start_up() -> None:
    """Everything alive now into the collector's permanent generation (:func:`gc.freeze`), after
    a full collection so no garbage goes with it: the modules, classes and functions, the
    engines' caches, the store's pool. They live as long as the process, and a full collection
    walked them all each time (about 51,000 objects before a single room). The restored rooms
    are made after it, so their cycles are still collected once they are gone (with the
    ``freeze`` policy, :mod:`server.collector`, by its full collections, which unfreeze
    everything first)."""
    gc.collect()
    gc.freeze()


def start_collector(config: Config, app: App | None = None) -> asyncio.Task[None] | None:
    """The cyclic garbage collector's policy for serving (``OASIS_GC``, :mod:`server.collector`):
    with ``freeze`` the task that looks at it (the caller cancels it at the end), and the
    settle pass after a burst of rooms (:mod:`server.trim`) collects the frozen objects too."""
    if config.gc != "freeze":
        tune_gc(config.gc_young)
        return None
    collector = Collector(config.gc_young)
    collector.start()
    if app is not None:
        app.lobby.trimmer.collect = collector.full
    return asyncio.get_running_loop().create_task(collector.run(), name="gc-freeze")


async def start_rooms(app: App, stop: asyncio.Event) -> None:
    """On Redis, the node's share of rooms under leases (:mod:`server.cluster`); else nothing."""
    if not isinstance(app.store, RedisStore):
        return
    app.cluster = Cluster(app, app.store, app.config)
    if not app.config.redis_cluster:  # (redis-py's asyncio cluster client has no pub/sub)
        rooms = app.lobby.rooms
        app.publisher = app.lobby.publish = Publisher(app.store, rooms)
        app.publisher.start()
        app.relay = Relay(
            app.store,
            app.quotas,
            app.cluster.node,
            app.config.relay_drop_every,
            lambda: {r.id: len(r.spectators) for r in rooms.values() if len(r.spectators)},
            (app.config.chat_per_minute, app.config.room_chat_per_minute),
        )
        app.relay.start()
    await app.cluster.start(stop, retry=RESTORE_RETRY_SECONDS)


async def run(config: Config, url: str | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    store = open_store(config, url)
    await store.start()
    app = App(config, store)
    load_engines()  # (App.start warms them again, a few ms: the tests' apps start without this)
    # (whether the hot paths run compiled: scripts/build-compiled, the image; README "Layout")
    oasis_logging.get().info("compiled_modules", compiled=compiled_modules())
    freeze_start_up()
    gc.disable()
    try:
        await start_rooms(app, stop)
    finally:
        gc.enable()
    collecting = start_collector(config, app)
    try:
        if stop.is_set():
            await store.close()
            return
        await app.start()
        await stop.wait()
        await app.stop()
    finally:
        if collecting is not None:
            collecting.cancel()


PROJECT = ("protocol", "games", "server", "clients", "oasis")


def compiled_modules() -> list[str]:
    """The project's imported modules that run compiled (C extensions built by mypyc:
    ``scripts/build-compiled``, the image), read from their ``__file__``; an empty list is pure
    Python. mypyc's shared libraries (``*.native__mypyc``) are not modules of the project."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in PROJECT
        and not name.endswith("__mypyc")
        and str(getattr(module, "__file__", None) or "").endswith(suffixes)
    )


def run_loop(config: Config, main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on the event loop ``config.loop`` names (uvloop only if it is installed)."""
    if config.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            oasis_logging.get().warning("uvloop_missing", detail="running on the asyncio loop")
        else:
            uvloop.run(main)
            return
    asyncio.run(main)


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(argv)
    oasis_logging.configure(config.log_format, config.log_level)
    embedded: EmbeddedRedis | None = None
    url: str | None = config.redis_url or None
    if config.store == "memory":
        url = None
    elif url is None:
        try:
            embedded = start_embedded(config.redis_dir)
        except EmbeddedRedisError as exc:
            oasis_logging.get().error("embedded_redis_failed", error=str(exc))
            sys.exit(1)
        url = None if embedded is None else embedded.url
    try:
        run_loop(config, run(config, url))
    finally:
        if embedded is not None:
            embedded.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
