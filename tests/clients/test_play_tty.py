"""Acceptance: `oasis play` in a pseudo-terminal plays a whole 2-player match against a bot.

The test is the person at the keyboard: it waits for the prompt, reads how many choices there
are, types a number, and goes on until the final scores. The server runs in-process (the server
tests' fixture) and fills the other seat with its random bot; a protocol client of the test
spectates the same room and checks that the scores the terminal printed are the room's.
"""

from __future__ import annotations

import asyncio
import random
import re

from server.app import App
from tests.clients.terminal import Terminal
from tests.server.conftest import MakeApp, MakeClient

PROMPT = r"Your choice 1-(\d+) \(rev (\d+); h for help\) > "
FINAL = r"Final scores: (?P<scores>.*?) · winners?: (?P<winners>.*)\n"
OVER = r"The match is over: p to play again, or press Enter to leave > "


async def play_to_the_end(term: Terminal, rng: random.Random) -> tuple[re.Match[str], int]:
    """Answer every prompt with a random number; the final scores line and the prompts seen."""
    prompts = 0
    last_rev = -1
    while True:
        found = await term.expect(f"{PROMPT}|{FINAL}")
        if found[0].startswith("Final scores"):
            return found, prompts
        count, rev = int(found[1]), int(found[2])
        assert rev > last_rev, "each decision is asked once, at a newer revision"
        last_rev = rev
        term.send(str(rng.randint(1, count)))
        prompts += 1


async def leave_at_the_end(term: Terminal) -> int:
    """Enter at the final prompt (the other choice there is p, to play again); the exit code."""
    await term.expect(OVER)
    term.send("")
    return await term.exit_code()


async def check_scores(make_client: MakeClient, app: App, room: str, final: re.Match[str]) -> None:
    watcher = await make_client("checker", target=app)
    answer = await watcher.request({"type": "spectate", "room": room})
    result = answer["view"]["shared"]["result"]
    printed = [int(s) for s in re.findall(r"P\d [^,]*? (\d+)(?:,|$)", final["scores"])]
    assert printed == result["scores"], (final[0], result)


