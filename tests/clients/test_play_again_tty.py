"""Acceptance: play again (a rematch, SPEC section 9) from the terminal client, against a real
server over real sockets, with the tests' tiny game.

In lines (``--plain``, a pseudo-terminal): two people finish a match, one types ``p`` and both
go on in the new room (the other moved by the server's unasked ``joined``) with new tokens;
when both type ``p`` at once, the server makes one rematch and answers both with it; when one
left, the other plays again in a room that waits for a player: the one who left comes back to
the finished match with his token, reads where the others went and takes his seat there with
``p``; and when the host plays again alone, it starts with a bot. On the full screen (tmux,
read as a person reads it): a player against a bot plays again, and a spectator's screen
follows the players into the new room; in a room with a spectator delay (where the server
leaves the spectators to see the end) the spectator's final screen names the new match and
goes there.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import random
import re
import time
from collections.abc import AsyncIterator

from rich.console import Console

from clients.connection import Session
from clients.plain import Plain
from clients.play import Player
from protocol.mirror import Mirror
from tests.clients.person import Person
from tests.clients.terminal import Terminal
from tests.clients.test_connection import drive
from tests.clients.test_play_tty import OVER, PROMPT, check_scores, play_to_the_end
from tests.clients.tmux import Tmux
from tests.server.conftest import MakeApp, MakeClient

NEW = r"New match: room (\w+), the same players; you are P{seat} {name}"


async def alone_again(ann: Terminal, other: Terminal) -> str:
    """Both see the end; ``other`` leaves, then ``ann`` plays again: the new room (open, its
    other seat free, ``ann`` its host, waiting)."""
    for term in (ann, other):
        await term.expect(OVER)
    other.send("")
    assert await other.exit_code() == 0
    ann.send("p")
    room = (await ann.expect(r"New match: room (\w+); P2 is free \(its player had left\)"))[1]
    await ann.expect(r"Waiting for players; type s to start now \(bots fill the free seats\)")
    return room


async def test_two_people_play_again_in_a_new_room_whoever_asks(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    common = ["--plain", "--auto-delay", "0", "--server", url]
    ann = Terminal(["create", *common, "--game", "tiny", "--players", "2", "--name", "ann"])
    bob: Terminal | None = None
    back: Terminal | None = None
    try:
        room = (await ann.expect(r"Created room (\S+) \(tiny, 2 players\)\."))[1]
        bob = Terminal(["join", room, *common, "--name", "bob"])
        old_token = (await bob.expect(rf"oasis join {room} --token=(\S+)"))[1]
        people = (ann, bob)
        rngs = (random.Random(1), random.Random(2))
        finals = await asyncio.gather(
            *(play_to_the_end(t, r) for t, r in zip(people, rngs, strict=True))
        )
        await check_scores(make_client, app, room, finals[0][0])
        for term in people:
            await term.expect(OVER)

        ann.send("p")
        new = (await ann.expect(NEW.format(seat=1, name="ann")))[1]
        assert new != room
        await bob.expect(NEW.format(seat=2, name="bob").replace(r"(\w+)", new))
        token = (await bob.expect(rf"To resume after a crash: oasis join {new} --token=(\S+)"))[1]
        assert token != old_token
        finals = await asyncio.gather(
            *(play_to_the_end(t, r) for t, r in zip(people, rngs, strict=True))
        )
        assert finals[0][1] + finals[1][1] > 10, "the new match was played"
        await check_scores(make_client, app, new, finals[0][0])

        # Both ask at once: the server makes one rematch and answers both with it (the other
        # may read its p in the new match already); neither is told of a failure.
        for term in people:
            await term.expect(OVER)
            term.send("p")
        third = (await ann.expect(NEW.format(seat=1, name="ann")))[1]
        await bob.expect(NEW.format(seat=2, name="bob").replace(r"(\w+)", third))
        third_token = (await bob.expect(rf"oasis join {third} --token=(\S+)"))[1]
        assert third not in (room, new)
        await asyncio.gather(*(play_to_the_end(t, r) for t, r in zip(people, rngs, strict=True)))

        # Bob leaves; Ann plays again: his seat is free in the new room, she is its host.
        fourth = await alone_again(ann, bob)
        # Bob comes back to the finished match: it names the new one, and p (only p) takes his
        # seat there; Ann's client, the host's, starts the match once every seat is taken.
        back = Terminal(["join", third, f"--token={third_token}", *common])
        went_on = rf"The players went on to a new match: room {fourth}: p joins it, Enter leaves > "
        await back.expect(went_on)
        back.send("p")
        await back.expect(NEW.format(seat=2, name="bob").replace(r"(\w+)", fourth))
        await ann.expect(r"bob took seat P2")
        people = (ann, back)
        await asyncio.gather(*(play_to_the_end(t, r) for t, r in zip(people, rngs, strict=True)))

        # Bob leaves again; Ann plays again alone and starts the match with a bot.
        fifth = await alone_again(ann, back)
        ann.send("s")
        await ann.expect(PROMPT)
        ann.send("q")
        await ann.expect(rf"Come back with: oasis join {fifth} --token=\S+")
        assert await ann.exit_code() == 0
        for term in (ann, bob, back):
            assert not re.search(r"does not allow|not over yet|Traceback", term.text), term.tail()
    finally:
        ann.close()
        if bob is not None:
            bob.close()
        if back is not None:
            back.close()


@contextlib.asynccontextmanager
async def watched(url: str, *play: str) -> AsyncIterator[tuple[Tmux, Tmux, str]]:
    """Ann's full screen playing a tiny match against a bot (``play``: more of its options),
    and a full-screen spectator of it, both at 80x24: the two and the room, closed after."""
    args = ["--server", url, "--game", "tiny", "--name", "ann", "--auto-delay", "0.2", *play]
    ann = await Tmux(["play", *args], cols=80, rows=24).start()
    watcher: Tmux | None = None
    try:
        first = await ann.wait(r"^Tiny · room \w+ · you are P1 ann", what="ann's match")
        room = re.findall(r"room (\w+)", first[0])[0]
        watcher = await Tmux(["watch", room, "--server", url], cols=80, rows=24).start()
        await watcher.wait(rf"^Tiny · room {room} · spectator", what="the spectator's screen")
        yield ann, watcher, room
    finally:
        await ann.close()
        if watcher is not None:
            await watcher.close()


async def test_the_full_screen_plays_again_and_a_spectator_follows(make_app: MakeApp) -> None:
    app = await make_app()
    async with watched(f"ws://127.0.0.1:{app.port}/") as (ann, watcher, room):
        person = Person(ann, random.Random(3))
        while True:
            screen = await person.look()
            if "press Enter to leave" in screen.hint:
                break
            await person.act(screen)
        assert "Final scores" in "\n".join(screen.body)
        assert screen.hint.startswith("The match is over: p to play again"), screen.hint
        await watcher.wait(r"^The match is over: press Enter to leave", what="the watcher's end")

        await ann.type("p")
        lines = await ann.wait(r"^! New match: room (?!" + room + r")\w+", what="the new match")
        new = re.findall(r"room (\w+)", lines[0])[0]
        assert new != room and lines[0].startswith(f"Tiny · room {new} · you are P1 ann"), lines
        assert re.search(
            rf"New match: room {new}, the same players; you are P1 ann", "\n".join(lines)
        )
        seen = await watcher.wait(rf"^Tiny · room {new} · spectator", what="the spectator moved")
        assert f"New match: room {new}, the same players; you watch it" in "\n".join(seen)

        # The match goes on in the new room, where the spectator sees the moves.
        person.acted = None
        await person.act(await person.look())
        await watcher.wait(r"^\[1\] P1: ", what="the first move of the new match")
        await ann.type("q")
        after = "\n".join(await ann.wait(r"\[exited \d+\]", what="ann's client to end"))
        assert "[exited 0]" in after and "Final scores: P1 ann" in after
        assert re.search(rf"^Come back with: oasis join {new} --token=\S+", after, re.M), after
        await watcher.type("q")
        after = "\n".join(await watcher.wait(r"\[exited \d+\]", what="the watcher to end"))
        assert "[exited 0]" in after and f"You stopped watching room {new}" in after


async def test_a_delayed_rooms_spectator_sees_the_end_then_goes_to_the_new_match(
    make_app: MakeApp,
) -> None:
    """A room with a spectator delay (SPEC section 9): the server leaves its spectator where its
    late feed is when Ann plays again; the spectator's full screen shows the end, then names
    the new match and says it follows soon; ``p`` goes there at once."""
    app = await make_app()
    async with watched(f"ws://127.0.0.1:{app.port}/", "--delay", "0.3") as (ann, watcher, room):
        person = Person(ann, random.Random(5))
        while "press Enter to leave" not in (screen := await person.look()).hint:
            await person.act(screen)
        await ann.type("p")
        lines = await ann.wait(r"^! New match: room (?!" + room + r")\w+", what="the new match")
        new = re.findall(r"room (\w+)", lines[0])[0]

        went_on = (
            rf"^The players went on to a new match: room {new}; you follow in \d+ s \(p: now\)"
        )
        seen = "\n".join(await watcher.wait(went_on, what="the spectator told of the new match"))
        assert f"Tiny · room {room} · spectator" in seen and "Final scores" in seen, seen
        await watcher.type("p")
        seen = "\n".join(await watcher.wait(rf"^Tiny · room {new} · spectator", what="its move"))
        assert f"New match: room {new}, the same players; you watch it" in seen, seen
        await watcher.type("q")
        after = "\n".join(await watcher.wait(r"\[exited \d+\]", what="the watcher to end"))
        assert "[exited 0]" in after and f"You stopped watching room {new}" in after
        await ann.type("q")
        await ann.wait(r"\[exited 0\]", what="ann's client to end")


class _Typed(Plain):
    """The line mode, printing into a console of the test's, reading lines the test puts."""

    def __init__(self, mirror: Mirror, output: io.StringIO) -> None:
        super().__init__(mirror, Console(file=output, width=100))
        self.typed: asyncio.Queue[str | None] = asyncio.Queue()

    @property
    def lines(self) -> asyncio.Queue[str | None]:
        return self.typed


