"""Real ``oasis-server`` processes for the crash tests, and seat drivers that survive them.

A :class:`ServerProcess` runs the installed ``oasis-server`` on a fixed port against a given
Redis and can be ``kill -9``-ed and started again on the same port. A :class:`SeatDriver` plays
one seat through any number of such crashes: it picks random legal choices from its own view,
records every choice the server acknowledged, and on a dropped connection reconnects and
resumes its seat with its token (SPEC section 11).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake

from games.base import bare
from server.store import ArchiveRecord
from server.store.redis import RedisStore
from tests.server.client import Client, ProtocolFailure
from tests.server.matches import my_turn, over

START_TIMEOUT = 20.0


@dataclass
class ServerProcess:
    port: int
    redis_url: str
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def start(self) -> None:
        script = Path(sys.executable).parent / "oasis-server"
        command = [str(script)] if script.exists() else [sys.executable, "-m", "server.main"]
        env = {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "OASIS_HOST": "127.0.0.1",
            "OASIS_PORT": str(self.port),
            "OASIS_ALLOW_SEED": "1",
            "OASIS_LOG_LEVEL": "warning",
            "OASIS_RATE_PER_SECOND": "5000",
            "OASIS_RATE_BURST": "10000",
            "OASIS_SNAPSHOT_EVERY": "7",
            "OASIS_REDIS_TIMEOUT": "0.5",
            **self.env,
        }
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
        self.starts += 1

    def kill(self) -> None:
        """``kill -9``: no goodbye, no flush, no graceful anything."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def stop(self) -> int | None:
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                return process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        return process.wait()

    async def client(self, name: str, within: float = START_TIMEOUT) -> Client:
        """A connected client, waiting for the server to (re)start and listen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            try:
                return await Client.open(self.url, name)
            except (OSError, InvalidHandshake, ConnectionClosed, ProtocolFailure, TimeoutError):
                # (InvalidHandshake: a refused upgrade, or the process killed mid-handshake)
                if loop.time() > deadline:
                    raise
                # The process is starting (restoring rooms): nothing to wait on but the port.
                await asyncio.sleep(0.05)


DROPPED = (ProtocolFailure, ConnectionClosed, OSError, TimeoutError)
"""What a client sees when the server dies under it."""


@dataclass
class SeatDriver:
    server: ServerProcess
    room: str
    seat: int
    token: str
    rng: random.Random
    client: Client | None
    progress: asyncio.Event
    acked: dict[int, dict[str, Any]] = field(default_factory=dict)
    """rev -> the choice the server acknowledged at that rev."""
    resumes: int = 0
    refused: int = 0
    """Choices answered ``unavailable`` (storage down)."""
    gone: bool = False
    """The room was not found on resume (it must then be archived)."""
    final_view: Any = None
    undo: float = 0.0
    """How often the seat takes back a step where its view says it may (``own.undo``)."""

    async def run(self) -> None:
        while True:
            try:
                if self.client is None and not await self._resume():
                    return
                if await self._step():
                    self.final_view = self.client.view(self.room) if self.client else None
                    return
            except DROPPED:
                await self._drop()

    async def _resume(self) -> bool:
        client = await self.server.client(f"r{self.room}-{self.seat}")
        answer = await client.request(
            {"type": "join", "room": self.room, "token": self.token, "rev": 0}
        )
        if answer["type"] == "error":
            await client.close()
            assert answer["code"] == "not_found", answer
            self.gone = True
            return False
        assert answer["type"] == "joined" and answer["seat"] == self.seat, answer
        self.client = client
        self.resumes += 1
        return True

    async def _step(self) -> bool:
        """One choice if it is this seat's turn; True once the match is over."""
        client = self.client
        assert client is not None
        room = self.room
        await client.until(lambda: my_turn(client, room) or over(client, room), wait=30)
        if over(client, room):
            return True
        rev = client.rev(room)
        own = client.view(room)["own"]
        choices = own["choices"]
        mark = len(client.frames)
        if own["undo"] and self.rng.random() < self.undo:
            entry: dict[str, Any] = {"undo": True}  # as the log stores it
            answer = await client.request({"type": "undo", "room": room, "rev": rev})
        else:
            choice = choices[self.rng.randrange(len(choices))]
            entry = bare(choice)  # as the log stores it
            answer = await client.request(
                {"type": "act", "room": room, "rev": rev, "choice": choice}
            )
        if answer["type"] == "ack":
            assert answer["rev"] == rev + 1, answer
            self.acked[rev + 1] = entry
            self.progress.set()
        elif answer.get("code") == "unavailable":
            # Storage is down: the room pauses; wait for it to say it resumed.
            self.refused += 1
            self.progress.set()
            await client.wait_for(lambda f: f["type"] == "pause" and not f["paused"], mark, 60)
        else:
            # After a restart the view may be a rev behind what the server stored.
            assert answer["code"] in ("stale_rev", "game_over"), answer
            if answer["code"] == "stale_rev":
                await client.request({"type": "sync", "room": room})
        return False

    async def _drop(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):  # the server is gone: closing is best effort
                await client.close()


async def archive_of(store: RedisStore, room: str) -> ArchiveRecord:
    """The archive of ``room`` once it is written (a room archives from its own task)."""
    found: list[ArchiveRecord] = []

    async def poll() -> None:
        while True:
            archive = await store.load_archive(room)
            if archive is not None:
                found.append(archive)
                return
            await asyncio.sleep(0.02)

    async with asyncio.timeout(10):
        await poll()
    return found[0]
