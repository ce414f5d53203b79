"""The boards in headless Chromium against the real server and Redis: a person plays Ishtar and
Yspahan against a server bot only by clicking the board and the choice list, the phone's page
takes taps on the board, and a replay steps back and forth and jumps to a turn; in the slow
tier, two people play a whole Ishtar match on the board (one reloads), and bot matches of 3 and
4 players are watched on both boards. No console error or uncaught error on any page (the
fixture checks)."""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass

import pytest
from playwright.async_api import Page, expect

from tests.web.conftest import DESKTOP, PHONE, MakeWeb, Web, shoot, two_people
from tests.web.test_pages import finished_view, mismatches, result_scores

DECISION_MS = 30_000


@dataclass
class Clicks:
    board: int = 0
    listed: int = 0
    confirmed: int = 0
    """Board clicks that needed a second click on the strip (an Ishtar footprint to confirm)."""

    @property
    def total(self) -> int:
        return self.board + self.listed


async def open_match(web: Web, page: Page, game: str, *, bots_at_start: bool = False) -> str:
    """From the lobby: a 2-player match of ``game`` against one server bot, started (the bot
    sits down at creation, or with ``bots_at_start`` when the host starts with bots)."""
    await page.goto(web.url + "/")
    await page.fill("#name", "ann")
    await page.select_option("#create-game", game)
    await page.select_option("#create-players", "2")
    await page.select_option("#create-bots", "0" if bots_at_start else "1")
    await page.select_option("#create-bot", "random")
    await page.click("#create")
    await page.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    await page.click("#start-bots" if bots_at_start else "#start")
    await expect(page.locator("#room-state")).to_have_text("Playing")
    await expect(page.locator("#board svg")).to_be_visible()
    return page.url.rsplit("/", 1)[1]


MINE = "#board .hit, button.choice:not([disabled]), #result"


async def decide(page: Page, rng: random.Random, clicks: Clicks) -> None:
    """One decision on ``page``, which has one to take: a place on the board when a choice has
    one (then, when the board asks, one of the choices listed there), otherwise the first choice
    of the list; returns once the revision moved on."""
    rev = await page.locator("#rev").inner_text()
    hits = page.locator("#board .hit")
    count = await hits.count()
    if count:
        await hits.nth(rng.randrange(count)).click()
        strip = page.locator("#pick:not([hidden]) .pick-choice")
        if await strip.count():
            if await page.locator("#board svg.board-ishtar").count():  # a footprint shows
                assert await page.locator("#board .preview polygon").count() > 0
            await strip.nth(rng.randrange(await strip.count())).click()
            clicks.confirmed += 1
        clicks.board += 1
    else:
        await page.locator("button.choice:not([disabled])").first.click()
        clicks.listed += 1
    await expect(page.locator("#rev")).not_to_have_text(rev, timeout=DECISION_MS)


async def click_through(page: Page, rng: random.Random, limit: int | None) -> Clicks:
    """Decide on the page until the result shows (or ``limit`` decisions)."""
    clicks = Clicks()
    while limit is None or clicks.total < limit:
        await page.wait_for_selector(MINE, timeout=DECISION_MS)
        if await page.locator("#result").count():
            break
        await decide(page, rng, clicks)
    return clicks


@pytest.mark.slow  # 50 s; the default tier keeps the boards' taps, replays and test_pages' matches
@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
async def test_a_person_plays_a_whole_match_against_a_bot_by_clicking_the_board(
    make_web: MakeWeb, game: str
) -> None:
    web = await make_web(bot_delay=0.005)
    page = await web.page(DESKTOP)
    room = await open_match(web, page, game)
    await shoot(page, f"play-{game}")
    clicks = await click_through(page, random.Random(16), 20)
    await shoot(page, f"play-{game}-midgame")
    more = await click_through(page, random.Random(game), None)
    board, listed = clicks.board + more.board, clicks.listed + more.listed
    assert board > listed, (clicks, more)  # most decisions have a place on the board
    if game == "ishtar":
        assert clicks.confirmed + more.confirmed >= 1  # a footprint previewed, then confirmed
    scores = await result_scores(page)
    assert scores == (await finished_view(web, room))["scores"]
    assert await mismatches(page) == 0
    await shoot(page, f"play-{game}-final")


async def test_the_phone_shows_the_board_and_takes_taps(make_web: MakeWeb) -> None:
    web = await make_web(bot_delay=0.005)
    for game in ("ishtar", "yspahan"):
        page = await web.page(PHONE)
        await open_match(web, page, game, bots_at_start=True)
        await expect(page.locator("#seats")).to_contain_text("random bot")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{game}: the page scrolls sideways ({width}px)"
        drawn = await page.evaluate(
            "document.querySelector('#board svg').getBoundingClientRect().width"
        )
        assert drawn > 300, drawn  # the board takes the phone's width
        clicks = await click_through(page, random.Random(3), 6)
        assert clicks.board >= 3, clicks
        await shoot(page, f"play-{game}")


