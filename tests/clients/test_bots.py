"""`oasis bots`: client-side random bots play whole matches over the protocol and report."""

from __future__ import annotations

import argparse
import asyncio
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


async def _bots_under_a_low_rate_limit(make_app: MakeApp, runs: int) -> None:
    """``oasis bots`` (the real command, a process of its own) ``runs`` times against a server
    whose rate limit unpaced bots exceed at once: every run ends, in time, with every match
    finished (or failed with a line that says why), never a traceback (issue 14)."""
    from tests.clients.test_cli import oasis

    app = await make_app(rate_per_second=8.0, rate_burst=8)
    url = f"ws://127.0.0.1:{app.port}/"
    for run in range(runs):
        code, out, err = await oasis(
            "bots", "--server", url, "--game", "tiny", "--players", "2", "--rooms", "2",
            "--connections", "2", "--seed", str(run), wait=60.0,
        )  # fmt: skip
        assert "Traceback" not in err, err
        summary = out.splitlines()[-1]
        assert summary.startswith("summary: "), out
        failed = [line for line in out.splitlines() if " failed: " in line]
        assert (code, failed) == (0, []), (run, out, err)
        assert "0 errors" in summary, (run, summary)
    assert app.metrics.errors.labels("rate_limited").value == 0


async def test_oasis_bots_stays_under_a_low_rate_limit(make_app: MakeApp) -> None:
    await _bots_under_a_low_rate_limit(make_app, 3)


@pytest.mark.slow
async def test_oasis_bots_stays_under_a_low_rate_limit_twenty_times(make_app: MakeApp) -> None:
    await _bots_under_a_low_rate_limit(make_app, 20)


async def test_bots_whose_server_goes_away_fail_their_matches_and_the_tool_ends(
    make_app: MakeApp,
) -> None:
    # The server stops mid-run: every session tries to reconnect (with backoff, short here)
    # and gives up; each match fails with a line, and run() returns instead of spinning on
    # ConnectionLost (which blocked the event loop: nothing else could run, not even this test).
    app = await make_app()
    out = io.StringIO()
    bots = Bots(bots_args(f"ws://127.0.0.1:{app.port}/", game="tiny", rooms=2, seed=3), out)
    original = Session.open

    async def open_quickly(self: Session) -> Session:
        self.reconnect_delays = (0.05, 0.1, 0.2)
        return await original(self)

    Session.open = open_quickly  # type: ignore[method-assign]
    try:
        running = asyncio.ensure_future(bots.run())
        async with asyncio.timeout(10):
            while bots.stats.actions < 3:  # noqa: ASYNC110 (a counter: no event to wait on)
                await asyncio.sleep(0.01)
        await app.stop()
        async with asyncio.timeout(30):
            code = await running
    finally:
        Session.open = original  # type: ignore[method-assign]
    text = out.getvalue()
    assert code == 1
    assert re.search(r"^match \d failed: (connection lost|gave up reconnecting)", text, re.M), text
    assert bots.stats.errors["connection_lost"] <= 2 * 3 * 2, bots.stats.errors