async def _printed(output: io.StringIO, text: str, wait: float = 10.0) -> str:
    """What ``output`` holds once ``text`` is in it."""
    deadline = time.monotonic() + wait
    while text not in output.getvalue():
        assert time.monotonic() < deadline, f"no {text!r} within {wait} s:\n{output.getvalue()}"
        await asyncio.sleep(0.01)
    return output.getvalue()


async def test_a_spectator_left_behind_follows_the_players_once_the_end_was_on_screen(
    make_app: MakeApp,
) -> None:
    """The terminal spectator of a delayed room follows by itself: the final screen, with the
    new match named, stays ``follow_pause`` seconds, then the screen is the new room's."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    ann, watcher = Session(url, "ann"), Session(url, "watcher")
    output = io.StringIO()
    try:
        await ann.open()
        await watcher.open()
        create = {"type": "create", "game": "tiny", "players": 2, "spectator_delay": 0.3}
        room = (await ann.request({**create, "bots": 1}))["room"]
        seat = await ann.join({"type": "join", "room": room, "name": "ann"})
        watched = await watcher.join({"type": "spectate", "room": room})
        ui = _Typed(watched, output)
        player = Player(watcher, watched, ui, auto=False, server=url, follow_pause=0.5)
        watching = asyncio.ensure_future(player.run())
        await ann.request({"type": "start", "room": room})
        await drive(ann, seat, 7)
        new = (await ann.rematch(room)).room
        await watcher.wait(lambda: watched.over, 10)
        ended = time.monotonic()
        went_on = f"The players went on to a new match: room {new}; you follow in 1 s (p: now)"
        text = await _printed(output, f"New match: room {new}, the same players; you watch it")
        assert time.monotonic() - ended >= 0.4, "the final screen stayed"
        assert "Final scores: P1 ann" in text and went_on in text, text
        assert text.index("Final scores: P1 ann") < text.index(went_on)
        assert watcher.moves == {room: new} and list(watcher.rooms) == [new]
        ui.typed.put_nowait("q")
        assert await asyncio.wait_for(watching, 10) == 0
        assert f"You stopped watching room {new}" in output.getvalue()
    finally:
        for session in (ann, watcher):
            await session.close()
