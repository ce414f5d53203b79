"""Spectators of a room on a node that does not own it (:mod:`server.relay`): real server
processes on one real redis-server, spectators through the CLI client's
:class:`~clients.connection.Session` (its :class:`~protocol.mirror.Mirror` checks every hash).

Every match is bot-only and paced by ``OASIS_BOT_DELAY``; each test compares what a spectator on
the owner's node saw with what the relay's spectators saw: the same final view (hash), the same
final scores, and no patch that did not fit (a ``state`` resync is allowed only where a test
causes one).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from clients.connection import Session
from protocol.hashing import ViewHasher
from tests.server.cluster.nodes import node, ready, session
from tests.server.persistence.processes import ServerProcess
from tests.services import RedisServer

PACE = "0.004"


@contextlib.asynccontextmanager
async def running(*nodes: ServerProcess) -> AsyncIterator[None]:
    """The nodes started and ready, then stopped whatever the test did."""
    for n in nodes:
        n.start()
    try:
        await ready(*nodes)
        yield
    finally:
        for n in nodes:
            await asyncio.to_thread(n.stop)


@pytest.fixture
async def two(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[list[ServerProcess]]:
    nodes = [
        node(redis_server.url, tmp_path, name, ttl=2.0, OASIS_BOT_DELAY=PACE) for name in ("a", "b")
    ]
    async with running(*nodes):
        yield nodes


async def bot_room(url: str, game: str, delay: float = 0.0) -> tuple[Session, str]:
    """A bot-only room created through ``url``, not started; its host watches it there."""
    host = await session(url, "host")
    created = await host.request(
        {
            "type": "create",
            "game": game,
            "players": 2,
            "bots": 2,
            "seed": 20,
            "spectator_delay": delay,
        }
    )
    room = str(created["room"])
    await host.join({"type": "spectate", "room": room})
    return host, room


def _hash(view: Any) -> str:
    return ViewHasher().hash(view)


async def _watch_to_the_end(sessions: list[Session], room: str, within: float = 90) -> None:
    for s in sessions:
        mirror = s.rooms[room]
        await s.wait(lambda m=mirror: m.over, patience=within)


@pytest.mark.parametrize(
    ("game", "delay"),
    [("yspahan", 0.0), pytest.param("ishtar", 0.0, marks=pytest.mark.slow), ("ishtar", 0.5)],
)
async def test_spectators_of_another_node_follow_the_whole_match(
    two: list[ServerProcess], game: str, delay: float
) -> None:
    """rules-checklist: none (transport). Spectators on node b of a room node a owns are served
    by b (no redirect) and end at the owner's final view, with every patch fitting."""
    a, b = two
    host, room = await bot_room(a.url, game, delay)
    relayed = [await session(b.url, f"r{i}") for i in range(3)]
    for s in relayed:
        mirror = await s.join({"type": "spectate", "room": room})
        assert s.url.split("?")[0] == b.url, "a spectator was redirected"
        assert mirror.spectator and mirror.view is not None
    await host.request({"type": "start", "room": room, "bots": True})
    await _watch_to_the_end([host, *relayed], room)
    final = host.rooms[room]
    assert final.result is not None and final.rev > 10
    for s in relayed:
        mirror = s.rooms[room]
        assert s.url.split("?")[0] == b.url
        assert mirror.rev == final.rev
        assert _hash(mirror.view) == _hash(final.view)
        assert mirror.result == final.result
        assert mirror.resyncs == 0 and s.problems == [], s.problems
    for s in (host, *relayed):
        await s.close()


def _final_checks(watchers: list[Session], room: str, final: Any) -> None:
    """Every watcher ends at ``final`` (a mirror): same rev, view hash and scores, and no patch
    it received ever failed to fit or to match its hash."""
    for s in watchers:
        mirror = s.rooms[room]
        assert mirror.rev == final.rev
        assert _hash(mirror.view) == _hash(final.view)
        assert mirror.result == final.result
        wrong = [p for p in s.problems if "hash" in p or "does not fit" in p]
        assert wrong == [], s.problems


