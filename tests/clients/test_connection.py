"""The protocol session against a live in-process server: answers, errors, resync, resume,
rematches."""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any

import pytest

from clients.connection import ClientError, ConnectionLost, ServerError, Session
from protocol.mirror import Mirror
from server.app import App
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient

WAIT = 30.0


async def drive(session: Session, mirror: Mirror, seed: int, stop_at: int | None = None) -> None:
    """Random choices for one seat until the match ends (or the room reaches ``stop_at``)."""
    rng = random.Random(seed)
    acted = -1
    while True:

        def ready(acted: int = acted) -> bool:
            return (
                mirror.over
                or (stop_at is not None and mirror.rev >= stop_at)
                or (bool(mirror.choices) and mirror.rev != acted)
            )

        await session.wait(ready, WAIT)
        if mirror.over or (stop_at is not None and mirror.rev >= stop_at):
            return
        rev = acted = mirror.rev
        choice = rng.randrange(len(mirror.choices))
        try:
            await session.request(
                {"type": "act", "room": mirror.room, "rev": rev, "choice": choice}
            )
        except ClientError:
            acted = -1  # lost in a drop or stale: decide again from the view


async def seat_against_bot(url: str, game: str, seed: int) -> tuple[Session, Mirror]:
    session = await Session(url, "test").open()
    answer = await session.request({"type": "create", "game": game, "players": 2, "seed": seed})
    mirror = await session.join({"type": "join", "room": answer["room"], "name": "ann"})
    await session.request({"type": "start", "room": mirror.room, "bots": True})
    return session, mirror


async def server_view(make_client: MakeClient, room: str, app: App) -> tuple[int, Any]:
    checker: Client = await make_client("checker", target=app)
    state = await checker.request({"type": "spectate", "room": room})
    return state["rev"], state["view"]


async def test_hello_gives_the_welcome_and_errors_raise_with_their_code(make_app: MakeApp) -> None:
    app = await make_app()
    async with Session(f"ws://127.0.0.1:{app.port}/") as session:
        assert session.welcome["type"] == "welcome" and "ishtar" in session.welcome["games"]
        with pytest.raises(ServerError) as caught:
            await session.request({"type": "join", "room": "nope"})
        assert caught.value.code == "not_found"
        assert session.errors == {"not_found": 1}


