"""Acceptance: whole matches over real sockets; views rebuilt from patches equal sync views, and
every frame, view and event validates against the protocol's schemas."""

from __future__ import annotations

import pytest

from games import registry
from tests.server.conftest import MakeClient
from tests.server.matches import REAL_GAMES, TEST_GAMES, check_frames, check_schemas, play


@pytest.mark.parametrize("players", [2, 3, 4])
async def test_full_tiny_match_views_from_patches_equal_sync_and_leak_nothing(
    make_client: MakeClient, players: int
) -> None:
    played = await play(make_client, "tiny", players, seed=1000 + players)
    assert len(played.choices) >= 12
    assert check_frames(played) > 0
    # Seats and spectators of both view hash rules, every hash checked under its own rule.
    assert {c.hash_rule for c in played.seats} == {1, 2}
    assert [c.hash_rule for c in played.spectators] == [1, 2]
    for client in played.seats + played.spectators:
        assert client.view(played.room)["shared"]["result"] is not None


def test_the_real_games_are_every_engine_the_server_serves() -> None:
    assert set(registry.names()) - TEST_GAMES == set(REAL_GAMES)


CLOCK = {"initial": 3600, "increment": 1.5}
"""Long enough that no clock runs out: the clock part travels in every view."""


def _seatings() -> list[tuple[str, int, dict[str, float] | None]]:
    """Every real game at every player count it is for (a broken engine fails collection),
    clocks off, and on at 3 players and again at the largest count."""
    out: list[tuple[str, int, dict[str, float] | None]] = []
    for game in REAL_GAMES:
        engine = registry.get(game)
        counts = range(engine.min_players, engine.max_players + 1)
        out += [(game, n, CLOCK if n == 3 else None) for n in counts]
        out.append((game, engine.max_players, CLOCK))
    return out


@pytest.mark.parametrize(("game", "players", "clock"), _seatings(), ids=str)
async def test_full_match_of_each_game(
    make_client: MakeClient, game: str, players: int, clock: dict[str, float] | None
) -> None:
    """Seats and spectators check hashes, jsonpatch and sync; the replay checks every rev; every
    frame (as it arrives and as it is sent), view and event validates against the schemas."""
    played = await play(
        make_client, game, players, seed=7 + players, sync_spectators=False, clock=clock
    )
    assert check_frames(played) > 0
    assert check_schemas(played) > 0
    views = [c.view(played.room) for c in played.seats + played.spectators]
    assert all(("clock" in v) == (clock is not None) for v in views)
