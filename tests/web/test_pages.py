"""The browser client in headless Chromium against the real server and Redis: the lobby, two
people playing each other (one reloads mid-match), spectators and the stream overlay following
bot matches of both games to the final scores with no hash mismatch, a replay, and playing again
(a rematch) with every page following the move. Every page must finish without a console error
or an uncaught error (the fixture checks)."""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.server.matches import Played, drive_seat
from tests.web.conftest import DESKTOP, PHONE, MakeWeb, Web, shoot, two_people

MATCH_TIMEOUT_MS = 120_000


async def result_scores(page: Page) -> list[int]:
    await page.wait_for_selector("#result", timeout=MATCH_TIMEOUT_MS)
    return [int(text) for text in await page.locator("#result td.score").all_inner_texts()]


async def mismatches(page: Page) -> int:
    return int(await page.locator("#mismatches").inner_text())


async def finished_view(web: Web, room: str) -> dict[str, Any]:
    """The final result as the server tells a spectator of ``room``."""
    watcher = await web.client("referee")
    try:
        await watcher.request({"type": "spectate", "room": room})
        await watcher.until(lambda: watcher.view(room)["shared"]["result"] is not None, 120)
        result: dict[str, Any] = watcher.view(room)["shared"]["result"]
        return result
    finally:
        await watcher.close()


@pytest.mark.parametrize("game", ["yspahan", "ishtar"])
async def test_spectators_and_the_overlay_follow_a_bot_match_to_the_final_scores(
    make_web: MakeWeb, game: str
) -> None:
    web = await make_web(bot_delay=0.005)
    host = await web.client("host")
    created = await host.request(
        {"type": "create", "game": game, "players": 2, "bots": 2, "bot": "random", "seed": 7}
    )
    room = created["room"]
    desktop, phone = await web.page(DESKTOP), await web.page(PHONE)
    overlay = await web.page({"width": 1920, "height": 1080})
    await desktop.goto(f"{web.url}/watch/{room}")
    await phone.goto(f"{web.url}/watch/{room}")
    await overlay.goto(f"{web.url}/watch/{room}?overlay=1")
    for page in (desktop, phone):
        await expect(page.locator("#room-state")).to_have_text("Open")
    await expect(overlay.locator(".ov-seat")).to_have_count(2)
    for page in (desktop, phone, overlay):
        await expect(page.locator("#board svg")).to_be_visible()
    started = await host.request({"type": "start", "room": room})
    assert started["type"] == "ack", started
    await expect(desktop.locator("#rev")).to_have_text(re.compile(r"^rev [1-9][0-9]+$"))
    await shoot(desktop, f"watch-{game}")
    await shoot(overlay, f"overlay-{game}")

    result = await finished_view(web, room)
    for page in (desktop, phone):
        assert await result_scores(page) == result["scores"]
        assert await mismatches(page) == 0
    await expect(overlay.locator("#last-event")).to_have_text(re.compile(r"^Final — "))
    scores = [int(s) for s in await overlay.locator("[data-score]").all_inner_texts()]
    assert scores == result["scores"]
    assert await mismatches(overlay) == 0
    background = await overlay.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgba(0, 0, 0, 0)"  # transparent for the streaming software
    assert await overlay.locator("button, input, select").count() == 0
    for page in (desktop, phone, overlay):
        assert await page.locator("#board .hit").count() == 0  # a spectator has nothing to click
    await shoot(desktop, f"watch-{game}-final")
    await shoot(phone, f"watch-{game}-final")
    await shoot(overlay, f"overlay-{game}-final")
    await host.close()


async def take_turns(pages: list[Page], *, reload_after: int, reloaded: Page) -> int:
    """Click the first legal choice on whichever page must decide, until a result shows; the
    page ``reloaded`` is reloaded once after ``reload_after`` moves. Returns the moves made."""
    moves = 0
    selector = "button.choice:not([disabled]), #result"
    while True:
        waits = {
            asyncio.ensure_future(page.wait_for_selector(selector, timeout=30_000)): page
            for page in pages
        }
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        page = waits[done.pop()]
        if await page.locator("#result").count():
            return moves
        await page.locator("button.choice:not([disabled])").first.click()
        moves += 1
        if moves == reload_after:
            await reloaded.reload()
            await expect(reloaded.locator("#room-state")).to_have_text("Playing")


