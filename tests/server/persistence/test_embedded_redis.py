"""The private redis-server of ``oasis-server``: starts, keeps data across restarts, stops."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from server.embedded_redis import start_embedded
from server.store import Action
from server.store.redis import RedisStore
from tests.server.persistence.conftest import tiny_meta, wait_for


async def test_embedded_redis_starts_keeps_data_and_stops(tmp_path: Path) -> None:
    directory = tmp_path / "var" / "redis"
    embedded = start_embedded(directory)
    assert embedded is not None
    try:
        assert embedded.url == f"unix://{directory / 'redis.sock'}"
        store = RedisStore(embedded.url)
        await store.create_room("r", tiny_meta("r"))
        await store.append("r", Action(1, 0, {"kind": "draw"}))
        await store.close()
    finally:
        embedded.stop()
    assert embedded.process.poll() is not None
    assert (directory / "appendonlydir").is_dir()

    again = start_embedded(directory)
    assert again is not None
    try:
        store = RedisStore(again.url)
        record = await store.load_room("r")
        await store.close()
        assert record is not None
        assert [a.rev for a in record.actions] == [1]
    finally:
        again.stop()


def test_a_long_directory_falls_back_to_a_loopback_port(tmp_path: Path) -> None:
    directory = tmp_path / ("d" * 60) / ("e" * 60)
    embedded = start_embedded(directory)
    assert embedded is not None
    try:
        assert embedded.url.startswith("redis://127.0.0.1:")
    finally:
        embedded.stop()


def test_no_redis_server_on_the_path_means_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert start_embedded(tmp_path / "redis") is None


async def test_a_killed_server_leaves_no_orphan_and_a_restart_gets_the_data(tmp_path: Path) -> None:
    """kill -9 of the process that started Redis: Redis gets SIGTERM (flushing its AOF) and
    exits, and the next start on the same directory finds the data."""
    directory = tmp_path / "redis"
    script = (
        "import sys, time\n"
        "from server import logging\n"
        "from server.embedded_redis import start_embedded\n"
        "logging.configure('json', 'warning')\n"
        "embedded = start_embedded(sys.argv[1])\n"
        "print(embedded.pid, embedded.url, flush=True)\n"
        "time.sleep(60)\n"
    )
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        str(directory),
        cwd=Path(__file__).parents[3],
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert server.stdout is not None
        pid_text, url = (await server.stdout.readline()).decode().split()
        store = RedisStore(url)
        await store.create_room("r", tiny_meta("r"))
        await store.append("r", Action(1, 0, {"kind": "draw"}))
        await store.close()
    finally:
        server.kill()
        await server.wait()
    await wait_for(lambda: not _alive(int(pid_text)))

    again = start_embedded(directory)
    assert again is not None
    try:
        store = RedisStore(again.url)
        assert [a.rev for a in await store.actions_after("r", 0)] == [1]
        await store.close()
    finally:
        again.stop()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"
