"""Acceptance: play again (a rematch, SPEC section 9) from the terminal client, against a real
server over real sockets, with the tests' tiny game.

In lines (``--plain``, a pseudo-terminal): two people finish a match, one types ``p`` and both
go on in the new room (the other moved by the server's unasked ``joined``) with new tokens;
when both type ``p`` at once, the one the server refuses is not told of a failure; when one
left, the other plays again in a room that waits for a player, and starts it with a bot. On
the full screen (tmux, read as a person reads it): a player against a bot plays again, and a
spectator's screen follows the players into the new room.
"""

from __future__ import annotations

import asyncio
import random
import re

from tests.clients.person import Person
from tests.clients.terminal import Terminal
from tests.clients.test_play_tty import OVER, PROMPT, check_scores, play_to_the_end
from tests.clients.tmux import Tmux
from tests.server.conftest import MakeApp, MakeClient

NEW = r"New match: room (\w+), the same players; you are P{seat} {name}"


async def test_two_people_play_again_in_a_new_room_whoever_asks(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    common = ["--plain", "--auto-delay", "0", "--server", url]
    ann = Terminal(["create", *common, "--game", "tiny", "--players", "2", "--name", "ann"])
    bob: Terminal | None = None
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

        # Both ask at once: the server makes one rematch and refuses the other request (or
        # the other reads its p in the new match already); neither is told of a failure.
        for term in people:
            await term.expect(OVER)
            term.send("p")
        third = (await ann.expect(NEW.format(seat=1, name="ann")))[1]
        await bob.expect(NEW.format(seat=2, name="bob").replace(r"(\w+)", third))
        assert third not in (room, new)
        await asyncio.gather(*(play_to_the_end(t, r) for t, r in zip(people, rngs, strict=True)))

        # Bob leaves; Ann plays again: his seat is free in the new room, she is its host.
        for term in people:
            await term.expect(OVER)
        bob.send("")
        assert await bob.exit_code() == 0
        ann.send("p")
        fourth = (await ann.expect(r"New match: room (\w+); P2 is free \(its player had left\)"))[1]
        await ann.expect(r"Waiting for players; type s to start now \(bots fill the free seats\)")
        ann.send("s")
        await ann.expect(PROMPT)
        ann.send("q")
        await ann.expect(rf"Come back with: oasis join {fourth} --token=\S+")
        assert await ann.exit_code() == 0
        for term in people:
            assert not re.search(r"does not allow|not over yet|Traceback", term.text), term.tail()
    finally:
        ann.close()
        if bob is not None:
            bob.close()


async def test_the_full_screen_plays_again_and_a_spectator_follows(make_app: MakeApp) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    args = ["--server", url, "--game", "tiny", "--name", "ann", "--auto-delay", "0.2"]
    ann = await Tmux(["play", *args], cols=80, rows=24).start()
    watcher: Tmux | None = None
    try:
        first = await ann.wait(r"^Tiny · room \w+ · you are P1 ann", what="ann's match")
        room = re.findall(r"room (\w+)", first[0])[0]
        watcher = await Tmux(["watch", room, "--server", url], cols=80, rows=24).start()
        await watcher.wait(rf"^Tiny · room {room} · spectator", what="the spectator's screen")
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
    finally:
        await ann.close()
        if watcher is not None:
            await watcher.close()
