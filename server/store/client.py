"""One bounded Redis client: every call under a deadline, every failure a StoreError.

The Redis store (:mod:`server.store.redis`), the leases and the relay all call Redis through
:meth:`Client.run`: socket and connect timeouts of ``timeout`` seconds, one immediate retry on
a dropped connection only, an overall deadline of three timeouts. A connection error or a
timeout raises :class:`~server.store.StoreError` and tells :class:`Readiness` that Redis is
away; an error reply becomes the StoreError of its kind (:meth:`Client.refused`: the scripts'
``OASIS_*`` tags of :mod:`server.store.scripts`), and tells Readiness that Redis answered,
unless it refuses to write (a replica, out of memory, a failing disk).

The group commit's batches go through :meth:`Client.commit`: the same deadline, mapping and
readiness, the deadline kept by :class:`Deadlines` (one loop timer for every batch of the
client) instead of an ``asyncio.timeout`` context per call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import (
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    ResponseError,
)
from redis.maint_notifications import MaintNotificationsConfig

from server.store.errors import NotOwnerError, RevisionError, RoomGoneError, StoreError
from server.store.lane import Lane
from server.store.readiness import Readiness

__all__ = [
    "POOL_IDLE_KEEP",
    "Call",
    "Client",
    "Deadline",
    "Deadlines",
    "bulk",
    "evalsha_head",
    "script_call",
]

POOL_IDLE_KEEP: Final = 32
"""Idle pooled Redis connections kept between bursts (:meth:`Client.trim_pool`)."""


@dataclass(slots=True, init=False)
class Call:
    """One script call of the group commit (a :class:`~server.store.commit.GroupCommit`
    payload, sent by :meth:`Client.commit`): redis-py's registered script (loaded again if
    Redis lost it), its whole ``EVALSHA`` command as RESP bytes, packed when the call is made
    (:func:`script_call`, or by whoever knows its bytes better: an append,
    :meth:`.Writes.append_action`), and ``room``: the room whose lease fences the call ("" if
    none), told to :attr:`.Writes.on_not_owner` when Redis refuses it for that lease.

    Never changed once made; not a frozen dataclass, whose fields cost ``object.__setattr__``
    each (about 4,800 instructions per write): its own ``__init__``, compiled, as
    :class:`~server.store.records.Action`."""

    script: Any
    command: bytes
    room: str

    def __init__(self, script: Any, command: bytes, room: str = "") -> None:
        self.script, self.command, self.room = script, command, room


def script_call(
    script: Any,
    keys: Sequence[Any],
    args: Sequence[Any],
    head: bytes | None = None,
    room: str = "",
) -> Call:
    """The :class:`Call` of ``script`` with ``keys`` and ``args`` (``str``, ``bytes``, ``int``;
    ``head``: see :func:`_evalsha`)."""
    return Call(script, _evalsha(script, keys, args, head), room)


class Deadline:
    """One call under :class:`Deadlines`: its task (None once the call is over), when it falls
    due, the task's count of cancellation requests when it started, and whether the timer
    cancelled it."""

    __slots__ = ("cancelling", "due", "expired", "task")

    def __init__(self, task: asyncio.Task[Any], due: float) -> None:
        self.task: asyncio.Task[Any] | None = task
        self.due = due
        self.cancelling = task.cancelling()
        self.expired = False


class Deadlines:
    """What ``asyncio.timeout(seconds)`` does for one call, for every call of a client, on one
    loop timer.

    Each call is entered (:meth:`enter`) in the task that awaits it and left (:meth:`leave`)
    however it ends. When a call falls due first, its task is cancelled; leaving it then takes
    that request back (``Task.uncancel``) and says whether the cancellation was the deadline's
    alone, which the caller raises as :class:`TimeoutError`: a cancellation from elsewhere, made
    before or meanwhile, still propagates. ``asyncio.timeout`` decides it the same way.

    Every call has the same length, so the calls fall due in the order they started: they are
    kept in that order, and the timer is set for the oldest one running, set again for the next
    when it fires. A call costs a clock reading and a queue entry, not ``asyncio.timeout``'s
    interpreted context (its timer, its task bookkeeping and, on Python 3.11, a ``getpid()``
    system call to find the running loop: about 27,000 instructions per group-commit batch,
    BENCHMARKS.md). The loop is the one of the first call, kept: a client serves one loop."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._running: deque[Deadline] = deque()
        """The calls by start, the oldest first (with those over but not yet at the front)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._armed = 0.0
        """The loop time the timer is set for."""

    def enter(self) -> Deadline:
        """Start the deadline of a call awaited by the current task."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        task = _CURRENT_TASKS.get(loop) if _CURRENT_TASKS is not None else None
        if task is None:
            task = asyncio.current_task(loop)
            if task is None:
                raise RuntimeError("a deadline is kept for a task")
        deadline = Deadline(task, loop.time() + self.seconds)
        self._running.append(deadline)
        if self._timer is None:
            self._armed = deadline.due
            self._timer = loop.call_at(deadline.due, self._expire)
        return deadline

    def leave(self, deadline: Deadline) -> bool:
        """The call is over: whether the timer cancelled its task and nothing else asked to (the
        caller then raises the call's CancelledError as a TimeoutError)."""
        task, deadline.task = deadline.task, None
        running = self._running
        while running and running[0].task is None:
            running.popleft()
        if not deadline.expired or task is None:
            return False
        return task.uncancel() <= deadline.cancelling

    def _expire(self) -> None:
        """The timer fired: cancel the task of every call due by then, and set the timer for the
        oldest call still running."""
        self._timer = None
        loop, running = self._loop, self._running
        if loop is None:
            return
        now = max(loop.time(), self._armed)  # (the loop's clock may read a hair before it)
        while running:
            deadline = running[0]
            task = deadline.task
            if task is not None:
                if deadline.due > now:
                    self._armed = deadline.due
                    self._timer = loop.call_at(deadline.due, self._expire)
                    return
                deadline.expired = True
                task.cancel()
            running.popleft()

    def close(self) -> None:
        """Stop the timer (the client is closing; a call still running keeps no deadline)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Client:
    """The redis-py client of one store (a blocking pool, or a Redis Cluster client) and its
    :class:`Readiness`."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        timeout: float,
        probe_interval: float,
        cluster: bool,
        pool_size: int,
        allow_volatile: bool,
        watch_interval: float,
        log: Any,
    ) -> None:
        # One immediate retry on a dropped connection (a Redis restart leaves stale pooled
        # connections); never on a timeout, which would only double the wait. Appends are
        # idempotent, so a retried write cannot store a choice twice.
        retry = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
        self.redis: Any
        if cluster:
            from redis.asyncio.cluster import RedisCluster

            self.redis = RedisCluster.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=retry
            )
        else:
            # Every room has at most one write in flight, so busy servers hold many connections
            # at once. A blocking pool makes a write wait for a free connection (within the
            # call's deadline) instead of failing: a full pool is load, not Redis being down,
            # and must not pause every room (redis-py's default pool raises past 100).
            pool = aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=pool_size,
                timeout=3 * timeout,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=retry,
                redis_connect_func=self._connected,
                # Off: Redis Enterprise's maintenance notices are not used here, and their
                # handlers and the connection refer to each other, so every connection that
                # trim_pool closes would wait for a full collection to be freed.
                maint_notifications_config=MaintNotificationsConfig(enabled=False),
            )
            self.redis = aioredis.Redis.from_pool(pool)
        self.deadline = 3 * timeout
        self._timeout = timeout
        self._deadlines = Deadlines(self.deadline)
        """The deadline of :meth:`commit`'s calls."""
        self._lane = Lane(getattr(self.redis, "connection_pool", None), timeout)
        """The group commit's own pooled connection, pipelined (:meth:`commit`)."""
        self._resident: set[Any] = set()
        """The pooled connections opened at start-up (:meth:`open_pool`), kept by trims."""
        self.health = Readiness(
            self.redis,
            prefix,
            deadline=self.deadline,
            probe_interval=probe_interval,
            allow_volatile=allow_volatile,
            watch_interval=watch_interval,
            log=log,
            housekeeping=self.trim_pool,
        )

    async def _connected(self, connection: Any) -> None:
        """redis-py's hook on every new connection: Readiness verifies again."""
        await connection.on_connect()
        self.health.connected()

    async def run(self, what: str, op: Callable[[], Awaitable[Any]]) -> Any:
        """Run one bounded Redis call; map every failure to StoreError and track readiness."""
        try:
            async with asyncio.timeout(self.deadline):
                result = await op()
        except (RedisError, OSError) as exc:
            raise self.failed(what, exc) from exc
        self.health.set_ready(True)
        return result

    async def commit(self, what: str, calls: Sequence[Call]) -> list[Any]:
        """The group commit's batch: script calls (any mix), the replies in order, errors as
        values; under :meth:`run`'s deadline,
        error mapping and readiness, the deadline kept by :class:`Deadlines` instead of an
        ``asyncio.timeout`` context.

        One connection serves the group commit, several batches in flight on it: held for good
        (no checkout and release per batch), its commands packed when each call was made
        (:class:`Call`), written at once and their replies parsed as they arrive
        (:class:`~server.store.lane.Lane`), instead of redis-py's per-call path (its pipeline,
        retry, encoder and a timeout per reply: most of what the Redis log cost per action,
        BENCHMARKS.md). A dropped connection is retried once on a new one, as redis-py's pool
        does (every call is idempotent), and a Redis that lost its scripts gets them loaded and
        those calls sent again, once. All in this one coroutine: each level of coroutine is one
        more object per batch and one more frame every step of it goes through."""
        deadline = self._deadlines.enter()
        try:
            try:
                commands = [c.command for c in calls]
                lane = self._lane
                try:
                    result = await lane.round_trip(commands)
                except RedisConnectionError:
                    result = await lane.round_trip(commands)  # (a stale connection: once more)
                for reply in result:
                    if isinstance(reply, NoScriptError):
                        scripts = [call.script for call in calls]
                        result = await self._again(scripts, result, self._commit_send(calls))
                        break
            except BaseException as stopped:
                if self._deadlines.leave(deadline) and isinstance(stopped, asyncio.CancelledError):
                    raise TimeoutError from stopped
                raise
            self._deadlines.leave(deadline)
        except (RedisError, OSError) as exc:
            raise self.failed(what, exc) from exc
        self.health.set_ready(True)
        return result

    async def scripts(self, what: str, calls: Sequence[Call]) -> list[Any]:
        """:meth:`commit`'s batch with the first error reply raised as its StoreError, as
        :meth:`run` raises a redis-py pipeline's (:meth:`outcome`); the replies in order
        otherwise. The leases' script calls (:mod:`server.lease`) and the relay's spectator
        counts (:mod:`server.relay.counts`) on a single Redis: packed by :func:`script_call`
        and sent on the group commit's connection, not through redis-py's pipeline, whose
        every command costs about 120,000 instructions (its packing, response callbacks and a
        timeout context per reply): a lease released at every match's end and renewed for every
        room three times per ttl, the counts written every two seconds."""
        replies = await self.commit(what, calls)
        for reply in replies:
            if isinstance(reply, Exception):
                error = self.outcome(what, reply)
                if error is not None:
                    raise error
        return replies

    def failed(self, what: str, exc: BaseException) -> StoreError:
        """The StoreError for a call that failed: an error reply :meth:`refused`, anything
        else (the connection lost, the deadline, an OS error) :meth:`unavailable`."""
        if isinstance(exc, ResponseError):
            return self.refused(what, exc)
        return self.unavailable(what, exc)

    def unavailable(self, what: str, lost: BaseException) -> StoreError:
        """The StoreError for a call that got no answer (the connection lost, the deadline, an
        OS error): Readiness is told Redis is away."""
        why = f"{type(lost).__name__}: {lost}" if str(lost) else type(lost).__name__
        self.health.set_ready(False, why)
        return StoreError(f"{what}: redis is unavailable ({why})")

    def refused(self, what: str, exc: ResponseError) -> StoreError:
        """The StoreError for a Redis error reply (a script's OASIS_* refusals by kind)."""
        text = str(exc)
        if _unwritable(exc):
            self.health.set_ready(False, text)
            return StoreError(f"{what}: redis refuses writes ({text})")
        self.health.set_ready(True)
        if "OASIS_REV" in text:
            return RevisionError(f"{what}: {text.split('OASIS_REV', 1)[1].strip()}")
        if "OASIS_LEASE" in text:
            return NotOwnerError(f"{what}: {text.split('OASIS_LEASE', 1)[1].strip()}")
        if "OASIS_GONE" in text:
            return RoomGoneError(f"{what}: {text.split('OASIS_GONE', 1)[1].strip()}")
        return StoreError(f"{what}: redis refused: {text}")

    async def open_pool(self) -> None:
        """Open :data:`POOL_IDLE_KEEP` pooled connections now, at start-up (not a cluster), and
        the group commit's own (:meth:`commit`).

        These are the connections :meth:`trim_pool` keeps: made before the server listens, their
        objects lie in the allocator's arenas of start-up. Made by the first burst of rooms
        instead, the few that stay pin that burst's arenas, resident after its rooms are gone
        (``bench/memory.py``). A Redis that is away leaves the pool to fill on demand."""
        pool = getattr(self.redis, "connection_pool", None)
        if pool is None or not hasattr(pool, "_available_connections"):
            return
        got: list[Any] = []
        try:
            async with asyncio.timeout(self.deadline):
                for _ in range(POOL_IDLE_KEEP + 1):
                    got.append(await pool.get_connection())
        except (RedisError, OSError, TimeoutError):
            pass
        except BaseException:  # (cancelled: what was taken goes back all the same)
            await self._keep(pool, got)
            raise
        # (Not in a ``finally``: compiled, an ``await`` there re-raised the error just handled,
        # when called from compiled code; tests/test_compiled.py keeps such blocks out.)
        await self._keep(pool, got)

    async def _keep(self, pool: Any, got: list[Any]) -> None:
        """The connections :meth:`open_pool` opened: one held by the group commit, the rest
        back to the pool as the lasting set."""
        if len(got) > POOL_IDLE_KEEP:  # one more: the group commit's, held (never idle)
            self._lane.hold(got.pop())
        for connection in got:
            await pool.release(connection)
        self._resident = set(got)

    async def trim_pool(self) -> None:
        """Close the idle pooled connections beyond :data:`POOL_IDLE_KEEP`.

        A burst (thousands of rooms writing at once) grows the pool to hundreds of connections,
        each with its buffers (about 60 KiB: 1,000 rooms left 436 of them, 26 MiB); redis-py never
        shrinks a pool, so the store does, every ``watch_interval``. Those opened at start-up
        (:meth:`open_pool`) stay, and are put last, where the pool takes its next connection from
        (it hands out its most recent first), so the burst's are idle at the next trim; then the
        least recently used go. Nothing awaits between picking and removing them, so no call can
        take one meanwhile."""
        pool = getattr(self.redis, "connection_pool", None)
        free = getattr(pool, "_available_connections", None)
        if not isinstance(free, list):
            return
        resident = self._resident
        free.sort(key=lambda connection: connection in resident)  # (stable: LRU order kept)
        if len(free) <= POOL_IDLE_KEEP:
            return
        extra = free[: len(free) - POOL_IDLE_KEEP]
        del free[: len(extra)]
        for connection in extra:
            with contextlib.suppress(Exception):
                await connection.disconnect()

    def outcome(self, what: str, reply: Any) -> StoreError | None:
        """One reply of a pipeline run with ``raise_on_error=False``: None, or its StoreError."""
        if isinstance(reply, ResponseError):
            return self.refused(what, reply)
        if isinstance(reply, Exception):
            return StoreError(f"{what}: {reply}")
        return None

    async def pipeline_script(
        self, script: Any, calls: Sequence[tuple[Sequence[Any], Sequence[Any]]]
    ) -> list[Any]:
        """One pipeline of ``script`` (redis-py's registered script) with each ``(keys, args)``
        of ``calls``, the replies in order, errors as values (see :meth:`pipeline_scripts`)."""
        return await self.pipeline_scripts([(script, names, args) for names, args in calls])

    async def pipeline_scripts(
        self, calls: Sequence[tuple[Any, Sequence[Any], Sequence[Any]]]
    ) -> list[Any]:
        """One pipeline of ``(script, keys, args)`` calls (redis-py's registered scripts, any
        mix), the replies in order, errors as values; a Redis that lost its scripts (a restart)
        gets the refused ones loaded and those calls sent again, once."""

        async def send(todo: list[int]) -> list[Any]:
            pipe = self.redis.pipeline(transaction=False)
            for i in todo:
                script, names, args = calls[i]
                pipe.evalsha(script.sha, len(names), *names, *args)
            return list(await pipe.execute(raise_on_error=False))

        return await self._with_scripts(calls, send)

    async def _with_scripts(
        self,
        calls: Sequence[tuple[Any, Sequence[Any], Sequence[Any]]],
        send: Callable[[list[int]], Awaitable[list[Any]]],
    ) -> list[Any]:
        """The replies of ``calls`` sent by ``send`` (the indices of the calls to send, their
        replies in order); the calls Redis refused for lack of their script (a restart) get it
        loaded and are sent again, once (:meth:`_again`)."""
        scripts = [call[0] for call in calls]
        return await self._again(scripts, await send(list(range(len(calls)))), send)

    async def _again(
        self,
        scripts: Sequence[Any],
        replies: list[Any],
        send: Callable[[list[int]], Awaitable[list[Any]]],
    ) -> list[Any]:
        """``replies`` (one per call, whose scripts are ``scripts``), those Redis refused for
        lack of their script (a restart) replaced: the scripts loaded, those calls sent again by
        ``send``, once."""
        todo = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if not todo:
            return replies
        for script in {id(scripts[i]): scripts[i] for i in todo}.values():
            await self.redis.script_load(script.script)
        replies = list(replies)
        for i, reply in zip(todo, await send(todo), strict=True):
            replies[i] = reply
        return replies

    def _commit_send(self, calls: Sequence[Call]) -> Callable[[list[int]], Awaitable[list[Any]]]:
        """The sender of :meth:`_again` for :meth:`commit`'s calls: those of ``calls`` at the
        indices given, on the group commit's connection (a dropped one retried once)."""

        async def send(todo: list[int]) -> list[Any]:
            again = [calls[i] for i in todo]
            commands = [c.command for c in again]
            try:
                return await self._lane.round_trip(commands)
            except RedisConnectionError:
                return await self._lane.round_trip(commands)  # (a stale connection: once more)

        return send

    async def close(self) -> None:
        self._deadlines.close()
        await self.health.stop_probe()
        with contextlib.suppress(Exception):
            await self._lane.close()
        await self.redis.aclose()


