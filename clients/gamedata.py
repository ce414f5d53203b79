"""A game's static data (boards, tiles, buildings, cards, skills) from ``GET /games/<name>``.

The server serves what never changes in a match over HTTP on its WebSocket port (DESIGN: static
data once, not in every view), so the client never reads the engines' files. The address comes
from the WebSocket URL the client talks to (``ws://host:port/...`` -> ``http://host:port/games/
ishtar``, ``wss`` -> ``https``). Each game is fetched once per run, in a thread (``urllib``), when
something first needs it; a server without the endpoint, or any failure, gives None and a
sentence in :attr:`GameData.problem`, and the client shows what the views alone tell.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

TIMEOUT = 5.0
MAX_BYTES = 4 << 20


def http_url(server: str, game: str) -> str:
    """``ws://h:p/x`` -> ``http://h:p/games/<game>``."""
    parts = urlsplit(server)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme or "http")
    return urlunsplit((scheme, parts.netloc, f"/games/{game}", "", ""))


class GameData:
    """Static data per game, fetched once from the server the client talks to."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.problem = ""
        self._cache: dict[str, dict[str, Any] | None] = {}
        self._lock = asyncio.Lock()

    def known(self, game: str) -> dict[str, Any] | None:
        """What was fetched for ``game`` already (None: not yet, or not available)."""
        return self._cache.get(game)

    async def get(self, game: str) -> dict[str, Any] | None:
        async with self._lock:
            if game not in self._cache:
                self._cache[game] = await asyncio.to_thread(self._fetch, game)
            return self._cache[game]

    def _fetch(self, game: str) -> dict[str, Any] | None:
        url = http_url(self.server, game)
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                body = answer.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as exc:
            self.problem = f"this server does not serve {url} (HTTP {exc.code})"
            return None
        except (OSError, ValueError) as exc:
            self.problem = f"the game data at {url} could not be read ({exc})"
            return None
        if len(body) > MAX_BYTES:
            self.problem = f"the game data at {url} is too large"
            return None
        try:
            data = json.loads(body)
        except ValueError:
            self.problem = f"the game data at {url} is not JSON"
            return None
        if not isinstance(data, dict):
            self.problem = f"the game data at {url} is not a JSON object"
            return None
        self.problem = ""
        return data
