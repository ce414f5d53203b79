"""Acceptance: whole matches over real sockets; views rebuilt from patches equal sync views."""

from __future__ import annotations

import pytest

from games import registry
from tests.server.conftest import MakeClient
from tests.server.matches import REAL_GAMES, TEST_GAMES, check_frames, play


@pytest.mark.parametrize("players", [2, 3, 4])
async def test_full_tiny_match_views_from_patches_equal_sync_and_leak_nothing(
    make_client: MakeClient, players: int
) -> None:
    played = await play(make_client, "tiny", players, seed=1000 + players)
    assert len(played.choices) >= 12
    assert check_frames(played) > 0
    for client in played.seats + played.spectators:
        assert client.view(played.room)["shared"]["result"] is not None


def test_the_real_games_are_every_engine_the_server_serves() -> None:
    assert set(registry.names()) - TEST_GAMES == set(REAL_GAMES)


def _seatings() -> list[tuple[str, int]]:
    """Every real game at every player count it is for (a broken engine fails collection)."""
    out = []
    for game in REAL_GAMES:
        engine = registry.get(game)
        out += [(game, n) for n in range(engine.min_players, engine.max_players + 1)]
    return out


@pytest.mark.parametrize(("game", "players"), _seatings())
async def test_full_match_of_each_game(make_client: MakeClient, game: str, players: int) -> None:
    """Seats and spectators check hashes, jsonpatch and sync; the replay checks every rev."""
    played = await play(make_client, game, players, seed=7 + players, sync_spectators=False)
    assert check_frames(played) > 0
