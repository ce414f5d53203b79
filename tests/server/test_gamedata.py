"""``GET /games`` and ``GET /games/<name>`` on the WebSocket port: the static data clients and the
server's bots draw and decide from (SPEC section 21)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from games import registry
from games.ishtar.garden import rotations
from server import gamedata
from server.app import App


async def get(port: int, path: str, headers: dict[str, str] | None = None) -> Any:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    request = f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    found = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), found, body


async def test_the_games_listing_names_each_game_with_counts_and_options(app: App) -> None:
    status, headers, body = await get(app.port, "/games")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert headers["Cache-Control"] == "public, max-age=3600" and headers["ETag"]
    games = {g["name"]: g for g in json.loads(body)["games"]}
    assert {"ishtar", "yspahan"} <= set(games)
    ishtar = games["ishtar"]
    assert ishtar["players"] == {"min": 2, "max": 4} and ishtar["data"] == "/games/ishtar"
    assert set(ishtar["options"]["properties"]) == {"layout"}
    assert games["yspahan"]["options"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


async def test_ishtar_data_holds_what_a_client_draws_with(app: App) -> None:
    status, _, body = await get(app.port, "/games/ishtar")
    assert status == 200
    data = json.loads(body)
    edition = registry.get("ishtar").edition  # type: ignore[attr-defined]
    assert len(data["tiles"]) == 42 and len(data["trees"]) == 26 and len(data["tokens"]) == 8
    for shape, offsets in edition.shapes.items():
        want = [[list(o) for o in rot] for rot in rotations(offsets)]
        assert data["tile_shapes"][shape]["rotations"] == want
    skills = {s["skill"]: s for s in data["skills"]}
    assert skills["E"]["name"] == "Skill E" and skills["E"]["cost"] == 2
    assert skills["E"]["summary"] == "7 points for each assistant still in your supply"
    assert skills["A"]["requires"] == "F" and skills["A"]["text"].startswith("End of game")
    assert {t["token"]: t["flowers"] for t in data["tokens"]}["bloom-double-1"] == [2, 1]
    assert {t["card"]: t["name"] for t in data["trees"]}["tree-01"] == "Tamarisk"
    assert len(data["terrain_boards"]) == 12 and set(data["layouts"]) == {"2", "3", "4"}


async def test_yspahan_data_holds_the_city_the_path_the_buildings_and_the_cards(app: App) -> None:
    status, _, body = await get(app.port, "/games/yspahan")
    assert status == 200
    data = json.loads(body)
    faced = {s["shop"]: set(s["faced_by"]) for s in data["shops"]}
    for square in data["steward"]["squares"]:
        for shop in square["faces"]:
            assert square["square"] in faced[shop]
    assert sum(len(s["shops"]) for s in data["souks"]) == len(data["shops"])
    crane = {b["building"]: b for b in data["buildings"]}["crane"]
    assert (crane["name"], crane["camels"], crane["gold"]) == ("Crane", 4, 4)
    assert {c["card"]: c["text"] for c in data["cards"]}["3_gold"] == "receive 3 gold"
    assert sum(c["count"] for c in data["cards"]) == 18


async def test_an_unchanged_document_is_304_and_an_unknown_game_404(app: App) -> None:
    status, headers, _ = await get(app.port, "/games/ishtar")
    assert status == 200
    etag = headers["ETag"]
    again = await get(app.port, "/games/ishtar", {"If-None-Match": etag})
    assert again[0] == 304 and again[2] == b"" and again[1]["ETag"] == etag
    other = await get(app.port, "/games/yspahan", {"If-None-Match": etag})
    assert other[0] == 200 and other[1]["ETag"] != etag
    missing = await get(app.port, "/games/chess")
    assert missing[0] == 404 and missing[1]["Access-Control-Allow-Origin"] == "*"


async def test_the_bots_decide_from_the_very_document_clients_download(app: App) -> None:
    for name in ("ishtar", "yspahan"):
        _, _, body = await get(app.port, f"/games/{name}")
        assert gamedata.document(name).value == json.loads(body)
