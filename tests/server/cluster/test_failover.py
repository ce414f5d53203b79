"""Acceptance: a node dies, is stopped, or is paused past its leases; no match loses a choice.

Three (or two) real ``oasis-server`` nodes share one redis-server; matches of both games run with
seats spread over the nodes (each seat's session starts on some node and is redirected to the
room's), plus a room where server-side bots hold every seat but one. Then:

- ``kill -9`` of a node: its leases expire and the others take its rooms over from Redis; the
  seats come back through redirects with their tokens;
- SIGTERM of each node in turn (a rolling restart): a stopping node hands its rooms off at once
  (no waiting for the ttl, which is long here) and sends its clients to a live peer;
- afterwards every acknowledged choice is in the archive at its rev, and every match finished.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path

import pytest

from games import registry
from games.base import Match
from server.store.redis import RedisStore
from tests.server.cluster.nodes import (
    SeatPlayer,
    close_all,
    node,
    open_room,
    ready,
    wait_for_acks,
)
from tests.server.persistence.processes import ServerProcess, archive_of
from tests.services import RedisServer

GAMES = ("ishtar", "yspahan")


async def _rooms(
    nodes: list[ServerProcess], rng: random.Random, progress: asyncio.Event
) -> tuple[dict[str, str], list[SeatPlayer]]:
    """One room per game on node 0, one per game on node 1, a bots room on node 0; seats join
    through the nodes in turn."""
    rooms: dict[str, str] = {}
    players: list[SeatPlayer] = []
    urls = [n.url for n in nodes]
    for owner in (0, 1):
        for g, game in enumerate(GAMES):
            seats = [urls[owner]] + [urls[(owner + g + i) % len(urls)] for i in range(1, 3)]
            room, new = await open_room(urls[owner], seats, game, rng, progress)
            rooms[room] = game
            players += new
    room, new = await open_room(urls[0], [urls[0]] * 3, "yspahan", rng, progress, bots=True)
    rooms[room] = "yspahan"
    players += new
    return rooms, players


async def _check(reader: RedisStore, rooms: dict[str, str], players: list[SeatPlayer]) -> None:
    for room, game in rooms.items():
        archive = await archive_of(reader, room)
        stored = {a.rev: (a.seat, a.choice) for a in archive.actions}
        for p in players:
            if p.room == room:
                for rev, choice in p.acked.items():
                    assert stored.get(rev) == (p.seat, choice), (room, rev)
        match: Match[object] = Match.new(
            registry.get(game), archive.players, archive.options, archive.seed
        )
        for action in archive.actions:
            match.act(action.seat, action.choice)
        assert match.over and archive.result == match.result().to_json()  # type: ignore[union-attr]


async def test_kill_9_a_node_its_rooms_resume_on_the_others_with_every_choice(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    ttl = 1.0
    nodes = [node(redis_server.url, tmp_path, n, ttl) for n in ("a", "b", "c")]
    for n in nodes:
        n.start()
    players: list[SeatPlayer] = []
    try:
        await ready(*nodes)
        rng = random.Random(9)
        progress = asyncio.Event()
        rooms, players = await _rooms(nodes, rng, progress)
        for i, p in enumerate(players):
            # What a load balancer would be: an address that reaches a live node. (A session
            # that only knows the node that died has nowhere to go.)
            p.session.home = nodes[1 + i % 2].url
        tasks = asyncio.gather(*(asyncio.create_task(p.run()) for p in players))
        notes: list[str] = []
        for p in players:
            p.session.notices.append(lambda t, p=p: notes.append(f"{p.room}/{p.seat}: {t}"))
        await wait_for_acks(players, 30)
        killed = time.monotonic()
        nodes[0].kill()
        # every room of node a must take a choice again within the ttl + 5 s
        moved = {p.room for p in players if p.session.url.split("?")[0] == nodes[0].url}
        assert moved
        for room in moved:
            seats = [p for p in players if p.room == room]
            while not any(p.last_ack > killed for p in seats):
                if all(p.session.rooms[room].over for p in seats):
                    break
                assert time.monotonic() - killed < ttl + 5, (
                    f"room {room} did not come back",
                    [(p.seat, p.session.url, p.refused, p.session.rooms[room].rev) for p in seats],
                    [(n.url, n.log.read_text()[-3000:]) for n in nodes],
                    [p.session.home for p in seats],
                    notes,
                )
                await asyncio.sleep(0.05)
        async with asyncio.timeout(120):
            await tasks
        await _check(reader, rooms, players)
    finally:
        await close_all(players)
        for n in nodes:
            await asyncio.to_thread(n.stop)


async def test_rolling_restart_hands_rooms_off_at_once_and_loses_nothing(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    ttl = 60.0  # far longer than the test: only the hand-off can move a room
    nodes = [node(redis_server.url, tmp_path, n, ttl) for n in ("a", "b")]
    for n in nodes:
        n.start()
    players: list[SeatPlayer] = []
    try:
        await ready(*nodes)
        rng = random.Random(11)
        progress = asyncio.Event()
        rooms, players = await _rooms(nodes, rng, progress)
        tasks = asyncio.gather(*(asyncio.create_task(p.run()) for p in players))
        for n in nodes:  # stop each node in turn, start it again (the new release)
            await wait_for_acks(players, 15)
            stopped = time.monotonic()
            assert n.process is not None
            n.process.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(n.process.wait, 15) == 0
            n.process = None
            await wait_for_acks(players, 5, within=ttl / 4)
            assert time.monotonic() - stopped < 10
            n.start()
            await ready(n)
        async with asyncio.timeout(120):
            await tasks
        await _check(reader, rooms, players)
        assert all(p.session.gone is None for p in players)
    finally:
        await close_all(players)
        for n in nodes:
            await asyncio.to_thread(n.stop)


async def test_a_node_paused_past_its_lease_applies_no_choice_after_it_resumes(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    """Split brain: SIGSTOP node a past its leases; b takes the room over and play goes on there;
    a choice sent to a while it slept, legal in a's view of the room, is not applied by a after
    SIGCONT (the append script checks the lease)."""
    ttl = 1.0
    a, b = nodes = [node(redis_server.url, tmp_path, n, ttl) for n in ("a", "b")]
    for n in nodes:
        n.start()
    players: list[SeatPlayer] = []
    try:
        await ready(*nodes)
        rng = random.Random(5)
        progress = asyncio.Event()
        room, players = await open_room(a.url, [a.url, a.url], "yspahan", rng, progress)
        for p in players:
            p.session.home = b.url
        tasks = [asyncio.create_task(p.run()) for p in players]
        await wait_for_acks(players, 6)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # the seat whose turn it is takes its seat again from a raw client on a
        turn = next(p for p in players if p.session.rooms[room].choices)
        stale = await a.client("stale")
        joined = await stale.request(
            {"type": "join", "room": room, "token": turn.session.rooms[room].token}
        )
        assert joined["type"] == "joined", joined
        rev = stale.rev(room)
        choice = stale.view(room)["own"]["choices"][0]
        assert a.process is not None
        a.process.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(ttl * 1.5)
            # the seats come back through b, which takes the room over
            await asyncio.gather(*(p.session.follow(b.url, room) for p in players))
            tasks = [asyncio.create_task(p.run()) for p in players]
            await wait_for_acks(players, 3)
            assert max(max(p.acked) for p in players) > rev
            await stale.send(
                {"type": "act", "room": room, "rev": rev, "choice": choice, "id": "late"}
            )
        finally:
            a.process.send_signal(signal.SIGCONT)
        answer = await stale.wait_for(lambda f: f.get("id") == "late", 0, 10)
        assert answer["type"] == "redirect" or answer.get("code") == "unavailable", answer
        async with asyncio.timeout(120):
            await asyncio.gather(*tasks)
        archive = await archive_of(reader, room)
        for p in players:
            for r, c in p.acked.items():
                assert (archive.actions[r - 1].seat, archive.actions[r - 1].choice) == (p.seat, c)
        await stale.close()
    finally:
        await close_all(players)
        for n in nodes:
            await asyncio.to_thread(n.stop)


@pytest.mark.slow
async def test_three_nodes_survive_kills_and_rolling_restarts_again_and_again(
    redis_server: RedisServer, tmp_path: Path, reader: RedisStore
) -> None:
    """Soak: three nodes, more rooms; each node in turn is killed (-9) and started again, then
    each is stopped with SIGTERM and started again (a rolling upgrade), twice over."""
    ttl = 1.0
    nodes = [node(redis_server.url, tmp_path, n, ttl) for n in ("a", "b", "c")]
    for n in nodes:
        n.start()
    players: list[SeatPlayer] = []
    try:
        await ready(*nodes)
        rng = random.Random(2026)
        progress = asyncio.Event()
        rooms: dict[str, str] = {}
        for _ in range(2):
            more, new = await _rooms(nodes, rng, progress)
            rooms |= more
            players += new
        for i, p in enumerate(players):
            p.session.home = nodes[i % 3].url
        tasks = asyncio.gather(*(asyncio.create_task(p.run()) for p in players))
        for _ in range(2):
            for n in nodes:
                await wait_for_acks(players, 20, nodes=nodes)
                n.kill()
                await wait_for_acks(players, 10, within=30, nodes=nodes)
                n.start()
                await ready(n)
            for n in nodes:
                await wait_for_acks(players, 20, nodes=nodes)
                assert n.process is not None
                n.process.send_signal(signal.SIGTERM)
                assert await asyncio.to_thread(n.process.wait, 15) == 0
                n.process = None
                n.start()
                await ready(n)
        async with asyncio.timeout(300):
            await tasks
        await _check(reader, rooms, players)
    finally:
        await close_all(players)
        for n in nodes:
            await asyncio.to_thread(n.stop)