@pytest.mark.parametrize("game", ["ishtar", "yspahan"])
async def test_a_replay_steps_back_and_forth_and_jumps_to_a_turn(
    make_web: MakeWeb, game: str
) -> None:
    web = await make_web()
    host = await web.client("host")
    created = await host.request(
        {"type": "create", "game": game, "players": 2, "bots": 2, "seed": 5}
    )
    room = created["room"]
    await host.request({"type": "start", "room": room})
    result = await finished_view(web, room)
    await host.close()

    page = await web.page(DESKTOP)
    await page.goto(f"{web.url}/replay/{room}")
    await expect(page.locator(".badges")).to_contain_text(f"replay of {room}")
    await expect(page.locator("#rev")).to_have_text("rev 0")  # a replay starts at the start
    await page.wait_for_selector("#replay[data-complete]", timeout=60_000)  # every revision came
    at = page.locator("#replay-at")
    await expect(at).to_have_text(re.compile(r"^rev 0 of [1-9][0-9]+$"))
    await page.click("#replay-last")
    assert await result_scores(page) == result["scores"]
    last = int((await page.locator("#rev").inner_text()).split()[1])
    await expect(at).to_have_text(f"rev {last} of {last}")
    await shoot(page, f"replay-{game}-final")

    await page.click("#replay-back")
    await expect(page.locator("#rev")).to_have_text(f"rev {last - 1}")
    await expect(page.locator("#result")).to_have_count(0)  # not over one revision earlier
    await page.click("#replay-forward")
    await expect(page.locator("#rev")).to_have_text(f"rev {last}")
    await expect(page.locator("#result")).to_have_count(1)

    turns = page.locator("#replay-turn option")
    count = await turns.count()
    assert count >= 3
    middle = turns.nth(count // 2)
    name, index = await middle.inner_text(), int(await middle.get_attribute("value") or "0")
    await page.select_option("#replay-turn", str(index))
    await expect(page.locator("#replay-turn")).to_have_value(str(index))
    await expect(page.locator("#rev")).not_to_have_text(f"rev {last}")
    shown = int((await page.locator("#rev").inner_text()).split()[1])
    assert 0 < shown < last
    log = await page.locator("#log li .rev").all_inner_texts()
    assert log and max(int(r) for r in log) <= shown  # the log stops at the revision shown
    assert name.startswith(("turn", "week"))
    await shoot(page, f"replay-{game}")
    await page.click("#replay-first")
    await expect(page.locator("#rev")).to_have_text("rev 0")
    assert await mismatches(page) == 0
    phone = await web.page(PHONE)
    await phone.goto(f"{web.url}/replay/{room}")
    await phone.wait_for_selector("#replay[data-complete]", timeout=60_000)
    await phone.click("#replay-last")
    await expect(phone.locator("#result")).to_be_visible()
    await shoot(phone, f"replay-{game}-final")


@pytest.mark.slow
async def test_two_people_play_ishtar_on_the_board_and_a_reload_resumes_the_seat(
    make_web: MakeWeb,
) -> None:
    web = await make_web()
    ann, bob, room = await two_people(web, "ishtar")
    await bob.click("#start")

    rng = random.Random(2)
    clicks = Clicks()
    reloaded = False
    while True:
        waits = {
            asyncio.ensure_future(page.wait_for_selector(MINE, timeout=DECISION_MS)): page
            for page in (ann, bob)
        }
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        page = waits[done.pop()]
        if await page.locator("#result").count():
            break
        await decide(page, rng, clicks)
        if clicks.total >= 12 and not reloaded:
            await bob.reload()  # the seat comes back from localStorage, mid-match
            await expect(bob.locator(".badge.you")).to_have_text("you: bob")
            await expect(bob.locator("#board svg")).to_be_visible()
            reloaded = True
    assert reloaded and clicks.board > clicks.listed, clicks
    scores = await result_scores(ann)
    assert await result_scores(bob) == scores
    assert scores == (await finished_view(web, room))["scores"]
    for page in (ann, bob):
        assert await mismatches(page) == 0
        await shoot(page, "play-ishtar-two-people-final")


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4])
async def test_the_boards_show_three_and_four_players(make_web: MakeWeb, players: int) -> None:
    web = await make_web(bot_delay=0.05)
    host = await web.client("host")
    for game in ("ishtar", "yspahan"):
        created = await host.request(
            {"type": "create", "game": game, "players": players, "bots": players, "seed": 9}
        )
        room = created["room"]
        pages = [await web.page(DESKTOP), await web.page(PHONE)]
        for page in pages:
            await page.goto(f"{web.url}/watch/{room}")
            await expect(page.locator("#board svg")).to_be_visible()
        await host.request({"type": "start", "room": room})
        for page in pages:
            await expect(page.locator("#rev")).to_have_text(re.compile(r"^rev [1-9][0-9]+$"))
            await expect(page.locator("#board .player")).to_have_count(players)
            await expect(page.locator("#seats .swatch")).to_have_count(players)
            await shoot(page, f"watch-{game}-{players}p")
            assert await mismatches(page) == 0
    await host.close()
