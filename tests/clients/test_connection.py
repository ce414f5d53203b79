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


async def test_a_rematch_moves_every_member_whoever_asks_and_a_second_ask_is_no_failure(
    make_app: MakeApp,
) -> None:
    """SPEC section 9: two seats ask for the rematch of their finished match; the server makes
    one and moves both seats (new tokens) and the spectator into it with unasked ``joined``
    frames. The seat refused (``not_allowed``, here before the move comes: the new room is
    still being stored) gets the same room, no error counted; the finished room is forgotten,
    so a drop resumes the new room only."""
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

        storing, stored = asyncio.Event(), asyncio.Event()  # (held until bob was refused)
        store = app.lobby.store
        create_room = store.create_room

        async def held(room: str, meta: dict[str, Any]) -> None:
            storing.set()
            await stored.wait()
            await create_room(room, meta)

        store.create_room = held  # type: ignore[method-assign]
        asked = asyncio.ensure_future(ann.rematch(room))
        await asyncio.wait_for(storing.wait(), WAIT)
        second = asyncio.ensure_future(bob.rematch(room))
        await bob.wait(lambda: bob.errors == {"not_allowed": 1}, WAIT)
        assert not second.done() and room in bob.rooms, "refused, waiting for the move"
        stored.set()
        moved = [await asked, await second]
        new = moved[0].room
        assert new != room and moved[1].room == new
        assert [m.seat for m in moved] == [0, 1] and not moved[0].over
        tokens = {m.token for m in moved} | {s.token for s in seats}
        assert len(tokens) == 4 and None not in tokens, "a new token for each seat"
        await watcher.wait(lambda: room in watcher.moves, WAIT)
        for session in (ann, bob, watcher):
            assert session.moves == {room: new} and list(session.rooms) == [new]
            assert session.errors == {} and not session.problems
        assert watcher.rooms[new].spectator
        assert await bob.rematch(room) is moved[1], "asked again once moved: the same room"
        with pytest.raises(ServerError) as refused:  # a match still on: refused, no move
            await ann.rematch(new, patience=0.1)
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
