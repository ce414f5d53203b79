"""`oasis bots`: client-side random bots play whole matches over the protocol and report."""

from __future__ import annotations

import argparse
import io
import re

import pytest

from clients.bots import Bots
from clients.connection import Session
from tests.server.conftest import MakeApp


def bots_args(url: str, **overrides: object) -> argparse.Namespace:
    values = {"server": url, "rooms": 3, "game": "ishtar", "players": 2, "parallel": None,
              "connections": None, "seed": 1, "every": 60.0} | overrides  # fmt: skip
    return argparse.Namespace(**values)


@pytest.mark.parametrize(
    ("game", "players", "connections"), [("ishtar", 2, None), ("yspahan", 3, 4)]
)
async def test_bots_play_every_match_to_the_end_and_summarise(
    make_app: MakeApp, game: str, players: int, connections: int | None
) -> None:
    app = await make_app()
    out = io.StringIO()
    args = bots_args(f"ws://127.0.0.1:{app.port}/", game=game, players=players,
                     connections=connections, parallel=2)  # fmt: skip
    bots = Bots(args, out)
    assert await bots.run() == 0, out.getvalue()
    text = out.getvalue()
    assert len(re.findall(r"^\[\d/3\] room \S+: \d+ actions", text, re.M)) == 3
    summary = bots.stats.summary(bots.sessions)
    assert summary["matches"] == 3 and summary["failed"] == 0 and summary["errors"] == 0
    assert summary["resyncs"] == 0 and summary["protocol_problems"] == 0
    assert summary["actions"] > 3 * 50 and summary["actions_per_second"] > 0
    summary_line = (
        r"^summary: 3 matches \(0 failed\), \d+ actions in [\d.]+ s, [\d.]+ actions/s, 0 "
    )
    assert re.search(summary_line, text, re.M)
    async with Session(args.server) as look:
        listed = await look.request({"type": "list_rooms"})
    assert listed["rooms"] == [], "load runs keep out of the public lobby"


async def test_bots_report_a_refused_match_as_failed(make_app: MakeApp) -> None:
    app = await make_app()
    out = io.StringIO()
    bots = Bots(bots_args(f"ws://127.0.0.1:{app.port}/", game="chess", rooms=1), out)
    assert await bots.run() == 1
    assert "match 1 failed: bad_options" in out.getvalue()
    assert bots.stats.summary(bots.sessions)["failed"] == 1


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players"), [("ishtar", 4), ("yspahan", 4)])
async def test_soak_many_matches_of_four_bots(make_app: MakeApp, game: str, players: int) -> None:
    app = await make_app()
    out = io.StringIO()
    args = bots_args(f"ws://127.0.0.1:{app.port}/", game=game, players=players, rooms=20,
                     connections=16)  # fmt: skip
    bots = Bots(args, out)
    assert await bots.run() == 0, out.getvalue()
    print(out.getvalue().splitlines()[-1])