def _evalsha(
    script: Any, names: Sequence[Any], args: Sequence[Any], head: bytes | None = None
) -> bytes:
    """The RESP bytes of ``EVALSHA sha numkeys *names *args`` (``str``, ``bytes``, ``int``),
    hiredis's ``pack_command``'s bytes (tested), written here: an array header, then each
    argument as a bulk string, a ``str`` in UTF-8, an ``int`` in decimal, each piece put in
    one list joined once (the command's name and its script's digest as made before; with
    ``head``, everything from the name through the keys as given). Compiled, this costs a
    fraction of ``pack_command``'s call (its tuple of the arguments, then C strings grown piece
    by piece: about 13,800 instructions per append). A float (none is sent) is written as its
    ``repr``, as hiredis does; anything else raises TypeError, as there."""
    parts: list[bytes] = [
        b"*%d\r\n" % (3 + len(names) + len(args)),
        evalsha_head(script, names) if head is None else head,
    ]
    for arg in args:
        _put(parts, arg)
    return b"".join(parts)


def evalsha_head(script: Any, names: Sequence[Any]) -> bytes:
    """The bytes of ``EVALSHA sha numkeys *names`` as :func:`_evalsha` writes them after the
    array header: what a :class:`Call` keeps as its ``head``."""
    sha = script.sha
    named = _HEADS.get(sha)
    if named is None:
        named = _HEADS[sha] = _EVALSHA + bulk(sha)
    parts: list[bytes] = [named]
    _put(parts, len(names))
    for name in names:
        _put(parts, name)
    return b"".join(parts)