async def test_a_lost_relay_message_ends_in_a_resync_never_a_wrong_view(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). Node b drops every 15th patch it receives from Redis:
    each gap makes it read the owner's state and send ``state``; its spectators never see a
    gap nor a patch on the wrong base, and end at the owner's final view."""
    a = node(redis_server.url, tmp_path, "a", ttl=2.0, OASIS_BOT_DELAY=PACE)
    b = node(
        redis_server.url,
        tmp_path,
        "b",
        ttl=2.0,
        OASIS_BOT_DELAY=PACE,
        OASIS_RELAY_DROP_EVERY="15",
        OASIS_LOG_LEVEL="info",
    )
    async with running(a, b):
        host, room = await bot_room(a.url, "yspahan")
        relayed = [await session(b.url, f"r{i}") for i in range(2)]
        for s in relayed:
            await s.join({"type": "spectate", "room": room})
        await host.request({"type": "start", "room": room, "bots": True})
        await _watch_to_the_end([host, *relayed], room)
        final = host.rooms[room]
        assert final.rev > 30
        _final_checks(relayed, room, final)
        for s in relayed:
            assert s.problems == [], s.problems  # the relay resynced: no client saw the gap
        resyncs = b.log.read_text().count("relay_resync")
        assert resyncs >= 1, "no message was dropped"
        for s in (host, *relayed):
            await s.close()


async def test_kill_9_of_the_owner_relay_spectators_keep_watching_to_the_final_view(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). The owner dies mid-match: the room moves to b or c,
    b's relay spectators keep their sockets and their feed (a resync allowed), and end at the
    final view a newcomer is shown."""
    nodes = [
        node(redis_server.url, tmp_path, name, ttl=1.0, OASIS_BOT_DELAY="0.03")
        for name in ("a", "b", "c")
    ]
    a, b, c = nodes
    async with running(*nodes):
        host, room = await bot_room(a.url, "ishtar")
        relayed = [await session(b.url, f"r{i}") for i in range(2)]
        for s in relayed:
            await s.join({"type": "spectate", "room": room})
        await host.request({"type": "start", "room": room, "bots": True})
        mirror = relayed[0].rooms[room]
        await relayed[0].wait(lambda: mirror.rev >= 10, patience=30)
        a.kill()
        at_kill = mirror.rev
        await _watch_to_the_end(relayed, room)
        assert mirror.rev > at_kill + 5, "the match did not go on after the kill"
        late = await session(c.url, "late")
        final = await late.join({"type": "spectate", "room": room})
        assert final.over
        _final_checks(relayed, room, final)
        for s in relayed:
            assert s.url.split("?")[0] == b.url and s.connections == 0, "a spectator reconnected"
        for s in (*relayed, late):
            await s.close()
        host.reconnect = False


async def test_kill_9_of_a_relay_node_its_spectators_resume_on_another(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). The relay node b dies: its spectators reconnect to c
    (what a load balancer would pick), resume spectating there and end at the owner's final
    view."""
    nodes = [
        node(redis_server.url, tmp_path, name, ttl=1.0, OASIS_BOT_DELAY="0.02")
        for name in ("a", "b", "c")
    ]
    a, b, c = nodes
    async with running(*nodes):
        host, room = await bot_room(a.url, "yspahan")
        relayed = [await session(b.url, f"r{i}") for i in range(2)]
        for s in relayed:
            await s.join({"type": "spectate", "room": room})
            s.home = c.url
        await host.request({"type": "start", "room": room, "bots": True})
        mirror = relayed[0].rooms[room]
        await relayed[0].wait(lambda: mirror.rev >= 10, patience=30)
        b.kill()
        await _watch_to_the_end([host, *relayed], room)
        final = host.rooms[room]
        _final_checks(relayed, room, final)
        for s in relayed:
            assert s.url.split("?")[0] == c.url and s.connections >= 1
        for s in (host, *relayed):
            await s.close()


async def _listed_spectators(s: Session, room: str) -> int | None:
    page = await s.request({"type": "list_rooms"})
    found = [r for r in page["rooms"] if r["room"] == room]
    return int(found[0]["spectators"]) if found else None


async def test_listings_count_the_spectators_of_every_node(two: list[ServerProcess]) -> None:
    """rules-checklist: none (transport). One spectator on the owner a, three relayed by b:
    both nodes list the room with 4 spectators (within a few seconds); when b's leave, 1."""
    a, b = two
    host, room = await bot_room(a.url, "yspahan")
    relayed = [await session(b.url, f"r{i}") for i in range(3)]
    for s in relayed:
        await s.join({"type": "spectate", "room": room})
    lister_a, lister_b = await session(a.url, "la"), await session(b.url, "lb")

    async def until(expected: int) -> None:
        seen: list[int | None] = []
        for _ in range(30):  # (within the listing budget: 2 a second)
            seen = [await _listed_spectators(x, room) for x in (lister_a, lister_b)]
            if seen == [expected, expected]:
                return
            await asyncio.sleep(0.6)
        raise AssertionError(f"listed {seen}, expected {expected} on both nodes")

    await until(4)
    for s in relayed:
        await s.close()
    await until(1)
    for s in (host, lister_a, lister_b):
        await s.close()


