"""Processes of a benchmark run: the servers under test, Redis, the bot workers, /proc figures.

Everything listens on 127.0.0.1 on a free port and is stopped by the run that started it (by its
own process id). Every wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.services import RedisServer, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

OASIS_ENV = {
    # The bots of one machine share one IP and act far above a human's rate: lift those limits
    # (they are per connection and per IP, not what is measured here).
    "OASIS_RATE_PER_SECOND": "1000000",
    "OASIS_RATE_BURST": "1000000",
    "OASIS_MAX_CONNECTIONS_PER_IP": "1000000",
    "OASIS_MAX_ROOMS": "1000000",
    # The quotas and budgets too (server.quotas): one address runs every room of a bench.
    # bench/attacks.py puts every one of these back to its default.
    "OASIS_MAX_CONNECTIONS": "1000000",
    "OASIS_HALF_OPEN_PER_ADDRESS": "1000000",
    "OASIS_ROOMS_PER_CONNECTION": "1000000",
    "OASIS_ROOMS_PER_ADDRESS": "1000000",
    "OASIS_BOT_MATCHES_PER_ADDRESS": "1000000",
    "OASIS_REPLAYS_PER_CONNECTION": "1000000",
    "OASIS_REPLAYS_PER_ADDRESS": "1000000",
    "OASIS_SPECTATORS_PER_NODE": "1000000",
    "OASIS_LIST_PER_SECOND": "1000000",
    "OASIS_LIST_BURST": "1000000",
    "OASIS_CREATE_PER_MINUTE": "100000000",
    "OASIS_CREATE_BURST": "1000000",
    "OASIS_REPLAY_PER_MINUTE": "100000000",
    "OASIS_REPLAY_BURST": "1000000",
    "OASIS_LOG_LEVEL": "warning",
}
REDIS_POOL = 4096
"""``max_connections`` in the Redis URL given to Oasis. redis-py 8 caps an asyncio pool at 100
connections by default and the store holds one per append in flight, so with more than 100 rooms
acting at once appends fail (``MaxConnectionsError``), the store takes that for Redis being down
and every room pauses and resumes, over and over (see BENCHMARKS.md). ``bench/run.py
--redis-pool 0`` leaves the URL as the server's default would be."""
REDIS_APPENDONLY = True
"""The benches' private Redis keeps its append-only file (``appendfsync everysec``, as a
deployment does); ``bench/peers/run.py --redis-aof no`` runs one without it, to tell the disk's
share of the paced tail from the rest."""


def add_server_env(parser: argparse.ArgumentParser, help: str) -> None:
    """``--server-env NAME=VALUE`` (repeatable): more environment for the measured server."""
    parser.add_argument(
        "--server-env", action="append", default=[], metavar="NAME=VALUE", help=help
    )


def server_env(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, str]:
    """The ``--server-env`` items as a mapping (a usage error for one without ``=``)."""
    env: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--server-env wants NAME=VALUE, not {item!r}")
        env[name] = value
    return env


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/PID/stat`` fields 14 and 15)."""
    user, system = cpu_split(pid)
    return user + system


def cpu_split(pid: int) -> tuple[float, float]:
    """User and system CPU time of a process so far, apart (``/proc/PID/stat`` fields 14 and
    15): the system part is the kernel's work for it, its socket writes and reads above all."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0, 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


