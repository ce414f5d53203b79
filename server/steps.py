"""The room core's driver of the command being handled: its steps, the store's answers, its failure.

A command whose handling needs the store is a generator (:data:`~server.effects.Steps`): it
yields each store effect it waits for and gets the store's answer back where it yielded it.
:class:`Driver` runs it up to its next store effect (the last effect of the list it returns),
and resumes it with the answer (:class:`~server.effects.Done`: the call's value is sent in;
:class:`~server.effects.Failed`: its exception is raised there). The actor handles one command
at a time, so at most one is pending.

The steps the driver runs (:data:`~server.effects.Handling`, the core's dispatch) end by
yielding None rather than by returning: compiled, a generator that returns makes ``send``
raise ``StopIteration``, and catching it cost about 4,000 instructions per command (a
traceback entry made, then dropped), a tenth of the room core's own work on a choice. The
generator left at its last ``yield`` is dropped at once (nothing of it runs again: interpreted,
closing it raises ``GeneratorExit`` at that ``yield``, where no handler stands).

Two rules of the room live here, each in one place. What the store's answers teach the room
(:meth:`Driver._learn`: an append whose outcome is unknown, a room the store lost), read before
the command resumes. And how a failure is answered (:meth:`Driver._refuse`): whatever the steps
raise becomes the ``error`` frame :func:`server.errors.wire_error` maps it to, to the command's
sender; an unexpected one is logged with its traceback, its details never sent.

No I/O: the driver puts its frames in the room's outbox (:class:`~server.effects.Outbox`), and
the core (:mod:`server.core`) gives it each command's steps from its dispatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol import frames as f
from protocol.errors import ErrorCode, RequestError
from server.effects import Answer, Append, Done, Effect, Failed, Handling, Outbox, StoreSeats
from server.errors import wire_error
from server.metrics import Metrics
from server.room_state import Status

if TYPE_CHECKING:
    from server.member import Member


class Driver:
    """Runs one room's commands through their store effects (see the module doc)."""

    def __init__(
        self,
        room_id: str,
        *,
        status: Status,
        out: Outbox,
        metrics: Metrics,
        log: Any,
        storage_lost: Callable[[], None],
    ) -> None:
        self._room = room_id
        self._status = status
        self._out = out
        self._metrics = metrics
        self._log = log
        self._storage_lost = storage_lost
        self._pending: Handling | None = None
        self._waiting: object = None
        """The store effect the pending steps wait for (an :data:`~server.effects.Effect`)."""
        self._asker: tuple[Member | None, object] = (None, None)
        """The connection and command of the pending steps (for the error frame)."""

    def run(self, steps: Handling, conn: Member | None, command: object) -> list[Effect]:
        """Start ``steps``, the handling of ``command`` from ``conn``: its effects."""
        assert self._pending is None, "a command while another waits for the store"
        self._asker = (conn, command)
        return self._drive(steps, None)

    def resume(self, answer: Answer) -> list[Effect]:
        """The store answered the pending steps: their next effects."""
        steps = self._pending
        assert steps is not None, "an answer with no store effect pending"
        return self._drive(steps, answer)

    def _drive(self, steps: Handling, answer: Answer | None) -> list[Effect]:
        self._pending = None
        # (Read as ``Any``: typed, what the steps yield was checked, compiled, against each
        # class of the effects' union in turn, and None, the last yield of every command,
        # against them all: about 20 type checks.)
        gen: Any = steps
        try:
            if answer is None:
                waited = next(gen)  # (send(None): a method looked up by name, compiled)
            else:
                self._learn(answer, self._waiting)
                if isinstance(answer, Failed):
                    waited = gen.throw(answer.error)
                else:
                    waited = gen.send(answer.value)
        except StopIteration:  # (steps that returned instead of yielding None: done too)
            pass
        except Exception as exc:
            self._refuse(exc)
        else:
            if waited is not None:  # (None: the command is done, see the module doc)
                self._pending, self._waiting = steps, waited
                self._out.add(waited)
        return self._out.take()

    def _learn(self, answer: Answer, effect: object) -> None:
        """What the store's answer to ``effect`` teaches the room: an append's outcome is
        unknown (the next move reads back what landed first), or the store lost the room (a
        refused append pauses it for good before the refusal is answered; a seat update that
        was not required says so with True)."""
        status = self._status
        if isinstance(answer, Done):
            if answer.value is True and isinstance(effect, StoreSeats):
                status.lost = True
            return
        if answer.unsure:
            status.unsure = True
        error = answer.error
        if isinstance(error, RequestError) and error.code is ErrorCode.STORAGE_LOST:
            status.lost = True
            if isinstance(effect, Append):
                self._storage_lost()

    def _refuse(self, exc: Exception) -> None:
        """The one place a command's failure becomes an ``error`` frame to its sender."""
        conn, command = self._asker
        code, message, expected = wire_error(exc)
        if not expected:
            seat = None if conn is None else conn.rooms.get(self._room)
            self._log.exception(
                "room_error",
                command=type(command).__name__,
                seat=seat,
                conn=None if conn is None else conn.session,
            )
        if conn is not None:
            self._metrics.errors.labels(code.value).inc()
            limit = exc.limit if isinstance(exc, RequestError) else None
            rid = getattr(command, "id", None)
            self._out.reply(conn, f.ErrorFrame.of(rid, code, message, self._room, limit))