async def test_a_relayed_rooms_cap_is_quota_exceeded(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). ``spectators_per_room`` caps a relayed room's
    spectators on the relay node, refused with ``quota_exceeded`` naming the cap."""
    a = node(redis_server.url, tmp_path, "a", ttl=2.0)
    b = node(redis_server.url, tmp_path, "b", ttl=2.0, OASIS_SPECTATORS_PER_ROOM="2")
    async with running(a, b):
        host, room = await bot_room(a.url, "ishtar")
        watchers = [await b.client(f"w{i}") for i in range(3)]
        for w in watchers[:2]:
            answer = await w.request({"type": "spectate", "room": room})
            assert answer["type"] == "joined", answer
        refused = await watchers[2].request({"type": "spectate", "room": room})
        assert refused["type"] == "error" and refused["code"] == "quota_exceeded", refused
        assert refused["limit"] == "spectators_per_room"
        for w in watchers:
            await w.close()
        await host.close()


async def test_a_room_with_a_long_delay_is_redirected_not_relayed(
    two: list[ServerProcess],
) -> None:
    """rules-checklist: none (transport). A relay would make the first spectator wait the whole
    delay: above 10 s, ``spectate`` on another node is a ``redirect`` to the owner."""
    a, b = two
    host, room = await bot_room(a.url, "yspahan", delay=20.0)
    watcher = await b.client("w")
    answer = await watcher.request({"type": "spectate", "room": room})
    assert answer["type"] == "redirect" and answer["url"] == a.url, answer
    await watcher.close()
    await host.close()


class ChannelCounter:
    """A raw Redis subscriber counting the messages of every room's spectator channel."""

    def __init__(self, url: str) -> None:
        self.redis = aioredis.Redis.from_url(url)
        self.pubsub = self.redis.pubsub()
        self.counts: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.pubsub.psubscribe("oasis:{*}:spectate")
        self._task = asyncio.get_running_loop().create_task(self._count())

    async def _count(self) -> None:
        while True:
            message = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None:
                name = message["channel"].decode()
                self.counts[name] = self.counts.get(name, 0) + 1

    def of(self, room: str) -> int:
        return self.counts.get(f"oasis:{{{room}}}:spectate", 0)

    async def publishes(self) -> int:
        """PUBLISH commands the redis-server ran (every node's, this subscriber sends none)."""
        stats = await self.redis.info("commandstats")
        return int(stats.get("cmdstat_publish", {}).get("calls", 0))

    async def state_exists(self, room: str) -> bool:
        return bool(await self.redis.exists(f"oasis:{{{room}}}:spectate:state"))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.pubsub.aclose()
        await self.redis.aclose()