def rss_bytes(pid: int) -> int:
    """Resident set size (``/proc/PID/statm``, second field, in pages)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return 0


def stop_process(process: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@dataclass
class Server:
    """One server under test: the baseline or Oasis (with its private Redis when it has one)."""

    kind: str
    """``baseline`` or ``oasis``."""
    loop: str
    store: str = "redis"
    """Oasis only: ``redis`` (a private redis-server started here) or ``memory``."""
    env: dict[str, str] = field(default_factory=dict)
    wrap: list[str] = field(default_factory=list)
    """A command put in front of the server's (a profiler)."""
    redis_url: str = ""
    """Oasis with ``store="redis"``: use this Redis (not stopped here) instead of a private one."""
    games: list[str] = field(default_factory=list)
    """Oasis: games registered in the server process only (``bench/serve.py --game``)."""
    cprofile: str = ""
    """Oasis: write a cProfile of the server there when it stops (``bench/serve.py``)."""
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    redis: RedisServer | None = None
    workdir: Path | None = None
    log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    @property
    def label(self) -> str:
        return self.kind if self.kind == "baseline" else f"oasis/{self.store}"

    def start(self, timeout: float = 60.0) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="oasis-bench-"))
        self.port = free_port()
        env = {**os.environ}
        if self.kind == "baseline":
            command = [PYTHON, str(ROOT / "bench" / "baseline.py"), "--loop", self.loop]
            command += ["--port", str(self.port)]
        else:
            env.update(OASIS_ENV)
            env.pop("REDIS_URL", None)
            command = [PYTHON, str(ROOT / "bench" / "serve.py"), "--loop", self.loop]
            command += ["--store", self.store]
            for game in self.games:
                command += ["--game", game]
            if self.cprofile:
                command += ["--cprofile", self.cprofile]
            command += ["--", "--port", str(self.port)]
            if self.store == "redis":
                url = self.redis_url
                if not url:
                    self.redis = RedisServer(self.workdir / "redis", appendonly=REDIS_APPENDONLY)
                    self.redis.start()
                    url = self.redis.url
                if REDIS_POOL:
                    url += f"?max_connections={REDIS_POOL}"
                command += ["--redis-url", url]
        env.update(self.env)
        self.log = (self.workdir / "server.log").open("wb")
        self.process = subprocess.Popen(
            [*self.wrap, *command], env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT
        )
        try:
            wait_for_port(self.port, timeout)
        except TimeoutError:
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"{self.label} did not start: {tail}") from None

    @property
    def pid(self) -> int:
        """The server's own process (the profiler's child when wrapped)."""
        assert self.process is not None
        if not self.wrap:
            return self.process.pid
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        for _ in range(100):
            found = children.read_text().split() if children.exists() else []
            if found:
                return int(found[0])
            time.sleep(0.05)
        return self.process.pid

    @property
    def redis_pid(self) -> int | None:
        if self.redis is None or self.redis.process is None:
            return None
        return self.redis.process.pid

    def log_tail(self, size: int = 2000) -> str:
        if self.workdir is None:
            return ""
        path = self.workdir / "server.log"
        return path.read_text(errors="replace")[-size:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None:
            if self.wrap:  # stop the server itself; the profiler then writes and exits
                os.kill(self.pid, signal.SIGTERM)
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    stop_process(self.process)
            stop_process(self.process)
            self.process = None
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        if self.log is not None:
            self.log.close()
            self.log = None
        if self.workdir is not None:  # the log and the private Redis's AOF
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


class Worker:
    """A load generator process (``bench/loadgen.py`` unless ``command`` names another, such as
    ``bench/peers/loadgen.mjs``), driven line by line over its stdin and stdout."""

    def __init__(self, args: list[str], command: list[str] | None = None) -> None:
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the worker)
        program = command if command is not None else [PYTHON, str(ROOT / "bench" / "loadgen.py")]
        self.process = subprocess.Popen(
            [*program, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            cwd=ROOT,
        )
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass

    def expect(self, kind: str, timeout: float) -> dict[str, Any]:
        """The payload of the next ``kind {json}`` line, waiting at most ``timeout`` seconds."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                text = line.decode(errors="replace")
                if text.startswith(kind + " "):
                    result: dict[str, Any] = json.loads(text[len(kind) + 1 :])
                    return result
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"worker {self.pid}: no {kind!r} within {timeout} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"worker {self.pid} ended before {kind!r}: {self.stderr()}")
                self._buffer += chunk

    def stderr(self, size: int = 1500) -> str:
        self.errors.seek(0)
        return self.errors.read().decode(errors="replace")[-size:]

    def stop(self) -> None:
        self.send("quit")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self.errors.close()
