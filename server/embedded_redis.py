"""A private ``redis-server`` for ``oasis-server`` when no Redis URL is configured.

So that the README's one run command keeps rooms across restarts on a bare machine: the server
starts ``redis-server`` from the PATH with its data in a local directory (``var/redis`` by
default), AOF on (``appendfsync everysec``, as the tests' fixture), listening on a unix socket in
that directory (mode 700: only this user) or, when the socket path is too long for the kernel, on
a free loopback port. It is stopped (SIGTERM: Redis flushes the AOF) by :meth:`EmbeddedRedis.stop`
and, failing that, at interpreter exit; on Linux it also gets SIGTERM if the server process dies
(``PR_SET_PDEATHSIG``, tied to the thread that started it: call this from the main thread), so a
``kill -9`` of the server leaves no orphan holding the directory. It runs in its own session so a
Ctrl-C in the terminal reaches only the server, which stops Redis after its own graceful stop.

With no ``redis-server`` installed :func:`start_embedded` returns None after a loud warning and
the caller runs on the in-memory store; any other failure to start raises
:class:`EmbeddedRedisError` with the end of Redis's log (silently losing persistence is worse).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from server import logging as oasis_logging

DEFAULT_DIRECTORY = Path("var/redis")
_MAX_SOCKET_PATH = 100
"""sun_path holds 108 bytes on Linux (104 on macOS); stay below both."""
_PR_SET_PDEATHSIG = 1


class EmbeddedRedisError(RuntimeError):
    """The private redis-server could not be started."""


@dataclass
class EmbeddedRedis:
    """A running private redis-server; ``url`` is what the store connects to."""

    directory: Path
    url: str
    process: subprocess.Popen[bytes]
    _atexit: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Redis flushes its AOF and exits), then SIGKILL after ``timeout``."""
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            oasis_logging.get(component="embedded_redis").info(
                "embedded_redis_stopped", pid=self.process.pid, code=self.process.returncode
            )


def start_embedded(
    directory: Path | str = DEFAULT_DIRECTORY, *, timeout: float = 10.0
) -> EmbeddedRedis | None:
    """Start a private redis-server with its data in ``directory``; None if none is installed."""
    log = oasis_logging.get(component="embedded_redis")
    binary = shutil.which("redis-server")
    if binary is None:
        log.warning(
            "no_redis_server",
            detail="no REDIS_URL and no redis-server on the PATH: rooms live in memory only and "
            "are LOST when the server stops; install redis-server or set REDIS_URL",
        )
        return None
    path = Path(directory).resolve()
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    _wait_for_previous(path / "redis.pid", timeout)
    sock = path / "redis.sock"
    if len(str(sock)) <= _MAX_SOCKET_PATH:
        sock.unlink(missing_ok=True)
        listen = ["--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700"]
        url = f"unix://{sock}"
        address: str | tuple[str, int] = str(sock)
    else:
        port = _free_port()
        listen = ["--port", str(port), "--bind", "127.0.0.1"]
        url = f"redis://127.0.0.1:{port}/0"
        address = ("127.0.0.1", port)
    args = [
        binary,
        *listen,
        "--dir", str(path),
        "--appendonly", "yes",
        "--appendfsync", "everysec",
        "--save", "",
        "--daemonize", "no",
        "--pidfile", str(path / "redis.pid"),
        "--logfile", str(path / "redis.log"),
    ]  # fmt: skip
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_die_with_parent(os.getpid()) if sys.platform == "linux" else None,
    )
    embedded = EmbeddedRedis(path, url, process)
    try:
        _wait_until_ready(process, address, timeout, path / "redis.log")
    except BaseException:
        embedded.stop()
        raise
    embedded._atexit = embedded.stop
    atexit.register(embedded.stop)
    log.info("embedded_redis_started", url=url, directory=str(path), pid=process.pid)
    return embedded


def running_url(directory: Path | str = DEFAULT_DIRECTORY) -> str | None:
    """The URL of a private redis-server already running on ``directory`` (a live server's),
    or None; tools such as ``oasis replay`` read through it instead of starting another."""
    path = Path(directory).resolve()
    try:
        pid = int((path / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    sock = path / "redis.sock"
    if not _is_redis(pid) or not sock.exists() or not _pong(str(sock)):
        return None
    return f"unix://{sock}"


def _die_with_parent(parent: int) -> Callable[[], None]:
    """A preexec hook asking Linux to SIGTERM the child when the server dies."""

    def hook() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the server died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return hook


def _wait_for_previous(pidfile: Path, timeout: float) -> None:
    """Let a previous instance on this directory finish its shutdown; refuse a live one."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + timeout
    while _is_redis(pid):
        if time.monotonic() > deadline:
            raise EmbeddedRedisError(
                f"redis-server pid {pid} still uses {pidfile.parent}; stop it or set REDIS_URL"
            )
        time.sleep(0.05)


def _is_redis(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path(f"/proc/{pid}")
    if proc.is_dir():  # Linux: tell a reused pid and an unreaped zombie from a live redis
        with contextlib.suppress(OSError, IndexError):
            state = (proc / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            return state != b"Z" and b"redis" in (proc / "cmdline").read_bytes()
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_ready(
    process: subprocess.Popen[bytes], address: str | tuple[str, int], timeout: float, log: Path
) -> None:
    """Wait for ``+PONG`` (Redis answers LOADING while it replays the AOF)."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise EmbeddedRedisError(
                f"redis-server exited with code {process.returncode}: {_tail(log)}"
            )
        if _pong(address):
            return
        if time.monotonic() > deadline:
            raise EmbeddedRedisError(f"redis-server not ready after {timeout} s: {_tail(log)}")
        time.sleep(0.02)


def _pong(address: str | tuple[str, int]) -> bool:
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(address)
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"
