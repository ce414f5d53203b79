"""The browser client's files (``clients/web/``) over plain HTTP on the WebSocket port.

Routes: ``GET /`` the lobby; ``/play/<room>``, ``/watch/<room>`` and ``/replay/<room>`` the same
page (one application: its script reads the path, so going from the lobby to a room keeps the
connection, and the host of a room it created); ``/web/<file>`` the assets (scripts, styles, the
vendored libraries); anything else ``404``. A request that asks for a WebSocket upgrade is never
answered here: the browser's own connection to ``/`` must reach the handshake.

Safety: only files under the web directory with a known extension are served. A path is taken
apart into segments after percent-decoding, and any segment that is empty, ``.`` or ``..``, or
holds a backslash, a NUL or a leading dot, is refused before the file system is touched; the
resolved file must still lie inside the directory (a symlink cannot lead out).

Caching: every answer carries a strong ``ETag`` (a hash of the bytes) and ``Cache-Control:
no-cache``, so a browser revalidates each time (``304 Not Modified`` when nothing changed) and
never runs a stale ``oasis.js`` after an upgrade; the files are small and served from memory
once read (keyed on size and mtime, so an edited file is picked up without a restart).
"""

from __future__ import annotations

import email.utils
import hashlib
import http
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from websockets.datastructures import Headers
from websockets.http11 import Response

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "clients" / "web"
"""Where ``clients/web`` lies beside this package (in a checkout and in an installed wheel)."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
}
"""What may be served, by extension; nothing else (no README, no package.json)."""

PAGES = {"play": "index.html", "watch": "index.html", "replay": "index.html"}
ROOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

SECURITY_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)
PAGE_POLICY = (
    "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; frame-ancestors *; base-uri 'none'; form-action 'none'"
)
"""Pages run only our own scripts; WebSockets may go to other nodes (redirects, SPEC 18).
Framing is allowed: streaming software and other sites embed the overlay."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP answer: status, headers (beyond Date/Connection/Content-Length), body."""

    status: http.HTTPStatus
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True, slots=True)
class _File:
    key: tuple[int, int]
    body: bytes
    etag: str


class WebFiles:
    """The static site: maps a request path to an :class:`Answer`, or None (not ours)."""

    def __init__(self, root: Path = DEFAULT_DIR) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, _File] = {}

    def answer(self, target: str, if_none_match: str | None = None) -> Answer:
        """The answer to a plain ``GET target`` (not a WebSocket handshake): a page, a file,
        ``304 Not Modified``, or ``404 Not Found``."""
        path = target.split("?", 1)[0].split("#", 1)[0]
        relative = self._route(path)
        if relative == "":
            return _not_found()
        found = self._read(relative)
        if found is None:
            return _not_found()
        suffix = Path(relative).suffix
        headers = [
            ("Content-Type", CONTENT_TYPES[suffix]),
            ("Cache-Control", "no-cache"),
            ("ETag", found.etag),
            *SECURITY_HEADERS,
        ]
        if suffix == ".html":
            headers.append(("Content-Security-Policy", PAGE_POLICY))
        if if_none_match is not None and etag_matches(if_none_match, found.etag):
            return Answer(http.HTTPStatus.NOT_MODIFIED, tuple(headers), b"")
        return Answer(http.HTTPStatus.OK, tuple(headers), found.body)

    def _route(self, path: str) -> str:
        """The file under the root that ``path`` names, or "" (nothing to serve: 404)."""
        if path == "/" or path == "/index.html":
            return "index.html"
        head, _, rest = path.lstrip("/").partition("/")
        if head in PAGES:
            return PAGES[head] if ROOM_ID.fullmatch(unquote(rest)) else ""
        if head != "web":
            return ""
        segments = unquote(rest).split("/")
        for segment in segments:
            if segment in ("", ".", "..") or segment.startswith(".") or "\\" in segment:
                return ""
            if "\x00" in segment:
                return ""
        if Path(segments[-1]).suffix not in CONTENT_TYPES:
            return ""
        return "/".join(segments)

    def _read(self, relative: str) -> _File | None:
        candidate = (self.root / relative).resolve()
        if not candidate.is_relative_to(self.root) or not candidate.is_file():
            return None
        stat = candidate.stat()
        key = (stat.st_size, stat.st_mtime_ns)
        cached = self._cache.get(candidate)
        if cached is not None and cached.key == key:
            return cached
        body = candidate.read_bytes()
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        found = self._cache[candidate] = _File(key, body, etag)
        return found


def to_response(answer: Answer) -> Response:
    """``answer`` as the websockets HTTP response that ``process_request`` returns."""
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(answer.body))),
            *answer.headers,
        ]
    )
    return Response(answer.status.value, answer.status.phrase, headers, answer.body)


def wants_websocket(upgrade: str | None) -> bool:
    """The request asks for the WebSocket handshake (``Upgrade: websocket``)."""
    return upgrade is not None and "websocket" in upgrade.lower()


def etag_matches(if_none_match: str, etag: str) -> bool:
    tags = {part.strip().removeprefix("W/") for part in if_none_match.split(",")}
    return "*" in tags or etag in tags


def _not_found() -> Answer:
    return Answer(
        http.HTTPStatus.NOT_FOUND,
        (("Content-Type", "text/plain; charset=utf-8"), *SECURITY_HEADERS),
        b"not found\n",
    )