async def test_two_people_play_each_other_and_a_reload_resumes_the_seat(
    make_web: MakeWeb,
) -> None:
    web = await make_web()
    ann, bob = await web.page(DESKTOP), await web.page(PHONE)
    await ann.goto(web.url + "/")
    await ann.fill("#name", "ann")
    await ann.select_option("#create-game", "tiny")
    await ann.select_option("#create-players", "2")
    await ann.select_option("#create-bots", "0")
    await ann.select_option("#create-clock", "300+5")
    await ann.click("#create")
    await ann.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    room = ann.url.rsplit("/", 1)[1]
    link = await ann.locator("#share-link").input_value()
    assert link == f"{web.url}/play/{room}"
    await shoot(ann, "play-open")

    await bob.goto(web.url + "/")
    await bob.fill("#name", "bob")
    await bob.goto(link)
    await expect(bob.locator(".badge.you")).to_have_text("you: bob")
    await expect(ann.locator("#start")).to_be_visible()
    await ann.fill("#chat-text", "good luck")
    await ann.click("#chat-form button")
    await expect(bob.locator("#chat")).to_contain_text("ann good luck")
    await bob.click("#start")

    # The clock of the seat that must decide ticks down from 5:00.
    running = ann.locator(".clock.running")
    await expect(running).to_have_count(1)
    await expect(running).not_to_have_text("5:00", timeout=5_000)
    await shoot(ann, "play-tiny")
    await shoot(bob, "play-tiny")

    moves = await take_turns([ann, bob], reload_after=3, reloaded=bob)
    assert moves >= 6
    await expect(bob.locator(".badge.you")).to_have_text("you: bob")  # the same seat
    scores = await result_scores(ann)
    assert await result_scores(bob) == scores
    assert scores == (await finished_view(web, room))["scores"]
    for page in (ann, bob):
        assert await mismatches(page) == 0
        # The seats' views were hashed under rule 2, the one the page asks for (SPEC 4).
        assert await page.evaluate("oasis.session.hashRule") == 2
        await shoot(page, "play-tiny-final")
    token = await bob.evaluate(f"localStorage.getItem('oasis:seat:{room}')")
    assert token and '"seat":1' in token


async def test_lobby_lists_public_rooms_live_and_quick_match_pairs_two_people(
    make_web: MakeWeb,
) -> None:
    web = await make_web()
    lobby = await web.page(DESKTOP)
    await lobby.goto(web.url + "/")
    await expect(lobby.locator("#rooms")).to_contain_text("No public rooms")
    host = await web.client("host")
    room = (await host.request({"type": "create", "game": "tiny", "players": 3}))["room"]
    row = lobby.locator(f'tr[data-room="{room}"]')
    await expect(row).to_contain_text("0/3")  # appears without a reload
    await shoot(lobby, "lobby")
    phone = await web.page(PHONE)
    await phone.goto(web.url + "/")
    await expect(phone.locator(f'tr[data-room="{room}"]')).to_be_visible()
    await shoot(phone, "lobby")
    await row.get_by_text("Watch").click()
    await lobby.wait_for_url(f"{web.url}/watch/{room}")
    await expect(lobby.locator("#room-state")).to_have_text("Open")

    first, second = await web.page(DESKTOP), await web.page(PHONE)
    for page, name in ((first, "cy"), (second, "di")):
        await page.goto(web.url + "/")
        await page.fill("#name", name)
        await page.select_option("#quick-game", "tiny")
        await page.click("#quick")
        await page.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    assert first.url == second.url
    for page in (first, second):
        await expect(page.locator("#room-state")).to_have_text("Playing")  # started when full

    # A private room: its link is shown to share, and it is not listed.
    await phone.uncheck("#create-public")
    await phone.select_option("#create-game", "tiny")
    await phone.click("#create")
    await phone.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    private = phone.url.rsplit("/", 1)[1]
    await expect(phone.locator(".share")).to_contain_text("Private room")
    await shoot(phone, "play-private-open")
    listed = await host.request({"type": "list_rooms"})
    assert private not in [info["room"] for info in listed["rooms"]]
    await host.close()


