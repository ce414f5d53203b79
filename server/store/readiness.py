"""Whether Redis may be trusted with acknowledged choices now: it answers, persists, same data.

The Redis store (:mod:`server.store.redis`) runs its calls and tells :class:`Readiness` how
each went (:meth:`Readiness.set_ready`); this module decides what ``ready()`` and ``problem()``
say (what ``/readyz`` reports), probes a Redis that went away, and checks durability.

Redis trouble. Every call of the store is bounded: socket and connect timeouts of ``timeout``
seconds, one immediate retry on a dropped connection only, and an overall deadline; any
connection error or timeout raises :class:`~server.store.StoreError` (so the room refuses the
choice with ``unavailable`` and acknowledges nothing), marks the store not ready (``ready()`` is
what ``/readyz`` reports) and starts a background probe that writes a tiny key every
``probe_interval`` seconds until Redis stores it again (a PING would call a read-only replica or
a full Redis ready); listeners registered with :meth:`Readiness.on_ready_change` hear both
transitions so rooms can pause and tell their clients. Logical refusals (wrong rev, room gone)
raise StoreError subclasses but leave ``ready()`` alone: Redis did answer.

Durability, checked rather than assumed (:meth:`Readiness.verify`). At start, before a Redis that
went away counts as ready again (the probe), whenever redis-py opens a new connection (it
reconnects by itself after a drop, so a quick Redis restart may fail no call at all), and every
``watch_interval`` seconds, the store asks:

- **Does Redis persist?** ``CONFIG GET appendonly`` (a Redis that refuses CONFIG, as managed ones
  do, is asked ``INFO persistence``'s ``aof_enabled``). Without the append-only file a restart of
  Redis loses every acknowledged choice, so :meth:`Readiness.problem` names the setting and
  ``/readyz`` answers 503 (rooms go on: Redis does store, only not durably), unless
  ``allow_volatile`` (``OASIS_ALLOW_VOLATILE_REDIS``, for tests and development) accepts it. RDB
  snapshots alone are not enough: they lose the writes since the last save.
- **Is it the same data?** A marker key (``P:marker``, a random token written once with NX, no
  expiry) is read back and compared with the token seen before. A different or missing marker
  means Redis came back empty (a restart without persistence, a FLUSHALL, a failover to an empty
  replica): every listener of :meth:`Readiness.on_lost` is awaited (the lobby pauses the rooms
  whose keys are gone, with ``storage_lost``, and logs what was lost) before the store counts as
  ready, then the new marker is adopted so new rooms play on. Redis's ``run_id`` is logged beside
  it (changed: Redis restarted; the same: it was flushed). On a Redis Cluster the marker lives in
  one slot, so an emptied node that does not hold it is found per room instead: an append that
  finds the room's meta gone raises :class:`~server.store.RoomGoneError`, which the room takes
  for lost storage too.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError

from server.store import keys

__all__ = ["Readiness"]


class Readiness:
    """The health of one Redis client: ready, the durability problem, the losses seen."""

    def __init__(
        self,
        redis: Any,
        prefix: str,
        *,
        deadline: float,
        probe_interval: float,
        allow_volatile: bool,
        watch_interval: float,
        log: Any,
        housekeeping: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._redis = redis
        self._prefix = prefix
        self._deadline = deadline
        self._probe_interval = probe_interval
        self._log = log
        self._housekeeping = housekeeping
        """Awaited every ``watch_interval`` (the store trims its connection pool)."""
        self._ready: bool | None = None
        self._probe: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[bool], None]] = []
        self._closed = False
        self._allow_volatile = allow_volatile
        self._problem = ""
        """Why Redis is not trusted with acknowledged choices ("" when it persists them)."""
        self._marker: bytes | None = None
        """The marker token seen last (None before the first check)."""
        self._run_id = ""
        self._volatile_told = False
        self._lost_listeners: list[Callable[[str], Awaitable[None]]] = []
        self._watch_interval = watch_interval
        self._watch: asyncio.Task[None] | None = None
        self._verifying: asyncio.Task[None] | None = None
        self._verify_again = False
        self.losses = 0
        """How many times Redis was found emptied."""

    def ready(self) -> bool:
        """Whether Redis answered the last call (or the probe). Unknown at first: probe now."""
        if self._ready is None:
            self._start_probe()
            return False
        return self._ready

    async def start(self) -> None:
        """Probe and verify once so ``ready()`` is known at start-up (keep probing in the
        background if not), then watch Redis's durability every ``watch_interval`` seconds."""
        try:
            async with asyncio.timeout(self._deadline):
                await self._write_probe()
            await self.verify()
        except (RedisError, OSError, TimeoutError) as exc:
            self._log.warning("redis_unavailable_at_start", error=f"{type(exc).__name__}: {exc}")
            self.set_ready(False, f"{type(exc).__name__}: {exc}")
        else:
            self.set_ready(True, verified=True)
        if self._watch_interval > 0 and self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(self._watch_loop())

    def connected(self) -> None:
        """redis-py opened a new connection (after a drop it reconnects on its own, so a
        restarted Redis may never fail a call): verify again, in the background, once."""
        if self._marker is not None and not self._closed:
            self._schedule_verify()

    def _schedule_verify(self) -> None:
        if self._verifying is not None and not self._verifying.done():
            self._verify_again = True
            return
        self._verifying = asyncio.get_running_loop().create_task(self._verify_soon())

    async def _verify_soon(self) -> None:
        while True:
            self._verify_again = False
            try:
                await self.verify()
            except (RedisError, OSError) as exc:
                self._log.debug("verify_failed", error=f"{type(exc).__name__}: {exc}")
            if not self._verify_again or self._closed:
                return

    def problem(self) -> str:
        """Why this Redis is not trusted with acknowledged choices ("": it persists them, or
        ``allow_volatile`` accepts that it does not); ``/readyz`` answers 503 while it is set."""
        return self._problem

    def on_lost(self, listener: Callable[[str], Awaitable[None]]) -> None:
        """Await ``listener(detail)`` when Redis is found emptied (see "Durability")."""
        self._lost_listeners.append(listener)

    async def verify(self) -> None:
        """Check persistence and the marker (see "Durability"); raises what Redis raises."""
        async with asyncio.timeout(self._deadline):
            persists = await self._persistence()
            pipe = self._redis.pipeline(transaction=False)
            pipe.set(keys.marker(self._prefix), secrets.token_hex(16).encode(), nx=True)
            pipe.get(keys.marker(self._prefix))
            # The run id in the same round trip as the marker: both from one server. Read
            # apart, a restart falling between them paired the old marker with the new run
            # id, and the next check then took a restart for a FLUSHALL.
            # (Redis Cluster refuses INFO in a pipeline: there it stays a call of its own.)
            clustered = isinstance(self._redis, RedisCluster)
            if not clustered:
                pipe.info("server")
            answers = await pipe.execute(raise_on_error=False)
            for result in answers[:2]:
                if isinstance(result, Exception):
                    raise result
            marker = answers[1]
            info = await self._server_info() if clustered else answers[2]
            run_id = _run_id_of(info)
        self._set_problem(persists)
        seen, self._marker = self._marker, marker
        previous_run, self._run_id = self._run_id, run_id
        if seen is None or marker == seen:
            return
        self.losses += 1
        restarted = bool(previous_run) and run_id != previous_run
        detail = (
            f"Redis restarted without its data (run id {previous_run or '?'} -> {run_id or '?'})"
            if restarted
            else f"Redis was emptied (FLUSHALL or a failover; run id {run_id or '?'})"
        )
        self._log.error("redis_data_lost", detail=detail)
        for listener in list(self._lost_listeners):
            try:
                await listener(detail)
            except Exception:  # one listener's bug must not stop the others or the probe
                self._log.exception("lost_listener_failed")

    async def _persistence(self) -> str:
        """ "" if Redis writes an append-only file, else what it says instead."""
        try:
            got = await self._redis.config_get("appendonly")
            value = _text(next(iter(got.values()), "")) if got else ""
            if value:
                return "" if value == "yes" else f"appendonly is {value!r}"
        except ResponseError:
            pass  # CONFIG refused (managed Redis, ACLs): ask INFO
        try:
            info = await self._redis.info("persistence")
        except ResponseError as exc:
            return f"cannot tell whether it persists (CONFIG and INFO refused: {exc})"
        if isinstance(info, dict) and "aof_enabled" in info:
            return "" if str(info["aof_enabled"]) == "1" else "aof_enabled is 0"
        return "cannot tell whether it persists (INFO persistence has no aof_enabled)"

    async def _server_info(self) -> Any:
        try:
            return await self._redis.info("server")
        except ResponseError as exc:
            return exc

    def _set_problem(self, persists: str) -> None:
        problem = ""
        if persists:
            why = f"redis does not persist acknowledged choices ({persists})"
            if self._allow_volatile:
                if not self._volatile_told:
                    self._log.warning(
                        "redis_volatile_allowed", detail=why, setting="OASIS_ALLOW_VOLATILE_REDIS"
                    )
                self._volatile_told = True
            else:
                problem = why
        if problem != self._problem:
            if problem:
                self._log.error(
                    "redis_volatile",
                    detail=problem,
                    fix="turn the append-only file on (appendonly yes), or set "
                    "OASIS_ALLOW_VOLATILE_REDIS=1 where losing every match on a restart is fine",
                )
            else:
                self._log.info("redis_persists")
            self._problem = problem

    async def _watch_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self._watch_interval)
            if self._housekeeping is not None:
                await self._housekeeping()
            if self._ready is not True:
                continue  # the probe verifies before Redis counts as ready again
            try:
                await self.verify()
            except (RedisError, OSError, TimeoutError) as exc:
                self._log.debug("verify_failed", error=f"{type(exc).__name__}: {exc}")

    def on_ready_change(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(ready)`` on every transition (from the event loop)."""
        self._listeners.append(listener)

    def set_ready(self, ready: bool, why: str = "", *, verified: bool = False) -> None:
        """Redis answered (``ready``) or did not (``why``); see "Redis trouble"."""
        if ready == self._ready:
            return
        if ready and not verified:
            # A Redis that was away (or never checked) counts as ready only once the probe has
            # verified it: it may have come back empty, or without persistence.
            self._start_probe()
            return
        before, self._ready = self._ready, ready
        if ready:
            self._log.info("redis_ready")
        else:
            self._log.error("redis_unavailable", error=why)
            self._start_probe()
        if before is not None or not ready:
            for listener in list(self._listeners):
                listener(ready)

    def _start_probe(self) -> None:
        if self._closed or (self._probe is not None and not self._probe.done()):
            return
        try:
            self._probe = asyncio.get_running_loop().create_task(self._probe_loop())
        except RuntimeError:
            return  # no loop (a synchronous caller): the next call will tell

    async def _probe_loop(self) -> None:
        first = self._ready is None
        while not self._closed and self._ready is not True:
            if not first:
                await asyncio.sleep(self._probe_interval)
            first = False
            try:
                async with asyncio.timeout(self._deadline):
                    await self._write_probe()
                await self.verify()
            except (RedisError, OSError, TimeoutError) as exc:
                self.set_ready(False, f"{type(exc).__name__}: {exc}")
                continue
            self.set_ready(True, verified=True)

    async def _write_probe(self) -> None:
        """A write, not a PING: a read-only replica or a full Redis answers PING but stores
        nothing, and must not count as ready."""
        await self._redis.set(keys.probe(self._prefix), b"1", px=60_000)

    async def close(self) -> None:
        """Stop watching and verifying (the probe goes on until :meth:`stop_probe`)."""
        self._closed = True
        for task in (self._watch, self._verifying):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def stop_probe(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._probe


def _run_id_of(info: Any) -> str:
    """The ``run_id`` of an ``INFO server`` answer ("" where the server refuses INFO)."""
    if isinstance(info, ResponseError):
        return ""
    if isinstance(info, Exception):
        raise info
    if isinstance(info, dict):
        return _text(info.get("run_id", ""))
    return ""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
