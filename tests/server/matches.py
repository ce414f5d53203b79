"""Whole matches over real sockets, and the checks the acceptance list asks of them.

Seat clients know nothing of the rules: each waits until its own view lists choices, picks one
at random by index, and sends it with the rev it saw. After the match the test replays the same
seed and choices locally and holds every frame every client received against what its audience
may see (the leak scan): each view sent equals the audience's view at that rev, each op's value
is the value at its path in the new view, each event is the event as projected for that
audience. A secret of another seat can therefore appear in no frame. :func:`check_schemas`
holds every view each client rebuilt and every event it received against the game's schema
(``protocol/schema/<game>.json``); the frames themselves were checked as they arrived
(:mod:`tests.server.client`).

With ``undo`` (a probability), a seat whose view says it may (``own.undo``) sends ``undo``
instead of a choice that often; the record holds :data:`~tests.harness.UNDO` for that rev and
the replay takes the step back too, so every frame of an undo is held to the same checks.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from games import registry
from games.base import Match, audience_view
from protocol import pointer
from tests.harness import UNDO
from tests.protocol.schemas import Checker, documents
from tests.server.client import Client
from tests.server.conftest import MakeClient

REAL_GAMES = ("ishtar", "yspahan")
"""The engines the end-to-end tests play, named (never "whatever imports"): a test checks that
they are every engine the server serves, and a broken one fails those tests instead of being
left out."""
TEST_GAMES = frozenset({"tiny", "bulk", "boom", "wide"})
"""Engines of the tests themselves (registered by them)."""


@dataclass
class Played:
    room: str
    seed: int
    players: int
    game: str
    choices: dict[int, tuple[int, int]] = field(default_factory=dict)
    """rev -> (seat, index of the choice in the legal list, or UNDO)."""
    undo: float = 0.0
    seats: list[Client] = field(default_factory=list)
    spectators: list[Client] = field(default_factory=list)


def my_turn(client: Client, room: str) -> bool:
    doc = client.view(room)
    return bool(doc and doc["own"] and doc["own"]["choices"])


async def to_move(seats: list[Client], room: str) -> Client:
    """The seat whose turn it is in ``room``, once one of ``seats`` has seen it. Each seat waits
    on its own frames: a condition on another client's view, waited for on one client, is not
    woken when only the other one receives a frame (the seat to move may read its patch after
    the others have read theirs)."""

    def turn(c: Client) -> Callable[[], bool]:
        return lambda: my_turn(c, room)

    waits = [asyncio.ensure_future(c.until(turn(c))) for c in seats]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
    done = [w for w in waits if w.done() and not w.cancelled()]
    for w in done:
        if w.exception() is None:
            return next(c for c in seats if my_turn(c, room))
    error = done[0].exception()  # (every seat failed: the first error, as until raises it)
    assert error is not None
    raise error


def over(client: Client, room: str) -> bool:
    doc = client.view(room)
    return bool(doc and doc["shared"]["result"] is not None)


async def drive_seat(
    client: Client, room: str, seat: int, played: Played, rng: random.Random
) -> None:
    while True:
        await client.until(lambda: my_turn(client, room) or over(client, room), wait=30)
        if over(client, room):
            return
        rev = client.rev(room)
        own = client.view(room)["own"]
        choices = own["choices"]
        if own["undo"] and rng.random() < played.undo:
            answer = await client.request({"type": "undo", "room": room, "rev": rev})
            index = UNDO
        else:
            index = rng.randrange(len(choices))
            answer = await client.request(
                {"type": "act", "room": room, "rev": rev, "choice": index}
            )
        assert answer["type"] == "ack", answer
        assert answer["rev"] == rev + 1
        played.choices[rev + 1] = (seat, index)
        if rng.random() < played_sync_rate(played):
            state = await client.request({"type": "sync", "room": room})
            assert state["type"] == "state"


def played_sync_rate(played: Played) -> float:
    return 1.0 if played.game == "tiny" else 0.1


async def syncer(client: Client, room: str) -> None:
    """Ask for the full view after every revision seen (the reader compares them)."""
    seen = -1
    while not over(client, room) or client.rev(room) != seen:
        await client.until(lambda s=seen: client.rooms[room].rev != s, wait=30)  # type: ignore[misc]
        seen = client.rev(room)
        await client.request({"type": "sync", "room": room})


async def play(
    make_client: MakeClient,
    game: str,
    players: int,
    seed: int,
    *,
    spectators: int = 2,
    sync_spectators: bool = True,
    clock: dict[str, Any] | None = None,
    undo: float = 0.0,
) -> Played:
    host = await make_client("seat0")
    host.check_sent = True
    create: dict[str, Any] = {"type": "create", "game": game, "players": players, "seed": seed}
    if clock is not None:
        create["clock"] = clock
    created = await host.request(create)
    assert created["type"] == "ack", created
    room = created["room"]
    played = Played(room, seed, players, game, undo=undo)
    # Odd seats and the late spectator ask for the view hash's rule 2 (SPEC section 4): the
    # others keep rule 1, and every client checks every hash it gets under its own rule.
    seats = [host] + [
        await make_client(f"seat{i}", hash_rule=2 if i % 2 else None) for i in range(1, players)
    ]
    for client in seats:
        client.check_sent = True  # every frame a seat sends validates against client.json
    for i, client in enumerate(seats):
        joined = await client.request({"type": "join", "room": room, "name": f"p{i}"})
        assert joined["type"] == "joined" and joined["seat"] == i, joined
        assert joined["token"]
    early = await make_client("spectator0")
    early.check_sent = True
    if spectators:
        joined = await early.request({"type": "spectate", "room": room})
        assert joined["seat"] is None and "token" not in joined
    played.seats = seats
    started = await host.request({"type": "start", "room": room})
    assert started["type"] == "ack", started
    rng = random.Random(seed)
    drivers = [
        asyncio.create_task(drive_seat(c, room, i, played, random.Random(rng.random())))
        for i, c in enumerate(seats)
    ]
    watchers: list[Client] = [early] if spectators else []
    if spectators > 1:
        await seats[0].until(lambda: seats[0].rev(room) >= 3 or over(seats[0], room), 30)
        late = await make_client("spectator1", hash_rule=2)
        late.check_sent = True
        joined = await late.request({"type": "spectate", "room": room})
        assert joined["type"] == "joined"
        watchers.append(late)
    played.spectators = watchers
    syncers = [asyncio.create_task(syncer(w, room)) for w in watchers] if sync_spectators else []
    await asyncio.gather(*drivers)
    await asyncio.gather(*syncers)
    final = max(played.choices)
    for client in seats + watchers:
        await client.until(lambda c=client: c.rev(room) == final, wait=30)  # type: ignore[misc]
        state = await client.request({"type": "sync", "room": room})
        assert state["rev"] == final and state["view"] == client.view(room)
    return played


def replay(played: Played) -> tuple[list[Any], list[list[Any]]]:
    """Every rev's full match state dump-free: (matches' views per audience, events per rev)."""
    game = registry.get(played.game)
    match = Match.new(game, played.players, {}, played.seed)
    audiences: list[int | None] = [*range(played.players), None]
    views = [{a: room_view(match, a) for a in audiences}]
    events: list[list[Any]] = [[]]
    for rev in range(1, max(played.choices) + 1):
        seat, index = played.choices[rev]
        evs = match.undo(seat) if index == UNDO else match.act(seat, index)
        events.append(evs)
        views.append({a: room_view(match, a) for a in audiences})
    assert match.over
    return views, events


def room_view(match: Match[Any], audience: int | None) -> Any:
    """The audience's view as a room sends it: the contract's, and ``own.undo`` for a seat."""
    view = audience_view(match.game, match.state, audience).to_json()
    if audience is not None:
        view["own"]["undo"] = match.can_undo(audience)
    return view


def _game_part(doc: Any) -> Any:
    """A view without its room-level parts (the clock), as the match alone gives it."""
    return {"shared": doc["shared"], "own": doc["own"]}


def check_frames(played: Played) -> int:
    """The leak scan and the per-rev view check; returns the number of frames checked."""
    views, events = replay(played)
    checked = 0
    audiences: list[tuple[Client, int | None]] = [(c, i) for i, c in enumerate(played.seats)]
    audiences += [(c, None) for c in played.spectators]
    for client, audience in audiences:
        room = client.rooms[played.room]
        for rev, doc in room.history.items():
            assert _game_part(doc) == views[rev][audience], (client.name, rev)
        for frame in client.frames:
            if frame.get("room") != played.room:
                continue
            kind = frame["type"]
            if kind in ("joined", "state") and frame.get("view") is not None:
                assert _game_part(frame["view"]) == views[frame["rev"]][audience]
            elif kind == "patch":
                rev = frame["rev"]
                expected = [e.project(audience) for e in events[rev]]
                assert frame["events"] == expected, (client.name, rev)
                for op in frame["ops"]:
                    assert op["path"].startswith(("/shared/", "/clock")) or (
                        audience is not None and op["path"].startswith("/own/")
                    ), op
                    if "value" in op and not op["path"].startswith("/clock"):
                        assert op["value"] == _at(views[rev][audience], op["path"]), op
            checked += 1
    return checked


def _at(doc: Any, path: str) -> Any:
    """The value at ``path`` in ``doc`` (a JSON Pointer)."""
    for token in pointer.parse(path):
        doc = doc[pointer.index(len(doc), token, adding=False)] if type(doc) is list else doc[token]
    return doc


GAME_PARTS = Checker()


def check_schemas(played: Played) -> int:
    """Every view every client held and every event it received, against the game's schema;
    returns how many views were checked."""
    schema = f"{played.game}.json"
    assert schema in documents(), f"no schema for {played.game}"
    checked = 0
    for client in played.seats + played.spectators:
        room = client.rooms[played.room]
        for rev, doc in sorted(room.history.items()):
            problems = GAME_PARTS.check(schema, "view", doc)
            assert not problems, (client.name, rev, problems[:3])
            checked += 1
        for frame in client.frames:
            if frame.get("type") == "patch" and frame.get("room") == played.room:
                for event in frame["events"]:
                    problems = GAME_PARTS.check(schema, "event", event)
                    assert not problems, (client.name, frame["rev"], problems[:3])
    return checked
