"""clients/web/examples/: the minimal frontend on oasis.js and the server's labels alone plays a
whole match against a server bot in Chromium (the person clicks the labelled buttons), to the
same final scores as the server's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import expect

from tests.web.conftest import DESKTOP, MakeWeb, shoot
from tests.web.test_pages import finished_view

EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "web" / "examples" / "minimal.js"


def test_the_example_is_about_a_hundred_lines_and_imports_only_oasis_js() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 110
    imports = re.findall(r'^import .* from "([^"]+)";$', text, re.MULTILINE)
    assert imports == ["/web/oasis.js"]


@pytest.mark.parametrize("game", ["ishtar"])
async def test_the_example_frontend_plays_a_whole_match(make_web: MakeWeb, game: str) -> None:
    web = await make_web(bot_delay=0.005)
    page = await web.page(DESKTOP)
    await page.goto(f"{web.url}/web/examples/index.html?game={game}")
    await expect(page.locator("#status")).to_contain_text(f"Playing {game} in room ")
    room = (await page.locator("#status").inner_text()).split(" room ")[1].split()[0]
    clicks = 0
    while not await page.locator("#result[data-done]").count():
        await page.wait_for_selector("button.choice, #result[data-done]", timeout=30_000)
        buttons = page.locator("button.choice")
        if await buttons.count():
            try:
                label = await buttons.first.inner_text(timeout=2_000)
                assert label and "_" not in label  # the server's label, not a choice's kind
                await buttons.first.click(timeout=2_000)
                clicks += 1
            except PlaywrightTimeout:  # redrawn under the pointer: the next view's buttons
                continue
    assert clicks > 10
    shown = await page.locator("#result li").all_inner_texts()
    scores = [int(line.split(": ")[1].split()[0]) for line in shown]
    assert scores == (await finished_view(web, room))["scores"]
    assert await page.locator("#log li").count() > clicks  # every event told in words
    await shoot(page, f"example-{game}")