async def test_the_lobby_shows_the_first_page_of_rooms_and_more_on_asking(
    make_web: MakeWeb,
) -> None:
    web = await make_web(list_page=2)
    host = await web.client("host")
    rooms = [
        (await host.request({"type": "create", "game": "tiny", "players": 2}))["room"]
        for _ in range(3)
    ]
    lobby = await web.page(DESKTOP)
    await lobby.goto(web.url + "/")
    await expect(lobby.locator(f'tr[data-room="{rooms[1]}"]')).to_be_visible()
    assert await lobby.locator(f'tr[data-room="{rooms[2]}"]').count() == 0
    await lobby.click("#rooms-more")
    await expect(lobby.locator(f'tr[data-room="{rooms[2]}"]')).to_be_visible()
    await expect(lobby.locator("#rooms-more")).to_be_hidden()  # that was the last page
    await host.close()


async def test_a_finished_match_replays_to_the_same_scores(make_web: MakeWeb) -> None:
    web = await make_web()
    host = await web.client("host")
    created = await host.request(
        {"type": "create", "game": "yspahan", "players": 2, "bots": 2, "seed": 3}
    )
    room = created["room"]
    await host.request({"type": "start", "room": room})
    result = await finished_view(web, room)
    page = await web.page(DESKTOP)
    await page.goto(f"{web.url}/replay/{room}?interval=0.01")  # plays along, to its end
    await expect(page.locator(".badges")).to_contain_text(f"replay of {room}")
    assert await result_scores(page) == result["scores"]
    await expect(page.locator("#replay-at")).to_have_text(re.compile(r"^rev (\d+) of \1$"))
    assert await mismatches(page) == 0
    await shoot(page, "replay")
    await host.close()


async def test_the_undo_button_takes_back_the_last_step_while_the_view_allows_it(
    make_web: MakeWeb,
) -> None:
    """Issue 19: the play page offers "Undo your last step" while ``own.undo`` is true; a
    click sends ``undo`` and the page follows the revision it makes without a mismatch."""
    web = await make_web(bot_delay=0.005)
    page = await web.page(DESKTOP)
    await page.goto(web.url + "/")
    await page.fill("#name", "ann")
    await page.select_option("#create-game", "ishtar")
    await page.select_option("#create-players", "2")
    await page.select_option("#create-bots", "1")
    await page.click("#create")
    await page.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    room = page.url.rsplit("/", 1)[1]
    await page.click("#start")  # every seat is taken (the bot's): the host starts
    await expect(page.locator("#room-state")).to_have_text("Playing")
    held = web.app.lobby.rooms[room]
    for _ in range(60):
        await page.wait_for_selector("button.choice:not([disabled])", timeout=30_000)
        if await page.locator("#undo").count():
            break
        await page.locator("button.choice:not([disabled])").first.click()
    undo = page.locator("#undo")
    await expect(undo).to_be_visible()
    assert held.match.can_undo(0)
    rev = held.rev
    await shoot(page, "play-undo")
    await undo.click()
    await expect(page.locator("#rev")).to_have_text(f"rev {rev + 1}")
    await expect(page.locator("#log")).to_contain_text("P1 took back: ")
    assert held.rev == rev + 1
    assert await mismatches(page) == 0


class _BrokenEffector:
    """A room's effector with a bug: carrying out any effects raises."""

    async def execute(self, effects: Any, t0: float) -> None:
        raise RuntimeError("a bug in carrying out effects")


