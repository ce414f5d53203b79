"""A small protocol client for the tests: it knows the frames, never the rules.

A background reader decodes every frame, checks it against SPEC section 8
(:func:`protocol.frames.parse_frame`) and validates it against the protocol's schema of server
frames (``protocol/schema/server.json``: a field the schema does not describe is a failure),
keeps the list of everything received (for the leak scan), maintains one view per room from
``joined``/``state``/``patch`` exactly as SPEC.md tells a frontend to (checking the hash after
every patch and applying every patch also with the independent ``jsonpatch`` library), and wakes
waiters. Tests wait on conditions, never sleep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol.codec import Limits, decode, encode
from protocol.errors import ServerFrameError
from protocol.frames import parse_frame
from protocol.hashing import view_hash
from protocol.patch import apply
from tests.protocol.schemas import Checker, documents

TIMEOUT = 10.0


@dataclass
class RoomView:
    rev: int = -1
    doc: Any = None
    history: dict[int, Any] = field(default_factory=dict)
    """rev -> the document rebuilt at that rev (the tests compare them with ``sync``)."""
    patch_times: dict[int, float] = field(default_factory=dict)


class ProtocolFailure(AssertionError):
    pass


FRAMES = Checker()
"""One checker for every client of the process: the parts of frames repeat between clients."""
SERVER_TYPES = frozenset(
    documents()["server.json"]["oneOf"][i]["$ref"].rsplit("/", 1)[1]
    for i in range(len(documents()["server.json"]["oneOf"]))
)


def frame_problems(frame: dict[str, Any], schema: str = "server.json") -> list[str]:
    """What is wrong with a frame against ``server.json`` (or ``client.json``): empty if
    nothing."""
    kind = frame.get("type")
    if kind not in documents()[schema]["$defs"] or kind in ("info", "seat_info", "op"):
        return [f"a {kind!r} frame is not in {schema}"]
    return FRAMES.check(schema, str(kind), frame)


class Client:
    def __init__(self, ws: ClientConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.frames: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.rooms: dict[str, RoomView] = {}
        self.hash_rule = 1
        """The view hash rule of this connection's frames (``welcome.hash_rule``)."""
        self.failures: list[str] = []
        self._changed = asyncio.Condition()
        self._next_id = 0
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.closed: asyncio.Future[tuple[int | None, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self.check_sent = False
        """Validate every frame this client sends against ``client.json`` (the tests of bad
        input send invalid frames on purpose, so it is off unless a test asks)."""

    @classmethod
    async def open(
        cls, url: str, name: str = "t", *, hello: bool = True, hash_rule: int | None = None
    ) -> Client:
        """A connected client; ``hash_rule``: the view hash rule to ask for (SPEC section 4;
        None: ask for none, rule 1)."""
        ws = await connect(url, max_size=None, open_timeout=TIMEOUT)
        client = cls(ws, name)
        if hello:
            frame: dict[str, Any] = {"type": "hello", "version": 1, "client": name}
            if hash_rule is not None:
                frame["hash_rule"] = hash_rule
            welcome = await client.request(frame)
            assert welcome["type"] == "welcome", welcome
            client.hash_rule = welcome["hash_rule"]
        return client

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.wait_for(asyncio.shield(self._reader), TIMEOUT)

    async def _read(self) -> None:
        try:
            async for data in self.ws:
                assert isinstance(data, bytes), "the server sends binary frames only"
                frame = decode(data, _NO_LIMITS)
                try:
                    parse_frame(frame)
                except ServerFrameError as exc:
                    self.failures.append(f"not a SPEC frame: {exc.message}")
                self.failures += frame_problems(frame)
                self.raw.append(data)
                self._apply(frame)
                async with self._changed:
                    self.frames.append(frame)
                    self._changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            result = (self.ws.close_code, self.ws.close_reason)
            if not self.closed.done():
                self.closed.set_result(result)
            async with self._changed:
                self._changed.notify_all()

    def _apply(self, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        if kind in ("joined", "state"):
            room = self.rooms.setdefault(frame["room"], RoomView())
            if frame.get("view") is None and kind == "joined":
                if room.rev != frame["rev"]:
                    self.failures.append(f"resume from {frame['rev']} but I am at {room.rev}")
                return
            if view_hash(frame["view"], self.hash_rule) != frame["hash"]:
                self.failures.append(f"{kind} hash mismatch at rev {frame['rev']}")
            if kind == "state" and frame["rev"] == room.rev and frame["view"] != room.doc:
                self.failures.append(f"sync view differs from patched view at {room.rev}")
            if frame["rev"] >= room.rev:
                room.doc, room.rev = frame["view"], frame["rev"]
                room.history[room.rev] = room.doc
        elif kind == "patch":
            room = self.rooms.setdefault(frame["room"], RoomView())
            if frame["rev"] <= room.rev:
                return
            if frame["rev"] != room.rev + 1:
                self.failures.append(f"gap: at {room.rev}, got patch {frame['rev']}")
                return
            new = apply(room.doc, frame["ops"])
            other = jsonpatch.apply_patch(room.doc, frame["ops"])
            if other != new:
                self.failures.append(f"jsonpatch disagrees at rev {frame['rev']}")
            if view_hash(new, self.hash_rule) != frame["hash"]:
                self.failures.append(f"hash mismatch at rev {frame['rev']}")
            room.doc, room.rev = new, frame["rev"]
            room.history[room.rev] = new
            room.patch_times[room.rev] = time.monotonic()

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send(self, frame: dict[str, Any]) -> None:
        if self.check_sent:
            self.failures += frame_problems(frame, "client.json")
        await self.ws.send(encode(frame))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], start: int = 0, wait: float = TIMEOUT
    ) -> dict[str, Any]:
        """The first frame from index ``start`` on that satisfies ``pred``."""
        index = start

        def found() -> dict[str, Any] | None:
            nonlocal index
            while index < len(self.frames):
                frame = self.frames[index]
                index += 1
                if pred(frame):
                    return frame
            return None

        async with asyncio.timeout(wait), self._changed:
            while True:
                frame = found()
                if frame is not None:
                    return frame
                if self.closed.done():
                    raise ProtocolFailure(f"{self.name}: closed {self.closed.result()}")
                await self._changed.wait()

    async def until(self, cond: Callable[[], bool], wait: float = TIMEOUT) -> None:
        async with asyncio.timeout(wait), self._changed:
            while not cond():
                if self.closed.done():
                    raise ProtocolFailure(f"{self.name}: closed {self.closed.result()}")
                await self._changed.wait()

    async def request(self, frame: dict[str, Any], wait: float = TIMEOUT) -> dict[str, Any]:
        """Send ``frame`` with a fresh id; the answer that echoes the id."""
        rid = self.new_id()
        start = len(self.frames)
        await self.send({**frame, "id": rid})
        return await self.wait_for(lambda f: f.get("id") == rid, start, wait)

    def view(self, room: str) -> Any:
        return self.rooms[room].doc

    def rev(self, room: str) -> int:
        return self.rooms[room].rev


_NO_LIMITS = Limits(max_frame_bytes=1 << 30, max_depth=64, max_container=1 << 20, max_str=1 << 24)
