"""HTTP on the WebSocket port (health, readiness, metrics) and the ``oasis-server`` process."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from server.app import App
from tests.server.client import Client
from tests.server.conftest import MakeClient
from tests.services import free_port


async def http_get(port: int, path: str) -> tuple[int, dict[str, str], str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.decode().partition("\r\n\r\n")
    lines = head.split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


async def test_health_readiness_and_metrics_share_the_websocket_port(
    app: App, make_client: MakeClient
) -> None:
    assert (await http_get(app.port, "/healthz"))[:1] == (200,)
    assert (await http_get(app.port, "/readyz"))[0] == 200
    client = await make_client()
    await client.request({"type": "create", "game": "tiny", "players": 2})
    await client.request({"type": "teleport"})
    status, headers, body = await http_get(app.port, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert "oasis_connections 1.0" in body
    assert 'oasis_rooms{state="open"} 1.0' in body
    assert 'oasis_errors_total{code="unknown_type"} 1.0' in body
    assert 'oasis_frames_in_total{type="create"} 1.0' in body
    app.store.fail = True  # type: ignore[attr-defined]
    assert (await http_get(app.port, "/readyz"))[0] == 503
    app.store.fail = False  # type: ignore[attr-defined]


async def test_sigterm_says_bye_closes_with_1001_and_exits_cleanly(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "OASIS_PORT": str(port),
        "OASIS_LOG_FORMAT": "json",
        "OASIS_REDIS_DIR": str(tmp_path / "redis"),  # no REDIS_URL: the embedded redis-server
    }
    env.pop("REDIS_URL", None)
    process = _spawn_server(env, tmp_path / "server.log")
    try:
        client = await _connect_when_up(port)
        created = await client.request({"type": "create", "game": "yspahan", "players": 2})
        assert created["type"] in ("ack", "error")
        process.send_signal(signal.SIGTERM)
        bye = await client.wait_for(lambda f: f["type"] == "bye")
        assert bye["reason"] == "server shutting down"
        closed = await asyncio.wait_for(asyncio.shield(client.closed), 10)
        assert closed[0] == 1001
        code = await asyncio.to_thread(process.wait, 15)
        assert code == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    log = (tmp_path / "server.log").read_text()
    assert '"event": "stopped"' in log and '"event": "listening"' in log
    assert '"event": "embedded_redis_stopped"' in log


def _spawn_server(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """The installed ``oasis-server`` script (or the module), logging to ``log``."""
    script = Path(sys.executable).parent / "oasis-server"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "server.main"]
    with open(log, "wb") as log_file:
        return subprocess.Popen(
            [*command, "--host", "127.0.0.1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )


async def _connect_when_up(port: int) -> Client:
    for _ in range(200):
        try:
            return await Client.open(f"ws://127.0.0.1:{port}/", "sigterm")
        except OSError:
            await asyncio.sleep(0.05)  # the child process is starting; nothing to wait on
    raise AssertionError("oasis-server did not start")


async def test_with_no_redis_anywhere_the_server_runs_in_memory_and_says_so_loudly(
    tmp_path: Path,
) -> None:
    """No REDIS_URL and no redis-server on the PATH: it still serves (the README's bare run)."""
    port = free_port()
    env = {
        **os.environ,
        "PATH": str(tmp_path),  # no redis-server here
        "OASIS_PORT": str(port),
        "OASIS_REDIS_DIR": str(tmp_path / "redis"),
    }
    env.pop("REDIS_URL", None)
    process = _spawn_server(env, tmp_path / "server.log")
    try:
        client = await _connect_when_up(port)
        created = await client.request({"type": "create", "game": "yspahan", "players": 2})
        assert created["type"] == "ack"
        await client.close()
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    log = (tmp_path / "server.log").read_text()
    assert '"event": "no_redis_server"' in log and '"event": "memory_store"' in log
    assert "NO PERSISTENCE" in log
