"""A room's inbox and timers: the queue its one task reads, and the commands it posts itself.

A component the room owns (``room.inbox``): everything that changes the room is queued here
and handled in arrival order by the room's task, so no lock is needed. The room arms its timers
(a bot's delay, a clock, a takeover grace, the reap) through :meth:`Inbox.later`; each posts its
command to the same queue when it fires. The task takes each command with :meth:`Inbox.next`
and, when none is queued, awaits the future of :meth:`Inbox.arrival` itself (no coroutine made
per command; :meth:`Inbox.get` is the same as one coroutine).

Every timer is cancelled when the task ends (:meth:`Inbox.cancel_timers`): a pending takeover
grace (60 s), a clock, a bot's delay or the reap must not keep a closed room and its match in
memory (a cancelled handle drops its callback at once). No reference cycle is made (a fired
timer forgets its handle), so a closed room is freed by reference counting, not at the next
full collection of the garbage collector.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Final, Generic, TypeVar

from protocol.errors import ErrorCode, RequestError
from server.connection import Connection

_perf_counter: Final = time.perf_counter
"""(Called as a constant, not looked up on the ``time`` module at every command queued.)"""

C = TypeVar("C")
"""What the inbox carries (the room's commands)."""


class _Timer(Generic[C]):
    """One pending timer (see :meth:`Inbox.later`)."""

    __slots__ = ("command", "handle")

    def __init__(self, command: C) -> None:
        self.command = command
        self.handle: asyncio.TimerHandle | None = None


class Inbox(Generic[C]):
    """A queue of ``(connection, command, time queued)`` and the timers that feed it, bounded
    for what clients submit (``size``): the room's own commands (its timers', the lobby's) are
    always queued, so a flooded room never loses a clock's timeout, a bot's move or a delayed
    spectator release; there are only as many of them as the room armed.

    ``closed`` says whether the room is closed: a closed room takes nothing more."""

    def __init__(self, room_id: str, size: int, closed: Callable[[], bool]) -> None:
        self._room = room_id
        self._closed = closed
        self._size = size
        self._queue: deque[tuple[Connection | None, C, float]] = deque()
        """What waits for the task (a deque and one future, not an ``asyncio.Queue``: the room
        has one reader and no joiner, and the queue's bookkeeping cost Python calls on every
        command, its put and its get)."""
        self._waiter: asyncio.Future[None] | None = None
        """The task's wait for a command while the queue is empty."""
        self._timers: set[_Timer[C]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop of the task that reads the inbox, kept from its first wait or timer on
        (``asyncio.get_running_loop`` makes a ``getpid()`` system call on Python 3.11)."""

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def submit(self, conn: Connection | None, command: C) -> None:
        """Queue a command; a full inbox refuses it with ``unavailable`` (the room is flooded)."""
        if self._closed():
            raise RequestError(ErrorCode.NOT_FOUND, f"room {self._room} is closed")
        if len(self._queue) >= self._size:
            raise RequestError(ErrorCode.UNAVAILABLE, f"room {self._room} is busy")
        self._put((conn, command, _perf_counter()))

    def post(self, command: C) -> None:
        """Queue a command of the room's own (a timer's, the lobby's), however full the inbox
        is; ignored once the room is closed."""
        if self._closed():
            return
        self._put((None, command, _perf_counter()))

    def put_nowait(self, command: C) -> bool:
        """Queue ``command`` even in a closed room (the task's last ones); False if the inbox
        is full of clients' commands."""
        if len(self._queue) >= self._size:
            return False
        self._put((None, command, 0.0))
        return True

    def _put(self, item: tuple[Connection | None, C, float]) -> None:
        self._queue.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def get(self) -> tuple[Connection | None, C, float]:
        """The next command, waiting for one (one reader: the room's task)."""
        queue = self._queue
        while not queue:
            waiter = self.arrival()
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # (cancelled while waiting)
                    self._waiter = None
        return queue.popleft()

    def next(self) -> tuple[Connection | None, C, float] | None:
        """The next command if one is queued, else None: the room's task then awaits
        :meth:`arrival` and asks again (:func:`server.effector.serve_room`: no coroutine made
        per command, as :meth:`get` makes one)."""
        queue = self._queue
        return queue.popleft() if queue else None

    def arrival(self) -> asyncio.Future[None]:
        """A future done once a command is queued (one waiter: the room's task). A wait
        cancelled meanwhile leaves it cancelled, which :meth:`_put` skips."""
        waiter = self._waiter = self._running_loop().create_future()
        return waiter

    def take(self) -> list[tuple[Connection | None, C]]:
        """Empty the queue: what waited, in order (a failed room answers it)."""
        taken = [(conn, command) for conn, command, _ in self._queue]
        self._queue.clear()
        return taken

    def later(self, delay: float, command: C) -> None:
        """Post ``command`` after ``delay`` seconds (cancelled if the task ends first)."""
        timer = _Timer(command)
        timer.handle = self._running_loop().call_later(delay, self._fire, timer)
        self._timers.add(timer)

    def _fire(self, timer: _Timer[C]) -> None:
        self._timers.discard(timer)
        timer.handle = None
        self.post(timer.command)

    def cancel_timers(self) -> None:
        for timer in self._timers:
            if timer.handle is not None:
                timer.handle.cancel()
                timer.handle = None
        self._timers.clear()
