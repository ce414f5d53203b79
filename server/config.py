"""Server configuration: environment variables first, command-line flags over them.

Every setting has an ``OASIS_*`` variable (``REDIS_URL`` keeps its customary name) and a flag of
the same name in kebab case (``OASIS_MAX_FRAME_BYTES`` -> ``--max-frame-bytes``). Defaults suit a
single public server; tests shrink the limits to provoke them quickly.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from protocol.messages import MAX_PAGE
from server.quotas import QuotaSettings

LOOPS = ("uvloop", "asyncio")
STORES = ("redis", "memory")
GC_MODES = ("freeze", "collect")


@dataclass(frozen=True, slots=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    loop: str = "uvloop"
    """The event loop: ``uvloop`` (when installed; else the default loop, with a warning) or
    ``asyncio`` (the standard library's)."""
    store: str = "redis"
    """``redis``: ``REDIS_URL``, or without it a private ``redis-server`` (below). ``memory``:
    no persistence at all (benchmarks, throwaway servers), with a loud warning at start."""
    redis_url: str = ""
    """Redis to store rooms in. Empty: a private ``redis-server`` with its data in
    ``redis_dir`` (:mod:`server.embedded_redis`), or the in-memory store if none is installed."""
    redis_dir: str = "var/redis"
    redis_timeout: float = 1.0
    """Seconds one Redis call may take before the room refuses the choice and pauses."""
    redis_cluster: bool = False
    """``REDIS_URL`` names a node of a Redis Cluster (:mod:`server.store.redis`)."""
    allow_volatile_redis: bool = False
    """Accept a Redis that does not persist (no append-only file): tests and development only.
    Without it such a Redis makes ``/readyz`` answer 503 and the log say why
    (:mod:`server.store.redis`, "Durability")."""
    archive_ttl_days: float = 30.0
    """Days a finished match's archive (replays, ``oasis replay``) is kept in Redis; 0: for ever."""
    resume_after: float = 1.0
    """Seconds the store must have stayed usable before paused rooms resume (:mod:`server.lobby`):
    a store that flaps pauses each room once, not once per flap."""
    gc: str = "freeze"
    """Python's cyclic garbage collector while serving (:mod:`server.collector`): ``freeze``, no
    young collection (the new objects frozen instead; a full collection only past a million
    objects, once they may have doubled), or ``collect``, Python's generational collections."""
    gc_young: int = 50_000
    """Containers made (net) before the collector acts: ``freeze``, between two freezes;
    ``collect``, between two young collections, the older generations every 20 and 100 of
    those (Python's own 700, 10, 10 made full collections of every room's objects, the p99 of
    choices under load: BENCHMARKS.md; 0 keeps them)."""
    log_format: str = "json"
    """``json`` (one JSON object per line) or ``console`` (for people)."""
    log_level: str = "info"

    max_frame_bytes: int = 64 * 1024
    """Largest accepted client frame; up to twice this gets a typed error, beyond it the
    WebSocket layer closes with 1009 before reading it all."""
    rate_per_second: float = 40.0
    rate_burst: int = 80
    max_connections_per_ip: int = 32
    trusted_proxies: str = ""
    """Proxies (addresses or CIDR networks, comma-separated) whose ``X-Forwarded-For`` names
    the client (:mod:`server.forwarded`); empty: the peer address is the client."""
    hello_timeout: float = 10.0
    idle_timeout: float = 300.0
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    close_timeout: float = 2.0
    """How long a closing handshake may take before the TCP connection is dropped. A flooding
    client whose frames fill the receive queue cannot answer in time, so keep it short."""

    send_buffer_bytes: int = 1 << 20
    """Bytes waiting in one socket's write buffer before the client counts as slow."""
    resync_timeout: float = 10.0
    """How long a slow client may take to drain before it is closed instead of resynced."""
    lag_window: float = 60.0
    """A second overflow within this many seconds of a resync closes the connection."""

    inbox_size: int = 1024
    patch_buffer: int = 64
    """Revisions kept per room for resume (older resumes get the full view)."""
    snapshot_every: int = 50
    """Revisions between two full-state snapshots in the store (and one at the end)."""
    chat_per_minute: int = 20
    chat_log: int = 500
    room_idle_ttl: float = 600.0
    """A room nobody is connected to is closed after this many seconds."""
    finished_room_ttl: float = 30.0
    """A room whose match is over and that nobody is connected to is closed after this many
    seconds (at most ``room_idle_ttl``); its archive keeps the match for replays."""
    moved_room_ttl: float = 2.0
    """A finished room whose every player moved to its rematch (SPEC section 9) and that
    nobody is in any more is closed after this many seconds (at most ``finished_room_ttl``):
    nobody is left to come back to it; the grace answers a rematch asked again at the same
    moment as the first, or retried."""
    max_rooms: int = 10_000
    """Rooms in memory on this node (replay rooms included); checked before the store is
    touched, counting the rooms being created (no race past it)."""

    # Quotas and budgets (server.quotas; SPEC section 14). A person needs a few of each.
    max_connections: int = 10_000
    """TCP connections on this node, upgraded or not; the next is aborted at once."""
    half_open_per_address: int = 16
    """Connections of one address still in the WebSocket upgrade; the next is aborted."""
    rooms_per_connection: int = 4
    """Rooms (open or playing) a connection created that are still open or playing."""
    rooms_per_address: int = 32
    bot_matches_per_address: int = 2
    """Matches with no seat held by a person, started from one address, still playing."""
    replays_per_connection: int = 2
    replays_per_address: int = 4
    """Replay rooms playing at once for one address (a replay at interval 0 plays a whole
    match as fast as the loop allows)."""
    spectators_per_room: int = 500
    spectators_per_node: int = 10_000
    room_chat_per_minute: int = 60
    """Chat lines per minute in one room from all its members together (bursts of 10)."""
    list_per_second: float = 2.0
    """``list_rooms`` and ``quick`` per connection per second (bursts of ``list_burst``)."""
    list_burst: int = 10
    create_per_minute: float = 12.0
    """Rooms opened (``create``, a ``quick`` that opens one, ``start`` with bots) per
    connection per minute (bursts of ``create_burst``)."""
    create_burst: int = 5
    replay_per_minute: float = 12.0
    replay_burst: int = 3
    address_budget_factor: float = 4.0
    """An address's budgets are this many connections' worth (more connections do not buy
    more)."""
    list_page: int = 50
    """Rooms in a ``rooms`` page when ``list_rooms`` asks for no ``limit`` (at most 100)."""

    bot_delay: float = 0.0
    """Seconds a server-side bot waits before it moves (0: at once, for tests and load runs)."""
    allow_seed: bool = False
    """Let ``create`` fix the seed (tests, replays). Never on a public server: a known seed
    reveals every hidden card."""
    shutdown_grace: float = 5.0
    takeover_grace: float = 60.0
    """Seconds a seated player of a started match may be gone before a bot plays for them
    (:mod:`server.takeover`); negative: never."""

    node_id: str = ""
    """This node's id in room leases (:mod:`server.lease`); empty: ``<host name>:<port>``. Two
    running nodes must never share one; a node started again with the same id takes its rooms
    back at once instead of waiting for their leases to expire."""
    public_url: str = ""
    """The address a ``redirect`` sends clients to for this node's rooms; empty:
    ``ws://<host>:<port>/``."""
    lease_ttl: float = 10.0
    """Seconds a room's lease lasts unless renewed (every third of it): how long a dead node's
    rooms wait before another node takes them over."""
    relay_drop_every: int = 0
    """Fault injection for tests: the spectator relay (:mod:`server.relay`) drops every Nth
    patch it receives from Redis, as a lost message would be (0: never)."""

    def check(self) -> None:
        """Refuse settings with a fixed set of values (:func:`parse_args` calls it)."""
        if self.loop not in LOOPS:
            raise ValueError(f"loop must be one of {', '.join(LOOPS)}, not {self.loop!r}")
        if self.store not in STORES:
            raise ValueError(f"store must be one of {', '.join(STORES)}, not {self.store!r}")
        if self.gc not in GC_MODES:
            raise ValueError(f"gc must be one of {', '.join(GC_MODES)}, not {self.gc!r}")

    def quota_settings(self) -> QuotaSettings:
        return QuotaSettings(
            rooms_per_connection=self.rooms_per_connection,
            rooms_per_address=self.rooms_per_address,
            bot_matches_per_address=self.bot_matches_per_address,
            replays_per_connection=self.replays_per_connection,
            replays_per_address=self.replays_per_address,
            spectators_per_room=self.spectators_per_room,
            spectators_per_node=self.spectators_per_node,
            half_open_per_address=self.half_open_per_address,
            list_per_second=self.list_per_second,
            list_burst=self.list_burst,
            create_per_minute=self.create_per_minute,
            create_burst=self.create_burst,
            replay_per_minute=self.replay_per_minute,
            replay_burst=self.replay_burst,
            address_factor=self.address_budget_factor,
        )

    def limits(self) -> dict[str, Any]:
        """The limits a client is told in ``welcome``."""
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "rate_per_second": self.rate_per_second,
            "rate_burst": self.rate_burst,
            "idle_timeout": self.idle_timeout,
            "chat_per_minute": self.chat_per_minute,
            "patch_buffer": self.patch_buffer,
            "list_page": min(self.list_page, MAX_PAGE),
            "list_per_second": self.list_per_second,
            "create_per_minute": self.create_per_minute,
            "rooms_per_connection": self.rooms_per_connection,
        }


