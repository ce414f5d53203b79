"""What a room writes to its store and when, and what it does when the store fails (in-process)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from server.app import App
from server.randombot import RandomBot
from server.store import Action, MemoryStore, StoreError
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.server.matches import my_turn, over
from tests.server.persistence.conftest import wait_for


class FlakyStore(MemoryStore):
    """A memory store whose next append can be stored *and* reported failed (a timeout after
    Redis wrote it), and whose finish can fail."""

    def __init__(self) -> None:
        super().__init__()
        self.lose_reply = False
        self.finish_fails = False

    async def append(self, room: str, action: Action) -> None:
        await super().append(room, action)
        if self.lose_reply:
            self.lose_reply = False
            raise StoreError("append: redis is unavailable (TimeoutError)")

    async def finish(self, room: str, result: dict[str, Any]) -> None:
        if self.finish_fails:
            raise StoreError("finish: redis is unavailable")
        await super().finish(room, result)


Open = Callable[..., Awaitable[tuple[App, list[Client]]]]


@pytest.fixture
async def served() -> AsyncIterator[Open]:
    """``served(store, clients=N, **config)``: an app on ``store`` and N connected clients."""
    apps: list[App] = []
    clients: list[Client] = []

    async def open_(
        store: MemoryStore, clients_: int = 2, **config: Any
    ) -> tuple[App, list[Client]]:
        app = App(dataclasses.replace(TEST_CONFIG, **config), store)
        await app.start()
        apps.append(app)
        new = [await Client.open(f"ws://127.0.0.1:{app.port}/", f"c{i}") for i in range(clients_)]
        clients.extend(new)
        return app, new

    yield open_
    for client in clients:
        await client.close()
    for app in apps:
        await app.stop()


async def _playing(seats: list[Client], *, seed: int = 5) -> str:
    created = await seats[0].request(
        {"type": "create", "game": "tiny", "players": len(seats), "seed": seed}
    )
    room: str = created["room"]
    for client in seats:
        assert (await client.request({"type": "join", "room": room}))["type"] == "joined"
    assert (await seats[0].request({"type": "start", "room": room}))["type"] == "ack"
    return room


async def _act(seats: list[Client], room: str) -> tuple[Client, dict[str, Any]]:
    """The seat to move acts (choice 0) at the rev it saw; its answer."""

    def ready() -> bool:
        return any(my_turn(c, room) or over(c, room) for c in seats)

    for client in seats:  # each waits on its own frames; the patch reaches all of them
        await client.until(ready)
    mover = next(c for c in seats if my_turn(c, room))
    answer = await mover.request({"type": "act", "room": room, "rev": mover.rev(room), "choice": 0})
    return mover, answer


async def test_seats_are_stored_when_taken_and_when_freed(served: Open) -> None:
    store = MemoryStore()
    _, (a, b) = await served(store)
    room = (await a.request({"type": "create", "game": "tiny", "players": 2}))["room"]
    await a.request({"type": "join", "room": room, "name": "ann"})
    assert store.rooms[room]["tokens"][0] and not store.rooms[room]["tokens"][1]
    assert store.rooms[room]["seats"][0]["name"] == "ann"
    assert store.rooms[room]["host"] == a.frames[0]["session"]
    assert store.rooms[room]["quick"] is False
    await b.request({"type": "join", "room": room, "name": "bob"})
    assert all(store.rooms[room]["tokens"])
    await a.request({"type": "leave", "room": room})
    assert store.rooms[room]["tokens"][0] == "" and store.rooms[room]["tokens"][1]


async def test_a_join_the_store_cannot_record_is_refused_and_frees_the_seat(
    served: Open,
) -> None:
    store = MemoryStore()
    app, (a, _) = await served(store)
    room = (await a.request({"type": "create", "game": "tiny", "players": 2}))["room"]
    store.fail = True
    assert (await a.request({"type": "join", "room": room}))["code"] == "unavailable"
    assert not any(seat.taken for seat in app.lobby.rooms[room].seats)
    store.fail = False
    assert (await a.request({"type": "join", "room": room}))["seat"] == 0


async def test_a_room_the_store_cannot_record_is_refused_unavailable_and_not_made(
    served: Open,
) -> None:
    store = MemoryStore()
    app, (a, _) = await served(store)
    store.fail = True
    for request in (
        {"type": "create", "game": "tiny", "players": 2},
        {"type": "quick", "game": "tiny", "players": 2},
    ):
        answer = await a.request(request)
        assert answer["type"] == "error" and answer["code"] == "unavailable", answer
    assert app.lobby.rooms == {} and store.rooms == {}
    store.fail = False
    assert (await a.request({"type": "create", "game": "tiny", "players": 2}))["type"] == "ack"


async def test_a_room_closed_before_it_started_is_deleted_from_the_store(served: Open) -> None:
    store = MemoryStore()
    app, (a, _) = await served(store, room_idle_ttl=0.2)
    room = (await a.request({"type": "create", "game": "tiny", "players": 2}))["room"]
    await a.request({"type": "join", "room": room})
    await a.request({"type": "leave", "room": room})
    await wait_for(lambda: room not in app.lobby.rooms)
    assert room not in store.rooms and room not in store.archives


async def test_a_started_room_nobody_comes_back_to_is_archived_as_abandoned(
    served: Open,
) -> None:
    store = MemoryStore()
    app, seats = await served(store, room_idle_ttl=0.3)
    room = await _playing(seats)
    await _act(seats, room)
    for client in seats:
        await client.request({"type": "leave", "room": room})
    await wait_for(lambda: room not in app.lobby.rooms)
    assert store.archives[room].result == {"abandoned": True, "rev": 1}
    assert [a.rev for a in store.archives[room].actions] == [1]


async def test_while_the_store_is_down_the_room_pauses_refuses_choices_and_resumes(
    served: Open,
) -> None:
    store = MemoryStore()
    app, seats = await served(store)
    room = await _playing(seats)
    await _act(seats, room)
    marks = [len(c.frames) for c in seats]
    store.fail = True
    for client, mark in zip(seats, marks, strict=True):
        paused = await client.wait_for(lambda f: f["type"] == "pause", mark)
        assert paused == {
            "type": "pause",
            "room": room,
            "paused": True,
            "reason": "storage unavailable",
            "rev": 1,
        }
    _, refused = await _act(seats, room)
    assert refused["code"] == "unavailable"
    assert app.lobby.rooms[room].rev == 1 and len(store.logs[room]) == 1
    info = await seats[0].request({"type": "list_rooms"})
    assert next(r for r in info["rooms"] if r["room"] == room)["paused"] is True

    marks = [len(c.frames) for c in seats]
    store.fail = False
    for client, mark in zip(seats, marks, strict=True):
        resumed = await client.wait_for(lambda f: f["type"] == "pause", mark)
        assert resumed["paused"] is False
    _, answer = await _act(seats, room)
    assert answer["type"] == "ack" and answer["rev"] == 2


async def test_a_choice_stored_despite_a_failed_append_is_adopted_not_lost(
    served: Open,
) -> None:
    """The append timed out after the store wrote it: the client heard ``unavailable``, and
    the room applies the stored choice before it takes the next one."""
    store = FlakyStore()
    app, seats = await served(store)
    room = await _playing(seats)
    store.lose_reply = True
    mover, refused = await _act(seats, room)
    assert refused["code"] == "unavailable"
    assert app.lobby.rooms[room].rev == 0 and len(store.logs[room]) == 1
    again = await mover.request({"type": "act", "room": room, "rev": 0, "choice": 0})
    assert again["code"] == "stale_rev"  # rev 1 is the stored choice, now applied
    for client in seats:
        await client.until(lambda c=client: c.rev(room) == 1)  # type: ignore[misc]
    _, answer = await _act(seats, room)
    assert answer["rev"] == 2
    assert [a.rev for a in store.logs[room]] == [1, 2]


async def test_a_finish_that_failed_is_retried_when_the_store_comes_back(served: Open) -> None:
    store = FlakyStore()
    app, seats = await served(store, clients_=1)
    (human,) = seats
    room = (await human.request({"type": "create", "game": "tiny", "players": 2, "seed": 4}))[
        "room"
    ]
    await human.request({"type": "join", "room": room})
    store.finish_fails = True
    await human.request({"type": "start", "room": room, "bots": True})
    while not over(human, room):
        await human.until(lambda: my_turn(human, room) or over(human, room))
        if my_turn(human, room):
            await human.request({"type": "act", "room": room, "rev": human.rev(room), "choice": 0})
    await wait_for(lambda: app.lobby.rooms[room].core.status.finish_pending is not None)
    assert room not in store.archives
    store.finish_fails = False
    store.fail = True
    store.fail = False  # the store "comes back": the room retries
    await wait_for(lambda: room in store.archives)
    assert store.archives[room].result["scores"] == human.view(room)["shared"]["result"]["scores"]


async def test_a_spectator_watches_a_replay_of_a_finished_match(served: Open) -> None:
    store = MemoryStore()
    _, (human, viewer) = await served(store)
    room = (await human.request({"type": "create", "game": "tiny", "players": 3, "seed": 6}))[
        "room"
    ]
    await human.request({"type": "join", "room": room})
    await viewer.request({"type": "spectate", "room": room})
    await human.request({"type": "start", "room": room, "bots": True})
    while not over(human, room):
        await human.until(lambda: my_turn(human, room) or over(human, room))
        if my_turn(human, room):
            await human.request({"type": "act", "room": room, "rev": human.rev(room), "choice": 0})
    final = human.rev(room)
    await viewer.until(lambda: viewer.rev(room) == final)
    live = {f["rev"]: f["events"] for f in viewer.frames if f["type"] == "patch"}

    missing = await viewer.request({"type": "replay", "room": "nope"})
    assert missing["code"] == "not_found"
    joined = await viewer.request({"type": "replay", "room": room, "interval": 0})
    assert joined["type"] == "joined" and joined["seat"] is None and joined["rev"] == 0
    copy = joined["room"]
    assert joined["info"]["replay_of"] == room and joined["info"]["public"] is False
    await viewer.until(lambda: viewer.rev(copy) == final)
    replayed = {
        f["rev"]: f["events"]
        for f in viewer.frames
        if f.get("room") == copy and f["type"] == "patch"
    }
    assert replayed == live
    assert viewer.view(copy) == viewer.view(room)
    refused = await viewer.request({"type": "join", "room": copy})
    assert refused["code"] == "not_allowed"


def test_a_bot_choice_depends_only_on_the_seed_its_seat_and_the_rev() -> None:
    own = {"choices": [{"kind": str(i)} for i in range(7)]}
    picks = [RandomBot(11, 2).choose(own, rev) for rev in range(40)]
    assert picks == [RandomBot(11, 2).choose(own, rev) for rev in range(40)]
    restored = RandomBot(11, 2)
    assert [restored.choose(own, rev) for rev in range(20, 40)] == picks[20:]
    assert len(set(picks)) > 3
    assert picks != [RandomBot(11, 1).choose(own, rev) for rev in range(40)]
