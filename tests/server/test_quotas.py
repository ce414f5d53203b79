"""Quotas and budgets over real sockets (SPEC section 14): each refuses with ``quota_exceeded``
naming its limit, gives its place back when what it counted ends, and a person within the
quotas is never refused (with the default settings)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import pytest

from server.app import App
from server.config import Config
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG, MakeApp
from tests.services import RedisServer


async def _client(app: App, name: str = "t") -> Client:
    return await Client.open(f"ws://127.0.0.1:{app.port}/", name)


async def _eventually(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Poll ``condition`` on the event loop until it holds (the room's own timers decide)."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.01)


def _refused(answer: dict[str, Any], limit: str) -> None:
    assert answer["type"] == "error", answer
    assert answer["code"] == "quota_exceeded" and answer["limit"] == limit, answer


async def _create(client: Client, **fields: Any) -> dict[str, Any]:
    return await client.request({"type": "create", "game": "tiny", "players": 2, **fields})


@pytest.fixture
async def clients() -> Any:
    opened: list[Client] = []

    async def open_client(app: App, name: str = "t") -> Client:
        client = await _client(app, name)
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()
    for client in opened:
        assert not client.failures, (client.name, client.failures)


async def test_rooms_per_connection_and_per_address_refuse_and_free_when_rooms_close(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app(rooms_per_connection=2, rooms_per_address=3, room_idle_ttl=0.2)
    ann, bob = await clients(app, "ann"), await clients(app, "bob")
    for _ in range(2):
        assert (await _create(ann))["type"] == "ack"
    _refused(await _create(ann), "rooms_per_connection")
    assert (await _create(bob))["type"] == "ack"
    _refused(await _create(bob), "rooms_per_address")  # the same address as ann
    # Nobody is in those rooms: they close after room_idle_ttl and give their places back.
    await _eventually(lambda: not app.lobby.rooms)
    assert (await _create(ann))["type"] == "ack"
    body = (await _metrics(app)).splitlines()
    assert any(
        line.startswith('oasis_refused_total{limit="rooms_per_address"} 1.0') for line in body
    )


async def _metrics(app: App) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = await reader.read()
    writer.close()
    return data.decode()


async def test_a_finished_room_gives_its_place_back(make_app: MakeApp, clients: Any) -> None:
    app = await make_app(rooms_per_connection=1)
    ann = await clients(app, "ann")
    room = (await _create(ann, bots=2))["room"]
    await ann.request({"type": "spectate", "room": room})
    assert (await ann.request({"type": "start", "room": room}))["type"] == "ack"
    await ann.until(lambda: ann.view(room)["shared"]["result"] is not None)
    assert (await _create(ann))["type"] == "ack"  # the finished one no longer counts


async def test_matches_of_bots_only_are_counted_per_address(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app(bot_matches_per_address=1, bot_delay=30.0)
    ann, bob = await clients(app, "ann"), await clients(app, "bob")
    first = (await _create(ann, bots=2))["room"]
    assert (await ann.request({"type": "start", "room": first}))["type"] == "ack"
    second = (await _create(bob, bots=2))["room"]
    _refused(await bob.request({"type": "start", "room": second}), "bot_matches_per_address")
    # With a person in a seat it is not a match of bots only: never counted.
    third = (await _create(bob, bots=1))["room"]
    await bob.request({"type": "join", "room": third})
    assert (await bob.request({"type": "start", "room": third}))["type"] == "ack"
    # start with bots filling every seat is the same as a creation with bots only.
    fourth = (await _create(bob))["room"]
    _refused(
        await bob.request({"type": "start", "room": fourth, "bots": True}),
        "bot_matches_per_address",
    )
    assert app.lobby.rooms[fourth].state.value == "open"


async def _finished_match(app: App, client: Client) -> str:
    room = str((await _create(client, bots=2))["room"])
    await client.request({"type": "spectate", "room": room})
    await client.request({"type": "start", "room": room})
    await client.until(lambda: client.view(room)["shared"]["result"] is not None)
    await _eventually(lambda: app.lobby.rooms[room].core.status.finish_pending is None)
    await client.request({"type": "leave", "room": room})
    return room


async def test_replays_per_connection_and_address_and_a_replay_closes_with_its_last_spectator(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app(replays_per_connection=2, replays_per_address=3)
    ann, bob = await clients(app, "ann"), await clients(app, "bob")
    room = await _finished_match(app, ann)
    replays = []
    for _ in range(2):
        joined = await ann.request({"type": "replay", "room": room, "interval": 60})
        assert joined["type"] == "joined", joined
        replays.append(joined["room"])
    _refused(await ann.request({"type": "replay", "room": room}), "replays_per_connection")
    assert (await bob.request({"type": "replay", "room": room, "interval": 60}))["type"] == "joined"
    _refused(await bob.request({"type": "replay", "room": room}), "replays_per_address")
    await ann.request({"type": "leave", "room": replays[0]})
    await _eventually(lambda: replays[0] not in app.lobby.rooms)  # at once, not after a ttl
    assert (await ann.request({"type": "replay", "room": room, "interval": 60}))["type"] == "joined"


async def test_spectators_per_room_and_per_node(make_app: MakeApp, clients: Any) -> None:
    app = await make_app(spectators_per_room=2, spectators_per_node=3)
    host = await clients(app, "host")
    one, two = (await _create(host))["room"], (await _create(host))["room"]
    watchers = [await clients(app, f"w{i}") for i in range(4)]
    for w in watchers[:2]:
        assert (await w.request({"type": "spectate", "room": one}))["type"] == "joined"
    _refused(await watchers[2].request({"type": "spectate", "room": one}), "spectators_per_room")
    assert (await watchers[2].request({"type": "spectate", "room": two}))["type"] == "joined"
    _refused(await watchers[3].request({"type": "spectate", "room": two}), "spectators_per_node")
    await watchers[0].close()  # a spectator that goes frees its place
    await _eventually(lambda: app.quotas.spectators.total() == 2)
    assert (await watchers[3].request({"type": "spectate", "room": two}))["type"] == "joined"


async def test_chat_is_limited_per_room_across_members_and_per_spectator(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app(room_chat_per_minute=3, chat_per_minute=2)
    host = await clients(app, "host")
    room = (await _create(host))["room"]
    await host.request({"type": "join", "room": room})
    fans = [await clients(app, f"fan{i}") for i in range(3)]
    for fan in fans:
        await fan.request({"type": "spectate", "room": room})
    said = [await fan.request({"type": "chat", "room": room, "text": "hi"}) for fan in fans]
    assert [a["type"] for a in said] == ["ack", "ack", "ack"]
    _refused(
        await host.request({"type": "chat", "room": room, "text": "hello"}), "room_chat_per_minute"
    )
    # A spectator's own bucket too (it is no longer unlimited): per connection, slow_down.
    other = (await _create(host))["room"]
    watcher = fans[0]
    await watcher.request({"type": "spectate", "room": other})
    answers = [
        await watcher.request({"type": "chat", "room": other, "text": "x"}) for _ in range(3)
    ]
    assert [a.get("code", a["type"]) for a in answers] == ["ack", "ack", "slow_down"]


async def test_costly_requests_spend_budgets_per_connection_and_per_address(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app(
        list_per_second=0.01,
        list_burst=2,
        create_per_minute=0.01,
        create_burst=1,
        replay_per_minute=0.01,
        replay_burst=1,
        address_budget_factor=1.5,
    )
    ann, bob = await clients(app, "ann"), await clients(app, "bob")
    for _ in range(2):
        assert (await ann.request({"type": "list_rooms"}))["type"] == "rooms"
    _refused(await ann.request({"type": "list_rooms"}), "list_per_connection")
    assert (await bob.request({"type": "list_rooms"}))["type"] == "rooms"
    _refused(await bob.request({"type": "list_rooms"}), "list_per_address")  # 3 per address
    assert (await _create(ann))["type"] == "ack"
    _refused(await _create(ann), "create_per_connection")
    # A quick searches the lobby: it spends a listing first (and a creation if it opens a room).
    _refused(
        await ann.request({"type": "quick", "game": "tiny", "players": 3}), "list_per_connection"
    )
    assert (await ann.request({"type": "replay", "room": "gone"}))["code"] == "not_found"
    _refused(await ann.request({"type": "replay", "room": "gone"}), "replay_per_connection")


async def test_quick_for_an_unknown_game_is_refused_before_any_work(
    make_app: MakeApp, clients: Any
) -> None:
    app = await make_app()
    ann = await clients(app, "ann")
    answer = await ann.request({"type": "quick", "game": "chess", "players": 2})
    assert answer["code"] == "bad_options"
    answer = await ann.request({"type": "quick", "game": "tiny", "players": 16})
    assert answer["code"] == "bad_options"
    assert not app.lobby.rooms and not app.lobby.creating


async def test_max_rooms_is_never_passed_by_concurrent_creates(redis_server: RedisServer) -> None:
    """Over a real Redis (each create awaits its write): 24 creates sent at once from 4
    connections, room for 5: exactly 5 are made."""
    config = dataclasses.replace(TEST_CONFIG, max_rooms=5)
    store = RedisStore(redis_server.url)
    await store.start()
    app = App(config, store)
    await app.start()
    opened = [await _client(app, f"c{i}") for i in range(4)]
    try:
        frames = [(c, c.new_id()) for c in opened for _ in range(6)]
        await asyncio.gather(
            *(
                c.send({"type": "create", "game": "tiny", "players": 2, "id": rid})
                for c, rid in frames
            )
        )
        answers = [await c.wait_for(lambda f, rid=rid: f.get("id") == rid) for c, rid in frames]
        kinds = sorted(a.get("code", a["type"]) for a in answers)
        assert kinds == ["ack"] * 5 + ["unavailable"] * 19
        assert {a.get("limit") for a in answers if a["type"] == "error"} == {"max_rooms"}
        assert len(app.lobby.rooms) == 5
    finally:
        for c in opened:
            await c.close()
        await app.stop()


async def test_half_open_upgrades_per_address_are_aborted_and_freed(make_app: MakeApp) -> None:
    app = await make_app(half_open_per_address=3)
    silent = [await asyncio.open_connection("127.0.0.1", app.port) for _ in range(3)]
    await _eventually(lambda: app.gate.upgrading == 3)
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    assert await asyncio.wait_for(reader.read(), 5.0) == b""  # aborted, no answer at all
    writer.close()
    for _, w in silent:
        w.close()
    await _eventually(lambda: app.gate.upgrading == 0 and app.gate.open == 0)
    client = await _client(app)  # the address may upgrade again
    assert (await client.request({"type": "ping"}))["type"] == "pong"
    await client.close()
    body = await _metrics(app)
    assert 'oasis_refused_total{limit="half_open_per_address"} 1.0' in body
    assert "oasis_loop_lag_seconds " in body and "oasis_half_open " in body


async def test_connections_per_node_are_capped_at_accept(make_app: MakeApp) -> None:
    app = await make_app(max_connections=2)
    first, second = await _client(app, "a"), await _client(app, "b")
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    assert await asyncio.wait_for(reader.read(), 5.0) == b""
    writer.close()
    await first.close()
    await _eventually(lambda: app.gate.open == 1)
    third = await _client(app, "c")
    assert (await third.request({"type": "ping"}))["type"] == "pong"
    await second.close()
    await third.close()


async def test_a_person_within_the_default_quotas_is_never_refused(
    make_app: MakeApp, clients: Any
) -> None:
    """The defaults of Config (not the tests' lifted ones): a person's evening in the lobby."""
    defaults = {f.name: f.default for f in dataclasses.fields(Config)}
    quota_names = [
        "rooms_per_connection",
        "rooms_per_address",
        "bot_matches_per_address",
        "replays_per_connection",
        "spectators_per_room",
        "spectators_per_node",
        "room_chat_per_minute",
        "list_per_second",
        "list_burst",
        "create_per_minute",
        "create_burst",
        "replay_per_minute",
        "replay_burst",
        "address_budget_factor",
        "half_open_per_address",
        "max_connections",
        "chat_per_minute",
    ]
    app = await make_app(**{name: defaults[name] for name in quota_names})
    ann, friend = await clients(app, "ann"), await clients(app, "friend")
    for _ in range(3):
        assert (await ann.request({"type": "list_rooms"}))["type"] == "rooms"
    finished = await _finished_match(app, ann)  # a match against bots only
    room = (await _create(ann))["room"]
    await ann.request({"type": "join", "room": room, "name": "ann"})
    await friend.request({"type": "join", "room": room, "name": "bo"})
    for text in ("hi", "good luck", "you too"):
        assert (await friend.request({"type": "chat", "room": room, "text": text}))["type"] == "ack"
    assert (await ann.request({"type": "start", "room": room}))["type"] == "ack"
    assert (await ann.request({"type": "quick", "game": "tiny", "players": 3}))["type"] == "joined"
    assert (await friend.request({"type": "replay", "room": finished}))["type"] == "joined"
    assert (await friend.request({"type": "list_rooms", "game": "tiny"}))["type"] == "rooms"
    every = ann.frames + friend.frames
    assert not [f for f in every if f["type"] == "error"], "a person was refused"
