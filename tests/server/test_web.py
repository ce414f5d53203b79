"""The browser client's files over HTTP on the WebSocket port (:mod:`server.web`): pages and
assets with their content types and caching headers, 304 on a matching ETag, nothing outside
``clients/web`` (no traversal, no hidden or unlisted files), and the WebSocket handshake on
``/`` untouched."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.app import App
from server.web import DEFAULT_DIR, WebFiles
from tests.server.conftest import MakeClient

Reply = tuple[int, dict[str, str], bytes]


async def get(port: int, target: str, headers: dict[str, str] | None = None) -> Reply:
    """One raw HTTP/1.1 GET: the target is sent exactly as given (no client normalises it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    writer.write(f"GET {target} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode())
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), fields, body


async def test_lobby_and_room_pages_are_the_application_page(app: App) -> None:
    index = (DEFAULT_DIR / "index.html").read_bytes()
    for target in ("/", "/play/5f0c1a9e3b", "/watch/5f0c1a9e3b?overlay=1", "/replay/replay-0a1b"):
        status, headers, body = await get(app.port, target)
        assert status == 200, target
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Cache-Control"] == "no-cache"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert "script-src" not in headers["Content-Security-Policy"]  # default-src 'self'
        assert "default-src 'self'" in headers["Content-Security-Policy"]
        assert body == index


@pytest.mark.parametrize(
    ("target", "content_type"),
    [
        ("/web/oasis.js", "text/javascript; charset=utf-8"),
        ("/web/wire.js", "text/javascript; charset=utf-8"),
        ("/web/vendor/msgpack/index.mjs", "text/javascript; charset=utf-8"),
        ("/web/vendor/msgpack/utils/int.mjs", "text/javascript; charset=utf-8"),
        ("/web/vendor/noble-hashes/blake2.js", "text/javascript; charset=utf-8"),
        ("/web/style.css", "text/css; charset=utf-8"),
        ("/web/icon.svg", "image/svg+xml"),
    ],
)
async def test_assets_have_their_content_type_and_an_etag(
    app: App, target: str, content_type: str
) -> None:
    status, headers, body = await get(app.port, target)
    assert status == 200
    assert headers["Content-Type"] == content_type
    assert headers["Content-Length"] == str(len(body))
    assert body == (DEFAULT_DIR / target.removeprefix("/web/")).read_bytes()
    assert headers["ETag"].startswith('"') and headers["Cache-Control"] == "no-cache"
    assert "Content-Security-Policy" not in headers  # pages only


async def test_a_matching_etag_gets_304_without_a_body(app: App) -> None:
    _, headers, _ = await get(app.port, "/web/oasis.js")
    etag = headers["ETag"]
    status, again, body = await get(app.port, "/web/oasis.js", {"If-None-Match": etag})
    assert (status, body, again["ETag"]) == (304, b"", etag)
    status, _, body = await get(app.port, "/web/oasis.js", {"If-None-Match": '"other"'})
    assert status == 200 and body


@pytest.mark.parametrize(
    "target",
    [
        "/web/../server/app.py",
        "/web/%2e%2e/%2e%2e/pyproject.toml",
        "/web/vendor/..%2f..%2f..%2fpyproject.toml",
        "/web/vendor/../../../server/web.py",
        "/web/..%5c..%5cpyproject.toml",
        "/web//etc/passwd",
        "/web/%2fetc%2fpasswd",
        "/web/oasis.js%00.css",
        "/web/.hidden.js",
        "/web/package.json",
        "/web/README.md",
        "/web/vendor.sh",
        "/web/vendor/msgpack/LICENSE",
        "/web/",
        "/web",
        "/play/",
        "/play/../../etc/passwd",
        "/watch/a%2f..%2f..",
        "/etc/passwd",
        "/server/app.py",
        "/nothing",
    ],
)
async def test_nothing_outside_the_site_is_served(app: App, target: str) -> None:
    status, headers, body = await get(app.port, target)
    assert status == 404, target
    assert body == b"not found\n"
    assert headers["Content-Type"] == "text/plain; charset=utf-8"


def test_a_symlink_out_of_the_site_is_not_followed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>lobby</p>")
    (tmp_path / "secret.js").write_text("secret")
    (site / "leak.js").symlink_to(tmp_path / "secret.js")
    web = WebFiles(site)
    assert web.answer("/").body == b"<p>lobby</p>"
    assert web.answer("/web/leak.js").status == 404


def test_an_edited_file_is_served_anew(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("one")
    web = WebFiles(tmp_path)
    first = web.answer("/web/a.js")
    (tmp_path / "a.js").write_text("two!")
    second = web.answer("/web/a.js")
    assert (first.body, second.body) == (b"one", b"two!")
    assert dict(first.headers)["ETag"] != dict(second.headers)["ETag"]


async def test_the_websocket_handshake_on_slash_still_works(make_client: MakeClient) -> None:
    client = await make_client()
    answer = await client.request({"type": "ping"})
    assert answer["type"] == "pong"
