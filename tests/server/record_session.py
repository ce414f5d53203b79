"""Record a session of the tiny game into ``protocol/vectors/session/`` (SPEC section 15).

Run ``.venv/bin/python -m tests.server.record_session`` to re-record. Session ids, tokens, room
ids and times are random or clock-based, so every recording differs; what a frontend checks
against is the self-consistency of one recording (each patch applies and gives its hash),
which ``test_session_vectors.py`` also checks.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from protocol.codec import decode, encode
from server.app import App
from server.config import Config
from tests.server.client import Client

OUT = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "session"


class Recorder:
    def __init__(self) -> None:
        self.entries: list[tuple[str, str, bytes]] = []

    def wrap(self, client: Client) -> None:
        original_send = client.send

        async def send(frame: dict[str, Any]) -> None:
            self.entries.append((client.name, "sent", encode(frame)))
            await original_send(frame)

        client.send = send  # type: ignore[method-assign]
        original_apply = client._apply

        def receive(frame: dict[str, Any]) -> None:
            self.entries.append((client.name, "received", client.raw[-1]))
            original_apply(frame)

        client._apply = receive  # type: ignore[method-assign]


async def record() -> list[tuple[str, str, bytes]]:
    app = App(Config(host="127.0.0.1", port=0, allow_seed=True))
    await app.start()
    recorder = Recorder()
    url = f"ws://127.0.0.1:{app.port}/"
    try:
        clients = {}
        for name in ("seat0", "seat1", "spectator"):
            client = await Client.open(url, name, hello=False)
            recorder.wrap(client)
            hello: dict[str, Any] = {"type": "hello", "version": 1, "client": name}
            if name == "seat1":
                hello["hash_rule"] = 2  # (one seat's frames under each view hash rule)
            welcome = await client.request(hello)
            client.hash_rule = welcome["hash_rule"]
            clients[name] = client
        seat0, seat1, watcher = clients["seat0"], clients["seat1"], clients["spectator"]
        created = await seat0.request({"type": "create", "game": "tiny", "players": 2, "seed": 1})
        room = created["room"]
        await seat0.request({"type": "join", "room": room, "name": "ann"})
        await seat1.request({"type": "join", "room": room, "name": "bob"})
        await watcher.request({"type": "spectate", "room": room})
        await seat0.request({"type": "start", "room": room})
        stale = await seat1.request({"type": "act", "room": room, "rev": 0, "choice": 0})
        assert stale["code"] == "not_your_turn"
        malformed = await seat0.request({"type": "act", "room": room, "rev": 0, "choice": "play"})
        assert malformed["code"] == "malformed_choice"
        first = True
        while True:
            view = seat0.view(room)
            if view["shared"]["result"] is not None:
                break
            mover = clients[f"seat{view['shared']['turn']['seat']}"]
            await mover.until(lambda m=mover: bool(m.view(room)["own"]["choices"]))  # type: ignore[misc]
            rev = mover.rev(room)
            # The first choice goes back as the map it was listed as (label included, SPEC 7).
            choice: Any = mover.view(room)["own"]["choices"][0] if first else 0
            first = False
            await mover.request({"type": "act", "room": room, "rev": rev, "choice": choice})
            for client in clients.values():
                await client.until(lambda c=client, r=rev: c.rev(room) == r + 1)  # type: ignore[misc]
        await watcher.request({"type": "sync", "room": room})
        await watcher.request({"type": "list_rooms", "game": "tiny"})
        await watcher.request({"type": "ping"})
        await seat1.request({"type": "chat", "room": room, "text": "gg"})
        await watcher.wait_for(lambda f: f["type"] == "chat")
        for client in clients.values():
            await client.close()
    finally:
        await app.stop()
    return recorder.entries


def write(entries: list[tuple[str, str, bytes]], out: Path = OUT) -> None:
    if out.exists():
        shutil.rmtree(out)
    (out / "frames").mkdir(parents=True)
    index = []
    for n, (conn, direction, data) in enumerate(entries, 1):
        frame = decode(data) if direction == "sent" else _decode(data)
        name = f"{n:04d}-{conn}-{direction}-{frame['type']}.msgpack"
        (out / "frames" / name).write_bytes(data)
        index.append(
            {"n": n, "connection": conn, "direction": direction, "file": name, "frame": frame}
        )
    (out / "session.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")


def _decode(data: bytes) -> dict[str, Any]:
    import msgpack

    value: dict[str, Any] = msgpack.unpackb(data, raw=False)
    return value


if __name__ == "__main__":
    from games import registry
    from tests.games.tiny import TINY

    registry.register(TINY)
    write(asyncio.run(record()))
