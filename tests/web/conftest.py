"""Fixtures of the browser tests: a real server on a real Redis, Debian's headless Chromium
driven by Playwright, and pages that record every console error and uncaught error.

Chromium is the system's (``/usr/bin/chromium``, installed by ``scripts/test``): Playwright's
own browser downloads cannot run here and are never used. Screenshots go to ``var/screenshots``.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    async_playwright,
    expect,
)

from server.app import App
from server.store.redis import RedisStore
from tests.server.client import Client
from tests.server.conftest import TEST_CONFIG
from tests.services import RedisServer

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 20_000


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError("chromium is not installed (scripts/test installs Debian's package)")
    return found


@dataclass
class Web:
    """A server on Redis, the browser, and what the pages said that they should not have."""

    app: App
    browser: Browser
    tmp: Path
    problems: list[str] = field(default_factory=list)
    contexts: list[BrowserContext] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.app.port}"

    async def page(self, viewport: dict[str, int] | None = None) -> Page:
        """A page in a fresh context (its own localStorage: another person's browser)."""
        context = await self.browser.new_context(viewport=viewport or DESKTOP)
        context.set_default_timeout(TIMEOUT_MS)
        self.contexts.append(context)
        page = await context.new_page()
        self.watch(page)
        return page

    def watch(self, page: Page) -> None:
        def console(message: ConsoleMessage) -> None:
            if message.type in ("error", "assert"):
                self.problems.append(f"console {message.type}: {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda exc: self.problems.append(f"uncaught: {exc}"))

    async def client(self, name: str = "t") -> Client:
        return await Client.open(f"ws://127.0.0.1:{self.app.port}/", name)


MakeWeb = Callable[..., Awaitable[Web]]


@pytest.fixture
async def make_web(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[MakeWeb]:
    """``await make_web(**config)``: the server (on the test's redis-server) and a browser."""
    started: list[tuple[Web, Any, list[Client]]] = []

    async def start(**overrides: Any) -> Web:
        config = dataclasses.replace(TEST_CONFIG, **overrides)
        store = RedisStore(redis_server.url)
        await store.start()
        app = App(config, store)
        await app.start()
        playwright = await async_playwright().start()
        browser = await playwright.chromium.launch(executable_path=chromium(), args=FLAGS)
        web = Web(app, browser, tmp_path)
        started.append((web, playwright, []))
        return web

    yield start
    for web, playwright, _ in started:
        for context in web.contexts:
            await context.close()
        await web.browser.close()
        await playwright.stop()
        await web.app.stop()
    for web, _, _ in started:
        assert web.problems == [], web.problems


async def shoot(page: Page, name: str) -> Path:
    """A screenshot of the whole page at its viewport's width, into var/screenshots."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or DESKTOP
    path = SCREENSHOTS / f"{name}-{size['width']}x{size['height']}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path


async def two_people(web: Web, game: str) -> tuple[Page, Page, str]:
    """Ann (a desktop page) creates a room of ``game`` for two, with no bots; Bob (a phone) opens
    its link and takes the other seat. The two pages and the room's id; the match not started."""
    ann, bob = await web.page(DESKTOP), await web.page(PHONE)
    await ann.goto(web.url + "/")
    await ann.fill("#name", "ann")
    await ann.select_option("#create-game", game)
    await ann.select_option("#create-players", "2")
    await ann.select_option("#create-bots", "0")
    await ann.click("#create")
    await ann.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    room = ann.url.rsplit("/", 1)[1]
    await bob.goto(web.url + "/")
    await bob.fill("#name", "bob")
    await bob.goto(await ann.locator("#share-link").input_value())
    await expect(bob.locator(".badge.you")).to_have_text("you: bob")
    return ann, bob, room
