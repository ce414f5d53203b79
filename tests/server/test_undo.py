"""Undo within a turn over real sockets (issue 19, SPEC section 24).

The positions are found on a local match of the same seed (the engines are deterministic), then
played on the server by seat clients that send the same choice indices; every refusal is checked
for its code and its reason, and an accepted undo for what every audience receives.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from games import registry
from games.base import Event, Match
from games.rng import Rng
from server.clock import Clocks, ClockSettings
from tests.server.client import Client
from tests.server.conftest import MakeClient
from tests.server.matches import REAL_GAMES, check_frames, check_schemas, play, room_view

Want = Callable[[Match[Any], int, list[Event]], bool]


def _path(game: str, players: int, seed: int, want: Want) -> tuple[list[int], Match[Any], int]:
    """Choice indices from the start of a ``seed`` match to the first step after which
    ``want(match, seat, events)``: (indices, the local match there, the seat of that step)."""
    engine = registry.get(game)
    match = Match.new(engine, players, {}, seed)
    chooser = Rng.from_seed(seed)
    indices: list[int] = []
    while (decision := match.decision) is not None:
        index = chooser.below(len(decision.choices))
        events = match.act(decision.seat, index)
        indices.append(index)
        if want(match, decision.seat, events):
            return indices, match, decision.seat
    raise AssertionError(f"no such step in the {game} match of seed {seed}")


class Table:
    """A started room of ``game`` on the server, one client per seat and a spectator."""

    def __init__(self, room: str, seats: list[Client], spectator: Client) -> None:
        self.room = room
        self.seats = seats
        self.spectator = spectator

    @classmethod
    async def open(
        cls, make_client: MakeClient, game: str, players: int, seed: int, delay: float = 0.0
    ) -> Table:
        host = await make_client("seat0")
        created = await host.request(
            {
                "type": "create",
                "game": game,
                "players": players,
                "seed": seed,
                "spectator_delay": delay,
            }
        )
        room = created["room"]
        seats = [host] + [await make_client(f"seat{i}") for i in range(1, players)]
        for client in seats:
            client.check_sent = True
            assert (await client.request({"type": "join", "room": room}))["type"] == "joined"
        spectator = await make_client("spectator")
        await spectator.request({"type": "spectate", "room": room})
        await host.request({"type": "start", "room": room})
        return cls(room, seats, spectator)

    def seat_to_move(self) -> int:
        turn = self.seats[0].view(self.room)["shared"]["turn"]
        assert turn is not None
        return int(turn["seat"])

    async def play(self, indices: list[int]) -> None:
        for index in indices:
            seat = self.seat_to_move()
            client = self.seats[seat]
            rev = client.rev(self.room)
            answer = await client.request(
                {"type": "act", "room": self.room, "rev": rev, "choice": index}
            )
            assert answer["type"] == "ack", answer
            for other in self.seats:
                await other.until(lambda o=other, r=rev: o.rev(self.room) == r + 1)  # type: ignore[misc]

    async def undo(self, seat: int | None) -> dict[str, Any]:
        client = self.spectator if seat is None else self.seats[seat]
        frame = {"type": "undo", "room": self.room, "rev": client.rev(self.room)}
        return await client.request(frame)


async def _refused(table: Table, seat: int | None) -> str:
    rev = table.seats[0].rev(table.room)
    answer = await table.undo(seat)
    assert answer["type"] == "error" and answer["code"] == "not_allowed", answer
    assert table.seats[0].rev(table.room) == rev  # nothing changed
    return str(answer["message"])


def _kinds(events: list[Event]) -> set[str]:
    return {e.kind for e in events}


async def test_an_undo_is_a_revision_for_every_audience_and_gives_back_the_views(
    make_client: MakeClient,
) -> None:
    indices, local, seat = _path("ishtar", 3, 21, lambda m, s, ev: m.can_undo(s))
    table = await Table.open(make_client, "ishtar", 3, 21)
    await table.play(indices[:-1])
    room = table.room
    before = [c.view(room) for c in [*table.seats, table.spectator]]
    await table.play(indices[-1:])
    mover = table.seats[seat]
    assert mover.view(room)["own"]["undo"] is True
    assert all(not c.view(room)["own"]["undo"] for i, c in enumerate(table.seats) if i != seat)
    rev = mover.rev(room)
    answer = await table.undo(seat)
    assert answer["type"] == "ack" and answer["rev"] == rev + 1, answer
    for client, view in zip([*table.seats, table.spectator], before, strict=True):
        await client.until(lambda c=client: c.rev(room) == rev + 1)  # type: ignore[misc]
        patch = [f for f in client.frames if f["type"] == "patch" and f["rev"] == rev + 1][-1]
        (event,) = patch["events"]
        assert event["kind"] == "undone" and event["seat"] == seat
        assert event["text"].startswith(f"P{seat + 1} took back: ")
        assert event["taken_back"]
        after = client.view(room)
        if after["own"] is not None and view["own"] is not None:
            # the flag says what may be undone now; the rest is the view before the step
            after = {**after, "own": {**after["own"], "undo": view["own"]["undo"]}}
        assert after == view
    local.undo(seat)
    for index, client in enumerate(table.seats):
        assert client.view(room) == room_view(local, index)


async def test_delayed_spectators_see_the_undo_as_a_revision_after_the_delay(
    make_client: MakeClient,
) -> None:
    indices, _, seat = _path("yspahan", 2, 28, lambda m, s, ev: m.can_undo(s))
    table = await Table.open(make_client, "yspahan", 2, 28, delay=0.3)
    await table.play(indices)
    rev = table.seats[seat].rev(table.room)
    sent = time.monotonic()
    assert (await table.undo(seat))["type"] == "ack"
    watcher = table.spectator
    await watcher.until(lambda: watcher.rev(table.room) == rev + 1, wait=10)
    assert time.monotonic() - sent >= 0.3
    patch = [f for f in watcher.frames if f["type"] == "patch" and f["rev"] == rev + 1][-1]
    assert [e["kind"] for e in patch["events"]] == ["undone"]
    assert watcher.view(table.room)["shared"] == table.seats[seat].view(table.room)["shared"]


async def test_undo_is_refused_by_a_spectator_and_a_seat_not_to_move(
    make_client: MakeClient,
) -> None:
    indices, _, seat = _path("ishtar", 3, 22, lambda m, s, ev: m.can_undo(s))
    table = await Table.open(make_client, "ishtar", 3, 22)
    await table.play(indices)
    assert await _refused(table, None) == "spectators never act"
    other = (seat + 1) % 3
    assert await _refused(table, other) == "only the seat to move may take back a step"


async def test_undo_is_refused_after_another_seats_decision(make_client: MakeClient) -> None:
    """A seat that starts its turn after another seat's step has nothing to take back."""
    indices, _, _ = _path("yspahan", 3, 23, lambda m, s, ev: m.to_move not in (None, s))
    table = await Table.open(make_client, "yspahan", 3, 23)
    await table.play(indices)
    assert (
        await _refused(table, table.seat_to_move()) == "another seat decided after your last step"
    )


