"""Acceptance: the full screen in a real terminal (tmux), against a real server and Redis.

A :class:`~tests.clients.person.Person` plays by reading the screen and typing what a person
would (spaces for Ishtar, souks, shops and squares for Yspahan, numbers otherwise), at 80x24 and
at 160x50. Every screen it acts on must fit the terminal (no line longer than the width, the
header on the first line and the input on the last), show the board, and offer the choices it
reads. The whole matches are in the slow tier (about a minute each); the default tier plays a
few turns of each game and leaves, and checks what the full screen promises besides: the
waiting seat's screen changes when the other seat moves; disconnect, stand-in, comeback and
timeout notices; names and chat with terminal escapes shown harmless; the help; ``q`` and
Ctrl-C printing the command that comes back to the seat, and that command, typed as printed,
bringing the player back.

The slow tier rewrites the captured screens in ``clients/screens/`` (README, "Screens").
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from clients.fullscreen import SYNC_BEGIN, SYNC_END
from server.app import App
from tests.clients.person import Person, Screen
from tests.clients.terminal import Terminal
from tests.clients.tmux import Tmux
from tests.server.conftest import MakeApp, MakeClient

SCREENS = Path(__file__).parents[2] / "clients" / "screens"
SIZES = [(80, 24), (160, 50)]
FINAL = r"Final scores: (?P<scores>.*?) · winners?: (?P<winners>.*)"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "screen"


def save(game: str, size: tuple[int, int], kind: str, lines: list[str]) -> None:
    SCREENS.mkdir(exist_ok=True)
    path = SCREENS / f"{game}-{size[0]}x{size[1]}-{slug(kind)}.txt"
    path.write_text("\n".join(lines) + "\n")


def check_fits(screen: Screen, game: str, cols: int, rows: int) -> None:
    """The screen fits: no line wider than the terminal, every part in its place."""
    lines = screen.lines
    text = "\n".join(lines)
    too_long = [line for line in lines if len(line) > cols]
    assert not too_long, f"lines longer than {cols}:\n{text}"
    assert len(lines) == rows, f"{len(lines)} lines instead of {rows} (something wrapped):\n{text}"
    assert lines[0].startswith(game.capitalize()), text
    assert lines[-1].startswith(">"), text
    if game == "ishtar":
        assert re.search(r"^\s+a +b +c +d", text, re.M), f"no map:\n{text}"
    else:
        assert "Steward" in text and "sacks" in text, f"no city:\n{text}"


def player(url: str, game: str, seed: int, *extra: str) -> list[str]:
    return ["play", "--server", url, "--game", game, "--seed", str(seed), "--name", "ann",
            "--auto-delay", "0.2", *extra]  # fmt: skip


async def scores_of(make_client: MakeClient, app: App, room: str) -> list[int]:
    watcher = await make_client("checker", target=app)
    answer = await watcher.request({"type": "spectate", "room": room})
    return list(answer["view"]["shared"]["result"]["scores"])


def room_of(screen: Screen) -> str:
    found = re.search(r"room (\w+)", screen.header)
    assert found, screen.header
    return found[1]


async def play_through(
    person: Person, game: str, size: tuple[int, int], *, turns: int | None = None, record: bool
) -> Screen:
    """Answer decisions until the end of the match (or ``turns`` answers); the last screen."""
    cols, rows = size
    helped = False
    answered = 0
    while True:
        screen = await person.look(wait=120)
        check_fits(screen, game, cols, rows)
        if "scoring (Enter to dismiss)" in "\n".join(screen.body):
            person.kept += 1
        if "press Enter to leave" in screen.hint:
            if record:
                save(game, size, "final", screen.lines)
            return screen
        if turns is not None and answered >= turns:
            return screen
        if not helped:
            helped = True
            await person.term.type("h")
            shown = await person.term.wait(r"Help and reference", what="the help")
            assert not [line for line in shown if len(line) > cols]
            assert "Playing in this client" in "\n".join(shown)
            if record:
                save(game, size, "help", shown)
            await person.term.type("")  # Enter closes it
            await person.term.wait(lambda lines: "Help and reference" not in "\n".join(lines))
            continue
        await person.act(screen)
        answered += 1
        if record:
            # One screen per kind of decision: the prompt without what varies (numbers, spaces).
            kind = re.sub(r"\b[a-z]{1,2}\d+\b", "", person.prompt.split(":")[0])  # f7
            kind = re.sub(r"\(?-?\d+(?:,-?\d+)?\)?", "", kind)
            kind = re.sub(r"\s+", " ", kind).strip()
            if kind not in recorded:
                recorded.add(kind)
                save(game, size, kind, screen.lines)


recorded: set[str] = set()


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize(("game", "seed"), [("ishtar", 3), ("yspahan", 4)])
async def test_a_whole_match_against_the_bot_read_and_typed_as_a_person_would(
    redis_app: MakeApp, make_client: MakeClient, game: str, seed: int, size: tuple[int, int]
) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(player(url, game, seed), cols=size[0], rows=size[1]).start()
    recorded.clear()
    try:
        person = Person(term, random.Random(seed))
        final = await play_through(person, game, size, record=True)
        room = room_of(final)
        assert "Final scores" in "\n".join(final.body)
        await term.type("")
        after = await term.wait(r"\[exited (\d+)\]", what="the program to end")
        text = "\n".join(after)
        assert "[exited 0]" in text, text
        printed = re.search(FINAL, text)
        assert printed, text
        numbers = [int(s) for s in re.findall(r"P\d [^,]*? (\d+)(?:,|$)", printed["scores"])]
        assert numbers == await scores_of(make_client, app, room)
        assert len(person.typed) > 20
        if game == "ishtar":  # spaces typed, as read off the map
            assert sum(bool(re.fullmatch(r"[a-z]\d+", t)) for t in person.typed) > 5
        else:
            assert person.kept >= 2, "the week's scoring stays on screen until dismissed"
            assert any(re.fullmatch(r"[WENS]\d+|C", t) for t in person.typed)
            assert any(re.fullmatch(r"(sk|br|ch|va)\d(\.\d)?", t) for t in person.typed)
    finally:
        await term.close()


@pytest.mark.parametrize(("game", "seed", "size"), [("ishtar", 5, (80, 24)),
                                                   ("yspahan", 6, (80, 24)),
                                                   ("ishtar", 7, (160, 50))])  # fmt: skip
async def test_a_few_turns_then_q_prints_the_way_back_on_one_line(
    redis_app: MakeApp, game: str, seed: int, size: tuple[int, int]
) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(player(url, game, seed), cols=size[0], rows=size[1]).start()
    try:
        person = Person(term, random.Random(seed))
        screen = await play_through(person, game, size, turns=8, record=False)
        assert person.lone, "some lone choices were shown and went by themselves"
        room = room_of(screen)
        await term.type("q")
        after = "\n".join(await term.wait(r"\[exited \d+\]", what="the program to end"))
        assert "[exited 0]" in after, after
        line = next(line for line in after.splitlines() if "Come back with" in line)
        assert re.fullmatch(rf"Come back with: oasis join {room} --token=\S+ --server \S+", line)
        assert "a bot plays your seat and finishes the match for you" in after
    finally:
        await term.close()
    # The printed command, typed as it is, brings the player back to the seat.
    command = line.removeprefix("Come back with: oasis ").split(" ")
    back = await Tmux([*command, "--auto-delay", "0.2"], cols=size[0], rows=size[1]).start()
    try:
        person = Person(back, random.Random(seed + 1))
        screen = await person.look()
        assert room_of(screen) == room and "you are P1 ann" in screen.header
        check_fits(screen, game, *size)
        await person.act(screen)
        await person.look()
    finally:
        await back.close()


async def test_with_no_auto_a_lone_choice_waits_for_enter(redis_app: MakeApp) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(player(url, "yspahan", 9, "--no-auto"), cols=80, rows=24).start()
    try:
        person = Person(term, random.Random(9))
        for _ in range(40):
            screen = await person.look()
            numbers = screen.numbers(screen.panel(screen.hint.removesuffix("  (h help · q quit)")))
            if numbers == [1]:
                break
            await person.act(screen)
        else:
            raise AssertionError("no lone choice in 40 decisions")
        assert not screen.hint.startswith("Only one choice")
        person.acted = screen.lines[:-1]
        await term.type("")  # Enter alone takes the only choice
        lines = await term.wait(lambda s: s[:-1] != person.acted, what="the choice taken")
        assert not lines[-2].startswith("!"), lines[-2]
    finally:
        await term.close()


async def test_a_word_filters_the_choices_and_a_page_key_turns_the_list(redis_app: MakeApp) -> None:
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = await Tmux(player(url, "ishtar", 10), cols=80, rows=24).start()
    try:
        person = Person(term, random.Random(10))
        screen = await person.look()
        while not re.match(r"Choose (the pile|a tile)", screen.hint):  # the server's prompt
            await person.act(screen)
            screen = await person.look()
        pile = re.findall(r"take from pile (\d)", "\n".join(screen.lines))[-1]
        await term.type("/pile", enter=False)  # filtered as it is typed
        await term.wait(r"\d+ of \d+ choices match 'pile'", what="the filter as typed")
        await term.type(f" {pile}")
        kept = await term.wait(rf"1 of \d+ choices match 'pile {pile}'", what="the filter")
        assert re.search(rf"\d+ take from pile {pile}", "\n".join(kept))
        await term.type("")  # Enter alone takes the only choice shown
        lines = await term.wait(r"^Choose where the tile", what="the next decision")
        assert re.search(r"\d+ spaces, marked on the map", "\n".join(lines)), "names, no labels"
        await term.type("/put", enter=False)  # every space kept, with its whole label, paged
        labels = re.compile(r"(?s)\d+ of \d+ choices match 'put'.*: put the tile's.*page 1/")
        await term.wait(lambda s: bool(labels.search("\n".join(s))), what="the labels, paged")
        await term.key("PageDown")
        await term.wait(r"page 2/", what="the second page")
    finally:
        await term.close()


async def test_every_frame_is_written_as_one_synchronized_update(redis_app: MakeApp) -> None:
    """Each redraw (cursor home, then every line) comes between the begin and the end of a
    synchronized update, so a terminal that knows them never shows half a frame."""
    app = await redis_app()
    url = f"ws://127.0.0.1:{app.port}/"
    term = Terminal(player(url, "yspahan", 11), cols=80, rows=24)
    try:
        await term.expect(r"\(h help · q quit\)")
        term.send("h")
        await term.expect("Help and reference")
        term.send("")
        await term.expect(r"\(h help · q quit\)")
        raw = term.raw.decode(errors="replace")
        begin, end = SYNC_BEGIN, SYNC_END
        assert raw.count(begin) >= 3, "a frame for the board, the help, the board again"
        assert raw.count(begin) - raw.count(end) in (0, 1), (
            "each update ended (one may be on its way)"
        )
        outside = re.sub(re.escape(begin) + ".*?(" + re.escape(end) + "|$)", "", raw, flags=re.S)
        outside = outside.replace("\x1b[?1049h\x1b[H", "")  # entering the alternate screen
        assert "\x1b[H" not in outside, "a frame drawn outside a synchronized update"
    finally:
        term.close()
