"""The `oasis` client commands as a user runs them: lobby, errors in words, never a traceback."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from oasis.cli import build_parser, main
from protocol.codec import decode, encode
from tests.server.conftest import MakeApp

COMMANDS = ("rooms", "create", "join", "quick", "play", "watch", "bots")


async def oasis(*args: str, wait: float = 60.0) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "oasis", *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), wait)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def test_every_client_command_is_there_with_the_local_server_by_default() -> None:
    parser = build_parser()
    for command, extra in zip(
        COMMANDS,
        ([], ["--game", "x"], ["r"], ["--game", "x"], [], ["r"], ["--game", "x"]),
        strict=True,
    ):
        args = parser.parse_args([command, *extra])
        assert args.server == "ws://127.0.0.1:8765", command
    assert parser.parse_args(["selfplay", "--game", "ishtar"]).run


async def test_selfplay_still_works() -> None:
    code, out, err = await oasis("selfplay", "--game", "yspahan", "--games", "1")
    lines = out.splitlines()
    assert code == 0 and json.loads(lines[0])["game"] == "yspahan", err
    assert json.loads(lines[-1])["summary"]


def test_an_unreachable_server_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rooms", "--server", "ws://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("oasis rooms: Connection problem: cannot reach ws://127.0.0.1:9")
    assert "Traceback" not in err


def test_a_bad_url_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "r", "--server", "localhost:8765"]) == 1
    assert "is not a WebSocket URL" in capsys.readouterr().err


async def test_lobby_commands_against_a_live_server(make_app: MakeApp) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    code, out, err = await oasis("rooms", "--server", url)
    assert (code, out.strip()) == (0, "No open or running public rooms."), err
    code, out, err = await oasis("create", "--server", url, "--game", "yspahan", "--detach")
    assert code == 0, err
    room = out.split()[2]
    assert out.startswith(f"Created room {room} (yspahan, 2 players).")
    code, out, err = await oasis("rooms", "--server", url, "--game", "yspahan")
    assert code == 0 and room in out and "0/2 taken" in out, out
    code, out, err = await oasis("join", "nosuchroom", "--server", url)
    assert code == 1 and "No such room" in err and "Traceback" not in err + out
    code, out, err = await oasis("play", "--server", url, "--game", "chess")
    assert code == 1 and "The server refused the game settings" in err, err


async def test_a_seed_refused_by_the_server_is_explained(make_app: MakeApp) -> None:
    app = await make_app(allow_seed=False)
    code, out, err = await oasis(
        "play", "--server", f"ws://127.0.0.1:{app.port}/", "--game", "ishtar", "--seed", "3"
    )
    assert code == 1 and "does not accept seeds" in err and "Traceback" not in err + out


async def test_bots_command_prints_progress_and_a_summary(make_app: MakeApp) -> None:
    app = await make_app()
    code, out, err = await oasis(
        "bots", "--server", f"ws://127.0.0.1:{app.port}/", "--rooms", "2", "--game", "yspahan"
    )
    assert code == 0, err
    assert out.count("] room ") == 2 and "summary: 2 matches (0 failed)" in out


Handler = Callable[[ServerConnection], Awaitable[None]]


@pytest.fixture
async def fake_server() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    servers: list[Any] = []

    async def start(handler: Handler) -> str:
        server = await serve(handler, "127.0.0.1", 0)
        servers.append(server)
        return f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/"

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_a_server_of_another_protocol_version_is_explained(fake_server: Any) -> None:
    async def handler(ws: ServerConnection) -> None:
        hello = decode(await ws.recv())  # type: ignore[arg-type]
        await ws.send(encode({"type": "error", "id": hello["id"], "code": "unsupported_version",
                              "message": "version 2 only"}))  # fmt: skip
        await ws.close(1002)

    code, out, err = await oasis("rooms", "--server", await fake_server(handler))
    assert code == 1 and "protocol version the server does not" in err, err
    assert "Traceback" not in err + out


async def test_protocol_violations_are_reported_and_survived(fake_server: Any) -> None:
    async def handler(ws: ServerConnection) -> None:
        hello = decode(await ws.recv())  # type: ignore[arg-type]
        await ws.send(encode({"type": "welcome", "id": hello["id"], "games": ["ishtar"]}))
        request = decode(await ws.recv())  # type: ignore[arg-type]
        await ws.send("a text frame")
        await ws.send(b"\xc1")
        await ws.send(encode({"type": "rooms", "id": request["id"], "rooms": []}))
        await ws.wait_closed()

    code, out, err = await oasis("rooms", "--server", await fake_server(handler))
    assert code == 0 and "No open or running public rooms." in out, err
    assert "protocol problem: the server sent a text frame" in out
    assert "protocol problem: undecodable frame" in out


async def test_rooms_shows_the_first_page_and_how_to_ask_for_the_next(make_app: MakeApp) -> None:
    app = await make_app(list_page=3)
    url = f"ws://127.0.0.1:{app.port}/"
    made = []
    for _ in range(4):
        code, out, err = await oasis("create", "--server", url, "--game", "yspahan", "--detach")
        assert code == 0, err
        made.append(out.split()[2])
    code, out, err = await oasis("rooms", "--server", url)
    assert code == 0, err
    assert all(room in out for room in made[:3]) and made[3] not in out
    more = [line for line in out.splitlines() if line.startswith("More rooms: oasis rooms --after")]
    assert len(more) == 1, out
    cursor = more[0].split("--after ", 1)[1].split()[0]
    code, out, err = await oasis("rooms", "--server", url, "--after", cursor)
    assert code == 0 and made[3] in out and "More rooms" not in out, out
