"""Random frames at a live server: every one is answered or refused with our own codes."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgpack
from websockets.exceptions import ConnectionClosed

from protocol import messages as m
from protocol.errors import ErrorCode
from protocol.frames import parse_frame
from server.app import App
from tests.server.client import Client, ProtocolFailure
from tests.server.conftest import MakeClient

FIELDS = ["id", "room", "rev", "choice", "game", "players", "text", "seat", "token", "version"]
CODES = {code.value for code in ErrorCode}


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, 1, -1, 2**31, 2**63 - 1, -(2**63), rng.randrange(-100, 100)])
    if kind == 3:
        return rng.choice([0.5, -1e300, float("inf")])
    if kind in (4, 5):
        return rng.choice(["", "tiny", "x" * rng.randrange(600), "é", "ping"])
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(FIELDS): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def random_frame(rng: random.Random, room: str) -> bytes:
    roll = rng.random()
    if roll < 0.1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    frame: dict[str, Any] = {"type": rng.choice([*sorted(m.CLIENT_TYPES), "nope"])}
    for _ in range(rng.randrange(5)):
        frame[rng.choice(FIELDS)] = random_value(rng)
    if rng.random() < 0.5:
        frame["room"] = room
    if frame["type"] == "hello":
        frame["version"] = 1
    return msgpack.packb(frame, use_bin_type=True)  # type: ignore[no-any-return]


async def test_random_frames_get_our_codes_and_the_server_goes_on(
    app: App, make_client: MakeClient
) -> None:
    rng = random.Random(2024)
    owner = await make_client("owner")
    created = await owner.request({"type": "create", "game": "tiny", "players": 2})
    room = created["room"]
    await owner.request({"type": "join", "room": room})
    other = (await owner.request({"type": "create", "game": "tiny", "players": 2}))["room"]
    seen: dict[str, int] = {}
    for round_ in range(30):
        client: Client = await make_client(f"fuzz{round_}")
        for _ in range(40):
            try:
                await client.send_raw(random_frame(rng, room))
                await client.request({"type": "ping"})  # its pong says the frame was handled
            except (ProtocolFailure, ConnectionClosed):
                break
        for frame in client.frames:
            parse_frame(frame)  # a frame of SPEC section 8, every field as it says
            key = frame.get("code", frame["type"])
            seen[key] = seen.get(key, 0) + 1
            if frame["type"] == "error":
                assert frame["code"] in CODES and frame["code"] != "internal", frame
        if client.closed.done():
            code, _ = await asyncio.shield(client.closed)
            assert code in (1002, 1003, 1008, 1009, None), code
    assert len(seen) >= 8, seen
    pong = await owner.request({"type": "ping"})
    assert pong["type"] == "pong"
    target = app.lobby.rooms[room]
    assert target.rev == len(app.store.logs[room])  # type: ignore[attr-defined]
    assert app.lobby.rooms[other].rev == 0 and app.lobby.rooms[other].free_seats() == 2
