"""The room's store hooks against a real redis-server: every choice logged before its ack."""

from __future__ import annotations

from typing import Any

from games import registry
from games.base import Match
from server.app import App
from server.main import restore_rooms
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import room_view
from tests.services import RedisServer


async def test_a_match_with_bots_is_logged_and_archived_in_redis(
    redis_server: RedisServer,
) -> None:
    store: Any = RedisStore(redis_server.url)
    await store.start()
    app = App(TEST_CONFIG, store)
    await app.start()
    human = await Client.open(f"ws://127.0.0.1:{app.port}/", "human")
    try:
        created = await human.request({"type": "create", "game": "tiny", "players": 3, "seed": 99})
        room = created["room"]
        await human.request({"type": "join", "room": room})
        await human.request({"type": "start", "room": room, "bots": True})
        while human.view(room)["shared"]["result"] is None:
            await human.until(
                lambda: (
                    bool(human.view(room)["own"]["choices"])
                    or human.view(room)["shared"]["result"] is not None
                )
            )
            if human.view(room)["own"]["choices"]:
                ack = await human.request(
                    {"type": "act", "room": room, "rev": human.rev(room), "choice": 0}
                )
                assert ack["type"] == "ack"
        await human.request({"type": "sync", "room": room})  # the room has finished by now
        record = await store.load_archive(room)
        assert record is not None and record.seed == 99
        assert [a.rev for a in record.actions] == list(range(1, human.rev(room) + 1))
        game = registry.get("tiny")
        match = Match.new(game, 3, {}, 99)
        for action in record.actions:
            match.act(action.seat, action.choice)
        assert room_view(match, 0) == human.view(room)
    finally:
        await human.close()
        await app.stop()


async def test_rooms_come_back_after_a_restart_and_players_resume_with_their_tokens(
    redis_server: RedisServer,
) -> None:

    first_store: Any = RedisStore(redis_server.url)
    await first_store.start()
    first = App(TEST_CONFIG, first_store)
    await first.start()
    url = f"ws://127.0.0.1:{first.port}/"
    seats = [await Client.open(url, f"seat{i}") for i in range(3)]
    created = await seats[0].request({"type": "create", "game": "tiny", "players": 3, "seed": 8})
    room = created["room"]
    tokens = [(await c.request({"type": "join", "room": room}))["token"] for c in seats]
    await seats[0].request({"type": "start", "room": room, "bots": False})
    for _ in range(4):
        mover = next(c for c in seats if c.view(room)["own"]["choices"])
        rev = mover.rev(room)
        assert (await mover.request({"type": "act", "room": room, "rev": rev, "choice": 0}))[
            "rev"
        ] == rev + 1
        for c in seats:
            await c.until(lambda c=c, r=rev: c.rev(room) == r + 1)  # type: ignore[misc]
    before = [c.view(room) for c in seats]
    await first.stop()
    for c in seats:
        await c.close()

    second_store: Any = RedisStore(redis_server.url)
    await second_store.start()
    second = App(TEST_CONFIG, second_store)
    await restore_rooms(second)
    await second.start()
    url = f"ws://127.0.0.1:{second.port}/"
    back = [await Client.open(url, f"back{i}") for i in range(3)]
    try:
        for i, c in enumerate(back):
            joined = await c.request({"type": "join", "room": room, "token": tokens[i]})
            assert joined["seat"] == i and joined["rev"] == 4, joined
            assert joined["view"] == before[i]
        wrong = await back[0].request({"type": "join", "room": room, "token": "x" * 43})
        assert wrong["code"] == "bad_token"
        while back[0].view(room)["shared"]["result"] is None:
            mover = next(c for c in back if c.view(room)["own"]["choices"])
            rev = mover.rev(room)
            await mover.request({"type": "act", "room": room, "rev": rev, "choice": 0})
            for c in back:
                await c.until(lambda c=c, r=rev: c.rev(room) == r + 1)  # type: ignore[misc]
        await back[0].request({"type": "sync", "room": room})
        record = await second_store.load_archive(room)
        assert [a.rev for a in record.actions] == list(range(1, back[0].rev(room) + 1))
    finally:
        for c in back:
            await c.close()
        await second.stop()
