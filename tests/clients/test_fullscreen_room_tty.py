"""Acceptance: the full screen in tmux shows what the other seats do, and who really plays them.

The terminal holds seat 1; a protocol client of the test holds seat 2 ("bob") against a real
server on a real Redis. The terminal's screen must change when bob moves (the waiting seat is
not left with a stale board), say when bob drops, when a bot stands in for him and when he is
back, when a clock ran out and a bot moved, and show hostile names and chat as harmless text:
no title change, no clipboard write, no cleared screen.
"""

from __future__ import annotations

import random
import re

from server.app import App
from tests.clients.person import Person, Screen
from tests.clients.tmux import Tmux
from tests.server.client import Client
from tests.server.conftest import MakeApp, MakeClient
from tests.server.matches import my_turn, over


def host(url: str, game: str, seed: int, *extra: str) -> list[str]:
    return ["create", "--server", url, "--game", game, "--seed", str(seed), "--name", "ann",
            "--auto-delay", "0.2", *extra]  # fmt: skip


async def room_on_screen(term: Tmux) -> str:
    def waiting(lines: list[str]) -> bool:  # the seats are drawn a moment before the hint
        text = "\n".join(lines)
        return "Seats: Waiting for players" in text and lines[-2].startswith("Others join")

    lines = await term.wait(waiting, what="the waiting room and how others join")
    found = re.search(r"room (\w+)", lines[0])
    assert found, lines[0]
    assert lines[-2].startswith(f"Others join with: oasis join {found[1]} --server ws://")
    return found[1]


async def join_as(make_client: MakeClient, app: App, room: str, name: str) -> tuple[Client, str]:
    client = await make_client(name, target=app)
    joined = await client.request({"type": "join", "room": room, "name": name})
    assert joined["type"] == "joined", joined
    return client, str(joined["token"])


async def test_the_waiting_seat_s_screen_changes_when_the_other_seat_moves(
    redis_app: MakeApp, make_client: MakeClient
) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(host(url, "ishtar", 12), cols=80, rows=24).start()
    try:
        room = await room_on_screen(term)
        bob, _ = await join_as(make_client, app, room, "bob")
        # The host's client starts the full room by itself: a person looks once it has (on a
        # loaded machine the waiting room can stay on screen a moment, with nothing to choose).
        await term.wait(
            lambda lines: "Waiting for players" not in "\n".join(lines), what="the match to start"
        )
        person = Person(term, random.Random(12))
        rng = random.Random(13)
        seen = 0
        while seen < 3:
            if my_turn(bob, room):
                before = await term.wait(r"Waiting for P2 bob", what="ann waiting for bob")
                choices = bob.view(room)["own"]["choices"]
                rev = bob.rev(room)
                answer = await bob.request(
                    {"type": "act", "room": room, "rev": rev, "choice": rng.randrange(len(choices))}
                )
                assert answer["type"] == "ack", answer
                await term.wait(lambda lines, was=before: lines[1:-2] != was[1:-2], what="a move")
                seen += 1
                continue
            screen = await person.look(wait=30, unless=lambda: my_turn(bob, room))
            if not my_turn(bob, room):
                await person.act(screen)
    finally:
        await term.close()