def _env_name(name: str) -> str:
    return "REDIS_URL" if name == "redis_url" else "OASIS_" + name.upper()


def _convert(kind: Any, text: str) -> Any:
    if kind in (bool, "bool"):
        return text.strip().lower() in {"1", "true", "yes", "on"}
    if kind in (int, "int"):
        return int(text)
    if kind in (float, "float"):
        return float(text)
    return text


def _converter(kind: Any) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        return _convert(kind, text)

    return convert


def from_env(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for f in fields(Config):
        raw = env.get(_env_name(f.name))
        if raw is not None:
            values[f.name] = _convert(f.type, raw)
    return Config(**values)


def parse_args(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Flags override the environment, which overrides the defaults."""
    base = from_env(env)
    parser = argparse.ArgumentParser(
        prog="oasis-server", description="The Oasis match server (WebSocket + msgpack)."
    )
    for f in fields(Config):
        flag = "--" + f.name.replace("_", "-")
        helptext = f"env {_env_name(f.name)} (default {getattr(base, f.name)!r})"
        if f.type in (bool, "bool"):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, help=helptext)
        else:
            parser.add_argument(flag, type=_converter(f.type), help=helptext)
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    config = dataclasses.replace(base, **overrides)
    try:
        config.check()
    except ValueError as exc:
        parser.error(str(exc))
    return config
