"""A room's writes, from its creation to its archive: each one script, through the group commit.

Group commit. A room's creation (:data:`~server.store.scripts.CREATE`), its seat updates,
appends and snapshots, and its archive (:data:`~server.store.scripts.ARCHIVE`), each one
EVALSHA, go through :class:`~server.store.commit.GroupCommit` (a lone call at once; what
arrives meanwhile goes together next), whose sender :class:`Writes` is: a batch (a lone call
too) is its EVALSHAs written at once on the group commit's own connection
(:meth:`.Client.commit_scripts`: packed there, not by redis-py's pipeline), each reply mapped on
its own (a wrong rev fails that room only; a batch that fails as a whole fails each of its
calls, an unknown outcome like any lost reply). A room has one write in flight at a time and a
batch keeps the order of its calls, so nothing about order or acknowledgement changes: a room
is created before its first seat update is sent, its last choice is stored before its archive
is sent. What they share is the per-call path (issue 21: with matches ending and starting all
the time, their creations, seat updates and archives were as many lone round trips as their
choices' appends, and a creation and an archive each went through redis-py's pipeline). On a
Redis Cluster each call keeps its own round trip (and the global indexes are written apart:
:mod:`server.store.redis`).

Failures are those of :meth:`.Client.run`: a dropped connection is retried once (every script
is idempotent: a resent append, creation or archive stores nothing twice), a Redis that lost
its scripts gets them loaded and those calls sent again, a Redis away raises
:class:`~server.store.StoreError` and marks the store not ready.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from redis.typing import EncodableT

from server.store import scripts
from server.store.client import Client
from server.store.commit import GroupCommit, Pending
from server.store.errors import NotOwnerError, StoreError

__all__ = ["Call", "Writes"]


@dataclass(slots=True, init=False)
class Call:
    """One script call of the group commit (a :class:`GroupCommit` payload).

    Never changed once made; not a frozen dataclass, whose fields cost ``object.__setattr__``
    each (about 4,800 instructions per write): its own ``__init__``, compiled, as
    :class:`~server.store.records.Action`."""

    script: Any
    keys: list[str]
    args: list[EncodableT]

    def __init__(self, script: Any, keys: list[str], args: list[EncodableT]) -> None:
        self.script, self.keys, self.args = script, keys, args


class Writes:
    """The scripts of one Redis store and the group commit that sends them."""

    def __init__(self, client: Client, *, cluster: bool, token: str) -> None:
        self._client = client
        self._cluster = cluster
        self._token = token
        """This node's lease token (:mod:`.fence`); empty: no leases, nothing is fenced."""
        redis = client.redis
        self.append = redis.register_script(scripts.APPEND)
        self.snapshot = redis.register_script(scripts.SNAPSHOT)
        self.update = redis.register_script(scripts.UPDATE)
        self.chat = redis.register_script(scripts.CHAT)
        self.create = redis.register_script(scripts.CREATE)
        self.archive = redis.register_script(scripts.ARCHIVE)
        self._commit: GroupCommit[Call] = GroupCommit(self._send)
        self.on_not_owner: Callable[[str], None] | None = None
        """Called with a room whose write was refused because this node lost its lease."""

    @property
    def token(self) -> str:
        return self._token

    async def fenced(
        self, room: str, what: str, script: Any, names: list[str], args: list[EncodableT]
    ) -> Any:
        """One fenced script call of ``room`` (this node's lease token goes last), through the
        group commit; a lost lease is told to ``on_not_owner``."""
        try:
            return await self.call(what, script, names, [*args, self._token])
        except NotOwnerError:
            if self.on_not_owner is not None:
                self.on_not_owner(room)
            raise

    async def call(self, what: str, script: Any, names: list[str], args: list[EncodableT]) -> Any:
        """One script call through the group commit (on a cluster: alone, with its reply)."""
        if self._cluster:
            return await self._client.run(what, lambda: script(keys=names, args=args))
        await self._commit.submit(what, Call(script, names, args))
        return None

    @property
    def batches(self) -> int:
        """How many round trips carried the group commit's calls."""
        return self._commit.batches

    @property
    def items(self) -> int:
        return self._commit.items

    def close(self) -> None:
        self._commit.close()

    async def drain(self) -> None:
        await self._commit.drain()

    async def _send(self, batch: Sequence[Pending[Call]]) -> list[StoreError | None]:
        """One round trip for a batch of script calls, each reply mapped on its own; the
        :class:`GroupCommit`'s sender."""
        calls = [(i.payload.script, i.payload.keys, i.payload.args) for i in batch]
        what = batch[0].what if len(batch) == 1 else f"{len(batch)} writes"
        replies = await self._client.run(what, partial(self._client.commit_scripts, calls))
        outcome = self._client.outcome
        return [outcome(i.what, reply) for i, reply in zip(batch, replies, strict=True)]