async def test_a_room_that_failed_is_resumed_by_the_pages_and_played_to_the_end(
    make_web: MakeWeb,
) -> None:
    """A bug stops the room's task on a move: the page that moved is told, both pages follow the
    server's unasked ``redirect``, resume their seats in the room rebuilt from Redis and the
    match is played to the end with the same scores as the server's, no hash mismatch."""
    web = await make_web()
    ann, bob, room = await two_people(web, "tiny")
    await bob.click("#start")
    await expect(ann.locator("#room-state")).to_have_text("Playing")

    failed = web.app.lobby.rooms[room]
    failed.effector = _BrokenEffector()  # type: ignore[assignment]
    await ann.locator("button.choice:not([disabled])").first.click()
    for _ in range(100):  # (rebuilt from Redis within a few milliseconds)
        if web.app.lobby.rooms.get(room) not in (None, failed):
            break
        await asyncio.sleep(0.05)
    assert web.app.lobby.rooms[room] is not failed
    await expect(ann.locator(".notice.error")).to_contain_text("whether your move was made")
    for page in (ann, bob):  # (both pages reconnected by themselves)
        await expect(page.locator(".status")).to_have_text("connected")
    await expect(ann.locator("#room-state")).to_have_text("Playing")
    await shoot(ann, "play-after-a-room-failed")

    moves = await take_turns([ann, bob], reload_after=-1, reloaded=bob)
    assert moves >= 6
    scores = await result_scores(ann)
    assert await result_scores(bob) == scores
    assert scores == (await finished_view(web, room))["scores"]
    for page in (ann, bob):
        assert await mismatches(page) == 0


async def test_play_again_moves_both_seats_and_a_spectator_to_the_new_match(
    make_web: MakeWeb,
) -> None:
    """A rematch (SPEC section 9): Ann and Bob come back to their finished Yspahan match (a
    reload resumes a seat from the token this browser keeps; their seats played it over the
    protocol, for speed), a spectator watches it; Ann clicks "Play again". Each page follows
    the server's move into the new room, whoever asked: its address, the new seat token kept
    for resume, the new match's board, and the match goes on there."""
    web = await make_web()
    seats = [await web.client(name) for name in ("ann", "bob")]
    created = await seats[0].request({"type": "create", "game": "yspahan", "players": 2})
    room = created["room"]
    tokens = []
    for seat, client in enumerate(seats):
        joined = await client.request({"type": "join", "room": room, "name": client.name})
        assert joined["seat"] == seat, joined
        tokens.append(joined["token"])
    await seats[0].request({"type": "start", "room": room})
    played = Played(room, 0, 2, "yspahan")
    await asyncio.gather(
        *(drive_seat(c, room, i, played, random.Random(i)) for i, c in enumerate(seats))
    )
    for client in seats:
        await client.close()

    ann, bob, watcher = await web.page(DESKTOP), await web.page(PHONE), await web.page(DESKTOP)
    for seat, page in enumerate((ann, bob)):
        await page.goto(web.url + "/")
        seat_key = f"oasis:seat:{room}"
        held = json.dumps({"seat": seat, "token": tokens[seat]})
        await page.evaluate("([key, held]) => localStorage.setItem(key, held)", [seat_key, held])
        await page.goto(f"{web.url}/play/{room}")
        await expect(page.locator("#result")).to_be_visible()
        await expect(page.locator("#play-again")).to_be_visible()
    await watcher.goto(f"{web.url}/watch/{room}")
    await expect(watcher.locator("#result")).to_be_visible()
    await expect(watcher.locator("#turn")).to_contain_text("this page follows them")
    assert await watcher.locator("#play-again").count() == 0
    await shoot(ann, "play-again")
    await shoot(bob, "play-again")

    await ann.click("#play-again")
    elsewhere = re.compile(rf"/play/(?!{room})[0-9a-f]+$")
    await ann.wait_for_url(elsewhere)
    new = ann.url.rsplit("/", 1)[1]
    await bob.wait_for_url(f"{web.url}/play/{new}")  # moved without a click
    await watcher.wait_for_url(f"{web.url}/watch/{new}")
    for page, you in ((ann, "you: ann"), (bob, "you: bob"), (watcher, None)):
        await expect(page.locator("#notices")).to_contain_text(
            f"New match with the same players: room {new}"
        )
        await expect(page.locator("#room-state")).to_have_text("Playing")
        await expect(page.locator("#board svg")).to_be_visible()
        if you is not None:
            await expect(page.locator(".badge.you")).to_have_text(you)
    for seat, page in enumerate((ann, bob)):
        held = json.loads(await page.evaluate(f"localStorage.getItem('oasis:seat:{new}')"))
        assert held["seat"] == seat and held["token"] != tokens[seat]
    await shoot(ann, "play-again-new-match")
    await shoot(bob, "play-again-new-match")
    await shoot(watcher, "watch-play-again-new-match")

    # The match goes on in the new room: whoever decides first clicks, every page sees it.
    mover = ann if await ann.locator("#choices").count() else bob
    await mover.locator("button.choice:not([disabled])").first.click()
    for page in (ann, bob, watcher):
        await expect(page.locator("#rev")).to_have_text("rev 1")
        assert await mismatches(page) == 0
    assert web.app.lobby.rooms[room].rematch == new


