"""What the room core knows of a member: a structural type, not the socket class.

The core (:mod:`server.core` and its components) never writes to a socket; it names its
members in the effects it returns (:class:`~server.effects.Send`) and the actor's shell, which
made them, does the writing. So all it reads or changes of a member is here:

- ``session``: the connection's session id (the room's log lines, a seat's holder);
- ``ip``: its address (the quotas per address, the log);
- ``rooms``: the rooms it is in, each with its seat (None: spectating), kept up to date by the
  core as the member joins, spectates and leaves;
- ``hash_rule``: the view hash rule its frames follow (SPEC section 4, asked for in ``hello``).

:class:`server.connection.Connection` is one (the server's); the core's twins
(``tests/server/core/twin.py``) pass their own, which record the frames they are sent. With no
socket class in the core's signatures, a compiled core (mypyc checks the declared class of every
argument) takes either.
"""

from __future__ import annotations

from typing import Protocol


class Member(Protocol):
    """A connection as the room core sees it (see the module docstring)."""

    session: str
    ip: str
    rooms: dict[str, int | None]
    hash_rule: int
