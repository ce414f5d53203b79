"""Memory bounds (issue 14 item 3): abandoned and finished rooms are freed once they close.

Rooms are created and left over real sockets; once the lobby has closed them and the server has
let go of their connections, a weak reference to every one of them must be dead after a
collection, and every table of the node that grows with rooms, connections or addresses is back
to its size before: no timer (a 60 s takeover grace, a clock, the reap, a bot's delay), no
index, no quota and no connection handler keeps a closed room alive. The RSS figures of 2,000
such rooms are ``bench/memory.py``'s (BENCHMARKS.md).

No wall-clock wait decides anything here: the tests wait for events (the lobby empty, the
server's connections gone), each round trip of a probe client letting the server's timers run.
(The first version checked the weak references as soon as the lobby was empty; a server-side
connection handler still closing at that moment could hold its last request's objects, so
the check now also waits for the server to have dropped every connection but the probe's.)
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable

from games import registry
from server.app import App
from server.room import Room
from server.store.client import POOL_IDLE_KEEP
from server.store.redis import RedisStore
from server.warmup import load_engines
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient
from tests.server.test_rematch import _finished
from tests.services import RedisServer

ROOMS = 24


async def _until(probe: Client, done: Callable[[], bool], within: float = 60.0) -> None:
    """Until ``done()``; each round trip of ``probe`` lets the server's timers run. (``within``
    only bounds a broken run: nothing is timed.)"""
    async with asyncio.timeout(within):
        while not done():
            await probe.request({"type": "ping"})


def _settled(app: App, rooms: list[str]) -> bool:
    """The lobby has closed every one of ``rooms`` and only the probe is still connected."""
    return not any(room in app.lobby.rooms for room in rooms) and len(app.connections) == 1


def _alive(refs: list[weakref.ref[Room]]) -> list[Room]:
    gc.collect()
    return [thing for ref in refs if (thing := ref()) is not None]


def _tables(app: App) -> dict[str, int]:
    """The size of every table of the node that grows with rooms, connections or addresses."""
    lobby, q = app.lobby, app.quotas
    sizes = {
        "rooms": len(lobby.rooms),
        "creating": len(lobby.creating),
        "index": len(lobby.index),
        "connections": len(app.connections),
        "addresses": len(app.ips),
    }
    for quota in (
        q.rooms_per_connection,
        q.rooms_per_address,
        q.bot_matches,
        q.replays,
        q.replays_per_address,
        q.spectators,
        q.half_open,
    ):
        sizes[quota.name] = len(quota)
    for kind, budget in q.per_connection.items():
        sizes[f"{kind}_per_connection"] = len(budget)
    return sizes


async def test_abandoned_and_finished_rooms_are_freed_once_closed(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    # A long takeover grace and clocks: before issue 14 their timers kept each closed room (and
    # its match) in memory for a minute after it closed.
    app = await make_app(
        room_idle_ttl=0.2, finished_room_ttl=0.05, takeover_grace=60.0, bot_delay=0.0
    )
    probe = await make_client("probe", target=app)
    before = _tables(app)
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
    await _until(probe, lambda: _settled(app, ids))
    assert _alive(refs) == []
    assert _tables(app) == before


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
    # (within: a bound far below the 600 s an unfinished room would wait)
    await _until(client, lambda: room not in app.lobby.rooms, within=60.0)
    assert _alive([ref]) == []
    assert app.store.archives[room].result.get("abandoned") is None  # type: ignore[attr-defined]


async def test_the_pool_opens_its_lasting_connections_at_start_and_a_trim_keeps_them(
    redis_server: RedisServer,
) -> None:
    """The connections a trim keeps are those made at start-up (made during a burst instead,
    the few that stay would keep the burst's memory resident, see :meth:`Client.open_pool`).
    No watch (it verifies and trims in the background, taking a connection at any moment): the
    test's own trim is the one it checks."""
    store = RedisStore(redis_server.url, allow_volatile=True, watch_interval=0)
    try:
        await store.start()
        client = store._client
        pool = client.redis.connection_pool
        lasting = set(pool._available_connections)
        assert lasting == client._resident
        assert len(lasting) == POOL_IDLE_KEEP
        held = client._lane._connection  # the group commit's own connection, made at start-up too
        assert held is not None and held not in lasting
        burst = [await pool.get_connection() for _ in range(3 * POOL_IDLE_KEEP)]
        assert lasting <= set(burst)  # (the pool hands out its idle ones first)
        for connection in burst:  # the start-up ones released first: the least recently used
            await pool.release(connection)
        gone = [weakref.ref(c) for c in burst if c not in lasting]
        del burst, connection

        async def settled() -> None:
            """The store's own checks of the new connections done (each new connection asks
            for one, which takes a pooled connection while it runs); the group commit's own
            connection stays in use."""
            async with asyncio.timeout(10):
                while set(pool._in_use_connections) - {held} or not _done(  # noqa: ASYNC110
                    store._health._verifying
                ):
                    await asyncio.sleep(0.01)

        await settled()
        await client.trim_pool()
        await settled()
        assert set(pool._available_connections) == lasting
        gc.collect()
        assert not [ref for ref in gone if ref() is not None]
        assert await store.call("ping", lambda: client.redis.ping())  # the kept ones still work
    finally:
        await store.close()


def _done(task: asyncio.Task[None] | None) -> bool:
    return task is None or task.done()


def test_start_up_builds_what_the_engines_cache_before_any_room() -> None:
    """What an engine builds once and keeps is made at start-up, not by the first room of a
    burst (whose arenas it would then keep resident): Ishtar's terrain, grid and names of every
    preset layout."""
    from games.ishtar import board, garden, names

    for cached in (board._build, garden._grid, names._names):
        cached.cache_clear()
    load_engines()
    presets = registry.get("ishtar").edition.presets  # type: ignore[attr-defined]
    for cached in (board._build, garden._grid, names._names):
        assert cached.cache_info().currsize >= len(presets), cached
    before = board._build.cache_info()
    game = registry.get("ishtar")
    game.setup(2, game.check_options(2, {}), seed=99)  # a first room after start: cached
    assert board._build.cache_info().hits == before.hits + 1
    assert board._build.cache_info().currsize == before.currsize


def _cyclic_garbage() -> list[str]:
    """The project's objects that only a collection of the garbage collector would free (kept
    apart with ``DEBUG_SAVEALL``, then let go): their types' names."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = sorted(
            f"{type(thing).__module__}.{type(thing).__qualname__}"
            for thing in gc.garbage
            if type(thing).__module__.split(".")[0] in ("server", "games", "protocol")
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


async def test_closed_rooms_are_freed_by_reference_counting_alone(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    # The server runs with the collector's automatic collections off (server.collector): a room
    # caught in a reference cycle would stay in memory until the next full collection, and
    # with rooms finishing continuously those grow by the thousand between two. So nothing of
    # a closed room may be in a cycle: every kind of end below, its weak reference dead with no
    # collection, and no object of the project left for a collection to find.
    app = await make_app(room_idle_ttl=0.2, finished_room_ttl=0.05, bot_delay=0.0)
    probe = await make_client("probe", target=app)
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        refs: list[weakref.ref[Room]] = []
        ids: list[str] = []
        for i in range(6):
            client = await make_client(f"c{i}", target=app)
            create = {"type": "create", "game": "tiny", "players": 2, "seed": i}
            if i % 3 == 0:  # all bots, played to the end
                room = (await client.request({**create, "bots": 2}))["room"]
                await client.request({"type": "start", "room": room})
            elif i % 3 == 1:  # two people start, then both leave: abandoned mid-match
                room = (await client.request(create))["room"]
                other = await make_client(f"o{i}", target=app)
                await client.request({"type": "join", "room": room})
                await other.request({"type": "join", "room": room})
                await client.request({"type": "start", "room": room})
                await other.close()
            else:  # two people play to the end, then a rematch they both leave
                other = await make_client(f"o{i}", target=app)
                room = await _finished([client, other], [], seed=i)
                refs.append(weakref.ref(app.lobby.rooms[room]))
                ids.append(room)
                room = (await client.request({"type": "rematch", "room": room}))["room"]
                await other.close()
            refs.append(weakref.ref(app.lobby.rooms[room]))
            ids.append(room)
            await client.close()
        await _until(probe, lambda: _settled(app, ids))
        assert [ref() for ref in refs] == [None] * len(refs)
        assert _cyclic_garbage() == []
    finally:
        if enabled:
            gc.enable()