def _put(parts: list[bytes], value: object) -> None:
    """Add one RESP bulk string, ``$<length>\r\n<bytes>\r\n``, to ``parts`` in pieces."""
    if isinstance(value, str):
        data = value.encode()
    elif isinstance(value, bytes):
        data = value
    elif isinstance(value, int) and not isinstance(value, bool):
        data = b"%d" % value
    elif isinstance(value, float):
        data = repr(value).encode()
    else:
        raise TypeError(
            f"a Redis argument must be str, bytes, int or float, not {type(value).__name__}"
        )
    n = len(data)
    parts.append(_LENGTHS[n] if n < _KNOWN_LENGTHS else b"$%d\r\n" % n)
    parts.append(data)
    parts.append(b"\r\n")


def bulk(value: object) -> bytes:
    """One RESP bulk string (as :func:`_evalsha` writes each argument)."""
    parts: list[bytes] = []
    _put(parts, value)
    return b"".join(parts)


def evalsha_append(head: bytes, keys: int, rev: int, blob: bytes, token: bytes) -> bytes:
    """``_evalsha(script, names, [rev, blob, token], head)`` for a ``head`` of ``keys`` names
    and ``token`` given as its bulk string (:func:`bulk`): an append's command without meta
    fields (tested against it), in one piece. Compiled, one formatting of bytes and ints is
    one allocation of the result and a copy of each piece (mypyc's ``CPyBytes_Build``):
    :func:`_evalsha` put the same bytes in a list of eleven pieces to join, about 9,000
    instructions per append with its pieces' objects."""
    digits = b"%d" % rev
    return b"*%d\r\n%b$%d\r\n%b\r\n$%d\r\n%b\r\n%b" % (
        keys + 6,
        head,
        len(digits),
        digits,
        len(blob),
        blob,
        token,
    )


_EVALSHA: Final = b"$7\r\nEVALSHA\r\n"
_KNOWN_LENGTHS: Final = 256
_LENGTHS: Final = tuple(b"$%d\r\n" % n for n in range(_KNOWN_LENGTHS))
"""The bulk strings' length headers of the usual lengths, made once."""
_HEADS: Final[dict[str, bytes]] = {}
"""``EVALSHA`` and the digest, by digest: one per script of the store."""


_CURRENT_TASKS: Final[dict[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None] = getattr(
    asyncio.tasks, "_current_tasks", None
)
"""asyncio's task running in each loop, read directly where this Python keeps it as a dict
(3.11 to 3.13): ``asyncio.current_task`` is an interpreted function on 3.11, about 1,400
instructions a call. Where it holds nothing, :meth:`Deadlines.enter` asks ``current_task``."""


def _unwritable(exc: ResponseError) -> bool:
    """Redis answers but stores nothing: a replica, out of memory, or a failing disk (MISCONF)."""
    return isinstance(exc, ReadOnlyError | OutOfMemoryError) or str(exc).startswith("MISCONF")
