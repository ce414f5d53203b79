"""Several real ``oasis-server`` nodes on one redis-server, and seats played through the CLI
client's :class:`~clients.connection.Session`, which follows ``redirect`` frames and reconnects
(the very code a player runs).

A :class:`SeatPlayer` picks random legal choices from its own view, records every choice the
server acknowledged, and rides through node deaths, hand-offs and lease losses: the session
reconnects (to the node it used, then to its home address) and resumes with the seat's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.connection import ClientError, ConnectionLost, ServerError, Session
from games.base import bare
from tests.server.persistence.processes import ServerProcess
from tests.services import free_port

FAST_RECONNECT = (0.05, 0.1, 0.2) + (0.25,) * 200
"""About a minute of attempts, a quarter-second apart (a dead node's lease is short here)."""


def node(redis_url: str, directory: Path, name: str, ttl: float, **env: str) -> ServerProcess:
    return ServerProcess(
        free_port(),
        redis_url,
        directory / f"{name}.log",
        env={
            "OASIS_NODE_ID": name,
            "OASIS_LEASE_TTL": str(ttl),
            "OASIS_SHUTDOWN_GRACE": "2",
            **env,
        },
    )


async def ready(*nodes: ServerProcess) -> None:
    """Wait until every node listens (it restored its rooms first)."""
    for n in nodes:
        client = await n.client("probe")
        await client.close()


async def session(url: str, name: str = "t") -> Session:
    s = Session(url, name)
    s.reconnect_delays = FAST_RECONNECT
    return await s.open()


@dataclass
class SeatPlayer:
    session: Session
    room: str
    seat: int
    rng: random.Random
    progress: asyncio.Event
    acked: dict[int, dict[str, Any]] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    last_ack: float = 0.0

    async def run(self) -> None:
        s = self.session
        mirror = s.rooms[self.room]
        while True:
            await s.wait(lambda: mirror.over or bool(mirror.choices), patience=60)
            if mirror.over:
                return
            rev = mirror.rev
            choice = mirror.choices[self.rng.randrange(len(mirror.choices))]
            try:
                answer = await s.request(
                    {"type": "act", "room": self.room, "rev": rev, "choice": choice}
                )
            except ServerError as exc:
                self.refused[exc.code] = self.refused.get(exc.code, 0) + 1
                if exc.code == "stale_rev":
                    await s.sync(self.room)
                elif exc.code not in ("unavailable", "not_allowed", "not_found", "game_over"):
                    raise
                await asyncio.sleep(0.05)  # the room moves or pauses: its frames will tell
                continue
            except (ConnectionLost, ClientError):
                self.refused["lost"] = self.refused.get("lost", 0) + 1
                await asyncio.sleep(0.05)
                continue
            assert answer["type"] == "ack" and answer["rev"] == rev + 1, answer
            self.acked[rev + 1] = bare(choice)  # as the log stores it
            self.last_ack = time.monotonic()
            self.progress.set()


async def open_room(
    host_url: str,
    seat_urls: list[str],
    game: str,
    rng: random.Random,
    progress: asyncio.Event,
    *,
    bots: bool = False,
) -> tuple[str, list[SeatPlayer]]:
    """Create a room through ``host_url``; seat ``i`` joins through ``seat_urls[i]`` (a redirect
    takes it to the room's node); with ``bots`` only seat 0 is a client."""
    host = await session(host_url, "host")
    created = await host.request(
        {"type": "create", "game": game, "players": len(seat_urls), "seed": rng.randrange(2**40)}
    )
    room = str(created["room"])
    sessions = [host]
    if not bots:
        sessions += [await session(url, f"s{i}") for i, url in enumerate(seat_urls[1:], 1)]
    players = []
    for i, s in enumerate(sessions):
        await s.join({"type": "join", "room": room, "seat": i, "name": f"p{i}"})
        players.append(SeatPlayer(s, room, i, random.Random(rng.random()), progress))
    await host.request({"type": "start", "room": room, "bots": bots})
    return room, players


async def wait_for_acks(
    players: list[SeatPlayer],
    count: int,
    within: float = 60,
    nodes: Sequence[ServerProcess] = (),
) -> None:
    """Until ``count`` more choices were acknowledged (or every match ended). Without progress
    the failure shows each player's room, rev and refusals, and the tail of each node's log."""
    target = sum(len(p.acked) for p in players) + count
    deadline = time.monotonic() + within
    progress = players[0].progress
    while sum(len(p.acked) for p in players) < target:
        if all(p.session.rooms[p.room].over for p in players):
            return
        assert time.monotonic() < deadline, "no progress\n" + _stuck(players, nodes)
        progress.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(progress.wait(), 1.0)


def _stuck(players: list[SeatPlayer], nodes: Sequence[ServerProcess]) -> str:
    lines = [
        f"room {p.room} seat {p.seat}: rev {p.session.rooms[p.room].rev}, "
        f"acked {len(p.acked)}, refused {p.refused}"
        for p in players
    ]
    for n in nodes:
        tail = n.log.read_text(errors="replace").splitlines()[-25:] if n.log.exists() else []
        lines += [f"--- {n.log.name}", *tail]
    return "\n".join(lines)


async def close_all(players: list[SeatPlayer]) -> None:
    seen: set[int] = set()
    for p in players:
        if id(p.session) not in seen:
            seen.add(id(p.session))
            with contextlib.suppress(Exception):
                await p.session.close()