async def test_a_session_plays_a_whole_match_with_every_hash_checked(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    session, mirror = await seat_against_bot(f"ws://127.0.0.1:{app.port}/", "yspahan", 3)
    try:
        await drive(session, mirror, 3)
        rev, view = await server_view(make_client, mirror.room, app)
        assert mirror.rev == rev and mirror.view["shared"] == view["shared"]
        assert not session.problems and mirror.resyncs == 0
    finally:
        await session.close()


async def test_a_corrupted_view_is_detected_by_the_hash_and_repaired_by_sync(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    session, mirror = await seat_against_bot(f"ws://127.0.0.1:{app.port}/", "ishtar", 4)
    try:
        await drive(session, mirror, 4, stop_at=10)
        corrupted = copy.deepcopy(mirror.view)
        corrupted["shared"]["game"]["turn"] = -99
        mirror.view = corrupted  # what a buggy patch would produce
        await drive(session, mirror, 4)
        assert mirror.resyncs >= 1
        assert any("wrong hash" in p for p in session.problems)
        rev, view = await server_view(make_client, mirror.room, app)
        assert mirror.rev == rev and mirror.view["shared"] == view["shared"]
    finally:
        await session.close()


async def test_a_dropped_seat_reconnects_resumes_with_its_token_and_finishes(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    session, mirror = await seat_against_bot(f"ws://127.0.0.1:{app.port}/", "ishtar", 5)
    notices: list[str] = []
    session.notices.append(notices.append)
    try:
        await drive(session, mirror, 5, stop_at=20)
        assert session._ws is not None
        session._ws.transport.abort()  # the network fails under the client
        await session.wait(lambda: any("reconnected" in n for n in notices), WAIT)
        await drive(session, mirror, 5)
        assert any("connection lost" in n for n in notices)
        rev, view = await server_view(make_client, mirror.room, app)
        assert mirror.over and mirror.rev == rev and mirror.view["shared"] == view["shared"]
        assert not session.problems
    finally:
        await session.close()


async def test_a_dropped_spectator_resumes_and_follows_to_the_end(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    player, seat = await seat_against_bot(url, "yspahan", 6)
    async with Session(url, "watcher") as watcher:
        watched = await watcher.join({"type": "spectate", "room": seat.room})
        assert watched.spectator and watched.token is None
        await drive(player, seat, 6, stop_at=30)
        await watcher.wait(lambda: watched.rev >= 30, WAIT)
        assert watcher._ws is not None
        watcher._ws.transport.abort()
        await drive(player, seat, 6)
        await watcher.wait(lambda: watched.over and watched.rev == seat.rev, WAIT)
        assert watched.view["shared"] == seat.view["shared"]
        assert not watcher.problems
    await player.close()


async def test_an_unreachable_server_is_a_client_error() -> None:
    with pytest.raises(ClientError, match="cannot reach"):
        await Session("ws://127.0.0.1:9/", reconnect=False).open()
    with pytest.raises(ClientError, match="not a WebSocket URL"):
        await Session("http//nowhere").open()


async def test_a_server_gone_for_good_ends_the_session_with_a_clear_error(
    make_app: MakeApp,
) -> None:
    app = await make_app()
    session, _ = await seat_against_bot(f"ws://127.0.0.1:{app.port}/", "ishtar", 7)
    session.reconnect_delays = (0.01, 0.01)
    notices: list[str] = []
    session.notices.append(notices.append)
    try:
        await app.stop()
        with pytest.raises(ConnectionLost, match="gave up reconnecting"):
            await session.wait(lambda: False, WAIT)
        assert any("server shutting down" in n for n in notices), notices
    finally:
        await session.close()


async def test_a_rematch_moves_every_member_whoever_asks_and_a_second_ask_gets_the_same_room(
    make_app: MakeApp,
) -> None:
    """SPEC section 9: two seats ask for the rematch of their finished match at once; the server
    makes one and moves both seats (new tokens) and the spectator into it with unasked
    ``joined`` frames naming the room left. The second asker (here while the new room is still
    being stored) gets an ``ack`` naming the same room, after its own ``joined``; the finished
    room is forgotten, so a drop resumes the new room only. A refusal is a real one."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    ann, bob, watcher = [await Session(url, name).open() for name in ("ann", "bob", "watcher")]
    try:
        room = (await ann.request({"type": "create", "game": "tiny", "players": 2}))["room"]
        seats = [
            await session.join({"type": "join", "room": room, "name": name})
            for session, name in ((ann, "ann"), (bob, "bob"))
        ]
        watched = await watcher.join({"type": "spectate", "room": room})
        await ann.request({"type": "start", "room": room})
        await asyncio.gather(drive(ann, seats[0], 81), drive(bob, seats[1], 82))
        await watcher.wait(lambda: watched.over, WAIT)

        storing, stored = asyncio.Event(), asyncio.Event()  # (held until bob asked too)
        store = app.lobby.store
        create_room = store.create_room

        async def held(room: str, meta: dict[str, Any]) -> None:
            storing.set()
            await stored.wait()
            await create_room(room, meta)

        store.create_room = held  # type: ignore[method-assign]
        lobby, arrived = app.lobby, asyncio.Event()
        rematch = lobby.rematch

        async def counted(req: Any, conn: Any) -> None:
            arrived.set()
            await rematch(req, conn)

        lobby.rematch = counted  # type: ignore[method-assign]
        asked = asyncio.ensure_future(ann.rematch(room))
        await asyncio.wait_for(storing.wait(), WAIT)
        arrived.clear()
        order: list[str] = []  # bob's frames of the move
        bob.listeners.append(lambda r, frame, _: order.append(f"{frame['type']} {r}"))
        second = asyncio.ensure_future(bob.rematch(room))
        await asyncio.wait_for(arrived.wait(), WAIT)
        assert not second.done() and room in bob.rooms, "asked while the rematch is being made"
        stored.set()
        moved = [await asked, await second]
        new = moved[0].room
        assert new != room and moved[1] is bob.rooms[new]
        # (rematch() resolved: the ack's room was bob's already; his joined came first)
        assert order[:1] == [f"joined {new}"]
        assert [m.seat for m in moved] == [0, 1] and not moved[0].over
        tokens = {m.token for m in moved} | {s.token for s in seats}
        assert len(tokens) == 4 and None not in tokens, "a new token for each seat"
        await watcher.wait(lambda: room in watcher.moves, WAIT)
        for session in (ann, bob, watcher):
            assert session.moves == {room: new} and list(session.rooms) == [new]
            assert session.errors == {} and not session.problems
        assert watcher.rooms[new].spectator
        assert await bob.rematch(room) is moved[1], "asked again once moved: the same room"
        with pytest.raises(ServerError) as refused:  # a match still on: refused at once
            await ann.rematch(new)
        assert refused.value.code == "not_allowed" and ann.errors == {"not_allowed": 1}

        for session in (ann, bob):
            assert session._ws is not None
            session._ws.transport.abort()
        await asyncio.gather(drive(ann, moved[0], 83), drive(bob, moved[1], 84))
        assert ann.connections == bob.connections == 1 and list(ann.rooms) == [new]
        await watcher.wait(lambda: watcher.rooms[new].over, WAIT)
        assert watcher.rooms[new].view["shared"] == moved[0].view["shared"]
    finally:
        for session in (ann, bob, watcher):
            await session.close()


async def test_who_was_not_moved_follows_the_rematch_the_finished_room_names(
    make_app: MakeApp,
) -> None:
    """SPEC section 9: in a room with a spectator delay, the spectator stays where its late feed
    is; once the feed showed the end it reads ``info.rematch`` and follows (``spectate``). Bob,
    who left before Ann played again, comes back to the finished room with his token: he is
    refused a rematch of his own (not moved: a real refusal naming the new room) and takes his
    free seat in the new room under his name; the match is played there."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    ann, bob, watcher = [await Session(url, name).open() for name in ("ann", "bob", "watcher")]
    back: Session | None = None
    try:
        create = {"type": "create", "game": "tiny", "players": 2, "spectator_delay": 0.3}
        room = (await ann.request(create))["room"]
        seats = [
            await session.join({"type": "join", "room": room, "name": name})
            for session, name in ((ann, "ann"), (bob, "bob"))
        ]
        watched = await watcher.join({"type": "spectate", "room": room})
        await ann.request({"type": "start", "room": room})
        await asyncio.gather(drive(ann, seats[0], 91), drive(bob, seats[1], 92))
        token = seats[1].token
        assert token is not None
        await bob.close()  # bob leaves the finished room
        await ann.wait(lambda: not seats[0].info["seats"][1]["connected"], WAIT)

        new = (await ann.rematch(room)).room
        assert ann.rooms[new].info["seats"][1]["taken"] is False, "bob's seat is free for him"
        assert room in watcher.rooms and not watcher.moves, "a delayed spectator is not moved"
        await watcher.wait(lambda: watched.over and watched.info.get("rematch") == new, WAIT)
        assert watched.rev == seats[0].rev, "the feed showed the whole match"
        followed = await watcher.follow_rematch(room)
        assert followed.room == new and followed.spectator
        assert watcher.moves == {room: new} and list(watcher.rooms) == [new]

        back = await Session(url, "bob again").open()
        old = await back.join({"type": "join", "room": room, "token": token})
        assert old.over and old.info.get("rematch") == new
        with pytest.raises(ServerError) as refused:
            await back.rematch(room)
        assert refused.value.code == "not_allowed" and f"room {new}" in refused.value.message
        mirror = await back.follow_rematch(room)
        assert mirror.room == new and mirror.seat == 1 and mirror.token
        assert back.moves == {room: new} and list(back.rooms) == [new]
        assert mirror.info["seats"][1]["name"] == "bob"
        await ann.request({"type": "start", "room": new})
        await asyncio.gather(drive(ann, ann.rooms[new], 93), drive(back, mirror, 94))
        await watcher.wait(lambda: followed.over, WAIT)
        assert followed.view is not None and mirror.view is not None
        assert followed.view["shared"] == mirror.view["shared"]
        for session in (ann, back, watcher):
            assert not session.problems
    finally:
        for session in (ann, bob, watcher, back):
            if session is not None:
                await session.close()
