"""A node keeps its own rooms: the orphan scan never takes one for a dead node's, and a lease
that lapsed (renewals failed while Redis was slow) is taken back with the members attached.

The bench saw ``start`` refused with "2 seats are still free" right after every ``join`` had
been answered (about one room set-up in 2,400): the node's lease loop listed a room whose
``create_room`` had just landed in Redis but was not in the lobby yet, took its lease (its own
token), read its record while two seats were joined, and put a room rebuilt from that record in
place of the live one; the joins went on in the old room, ``start`` reached the new one.

A bench persistence run saw every choice refused with ``not_allowed`` after a few
``unavailable``: leases lapse when renewals fail for a ttl (a saturated or absent Redis), the
next fenced append evicted the room and dropped its members, and the node restored it again on
their next request as a room none of them was in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Sequence
from typing import Any

from server.app import App
from server.cluster import Cluster, fence_of
from server.store.fence import Fence
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import to_move
from tests.services import RedisServer


class GatedStore(RedisStore):
    """Holds ``create_room`` after its write landed, and ``load_rooms`` after its read, until
    the test lets them go: the two windows of the race, opened at will."""

    def __init__(self, url: str, fence: Fence) -> None:
        super().__init__(url, fence=fence)
        self.created = asyncio.Event()
        self.let_create = asyncio.Event()
        self.loaded = asyncio.Event()
        self.let_load = asyncio.Event()

    async def create_room(self, room: str, meta: dict[str, Any]) -> None:
        await super().create_room(room, meta)
        self.created.set()
        await self.let_create.wait()

    async def load_rooms(self, rooms: Sequence[str]) -> dict[str, Any]:
        found = await super().load_rooms(rooms)
        if found:
            self.loaded.set()
            await self.let_load.wait()
        return found


async def test_an_orphan_scan_during_create_leaves_the_new_room_and_its_seats_alone(
    redis_server: RedisServer,
) -> None:
    config = dataclasses.replace(TEST_CONFIG, node_id="n1", lease_ttl=30.0)
    store = GatedStore(redis_server.url, fence_of(config))
    await store.start()
    app = App(config, store)
    app.cluster = cluster = Cluster(app, store, config)  # no lease loop: the test runs the scan
    await app.start()
    url = f"ws://127.0.0.1:{app.port}/"
    clients = [await Client.open(url, f"s{i}") for i in range(4)]
    try:
        creating = asyncio.create_task(
            clients[0].request({"type": "create", "game": "yspahan", "players": 4})
        )
        await store.created.wait()  # the room is live in Redis, the lobby does not have it yet
        scan = asyncio.create_task(cluster.claim_orphans())
        loaded = asyncio.create_task(store.loaded.wait())
        await asyncio.wait([scan, loaded], return_when=asyncio.FIRST_COMPLETED)
        store.let_create.set()
        room = (await creating)["room"]
        served = app.lobby.rooms[room]
        for i, client in enumerate(clients):
            joined = await client.request({"type": "join", "room": room, "name": f"p{i}"})
            assert joined["type"] == "joined", joined
        store.let_load.set()  # (before the fix: the record read with no seat taken lands now)
        await scan
        loaded.cancel()
        started = await clients[0].request({"type": "start", "room": room})
        assert started["type"] == "ack", started  # (before the fix: "4 seats are still free")
        assert app.lobby.rooms[room] is served
    finally:
        store.let_create.set()
        store.let_load.set()
        for client in clients:
            await client.close()
        await app.stop()


async def _act(seats: list[Client], room: str, rng: random.Random) -> dict[str, Any]:
    client = await to_move(seats, room)
    choices = client.view(room)["own"]["choices"]
    frame = {"type": "act", "room": room, "rev": client.rev(room)}
    return await client.request({**frame, "choice": rng.randrange(len(choices))})


async def test_a_lapsed_lease_is_taken_back_and_the_players_play_on(
    redis_server: RedisServer,
) -> None:
    config = dataclasses.replace(TEST_CONFIG, node_id="n1", lease_ttl=30.0)
    store = RedisStore(redis_server.url, fence=fence_of(config))
    await store.start()
    app = App(config, store)
    app.cluster = cluster = Cluster(app, store, config)  # no lease loop: no renewal meanwhile
    await app.start()
    url = f"ws://127.0.0.1:{app.port}/"
    seats = [await Client.open(url, f"s{i}") for i in range(2)]
    rng = random.Random(3)
    try:
        room = (await seats[0].request({"type": "create", "game": "yspahan", "players": 2}))["room"]
        for i, client in enumerate(seats):
            joined = await client.request({"type": "join", "room": room, "seat": i})
            assert joined["type"] == "joined", joined
        assert (await seats[0].request({"type": "start", "room": room}))["type"] == "ack"
        assert (await _act(seats, room, rng))["type"] == "ack"
        served = app.lobby.rooms[room]
        await store.redis.delete(store.lease_key(room))  # as if it had expired
        refused = await _act(seats, room, rng)
        assert refused["type"] == "error" and refused["code"] == "unavailable", refused
        await asyncio.gather(*cluster._tasks)  # the refused append told the cluster: it decides
        answer = await _act(seats, room, rng)
        assert answer["type"] == "ack", answer  # (before the fix: not_allowed, forever)
        assert app.lobby.rooms[room] is served
        holder = await cluster.leases.holder(room)
        assert holder is not None and holder.node == "n1"
        assert not any(f["type"] == "redirect" for c in seats for f in c.frames)
    finally:
        for client in seats:
            await client.close()
        await app.stop()