async def test_who_was_not_moved_goes_on_to_the_new_match_the_finished_room_names(
    make_web: MakeWeb,
) -> None:
    """A rematch in a room with a spectator delay (SPEC section 9): Ann and Bob play over the
    protocol, a spectator's page (``?follow=1``) watches; Bob leaves, then Ann plays again. The
    server leaves the spectator where its late feed is: its page shows the final scores, names
    the new match and follows the players there by itself a second later. Bob's browser (his
    token kept) opens the finished match: it names the new match and takes his free seat there
    on a click, never by itself; the match starts there once Ann starts it."""
    web = await make_web()
    seats = [await web.client(name) for name in ("ann", "bob")]
    create = {"type": "create", "game": "tiny", "players": 2, "spectator_delay": 0.3}
    room = (await seats[0].request(create))["room"]
    tokens = []
    for client in seats:
        tokens.append(
            (await client.request({"type": "join", "room": room, "name": client.name}))["token"]
        )
    watcher = await web.page(DESKTOP)
    await watcher.goto(f"{web.url}/watch/{room}?follow=1")
    await expect(watcher.locator("#room-state")).to_have_text("Open")
    await seats[0].request({"type": "start", "room": room})
    played = Played(room, 0, 2, "tiny")
    await asyncio.gather(
        *(drive_seat(c, room, i, played, random.Random(i)) for i, c in enumerate(seats))
    )
    await seats[1].close()  # Bob leaves the finished match
    await seats[0].wait_for(
        lambda f: f["type"] == "room" and not f["info"]["seats"][1]["connected"]
    )
    new = (await seats[0].request({"type": "rematch", "room": room}))["room"]

    went_on = f"The players went on to a new match: room {new}."
    await expect(watcher.locator("#went-on")).to_have_text(went_on)
    await expect(watcher.locator("#result")).to_be_visible()
    await expect(watcher.locator("#follow-in")).to_have_text(
        re.compile(r"^Following them in [01] s\.$")
    )
    await shoot(watcher, "watch-went-on")
    await watcher.wait_for_url(f"{web.url}/watch/{new}?follow=1")  # by itself
    await expect(watcher.locator("#notices")).to_contain_text(f"room {new}")
    await expect(watcher.locator("#room-state")).to_have_text("Open")

    bob = await web.page(PHONE)
    await bob.goto(web.url + "/")
    held = json.dumps({"seat": 1, "token": tokens[1]})
    await bob.evaluate(
        "([key, held]) => localStorage.setItem(key, held)", [f"oasis:seat:{room}", held]
    )
    await bob.goto(f"{web.url}/play/{room}")
    await expect(bob.locator("#went-on")).to_have_text(went_on)
    await expect(bob.locator("#follow-rematch")).to_have_text("Join the new match")
    assert await bob.locator("#play-again").count() == 0
    await shoot(bob, "play-went-on")
    assert bob.url == f"{web.url}/play/{room}", "no seat taken without asking"
    await bob.click("#follow-rematch")
    await bob.wait_for_url(f"{web.url}/play/{new}")
    await expect(bob.locator(".badge.you")).to_have_text("you: bob")
    held_now = json.loads(await bob.evaluate(f"localStorage.getItem('oasis:seat:{new}')"))
    assert held_now["seat"] == 1 and held_now["token"] != tokens[1]
    await seats[0].request({"type": "start", "room": new})
    for page in (bob, watcher):
        await expect(page.locator("#room-state")).to_have_text("Playing")
        assert await mismatches(page) == 0
    await shoot(bob, "play-went-on-new-match")
    await shoot(watcher, "watch-went-on-new-match")
    info = web.app.lobby.rooms[new].info()
    assert [s["name"] for s in info["seats"]] == ["ann", "bob"] and info["spectators"] == 1