async def test_only_rooms_with_relay_spectators_are_published(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). Two rooms on a, watched only there: no PUBLISH at all,
    no state key. A relay spectator on b joins room 1 mid-match: it gets the state and follows
    to the final view with every patch fitting. One joins room 2 and leaves: room 2's state key
    goes and its channel falls silent while its match goes on."""
    nodes = [node(redis_server.url, tmp_path, n, ttl=2.0, OASIS_BOT_DELAY="0.03") for n in "ab"]
    a, b = nodes
    counter = ChannelCounter(redis_server.url)
    for n in nodes:
        n.start()
    try:
        await ready(a, b)
        await counter.start()
        host1, room1 = await bot_room(a.url, "yspahan")
        host2, room2 = await bot_room(a.url, "yspahan")
        for host, room in ((host1, room1), (host2, room2)):
            await host.request({"type": "start", "room": room, "bots": True})
        watched1, watched2 = host1.rooms[room1], host2.rooms[room2]
        await host1.wait(lambda: watched1.rev >= 15 and watched2.rev >= 15, patience=60)
        assert await counter.publishes() == 0
        assert counter.counts == {}
        assert not await counter.state_exists(room1) and not await counter.state_exists(room2)

        late = await session(b.url, "late")
        mirror = await late.join({"type": "spectate", "room": room1})
        assert late.url.split("?")[0] == b.url, "the spectator was redirected"
        assert mirror.rev >= 15 and not mirror.over

        leaver = await session(b.url, "leaver")
        left = await leaver.join({"type": "spectate", "room": room2})
        joined_at = left.rev
        await leaver.wait(lambda: left.rev >= joined_at + 5, patience=30)
        assert counter.of(room2) > 0 and await counter.state_exists(room2)
        await leaver.close()
        for _ in range(50):  # the relay says bye at once; an owner forgets it within 6 s anyway
            if not await counter.state_exists(room2):
                break
            await asyncio.sleep(0.2)
        assert not await counter.state_exists(room2), "room 2 is still published"
        await asyncio.sleep(0.5)  # (frames already in flight)
        silent_from, rev_then = counter.of(room2), watched2.rev
        await host2.wait(lambda: watched2.rev >= rev_then + 10 or watched2.over, patience=30)
        assert watched2.rev > rev_then
        assert counter.of(room2) == silent_from, "room 2 was published after its interest went"
        assert not await counter.state_exists(room2)

        await _watch_to_the_end([host1, late], room1)
        _final_checks([late], room1, host1.rooms[room1])
        assert late.problems == [] and mirror.resyncs == 0, late.problems
        for s in (host1, host2, late):
            await s.close()
    finally:
        await counter.close()
        for n in nodes:
            await asyncio.to_thread(n.stop)


@pytest.mark.slow  # 28 s; the kill -9 of the owner keeps relay spectators watching (default tier)
async def test_a_hand_off_of_the_owner_relay_spectators_keep_watching_to_the_final_view(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """rules-checklist: none (transport). SIGTERM of the owner mid-match hands the room off at
    once (leases far longer than the test: nothing else moves it): the new owner heard the
    relays' interest and publishes the room; the relay spectators of b and c keep their sockets
    and end at the final view a newcomer is shown."""
    nodes = [
        node(redis_server.url, tmp_path, name, ttl=60.0, OASIS_BOT_DELAY="0.03")
        for name in ("a", "b", "c")
    ]
    a, b, c = nodes
    async with running(*nodes):
        host, room = await bot_room(a.url, "yspahan")
        host.reconnect = False
        relayed = [await session(url, f"r{i}") for i, url in enumerate((b.url, c.url))]
        for s in relayed:
            await s.join({"type": "spectate", "room": room})
        await host.request({"type": "start", "room": room, "bots": True})
        mirror = relayed[0].rooms[room]
        await relayed[0].wait(lambda: mirror.rev >= 10, patience=30)
        assert await asyncio.to_thread(a.stop) == 0
        at_hand_off = mirror.rev
        await _watch_to_the_end(relayed, room)
        assert mirror.rev > at_hand_off + 5, "the match did not go on after the hand-off"
        late = await session(c.url, "late")
        final = await late.join({"type": "spectate", "room": room})
        assert final.over
        _final_checks(relayed, room, final)
        for s, url in zip(relayed, (b.url, c.url), strict=True):
            assert s.url.split("?")[0] == url and s.connections == 0, "a spectator reconnected"
        for s in (*relayed, late):
            await s.close()


async def test_a_relay_spectator_chats_through_the_owner(two: list[ServerProcess]) -> None:
    """rules-checklist: none (transport). A spectator on b of a's room says a line: b answers
    ``ack`` and forwards it; a stores it and sends it to its own spectators and to b's (the
    speaker sees its line), and a newcomer's ``joined`` lists it. In a room with
    ``spectator_chat`` off, b refuses the line as a would."""
    a, b = two
    host = await a.client("host")
    created = await host.request(
        {"type": "create", "game": "yspahan", "players": 2, "bots": 2, "seed": 20}
    )
    room = created["room"]
    assert (await host.request({"type": "spectate", "room": room}))["type"] == "joined"
    watcher = await b.client("w")
    assert (await watcher.request({"type": "spectate", "room": room}))["type"] == "joined"
    from_host, from_watcher = len(host.frames), len(watcher.frames)
    answer = await watcher.request({"type": "chat", "room": room, "text": "hello from b"})
    assert answer["type"] == "ack", answer

    def said(frame: dict[str, Any]) -> bool:
        return frame.get("type") == "chat" and frame.get("text") == "hello from b"

    line = await host.wait_for(said, from_host)
    assert line["from"]["seat"] is None and line["from"]["name"].startswith("spectator ")
    assert (await watcher.wait_for(said, from_watcher))["from"] == line["from"]
    late = await a.client("late")
    joined = await late.request({"type": "spectate", "room": room})
    assert [x["text"] for x in joined["chat"]] == ["hello from b"]

    quiet = await host.request(
        {"type": "create", "game": "yspahan", "players": 2, "spectator_chat": False}
    )
    assert (await watcher.request({"type": "spectate", "room": quiet["room"]}))["type"] == "joined"
    refused = await watcher.request({"type": "chat", "room": quiet["room"], "text": "hi"})
    assert refused["type"] == "error" and refused["code"] == "not_allowed", refused
    for c in (host, watcher, late):
        await c.close()
