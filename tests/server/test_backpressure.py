"""A slow reader never slows its room: it is resynced once it drains, then closed if slow again."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games import registry
from games.base import JSON, Choice, Decision, Event, Game, Result
from games.rng import Rng
from server.app import App
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient

BLOB = 50_000


@dataclass
class BulkState:
    turns: int


class Bulk(Game[BulkState]):
    """Endless one-seat game whose shared view changes a 50 kB string every turn."""

    name = "bulk"
    title = "Bulk"
    min_players = 1
    max_players = 2

    def setup(self, players: int, options: Mapping[str, JSON], seed: int) -> BulkState:
        return BulkState(0)

    def decision(self, state: BulkState) -> Decision | None:
        return Decision(0, "grow", [{"kind": "grow"}])

    def apply(self, state: BulkState, choice: Choice) -> list[Event]:
        state.turns += 1
        return []

    def shared_view(self, state: BulkState) -> dict[str, JSON]:
        return {"blob": f"{state.turns:08d}" + "x" * BLOB}

    def own_view(self, state: BulkState, seat: int) -> dict[str, JSON]:
        return {}

    def result(self, state: BulkState) -> Result | None:
        return None

    def dump(self, state: BulkState) -> dict[str, JSON]:
        return {"turns": state.turns}

    def load(self, data: Mapping[str, JSON]) -> BulkState:
        return BulkState(int(data["turns"]))  # type: ignore[arg-type]

    def hidden_variant(self, state: BulkState, viewer: int | None, rng: Rng) -> BulkState:
        return copy.deepcopy(state)


registry.register(Bulk())


async def _bulk_room(make_client: MakeClient, target: App) -> tuple[str, Client, Client]:
    player = await make_client("player", target=target)
    created = await player.request({"type": "create", "game": "bulk", "players": 1})
    room = created["room"]
    await player.request({"type": "join", "room": room})
    await player.request({"type": "start", "room": room})
    slow = await make_client("slow", target=target)
    await slow.request({"type": "spectate", "room": room})
    return room, player, slow


async def _act_until(player: Client, room: str, cond: Any, limit: int = 2000) -> list[float]:
    """Act as fast as acks come back until ``cond()``; the round-trip time of each act."""
    times: list[float] = []
    for _ in range(limit):
        if cond():
            return times
        started = time.monotonic()
        ack = await player.request(
            {"type": "act", "room": room, "rev": player.rev(room), "choice": 0}
        )
        assert ack["type"] == "ack", ack
        times.append(time.monotonic() - started)
    raise AssertionError("condition never met")


def _conn(app: App, name: str) -> Any:
    return next(c for c in app.connections if c.client == name)


async def test_a_slow_spectator_is_resynced_then_closed_and_never_slows_the_room(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app(send_buffer_bytes=256 * 1024, resync_timeout=5.0, lag_window=60.0)
    room, player, slow = await _bulk_room(make_client, app)
    slow.ws.transport.pause_reading()
    lagging = _conn(app, "slow")
    times = await _act_until(player, room, lambda: lagging.send_buffer.lagging)
    assert max(times) < 1.0
    start = len(slow.frames)
    slow.ws.transport.resume_reading()
    state = await slow.wait_for(lambda f: f["type"] == "state", start, wait=10)
    assert state["rev"] >= player.rev(room) - 1
    await slow.until(lambda: slow.rev(room) == player.rev(room))
    assert slow.view(room) == {"shared": player.view(room)["shared"], "own": None}
    # Lagging again within the window closes it.
    slow.ws.transport.pause_reading()
    await _act_until(player, room, lambda: lagging.closed or lagging.send_buffer.overflows > 1)
    slow.ws.transport.resume_reading()
    closed = await asyncio.wait_for(asyncio.shield(slow.closed), 10)
    assert closed[0] in (1008, 1006, None)
    assert app.metrics.resyncs._value.get() == 1
    ack = await player.request({"type": "act", "room": room, "rev": player.rev(room), "choice": 0})
    assert ack["type"] == "ack"


async def test_a_reader_that_never_drains_is_closed(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app(send_buffer_bytes=256 * 1024, resync_timeout=0.3)
    room, player, slow = await _bulk_room(make_client, app)
    slow.ws.transport.pause_reading()
    lagging = _conn(app, "slow")
    await _act_until(player, room, lambda: lagging.send_buffer.lagging)
    for _ in range(100_000):
        if app.metrics.slow_closes._value.get() >= 1:
            break
        await player.request({"type": "ping"})
    assert app.metrics.slow_closes._value.get() == 1
    slow.ws.transport.resume_reading()
    await asyncio.wait_for(asyncio.shield(slow.closed), 10)
