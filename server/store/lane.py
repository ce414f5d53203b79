"""The group commit's own Redis connection, pipelined: batches written at once, replies parsed as
they arrive, several round trips in flight.

The connection is one of redis-py's pooled connections, held for good: redis-py opens it and
does the handshake (AUTH, SELECT, TLS, its connect hook, which tells
:class:`~server.store.readiness.Readiness`), then its transport is handed to a
:class:`_Replies` protocol of ours (``transport.set_protocol``). From then on the bytes Redis
sends are parsed in ``data_received`` by hiredis (the parser redis-py itself uses, with the
same error classes: a ``NOSCRIPT`` reply is a :class:`~redis.exceptions.NoScriptError`), and
each batch's future is answered there, in order, the moment its last reply is in: no task of
ours wakes to read them, and the next batch does not wait for the one before it. Redis answers
the commands of one connection in the order they were written, so the replies keep to their
batches.

Failures are those of the connection, as redis-py would raise them: the connection closed or
reset (every batch in flight fails with a :class:`~redis.exceptions.ConnectionError`; the next
:meth:`Lane.round_trip` opens the connection again), a batch not answered within ``timeout``
seconds (:class:`~redis.exceptions.TimeoutError`, and the connection is dropped: its replies
can no longer be told apart, so every batch in flight fails with it). A cancelled round trip
leaves its batch's replies to be read and thrown away, so the batches after it keep theirs; if
those replies do not come in time either, the connection is dropped as for any other batch.
Error replies are values in the reply list, not raised.

The timeouts are one timer per connection, not one per batch: batches are answered in the
order they were written, so the oldest in flight is always the first due; the timer is set for
it, and when it fires with that batch answered, it is set again for the one now first (none
in flight: it stops until the next batch). A batch costs a clock reading, not
``asyncio.timeout``'s context (its timer, its task bookkeeping and, on Python 3.11, a
``getpid()`` system call to find the running loop), which was two of the group commit's few
Python-level steps per round trip.

Writing never waits: a batch is pushed into the transport's buffer, which holds at most one
write per room (a room has at most one write in flight), so no flow control is needed.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import hiredis
from redis._parsers.base import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["Lane"]


class _Batch:
    """One batch in flight: how many replies it waits for, those in, its future, and the loop
    time by which its last reply must be in."""

    __slots__ = ("due", "future", "replies", "wanted")

    def __init__(self, future: asyncio.Future[list[Any]], wanted: int, due: float) -> None:
        self.future = future
        self.wanted = wanted
        self.due = due
        self.replies: list[Any] = []


class _Replies(asyncio.Protocol):
    """The connection's reading half once redis-py has opened it: replies parsed as they come,
    each batch answered when its last reply is in."""

    def __init__(self) -> None:
        self.reader = hiredis.Reader(
            protocolError=InvalidResponse, replyError=BaseParser.parse_error
        )
        self.waiting: deque[_Batch] = deque()
        self.lost: BaseException | None = None
        """Why the connection is gone (None while it is up)."""

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        waiting = self.waiting
        while waiting:
            try:
                reply = reader.gets()
            except Exception as exc:  # a protocol error: nothing after it can be trusted
                self.fail(RedisConnectionError(f"Redis sent what it should not: {exc}"))
                return
            if reply is False:
                return
            batch = waiting[0]
            batch.replies.append(reply)
            if len(batch.replies) == batch.wanted:
                waiting.popleft()
                if not batch.future.done():
                    batch.future.set_result(batch.replies)

    def eof_received(self) -> bool:
        return False  # (the transport closes: connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        why = f": {exc}" if exc else ""
        self.fail(RedisConnectionError(f"Connection closed by server{why}"))

    def fail(self, error: BaseException) -> None:
        """Every batch in flight fails with ``error``; the connection is not used again."""
        if self.lost is None:
            self.lost = error
        waiting, self.waiting = self.waiting, deque()
        for batch in waiting:
            if not batch.future.done():
                batch.future.set_exception(error)


class Lane:
    """The group commit's pipelined connection (module doc) on redis-py's ``pool``."""

    def __init__(self, pool: Any, timeout: float) -> None:
        self._pool = pool
        self._timeout = timeout
        self._connection: Any = None
        """redis-py's pooled connection, held for good (opened again after a loss)."""
        self._replies: _Replies | None = None
        self._transport: asyncio.Transport | None = None
        self._opening: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop the connection was opened in (kept: asked for, it costs a system call)."""
        self._timer: asyncio.TimerHandle | None = None
        """Set for the oldest batch in flight (module doc); None when none is."""

    def hold(self, connection: Any) -> None:
        """Use ``connection`` (taken from the pool at start-up) when the first batch comes."""
        if self._connection is None:
            self._connection = connection

    async def round_trip(self, commands: list[bytes]) -> list[Any]:
        """Write ``commands`` (each already packed) and return one reply each, in order, error
        replies as values; raise redis-py's ConnectionError or TimeoutError (module doc)."""
        replies = self._replies
        if replies is None or replies.lost is not None:
            replies = await self._open()
        transport, loop = self._transport, self._loop
        assert transport is not None and loop is not None
        batch = _Batch(loop.create_future(), len(commands), loop.time() + self._timeout)
        replies.waiting.append(batch)
        transport.write(b"".join(commands))
        if self._timer is None:
            self._timer = loop.call_at(batch.due, self._expire)
        return await batch.future

    def _expire(self) -> None:
        """The timer fired: drop the connection if its oldest batch in flight is past due (each
        batch in flight fails with the timeout), else set the timer for that batch."""
        self._timer = None
        replies, loop = self._replies, self._loop
        if replies is None or loop is None or not replies.waiting:
            return
        due = replies.waiting[0].due
        if due <= loop.time():
            self._drop(RedisTimeoutError("Timeout on the group commit's connection"))
        else:
            self._timer = loop.call_at(due, self._expire)

    async def _open(self) -> _Replies:
        """The connection, opened (again) by redis-py, its transport read by a new protocol."""
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:  # (two batches that find it closed open it once)
            if self._replies is not None and self._replies.lost is None:
                return self._replies
            connection = self._connection
            if connection is None:
                connection = self._connection = await self._pool.get_connection()
            if self._replies is not None:  # lost: redis-py's half of it goes too
                await connection.disconnect(nowait=True)
                self._replies = self._transport = None
            if not connection.is_connected:
                await connection.connect()  # (redis-py's hook: Readiness verifies again)
            transport = connection._writer.transport
            replies = _Replies()
            transport.set_protocol(replies)
            self._replies, self._transport = replies, transport
            self._loop = asyncio.get_running_loop()
            return replies

    def _drop(self, error: BaseException) -> None:
        """Fail what is in flight and close the connection (a timeout: the replies on their
        way could no longer be matched to their batches)."""
        replies, transport = self._replies, self._transport
        if replies is not None:
            replies.fail(error)
        if transport is not None:
            transport.abort()

    async def close(self) -> None:
        """Back to the pool, closed (the store is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        connection, self._connection = self._connection, None
        self._drop(RedisConnectionError("The store is closed"))
        self._replies = self._transport = None
        if connection is not None:
            await connection.disconnect(nowait=True)
            await self._pool.release(connection)
