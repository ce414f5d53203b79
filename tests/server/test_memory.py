"""Memory bounds (issue 14 item 3): abandoned and finished rooms are freed once they close.

Rooms are created and left over real sockets; once the lobby has closed them, a weak reference
to every one of them must be dead after a collection: no timer (a 60 s takeover grace, a clock,
the reap, a bot's delay) and no index keeps a closed room or its match alive. The RSS figures of
2,000 such rooms are ``bench/memory.py``'s (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import gc
import weakref

from server.app import App
from server.room import Room
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient

ROOMS = 24


async def _until_closed(app: App, probe: Client, rooms: list[str], within: float = 20.0) -> None:
    """Until the lobby has closed every one of ``rooms`` (each round trip lets timers run)."""
    async with asyncio.timeout(within):
        while any(room in app.lobby.rooms for room in rooms):
            await probe.request({"type": "ping"})


def _alive(refs: list[weakref.ref[Room]]) -> list[str]:
    gc.collect()
    return [room.id for ref in refs if (room := ref()) is not None]


async def test_abandoned_and_finished_rooms_are_freed_once_closed(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    # A long takeover grace and clocks: before issue 14 their timers kept each closed room (and
    # its match) in memory for a minute after it closed.
    app = await make_app(
        room_idle_ttl=0.2, finished_room_ttl=0.05, takeover_grace=60.0, bot_delay=0.0
    )
    refs: list[weakref.ref[Room]] = []
    ids: list[str] = []
    for i in range(ROOMS):
        client = await make_client(f"c{i}", target=app)
        create = {"type": "create", "game": "tiny", "players": 2, "seed": i}
        if i % 3 == 0:  # all bots: plays to its end at once, watched by nobody
            answer = await client.request({**create, "bots": 2})
            room = answer["room"]
            assert (await client.request({"type": "start", "room": room}))["type"] == "ack"
        elif i % 3 == 1:  # two people start, then both drop: abandoned mid-match
            answer = await client.request({**create, "clock": {"initial": 300, "increment": 5}})
            room = answer["room"]
            other = await make_client(f"o{i}", target=app)
            await client.request({"type": "join", "room": room})
            await other.request({"type": "join", "room": room})
            assert (await client.request({"type": "start", "room": room}))["type"] == "ack"
            await other.close()
        else:  # one person with a bot, gone mid-match (a stand-in is waiting to take over)
            answer = await client.request({**create, "bots": 1})
            room = answer["room"]
            await client.request({"type": "join", "room": room})
            assert (await client.request({"type": "start", "room": room}))["type"] == "ack"
        refs.append(weakref.ref(app.lobby.rooms[room]))
        ids.append(room)
        await client.close()
    await _until_closed(app, await make_client("probe", target=app), ids)
    assert _alive(refs) == []


async def test_a_finished_room_nobody_is_in_closes_after_the_finished_ttl(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app(room_idle_ttl=600.0, finished_room_ttl=0.05)
    client = await make_client("c", target=app)
    answer = await client.request(
        {"type": "create", "game": "tiny", "players": 2, "seed": 5, "bots": 2}
    )
    room = answer["room"]
    assert (await client.request({"type": "start", "room": room}))["type"] == "ack"
    ref = weakref.ref(app.lobby.rooms[room])
    await _until_closed(app, client, [room], within=10.0)  # not the 600 s of an unfinished room
    assert _alive([ref]) == []
    assert app.store.archives[room].result.get("abandoned") is None  # type: ignore[attr-defined]
