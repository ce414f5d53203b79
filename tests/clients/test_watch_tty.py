"""Acceptance: `oasis watch ROOM` in a pseudo-terminal follows a live match to its final scores.

A protocol client of the test holds seat 0 and plays at random against the server's bot in
seat 1; the test's seat only moves once the watcher has joined, so everything it shows after
that is live. The terminal must show revisions only ever growing, the last screen at the
match's final revision, and the final scores the room computed.
"""

from __future__ import annotations

import random
import re

import pytest

from tests.clients.terminal import Terminal
from tests.server.conftest import MakeApp, MakeClient
from tests.server.matches import Played, drive_seat

FINAL = r"Final scores: (?P<scores>.*?) · winners?: (?P<winners>.*)\n"


@pytest.mark.parametrize(("game", "seed"), [("ishtar", 21), ("yspahan", 22)])
async def test_oasis_watch_follows_a_live_match_to_the_final_scores(
    make_app: MakeApp, make_client: MakeClient, game: str, seed: int
) -> None:
    app = await make_app()
    host = await make_client("seat0", target=app)
    created = await host.request({"type": "create", "game": game, "players": 2, "seed": seed})
    room = created["room"]
    joined = await host.request({"type": "join", "room": room, "name": "ann"})
    assert joined["type"] == "joined"
    started = await host.request({"type": "start", "room": room, "bots": True})
    assert started["type"] == "ack", started
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(["watch", room, "--plain", "--server", url, "--every", "0"])
    try:
        await term.expect(rf"Watching room {room} \({game}\) as a spectator\.")
        await drive_seat(host, room, 0, Played(room, seed, 2, game), random.Random(seed))
        final = await term.expect(FINAL)
        assert await term.exit_code() == 0
        result = host.view(room)["shared"]["result"]
        printed = [int(s) for s in re.findall(r"P\d [^,]*? (\d+)(?:,|$)", final["scores"])]
        assert printed == result["scores"]
        headers = [
            int(r) for r in re.findall(rf"Room {room} · {game} · \w+ · rev (\d+)", term.text)
        ]
        logged = [int(r) for r in re.findall(r"^  \[(\d+)\] ", term.text, re.M)]
        assert len(headers) > 3 and len(logged) > 20, "the board is redrawn as turns pass"
        assert headers == sorted(headers) and logged == sorted(logged)
        assert headers[-1] == host.rev(room) and logged[-1] <= host.rev(room)
        assert "match over" in term.text and "Traceback" not in term.text
    finally:
        term.close()


async def test_oasis_watch_in_lines_names_the_next_match_of_a_delayed_room(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    """A room with a spectator delay keeps its spectators when the players play again (SPEC
    section 9): the line mode shows the end, then says where the players went, as a command."""
    app = await make_app()
    host = await make_client("seat0", target=app)
    create = {"type": "create", "game": "tiny", "players": 2, "spectator_delay": 1.0}
    room = (await host.request(create))["room"]
    await host.request({"type": "join", "room": room, "name": "ann"})
    await host.request({"type": "start", "room": room, "bots": True})
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(["watch", room, "--plain", "--server", url])
    try:
        await term.expect(rf"Watching room {room} \(tiny\) as a spectator\.")
        await drive_seat(host, room, 0, Played(room, 5, 2, "tiny"), random.Random(5))
        new = (await host.request({"type": "rematch", "room": room}))["room"]
        await term.expect(FINAL)  # (a second after the players saw it)
        went_on = rf"The players went on to a new match: room {new} \(oasis watch {new} --server"
        await term.expect(went_on)
        assert await term.exit_code() == 0
    finally:
        term.close()
