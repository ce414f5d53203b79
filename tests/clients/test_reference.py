"""The ``h`` reference: the client's own help, then the game's data from ``GET /games/<name>``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clients.gamedata import GameData, http_url
from clients.reference import pages
from protocol.mirror import Mirror
from tests.server.conftest import MakeApp

YSPAHAN = {
    "name": "yspahan",
    "buildings": [
        {"building": "crane", "name": "Crane", "camels": 4, "gold": 4, "power": "+1 good"},
        {"building": "odd", "name": "Odd", "cost": {"camels": 1}},
    ],
    "cards": [{"card": "3_gold", "count": 2, "name": "3 gold", "text": "receive 3 gold"}],
    "steward": {"arms": {"west": ["W1"]}, "squares": [{"square": "W1", "faces": ["sk3.1"]}]},
    "scoring": {"souks": "points when complete", "caravan": "goods x row"},
    "score_categories": ["souks", "caravan"],
}


@pytest.fixture
def data_server() -> Iterator[str]:
    """A plain HTTP server with ``/games/yspahan`` (and 404 for anything else)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/games/yspahan":
                self.send_error(404)
                return
            body = json.dumps(YSPAHAN).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"ws://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_the_http_address_comes_from_the_websocket_one() -> None:
    assert http_url("ws://h:8765/", "ishtar") == "http://h:8765/games/ishtar"
    assert http_url("wss://games.example/node/2/?room=x", "yspahan") == (
        "https://games.example/games/yspahan"
    )


async def test_the_game_data_is_fetched_once_and_drawn_as_a_reference(data_server: str) -> None:
    data = GameData(data_server)
    got = await data.get("yspahan")
    assert got == YSPAHAN and data.known("yspahan") is got
    assert await data.get("yspahan") is got, "fetched once"
    mirror = Mirror("r1", info={"game": "yspahan"})
    text = "\n".join(p.plain for p in pages(mirror, got))
    assert "Playing in this client" in text and "type a shop (br3.1)" in text
    assert "Buildings" in text and "Crane: 4 camels, 4 gold — +1 good" in text
    assert "Odd: cost camels 1; building odd" in text, "an unexpected record, generically"
    assert "3 gold (×2): receive 3 gold" in text
    assert "W1: faces sk3.1" in text and "west" not in text, "the board geometry is left out"
    assert "souks: points when complete" in text, "a part this client does not know"
    assert "Score categories: souks, caravan" in text


async def test_a_server_without_the_data_is_said_in_words(
    data_server: str, make_app: MakeApp
) -> None:
    data = GameData(data_server)
    assert await data.get("ishtar") is None
    assert "HTTP 404" in data.problem
    mirror = Mirror("r1", info={"game": "ishtar"})
    text = "\n".join(p.plain for p in pages(mirror, None, data.problem))
    assert "Spaces: the map's columns have letters" in text
    assert "The server sends no reference for ishtar" in text and "HTTP 404" in text
    app = await make_app()
    real = GameData(f"ws://127.0.0.1:{app.port}/")
    found = await real.get("ishtar")  # the real server: its data, or a sentence saying why not
    if found is None:
        assert real.problem.startswith("this server does not serve"), real.problem
    else:
        assert found and not real.problem
    nowhere = GameData("ws://127.0.0.1:9/")
    assert await nowhere.get("ishtar") is None and "could not be read" in nowhere.problem