async def test_undo_is_refused_after_a_tile_is_turned_face_up(make_client: MakeClient) -> None:
    """ISH-CHOOSE-10: the pile the can left turns its new top face up: a reveal."""
    indices, _, seat = _path(
        "ishtar", 2, 24, lambda m, s, ev: "tile_revealed" in _kinds(ev) and m.to_move == s
    )
    table = await Table.open(make_client, "ishtar", 2, 24)
    await table.play(indices)
    assert table.seats[seat].view(table.room)["own"]["undo"] is False
    assert await _refused(table, seat) == (
        "your last step revealed what was hidden (tile revealed): it cannot be taken back"
    )


async def test_undo_is_refused_after_a_card_is_drawn(make_client: MakeClient) -> None:
    """YSP-ACTION-05: a card drawn is seen by its drawer only."""
    indices, _, seat = _path(
        "yspahan", 3, 25, lambda m, s, ev: "draw" in _kinds(ev) and m.to_move == s
    )
    table = await Table.open(make_client, "yspahan", 3, 25)
    await table.play(indices)
    assert await _refused(table, seat) == (
        "your last step drew what only one seat sees (draw): it cannot be taken back"
    )


async def test_undo_is_refused_after_the_dice_are_rolled(make_client: MakeClient) -> None:
    """YSP-TOWER-01: the roll is chance."""
    indices, _, seat = _path(
        "yspahan", 3, 26, lambda m, s, ev: "roll" in _kinds(ev) and m.to_move == s
    )
    table = await Table.open(make_client, "yspahan", 3, 26)
    await table.play(indices)
    assert (await _refused(table, seat)).startswith("your last step used chance (")


