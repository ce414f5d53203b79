"""This node's lease token, given to the Redis store when it is built (fencing).

A room is owned by one node through its lease ``P:{room}:lease`` (:mod:`server.lease`), whose
value is the owner's token ``<node id>|<nonce>|<public url>``: the nonce is new for every
process, so a node that restarts is a new owner; the url is where ``redirect`` frames send
clients. Every script that changes a live room checks that the lease holds exactly this token
before it writes (:data:`server.store.scripts.FENCE`), and a room created here gets its lease
in the same MULTI as its meta. The token is fixed for the store's life: it is an argument of
:class:`~server.store.redis.RedisStore`, never written into it afterwards, so no write can run
with a token other than the one its leases were taken with.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

__all__ = ["Fence"]


@dataclass(frozen=True, slots=True)
class Fence:
    """A node's id, public url, lease ttl (seconds) and this process's token."""

    node: str
    url: str
    ttl: float
    token: str

    @classmethod
    def new(cls, node: str, url: str, ttl: float) -> Fence:
        """A fresh token for this process of ``node``."""
        if not node or "|" in node:
            raise ValueError(f"node id {node!r} must be non-empty and must not contain '|'")
        return cls(node, url, ttl, f"{node}|{secrets.token_hex(8)}|{url}")

    @property
    def ms(self) -> int:
        """The lease ttl in milliseconds (at least 1)."""
        return max(1, int(self.ttl * 1000))
