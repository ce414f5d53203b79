"""Several nodes on one Redis: every node lists every room, and sends a room's clients to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.server.cluster.nodes import node, ready, session
from tests.server.matches import my_turn, over
from tests.server.persistence.processes import ServerProcess
from tests.services import RedisServer


@pytest.fixture
async def two(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[list[ServerProcess]]:
    nodes = [node(redis_server.url, tmp_path, name, ttl=2.0) for name in ("a", "b")]
    for n in nodes:
        n.start()
    try:
        await ready(*nodes)
        yield nodes
    finally:
        for n in nodes:
            await asyncio.to_thread(n.stop)


async def test_a_room_created_on_one_node_is_listed_on_the_other_and_redirects_there(
    two: list[ServerProcess],
) -> None:
    a, b = two
    host = await a.client("host")
    created = await host.request({"type": "create", "game": "yspahan", "players": 2})
    room = created["room"]
    on_b = await b.client("b")
    listed = await on_b.request({"type": "list_rooms"})
    assert [r["room"] for r in listed["rooms"]] == [room]
    info = listed["rooms"][0]
    assert info["game"] == "yspahan" and info["state"] == "open"
    assert "tokens" not in info and "host" not in info and "seed" not in info
    for frame in (
        {"type": "join", "room": room, "name": "bo"},
        {"type": "sync", "room": room},
    ):
        answer = await on_b.request(frame)
        assert answer["type"] == "redirect", answer
        assert answer["room"] == room and answer["url"] == a.url
    watcher = await b.client("w")  # spectators are served by any node (server.relay)
    answer = await watcher.request({"type": "spectate", "room": room})
    assert answer["type"] == "joined" and answer["rev"] == 0, answer
    await watcher.close()
    missing = await on_b.request({"type": "join", "room": "nosuchroom", "name": "x"})
    assert missing["type"] == "error" and missing["code"] == "not_found"
    await host.close()
    await on_b.close()


async def test_the_cli_client_follows_a_redirect_to_the_rooms_node(
    two: list[ServerProcess],
) -> None:
    a, b = two
    host = await session(a.url, "host")
    created = await host.request({"type": "create", "game": "ishtar", "players": 2})
    room = created["room"]
    await host.join({"type": "join", "room": room, "name": "ann"})
    guest = await session(b.url, "guest")
    mirror = await guest.join({"type": "join", "room": room, "name": "bob"})
    assert guest.url.split("?")[0] == a.url and guest.home == b.url
    assert mirror.token and mirror.seat == 1
    await host.request({"type": "start", "room": room})
    await guest.wait(lambda: mirror.info.get("state") == "playing", patience=10)
    await host.close()
    await guest.close()


async def test_quick_match_finds_the_waiting_room_of_another_node(
    two: list[ServerProcess],
) -> None:
    a, b = two
    first = await session(a.url, "first")
    waiting = await first.join({"type": "quick", "game": "yspahan", "players": 2, "name": "a"})
    second = await session(b.url, "second")
    joined = await second.join({"type": "quick", "game": "yspahan", "players": 2, "name": "b"})
    assert joined.room == waiting.room
    await second.wait(lambda: joined.info.get("state") == "playing", patience=10)
    await first.close()
    await second.close()


async def test_pages_of_list_rooms_cover_both_nodes_in_creation_order(
    two: list[ServerProcess],
) -> None:
    """The other node's rooms come from Redis's index of live rooms, page by page, in the
    order they were created, each once; filters apply to both nodes' rooms alike."""
    a, b = two
    on_a, on_b = await a.client("a"), await b.client("b")
    made = []
    for i in range(5):
        host = on_a if i % 2 == 0 else on_b
        created = await host.request({"type": "create", "game": "yspahan", "players": 2})
        made.append(created["room"])
    await on_b.request({"type": "join", "room": made[1], "name": "bo"})
    for client in (on_a, on_b):
        seen: list[str] = []
        after = None
        while True:
            frame = {"type": "list_rooms", "limit": 2, **({"after": after} if after else {})}
            page = await client.request(frame)
            assert len(page["rooms"]) <= 2
            seen += [r["room"] for r in page["rooms"]]
            after = page.get("next")
            if after is None:
                break
        assert seen == made
    free = await on_a.request({"type": "list_rooms", "free": True, "game": "yspahan"})
    assert made[1] in [r["room"] for r in free["rooms"]]  # one seat of two is still free
    other = await on_a.request({"type": "list_rooms", "game": "ishtar"})
    assert other["rooms"] == []
    await on_a.close()
    await on_b.close()


async def test_a_rematch_is_asked_of_the_rooms_node_and_listed_on_both(
    two: list[ServerProcess],
) -> None:
    """SPEC section 9 on two nodes: a ``rematch`` sent to the other node is redirected like any
    request about the room; on the room's node it makes the new room there, which both list."""
    a, b = two
    ann = await a.client("ann")
    created = await ann.request(
        {"type": "create", "game": "yspahan", "players": 2, "bots": 1, "seed": 5}
    )
    room = created["room"]
    await ann.request({"type": "join", "room": room, "name": "ann"})
    await ann.request({"type": "start", "room": room})
    while not over(ann, room):
        await ann.until(lambda: my_turn(ann, room) or over(ann, room), wait=30)
        if my_turn(ann, room):
            act = {"type": "act", "room": room, "rev": ann.rev(room), "choice": 0}
            assert (await ann.request(act))["type"] == "ack"
    elsewhere = await b.client("ann-on-b")
    answer = await elsewhere.request({"type": "rematch", "room": room})
    assert answer["type"] == "redirect" and answer["url"] == a.url, answer
    ack = await ann.request({"type": "rematch", "room": room})
    assert ack["type"] == "ack" and ack["info"]["state"] == "playing", ack
    new = ack["room"]
    joined = next(f for f in ann.frames if f["type"] == "joined" and f["room"] == new)
    assert joined["moved_from"] == room and joined["seat"] == 0 and "id" not in joined
    assert [s["bot"] for s in ack["info"]["seats"]] == [False, True]
    listed = await elsewhere.request({"type": "list_rooms", "state": "playing"})
    assert new in [r["room"] for r in listed["rooms"]]
    await ann.close()
    await elsewhere.close()