async def test_undo_names_a_stale_rev_like_act(make_client: MakeClient) -> None:
    indices, _, seat = _path("ishtar", 2, 27, lambda m, s, ev: m.can_undo(s))
    table = await Table.open(make_client, "ishtar", 2, 27)
    await table.play(indices)
    client = table.seats[seat]
    answer = await client.request({"type": "undo", "room": table.room, "rev": 0})
    assert answer["code"] == "stale_rev", answer


@pytest.mark.parametrize("game", REAL_GAMES)
async def test_full_matches_with_undos_leak_nothing_and_validate(
    make_client: MakeClient, game: str
) -> None:
    """Seats undo where their view lets them, a third of the time: every frame is held to the
    leak scan (each view and event against a local replay with the same undos) and the
    schemas, and views rebuilt from patches equal sync views."""
    played = await play(make_client, game, 3, seed=31, sync_spectators=False, undo=0.35)
    undos = [rev for rev, (_, index) in played.choices.items() if index < 0]
    assert len(undos) > 5
    assert check_frames(played) > 0
    assert check_schemas(played) > 0


def test_a_copy_of_the_clocks_changes_apart_from_them() -> None:
    """What a choice would make of the clocks is worked out on a copy (the room stores it with
    the choice, before applying it): the copy's changes never reach the clocks it came from."""
    clocks = Clocks(ClockSettings(60.0, 5.0, "bot"), 2)
    clocks.start(0, 100.0)
    clocks.timed_out(1)
    copy = clocks.copy()
    assert copy.part(0) == clocks.part(0) and copy.left(104.0) == clocks.left(104.0)
    copy.decided(0, 110.0)
    copy.timed_out(0)
    copy.forfeit(0)
    assert copy.running is None and copy.remaining[0] == 0.0 and copy.timeouts == [1, 1]
    assert clocks.running == 0 and clocks.remaining == [60.0, 0.0] and clocks.timeouts == [0, 1]
    assert clocks.forfeited == [] and clocks.left(110.0) == pytest.approx(50.0)


def test_an_undo_keeps_the_time_charged_and_takes_back_the_increment() -> None:
    clocks = Clocks(ClockSettings(60.0, 5.0, "bot"), 2)
    clocks.start(0, 100.0)
    clocks.decided(0, 110.0)  # 10 s spent, 5 s earned
    assert clocks.remaining[0] == pytest.approx(55.0)
    clocks.start(0, 110.0)
    clocks.undone(0, 113.0)  # 3 s more spent, the step's 5 s taken back
    assert clocks.remaining[0] == pytest.approx(47.0)
    assert clocks.running is None
    clocks.remaining[1] = 2.0
    clocks.start(1, 200.0)
    clocks.undone(1, 201.0)  # 1 s left, less the 5 s increment: zero, never below
    assert clocks.remaining[1] == 0.0


def test_bots_never_undo() -> None:
    """A bot answers with an index into the legal choices: it has no way to undo, and the
    room asks it only for that (server.autoplay.Autoplay.turn)."""
    from server.bots import make_bot

    for game in REAL_GAMES:
        engine = registry.get(game)
        match = Match.new(engine, 2, {}, 4)
        bot = make_bot("heuristic", game, 4, 0)
        rng = random.Random(4)
        for rev in range(30):
            decision = match.decision
            assert decision is not None
            view = room_view(match, decision.seat)
            answer = bot.choose(view, rev)
            assert isinstance(answer, int) and 0 <= answer < len(decision.choices)
            match.act(decision.seat, answer if rng.random() < 0.5 else 0)
