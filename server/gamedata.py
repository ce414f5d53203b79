"""Game data over HTTP on the WebSocket port: ``GET /games`` and ``GET /games/<name>``.

``/games`` lists the games this server hosts (name, title, player counts, the JSON Schema of
their ``create.options``); ``/games/<name>`` is everything static a client needs to draw and
explain that game (:meth:`games.base.Game.static_data`: boards, tiles, cards, buildings, texts),
the components the views then name by id. Both are JSON, built once per process (they never
change while it runs), with

- ``ETag`` (a hash of the body): a request with a matching ``If-None-Match`` gets ``304`` and no
  body;
- ``Cache-Control: public, max-age=3600``: browsers and proxies keep them an hour, then
  revalidate with the ETag;
- ``Access-Control-Allow-Origin: *``: a page served from another origin may read them (a
  simple GET needs no preflight; the server answers GET only, so it sends no preflight answer).

The server's bots decide from the very document a client downloads (:func:`document`, decoded
from the same bytes), never from the engines' modules or files (SPEC section 19).
"""

from __future__ import annotations

import functools
import hashlib
import http
import json
from dataclasses import dataclass
from typing import Any

from games import registry
from games.errors import OptionsError
from server.web import Answer, etag_matches

CACHE_CONTROL = "public, max-age=3600"
PREFIX = "/games"
CORS = (("Access-Control-Allow-Origin", "*"), ("Access-Control-Expose-Headers", "ETag"))


@dataclass(frozen=True, slots=True)
class Document:
    """One JSON document as served: its bytes, their ETag, and the decoded value."""

    body: bytes
    etag: str
    value: Any


def _document(value: Any) -> Document:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    etag = '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"'
    return Document(body, etag, json.loads(body))


@functools.cache
def document(name: str) -> Document:
    """``GET /games/<name>``'s document; raise OptionsError for a game this server lacks."""
    return _document(registry.get(name).static_data())


def listing() -> Document:
    """``GET /games``: every game hosted here (built per call: test games may be registered)."""
    games = []
    for name in registry.names():
        game = registry.get(name)
        games.append(
            {
                "name": game.name,
                "title": game.title,
                "players": {"min": game.min_players, "max": game.max_players},
                "options": game.options_schema(),
                "data": f"{PREFIX}/{game.name}",
            }
        )
    return _document({"games": games})


def answer(path: str, if_none_match: str | None = None) -> Answer | None:
    """The answer to a game-data path (:class:`server.web.Answer`), or None when ``path`` is
    not one."""
    if path in (PREFIX, PREFIX + "/"):
        doc = listing()
    elif path.startswith(PREFIX + "/"):
        try:
            doc = document(path[len(PREFIX) + 1 :])
        except OptionsError:
            return Answer(
                http.HTTPStatus.NOT_FOUND,
                (("Content-Type", "text/plain; charset=utf-8"), *CORS),
                b"no such game\n",
            )
    else:
        return None
    headers = (
        ("Content-Type", "application/json"),
        ("ETag", doc.etag),
        ("Cache-Control", CACHE_CONTROL),
        *CORS,
    )
    if if_none_match is not None and etag_matches(if_none_match, doc.etag):
        return Answer(http.HTTPStatus.NOT_MODIFIED, headers, b"")
    return Answer(http.HTTPStatus.OK, headers, doc.body)