async def test_drops_stand_ins_comebacks_and_timeouts_are_told(
    redis_app: MakeApp, make_client: MakeClient
) -> None:
    app = await redis_app(takeover_grace=0.3)
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(host(url, "yspahan", 14, "--clock", "3+1"), cols=160, rows=50).start()
    try:
        room = await room_on_screen(term)
        bob, token = await join_as(make_client, app, room, "bob")
        # The clock ticks on screen, and warns when little time is left.
        first = await term.wait(r"P1 \d:\d\d\.\d◀", what="ann's clock running")
        await term.wait(lambda lines: lines[0] != first[0], what="the clock to tick")
        await term.wait(r"^Only 0:0\d\.\d left on your clock: at zero a bot decides for you")
        # Nobody moves: the clocks run out, and a bot moves for each seat in turn.
        await term.wait(r"P2 bob ran out of time: a bot made their move", wait=20)
        await term.wait(r"you ran out of time: a bot made your move", wait=20)
        await bob.close()
        await term.wait(r"P2 bob disconnected; a bot takes the seat over", what="the drop")
        lines = await term.wait(r"a heuristic bot now plays for P2 bob", what="the stand-in")
        assert re.search(r"P2 away, a bot plays", lines[0]), lines[0]
        again = await make_client("bob again", target=app)
        joined = await again.request({"type": "join", "room": room, "token": token})
        assert joined["type"] == "joined", joined
        lines = await term.wait(r"P2 bob is back; the stand-in bot stops", what="the comeback")
        await term.key("C-c")
        after = "\n".join(await term.wait(r"\[exited \d+\]", what="the program to end"))
        assert "[exited 0]" in after
        assert re.search(rf"^Others join with: oasis join {room} --server \S+ · spectators:", after,
                         re.M), after  # fmt: skip
        assert re.search(rf"^Come back with: oasis join {room} --token=\S+ --server \S+$", after,
                         re.M), after  # fmt: skip
    finally:
        await term.close()


HOSTILE_NAME = "EVIL\x1b]0;pwned\x07\x1b[2J\x1b[31;7m\u202e"
HOSTILE_CHAT = "hi\x1b]52;c;cHduZWQ=\x07 there\x9b2J\x1bc\x07!"


async def test_hostile_names_and_chat_are_shown_as_harmless_text(
    redis_app: MakeApp, make_client: MakeClient
) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(host(url, "yspahan", 15), cols=80, rows=24).start()
    try:
        await term.tmux("set-option", "-s", "set-clipboard", "on")
        title = await term.title()
        room = await room_on_screen(term)
        bob = await make_client("bob", target=app)
        joined = await bob.request({"type": "join", "room": room, "name": HOSTILE_NAME})
        assert joined["type"] == "joined", joined
        await bob.request({"type": "chat", "room": room, "text": HOSTILE_CHAT})
        lines = await term.wait(r"hi there!", what="the chat line")
        text = "\n".join(lines)
        assert "P2 EVIL" in text, text
        assert lines[0].startswith("Yspahan · room"), "the screen was not cleared or moved"
        assert await term.title() == title, "the window title was not changed"
        assert "pwned" not in await term.buffers(), "the clipboard was not written"
        check = Screen(lines, 80)
        assert len(check.lines) == 24 and all(len(line) <= 80 for line in lines)
    finally:
        await term.close()


async def test_a_spectator_s_full_screen_follows_the_match_to_its_scores(
    redis_app: MakeApp, make_client: MakeClient
) -> None:
    app = await redis_app()
    seat = await make_client("ann", target=app)
    created = await seat.request({"type": "create", "game": "yspahan", "players": 2, "seed": 16})
    room = created["room"]
    await seat.request({"type": "join", "room": room, "name": "ann"})
    await seat.request({"type": "start", "room": room, "bots": True})
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(["watch", room, "--server", url], cols=80, rows=24).start()
    try:
        first = await term.wait(r"spectator", what="the spectator's screen")
        assert first[0].startswith(f"Yspahan · room {room} · spectator")
        rng = random.Random(16)
        screens = 0
        previous = first
        while True:
            await seat.until(lambda: my_turn(seat, room) or over(seat, room))
            if over(seat, room):
                break
            choices = seat.view(room)["own"]["choices"]
            await seat.request({"type": "act", "room": room, "rev": seat.rev(room),
                                "choice": rng.randrange(len(choices))})  # fmt: skip
            if screens < 5:
                lines = await term.wait(lambda s, was=previous: s != was, what="a move")
                assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
                previous, screens = lines, screens + 1
        final = await term.wait(r"press Enter to leave", what="the end")
        assert "Final scores" in "\n".join(final)
        await term.type("")
        after = "\n".join(await term.wait(r"\[exited \d+\]", what="the program to end"))
        assert "[exited 0]" in after and "Final scores: P1 ann" in after
    finally:
        await term.close()