async def play_whole_match(
    make_app: MakeApp, make_client: MakeClient, game: str, seed: int
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(
        [
            "play",
            "--plain",
            "--auto-delay",
            "0",
            "--server",
            url,
            "--game",
            game,
            "--seed",
            str(seed),
            "--name",
            "ann",
        ]
    )
    try:
        joined = await term.expect(r"Room (\S+) \((\w+)\): you are P1\.")
        assert joined[2] == game
        final, prompts = await play_to_the_end(term, random.Random(seed))
        assert prompts > 10
        assert await leave_at_the_end(term) == 0
        await check_scores(make_client, app, joined[1], final)
        assert "Traceback" not in term.text
    finally:
        term.close()


async def test_oasis_play_ishtar_whole_match_against_a_server_bot(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    await play_whole_match(make_app, make_client, "ishtar", 11)


async def test_oasis_play_yspahan_whole_match_against_a_server_bot(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    await play_whole_match(make_app, make_client, "yspahan", 12)


async def test_bad_input_is_explained_and_a_seat_left_is_resumed_with_its_token(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(
        ["play", "--plain", "--no-auto", "--server", url, "--game", "yspahan", "--seed", "31"]
    )
    try:
        room = (await term.expect(r"Room (\S+) \(yspahan\): you are P1\."))[1]
        token = (await term.expect(rf"oasis join {room} --token=(\S+)"))[1]
        first = await term.expect(PROMPT)
        term.send("0")
        await term.expect(rf"Choose a number from 1 to {first[1]}\.")
        term.send("hello")
        await term.expect(r"'hello' is not a choice number or a command\.")
        term.send("h")
        await term.expect(r"Type the number of a choice and Enter")
        term.send("q")
        await term.expect(rf"Come back with: oasis join {room} --token={re.escape(token)}")
        assert await term.exit_code() == 0
    finally:
        term.close()
    back = Terminal(["join", room, "--plain", "--no-auto", f"--token={token}", "--server", url])
    try:
        again = await back.expect(PROMPT)
        assert again[2] == first[2], "the seat waited at the same revision"
        back.send("1")
        final, _ = await play_to_the_end(back, random.Random(31))
        assert await leave_at_the_end(back) == 0
        await check_scores(make_client, app, room, final)
    finally:
        back.close()


async def test_two_people_play_each_other_from_create_and_join(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    """The host waits in the open room, the match starts by itself when the second joins."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    host = Terminal(
        [
            "create",
            "--plain",
            "--auto-delay",
            "0",
            "--server",
            url,
            "--game",
            "ishtar",
            "--seed",
            "41",
            "--name",
            "ann",
        ]
    )
    guest: Terminal | None = None
    try:
        room = (await host.expect(r"Created room (\S+) \(ishtar, 2 players\)\."))[1]
        await host.expect(r"Waiting for players; type s to start now \(bots fill the free seats\)")
        guest = Terminal(
            ["join", room, "--plain", "--auto-delay", "0", "--server", url, "--name", "bob"]
        )
        await guest.expect(rf"Room {room} \(ishtar\): you are P2\.")
        (final_a, prompts_a), (final_b, prompts_b) = await asyncio.gather(
            play_to_the_end(host, random.Random(1)), play_to_the_end(guest, random.Random(2))
        )
        assert prompts_a > 10 and prompts_b > 10
        assert final_a[0] == final_b[0] and "P1 ann" in final_a[0] and "P2 bob" in final_a[0]
        assert await leave_at_the_end(host) == 0 and await leave_at_the_end(guest) == 0
        await check_scores(make_client, app, room, final_a)
    finally:
        host.close()
        if guest is not None:
            guest.close()


async def test_play_survives_a_dropped_connection_and_resumes_by_itself(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(
        [
            "play",
            "--plain",
            "--auto-delay",
            "0",
            "--server",
            url,
            "--game",
            "ishtar",
            "--seed",
            "51",
        ]
    )
    try:
        room = (await term.expect(r"Room (\S+) \(ishtar\): you are P1\."))[1]
        rng = random.Random(51)
        for _ in range(5):
            prompt = await term.expect(PROMPT)
            term.send(str(rng.randint(1, int(prompt[1]))))
        prompt = await term.expect(PROMPT)
        for conn in list(app.connections):
            conn.ws.transport.abort()  # the network fails under every client
        await term.expect(r"connection lost \(.*\); reconnecting")
        await term.expect(r"reconnected; rooms resumed")
        term.send(str(rng.randint(1, int(prompt[1]))))
        final, prompts = await play_to_the_end(term, rng)
        assert prompts > 5
        assert await leave_at_the_end(term) == 0
        await check_scores(make_client, app, room, final)
    finally:
        term.close()


async def test_two_quick_players_are_matched_into_one_room_that_starts_by_itself(
    make_app: MakeApp,
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    first = Terminal(["quick", "--plain", "--server", url, "--game", "yspahan", "--name", "ann"])
    second: Terminal | None = None
    try:
        await first.expect(r"Quick match: the room starts by itself when every seat is taken\.")
        room = (await first.expect(r"Room (\S+) \(yspahan\): you are P1\."))[1]
        await first.expect(r"Waiting for players; the match starts when the room is full")
        second = Terminal(
            ["quick", "--plain", "--server", url, "--game", "yspahan", "--name", "bob"]
        )
        await second.expect(rf"Room {room} \(yspahan\): you are P2\.")
        prompts = [asyncio.ensure_future(t.expect(PROMPT)) for t in (first, second)]
        done, pending = await asyncio.wait(prompts, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        assert int(next(iter(done)).result()[2]) == 0, "the match started at rev 0"
        for term in (first, second):
            term.send("q")
            await term.expect("Bye.")
            assert await term.exit_code() == 0
    finally:
        first.close()
        if second is not None:
            second.close()


async def test_hostile_names_and_chat_reach_the_line_mode_without_their_escapes(
    make_app: MakeApp, make_client: MakeClient
) -> None:
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(["create", "--plain", "--server", url, "--game", "ishtar", "--name", "ann"])
    try:
        room = (await term.expect(r"Created room (\S+) \(ishtar, 2 players\)\."))[1]
        await term.expect(r"Waiting for players")
        bob = await make_client("bob", target=app)
        name = "EVIL\x1b]0;pwned\x07\x1b[2J\u202e"
        joined = await bob.request({"type": "join", "room": room, "name": name})
        assert joined["type"] == "joined"
        await bob.request({"type": "chat", "room": room, "text": "hi\x1b]52;c;cHduZWQ=\x07\x9b2J!"})
        await term.expect(r"<P2 EVIL> hi!")
        assert b"]52;" not in term.raw and b"pwned" not in term.raw
        assert b"\x1b[2J" not in term.raw and "\u202e".encode() not in term.raw
        assert "\x9b".encode() not in term.raw and b"\x07" not in term.raw
    finally:
        term.close()


async def test_u_takes_back_the_last_step_where_the_view_allows_it(make_app: MakeApp) -> None:
    """Issue 19: ``u`` sends ``undo``; with nothing to take back it says so and sends nothing."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(
        ["play", "--plain", "--no-auto", "--server", url, "--game", "ishtar", "--seed", "5"]
    )
    try:
        room = (await term.expect(r"Room (\S+) \(ishtar\): you are P1\."))[1]
        first = await term.expect(PROMPT)
        term.send("u")
        await term.expect(r"Nothing to take back now\.")
        held = app.lobby.rooms[room]
        assert held.rev == int(first[2])
        rng = random.Random(5)
        count = int(first[1])
        while not held.match.can_undo(0):
            term.send(str(rng.randint(1, count)))
            found = await term.expect(PROMPT)
            count = int(found[1])
        rev = held.rev
        term.send("u")
        await term.expect(rf"\[{rev + 1}\] P1 took back: ")
        again = await term.expect(PROMPT)
        assert int(again[2]) == rev + 1 == held.rev
        term.send("q")
        assert await term.exit_code() == 0
    finally:
        term.close()


async def test_a_step_taken_back_to_a_lone_choice_is_not_sent_again_by_itself(
    make_app: MakeApp,
) -> None:
    """Issue 19 with the automatic lone choice: a placement whose only rotation was sent by
    itself, then ``u``: the client is back at that rotation and waits (it does not send the
    lone choice again, which would make the undo useless); a second ``u`` takes back the
    placement too."""
    app = await make_app()
    url = f"ws://127.0.0.1:{app.port}/"
    args = ["play", "--plain", "--auto-delay", "0.2", "--server", url]
    term = Terminal([*args, "--game", "ishtar", "--seed", "5"])
    try:
        room = (await term.expect(r"Room (\S+) \(ishtar\): you are P1\."))[1]
        held = app.lobby.rooms[room]
        await term.expect(PROMPT)
        game = held.match.game
        term.send("1")  # a pile
        await term.expect(PROMPT)
        lone = None  # a space whose tile has one rotation only
        for index, choice in enumerate(held.match.decision.choices):
            trial = type(held.match)(game, game.load(game.dump(held.match.state)))
            trial.push(0, choice)
            if len(trial.decision.choices) != 1:
                continue
            trial.push(0, trial.decision.choices[0])  # then a real decision of ours
            if trial.to_move == 0 and len(trial.decision.choices) > 1:
                lone = index + 1
                break
        assert lone is not None
        placed = held.rev
        term.send(str(lone))
        await term.expect(r"Only one choice: .*Sent by itself")
        await term.expect(PROMPT)
        assert held.rev == placed + 2 and held.match.can_undo(0)
        term.send("u")
        await term.expect(rf"\[{placed + 3}\] P1 took back: ")
        await term.expect(PROMPT)
        await asyncio.sleep(0.8)  # four times the auto delay: nothing is sent
        assert held.rev == placed + 3
        assert len(held.match.decision.choices) == 1
        term.send("u")
        await term.expect(rf"\[{placed + 4}\] P1 took back: ")
        term.send("q")
        assert await term.exit_code() == 0
    finally:
        term.close()
