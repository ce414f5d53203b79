"""Real services for tests: a private ``redis-server`` on a free port in a temporary directory.

No test depends on a service it did not start: the machine's own Redis on 6379 is never used.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 10.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout} s") from None
            time.sleep(0.02)


@dataclass
class RedisServer:
    """A ``redis-server`` child process with AOF on, data in ``directory``.

    ``appendonly=False`` makes a volatile one (the durability tests: a restart loses everything);
    ``extra`` adds arguments (e.g. ``["--rename-command", "CONFIG", ""]`` for a Redis that
    refuses CONFIG, as managed ones do)."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    appendonly: bool = True
    extra: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed (the README's test command installs it)"
            )
        if not self.port:
            self.port = free_port()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "everysec",
                "--save", "",
                "--daemonize", "no",
                "--logfile", str(self.directory / "redis.log"),
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for_port(self.port)
        except TimeoutError:
            self.stop()
            raise

    def stop(self, *, kill: bool = False) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        if kill:
            process.kill()
            process.wait()
            return
        # Redis refuses a SIGTERM while it writes its first AOF ("Writing initial AOF, can't
        # exit": CONFIG SET appendonly yes starts one) and does not retry: ask again until it goes.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            process.terminate()
            try:
                process.wait(timeout=0.25)
                return
            except subprocess.TimeoutExpired:
                pass
        process.kill()
        process.wait()

    def restart(self) -> None:
        """Stop and start again on the same port and directory (AOF brings the data back)."""
        self.stop()
        self.start()


@dataclass
class RedisCluster:
    """A Redis Cluster of ``masters`` ``redis-server`` children (no replicas), slots spread by
    ``redis-cli --cluster create``; data in ``directory``."""

    directory: Path
    masters: int = 3
    nodes: list[RedisServer] | None = None

    @property
    def url(self) -> str:
        """Any node will do: the client learns the others from it."""
        assert self.nodes
        return self.nodes[0].url

    def start(self, attempts: int = 3) -> None:
        """Start the masters and join them; again on other ports if one could not listen (a
        port found free can be taken before the node binds it, or its bus port 10000 above:
        the machine's outgoing connections use that range too)."""
        for attempt in range(attempts):
            if attempt:  # (the last attempt's nodes.conf files would make them one cluster)
                shutil.rmtree(self.directory, ignore_errors=True)
            try:
                self._start()
                return
            except (TimeoutError, subprocess.SubprocessError):
                if attempt == attempts - 1:
                    raise

    def _start(self) -> None:
        cli = shutil.which("redis-cli")
        binary = shutil.which("redis-server")
        if cli is None or binary is None:
            raise RuntimeError("redis-server and redis-cli are needed for a Redis Cluster")
        self.nodes = []
        for i in range(self.masters):
            node = RedisServer(self.directory / f"node{i}")
            node.port = _cluster_port()
            node.directory.mkdir(parents=True, exist_ok=True)
            node.process = subprocess.Popen(
                [
                    binary,
                    "--port", str(node.port),
                    "--bind", "127.0.0.1",
                    "--dir", str(node.directory),
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "5000",
                    "--appendonly", "yes",
                    "--save", "",
                    "--daemonize", "no",
                    "--logfile", str(node.directory / "redis.log"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            self.nodes.append(node)
        try:
            for node in self.nodes:
                _listening(node)
            subprocess.run(
                [cli, "--cluster", "create"]
                + [f"127.0.0.1:{node.port}" for node in self.nodes]
                + ["--cluster-replicas", "0", "--cluster-yes"],
                check=True,
                capture_output=True,
                timeout=30,
            )
            self._wait_ok(cli)
        except Exception:
            self.stop()
            raise

    def _wait_ok(self, cli: str, timeout: float = 15.0) -> None:
        assert self.nodes
        deadline = time.monotonic() + timeout
        while True:
            states = [
                subprocess.run(
                    [cli, "-p", str(node.port), "cluster", "info"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                for node in self.nodes
            ]
            if all("cluster_state:ok" in state for state in states):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the Redis Cluster did not become ok")
            time.sleep(0.1)

    def stop(self) -> None:
        for node in self.nodes or []:
            node.stop()
        self.nodes = None


def _listening(node: RedisServer, timeout: float = 10.0) -> None:
    """Wait until ``node`` listens; TimeoutError at once if its process ended (a port taken)."""
    assert node.process is not None
    deadline = time.monotonic() + timeout
    while True:
        code = node.process.poll()
        if code is not None:
            raise TimeoutError(f"redis-server on port {node.port} exited ({code})")
        try:
            with socket.create_connection(("127.0.0.1", node.port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"nothing listens on port {node.port} after {timeout} s"
                ) from None
            time.sleep(0.05)


def _cluster_port() -> int:
    """A free port whose cluster bus port (10000 above it) is free too."""
    while True:
        port = free_port()
        if port > 55535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
