"""Client bots for ``bench/run.py``: one process, many rooms of 4 seats + 2 spectators.

Every room is six real WebSocket connections on loopback, all in this process (so one clock
times a choice and its six deliveries). Against Oasis the seats play as a frontend does: they
keep their view, apply each patch (RFC 6902, :func:`protocol.patch.apply`), and the seat whose
``own.choices`` is not empty picks one at random; spectators only read the revision. Against
the baseline (``bench/baseline.py``) there are no rules: the seat ``rev % 4`` sends the next
frame, an ``act`` frame of the same shape, and the broadcast copy of it is that revision's
"patch".

Talking to the runner (one line each way): the worker connects and sets every room up, prints
``ready {...}``, then for each line ``go {phase json}`` on stdin runs that phase and prints
``result {json}``; ``quit`` (or the end of stdin) ends it. A phase is
``{"mode": "saturation" | "paced", "rooms": n, "warmup": s, "seconds": s, "interval": s}``:
*saturation*: each of the first ``n`` rooms sends its next choice as soon as its actor sees its
turn; *paced*: each room sends one choice every ``interval`` seconds on a fixed schedule
(open loop, a random phase per room), and latency counts from the scheduled instant, so a late
server is charged for the wait (no coordinated omission). Latency is from a choice to the
moment the last of the room's six viewers has that revision's patch. The bots' own garbage
collector is off during a phase (collected before it): its pauses would count as the server's.

``--mode idle`` opens ``--sockets`` connections (Oasis: each says ``hello``), prints ``ready``
and waits for ``quit``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import sys
import time
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.baseline import raise_fd_limit
from bench.wsclient import LeanSocket, connect
from protocol.codec import pack, unpack
from protocol.patch import apply

SEATS = 4
SPECTATORS = 2
VIEWERS = SEATS + SPECTATORS
RATIO_EVERY = 8
"""Seat 0 of each room measures its full view after every 8th patch (patch/full-view ratio)."""
CONNECT_CONCURRENCY = 32
REQUEST_TIMEOUT = 20.0
RETRY_AFTER = 0.1
SETUP_TRIES = 3
"""Seconds before a refused choice is sent again."""


@dataclass
class Tally:
    """What one phase measured in this process (only inside its window)."""

    measuring: bool = False
    actions: int = 0
    latencies: list[float] = field(default_factory=list)
    patch_sizes: list[int] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    view_sizes: list[int] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    """The first message of each error code (to tell what went wrong)."""
    late: int = 0
    """Paced: scheduled choices still waiting for the previous one at their next slot."""
    matches: int = 0
    rematches: int = 0
    """Of ``matches``, those started by ``rematch`` (``--rematch``)."""
    waits: list[float] = field(default_factory=list)
    """Per latency sample: how long its slot waited here before the choice was sent."""
    carried: list[int] = field(default_factory=list)
    """Per latency sample: 1 if its slot fell while the room set its match up (``carry``)."""
    setups: list[float] = field(default_factory=list)
    """Seconds from a match's end to the next one started (every request of the set-up)."""
    dropped: int = 0
    """Paced: slots dropped because they fell in a match's set-up."""

    def reset(self) -> None:
        fresh = Tally()
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(fresh, name))

    def error(self, code: str, message: str = "") -> None:
        self.errors[code] = self.errors.get(code, 0) + 1
        if message and code not in self.messages:
            self.messages[code] = message[:200]


class Bot:
    """One connection of a room; every message it receives goes straight to the room."""

    def __init__(self, room: RoomBots, index: int) -> None:
        self.room = room
        self.index = index
        self.socket: LeanSocket | None = None
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 0

    async def open(self, url: str) -> None:
        self.socket = await connect(url, self.received)

    def received(self, data: bytes, arrived: float) -> None:
        self.room.frame(self, data, arrived)

    async def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[rid] = future
        self.send_now(frame, rid)
        answer = await asyncio.wait_for(future, REQUEST_TIMEOUT)
        if answer.get("type") == "error":
            raise RuntimeError(f"{frame['type']} refused: {answer}")
        return answer

    def send_now(self, frame: dict[str, Any], rid: int | None = None) -> None:
        """Write at once, never awaiting (as the servers write)."""
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        assert self.socket is not None
        self.socket.send(pack({**frame, "id": rid}))


class RoomBots:
    """One room's six bots and the bookkeeping of its revisions."""

    def __init__(
        self, kind: str, game: str, name: str, tally: Tally, seed: int, rematch: bool = False
    ) -> None:
        self.kind = kind
        self.rematch = rematch
        """Oasis: the next match by ``rematch`` (SPEC section 9) instead of leave, create, join,
        spectate and start."""
        self.moved: list[dict[str, Any] | None] = [None] * VIEWERS
        """A rematch: each viewer's unasked ``joined`` of the new room, as it arrives."""
        self.all_moved: asyncio.Future[None] | None = None
        self.game = game
        self.name = name
        self.room_id = name
        self.tally = tally
        self.rng = random.Random(seed)
        self.bots: list[Bot] = []
        self.views: list[Any] = [None] * SEATS
        self.rev = 0
        self.sent_at: dict[int, float] = {}
        self.seen: dict[int, int] = {}
        self.actor: int | None = None
        """The seat that may act on revision ``self.rev`` (None: not known yet, or acted)."""
        self.active = False
        self.paced = False
        self.dues: deque[float] = deque()
        """Paced: scheduled instants whose choice has not been sent yet (oldest first)."""
        self.finished = False
        self.restarting = False
        self.setup_errors: list[str] = []
        self.sent_now: dict[int, float] = {}
        self.setup_ended = 0.0
        self.carry = False
        """Paced: a slot that falls in a match's set-up waits for the match (else dropped)."""
        self.skip: int | None = None
        """Paced with a head start: choices still to play at once before the schedule starts."""
        self.interval = 0.25
        self.end = 0.0
        self.there: asyncio.Future[None] | None = None
        """A prelude (see ``prelude``): set when this room has played its head start."""
        self.pacer: asyncio.Task[None] | None = None

    # Setting up -----------------------------------------------------------------------------

    async def open(self, url: str) -> None:
        target = url + self.name if self.kind == "baseline" else url
        for index in range(VIEWERS):
            bot = Bot(self, index)
            await bot.open(target)
            self.bots.append(bot)
        if self.kind == "oasis":
            await asyncio.gather(
                *(
                    b.request({"type": "hello", "version": 1, "client": "bench", "hash_rule": 2})
                    for b in self.bots
                )
            )
            for attempt in range(SETUP_TRIES):
                try:
                    await self.new_match()
                    break
                except RuntimeError as exc:  # a refused request: say so, try a fresh room
                    self.setup_errors.append(str(exc)[:300])
                    if attempt == SETUP_TRIES - 1:
                        raise
        else:
            self.actor = 0

    async def new_match(self) -> None:
        seats, spectators = self.bots[:SEATS], self.bots[SEATS:]
        if self.finished and self.rematch:
            await self._rematch()
        else:
            if self.finished:
                for bot in self.bots:
                    await bot.request({"type": "leave", "room": self.room_id})
            created = await seats[0].request(
                {"type": "create", "game": self.game, "players": SEATS}
            )
            self._moved_to(created["room"])
            for i, bot in enumerate(seats):
                joined = await bot.request({"type": "join", "room": self.room_id, "name": f"b{i}"})
                self.views[i] = joined["view"]
            for bot in spectators:
                await bot.request({"type": "spectate", "room": self.room_id})
            await seats[0].request({"type": "start", "room": self.room_id})
        self.finished = False
        self.sent_now.clear()
        self.setup_ended = time.perf_counter()
        if self.dues and not self.carry:
            # A slot that fell while the clients set the match up is no choice of the match:
            # dropped (and counted); the match's clock starts at the next slot.
            if self.tally.measuring:
                self.tally.dropped += len(self.dues)
            self.dues.clear()
        for i, view in enumerate(self.views):
            if view["own"]["choices"]:
                self.actor = i

    def _moved_to(self, room: str) -> None:
        self.room_id = room
        self.sent_at.clear()
        self.seen.clear()
        self.actor = None
        self.rev = 0

    async def _rematch(self) -> None:
        """Seat 0 asks for the rematch; the server starts it and moves all six viewers, each
        with an unasked ``joined`` (its new view)."""
        self.moved = [None] * VIEWERS
        self.all_moved = asyncio.get_running_loop().create_future()
        answer = await self.bots[0].request({"type": "rematch", "room": self.room_id})
        await asyncio.wait_for(self.all_moved, REQUEST_TIMEOUT)
        self._moved_to(answer["room"])
        for i, joined in enumerate(self.moved[:SEATS]):
            assert joined is not None and joined["room"] == answer["room"], joined
            self.views[i] = joined["view"]
        self.tally.rematches += 1

    async def restart(self) -> None:
        began = time.perf_counter()
        try:
            await self.new_match()
            self.tally.matches += 1
            if self.tally.measuring:
                self.tally.setups.append(time.perf_counter() - began)
        except Exception as exc:
            self.tally.error(f"restart:{type(exc).__name__}")
            return
        finally:
            self.restarting = False
        self.kick()

    # Frames ---------------------------------------------------------------------------------

    def frame(self, bot: Bot, data: bytes, now: float) -> None:
        message = unpack(data)
        if self.kind == "baseline":
            self.patch(bot, message["rev"] + 1, len(data), None, now)
            return
        kind = message.get("type")
        if kind == "patch":
            if message.get("room") == self.room_id:
                self.patch(bot, message["rev"], len(data), message["ops"], now)
            return
        rid = message.get("id")
        if rid is not None:
            future = bot.pending.pop(rid, None)
            if future is not None and not future.done():
                future.set_result(message)
                return
        elif kind == "joined":  # (unasked: a rematch moved this viewer, SPEC section 9)
            self.moved[bot.index] = message
            moved = self.all_moved
            if moved is not None and not moved.done() and all(self.moved):
                moved.set_result(None)
            return
        if kind == "error":
            self.tally.error(str(message.get("code")), str(message.get("message", "")))
            if message.get("room") == self.room_id:
                self.retry(message)

    def retry(self, message: dict[str, Any]) -> None:
        """An ``act`` was refused (``unavailable`` while the server's store is down): choose
        again from the current view after ``RETRY_AFTER``, as a polite client would."""
        if message.get("code") != "unavailable":
            self.tally.error("refused_act")
        asyncio.get_running_loop().call_later(RETRY_AFTER, self._choose_again)

    def _choose_again(self) -> None:
        for i, view in enumerate(self.views):
            if view is not None and view["own"]["choices"] and view["shared"]["result"] is None:
                self.actor = i
                self.kick()
                return

    def patch(self, bot: Bot, rev: int, size: int, ops: Any, now: float) -> None:
        tally = self.tally
        if tally.measuring:
            tally.patch_sizes.append(size)
        count = self.seen.get(rev, 0) + 1
        if count == VIEWERS:
            del self.seen[rev]
            started = self.sent_at.pop(rev, None)
            wrote = self.sent_now.pop(rev, None)
            if started is not None and tally.measuring:
                tally.actions += 1
                tally.latencies.append(now - started)
                tally.waits.append((wrote if wrote is not None else started) - started)
                tally.carried.append(1 if started < self.setup_ended else 0)
        else:
            self.seen[rev] = count
        index = bot.index
        if index >= SEATS:
            return
        if self.kind == "baseline":
            if rev % SEATS == index:
                self.rev, self.actor = rev, index
                self.kick()
            return
        view = apply(self.views[index], ops)
        self.views[index] = view
        if index == 0 and rev % RATIO_EVERY == 0 and tally.measuring:
            full = len(pack(view))
            tally.view_sizes.append(full)
            tally.ratios.append(size / full)
        if view["shared"]["result"] is not None:
            if not self.finished:
                self.finished = True
                self.actor = None
            if index == 0:
                self.kick()
            return
        if view["own"]["choices"]:
            self.rev, self.actor = rev, index
            self.kick()

    # Acting ---------------------------------------------------------------------------------

    def kick(self) -> None:
        """Act now if this room may: saturation at once, paced only when a slot is due."""
        if not self.active or self.restarting:
            return
        if self.finished:
            self.restarting = True
            asyncio.get_running_loop().create_task(self.restart())
            return
        if self.actor is None:
            return
        if self.paced:
            if self.dues:
                self.act(self.dues.popleft())
            return
        if self.skip is not None:
            # A head start (see ``run_phase``): these choices go at once, unmeasured; then the
            # room's schedule starts.
            if self.skip <= 0:
                self.skip = None
                if self.there is not None:  # a prelude: this room waits for the phase now
                    self.active = False
                    if not self.there.done():
                        self.there.set_result(None)
                    return
                self.paced = True
                loop = asyncio.get_running_loop()
                self.pacer = loop.create_task(
                    self.pace(time.perf_counter(), self.interval, self.end)
                )
                return
            self.skip -= 1
        self.act(time.perf_counter())

    def act(self, started: float) -> None:
        seat = self.actor
        assert seat is not None
        self.actor = None
        view = self.views[seat]
        choices = 8 if view is None else len(view["own"]["choices"])
        self.sent_at[self.rev + 1] = started
        self.sent_now[self.rev + 1] = time.perf_counter()
        self.bots[seat].send_now(
            {
                "type": "act",
                "room": self.room_id,
                "rev": self.rev,
                "choice": self.rng.randrange(choices),
            }
        )

    async def pace(self, start: float, interval: float, end: float) -> None:
        """One choice per ``interval`` on a fixed schedule, from a random phase, until ``end``."""
        slot = start + self.rng.random() * interval
        while slot < end:
            delay = slot - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if self.dues and self.tally.measuring:
                self.tally.late += 1
            self.dues.append(slot)
            self.kick()
            slot += interval


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_phase(rooms: list[RoomBots], tally: Tally, phase: dict[str, Any]) -> dict[str, Any]:
    mode = str(phase["mode"])
    count = int(phase["rooms"])
    warmup, seconds = float(phase["warmup"]), float(phase["seconds"])
    interval = float(phase.get("interval", 0.25))
    playing = rooms[:count]
    if mode == "prelude":
        return await prelude(rooms[: int(phase["finishers"])], phase)
    stagger = int(phase.get("stagger", 0))
    for room in playing:
        room.carry = bool(phase.get("carry", False))
        room.skip = room.rng.randrange(stagger) if mode == "paced" and stagger > 0 else None
    tally.reset()
    # The bots' own garbage collector stays off during a phase: a full collection of 100 rooms'
    # views took 20-40 ms in a worker, and that pause was charged to the server's latency.
    gc.collect()
    gc.disable()
    try:
        return await _run_phase(playing, tally, mode, count, warmup, seconds, interval)
    finally:
        gc.enable()


async def _run_phase(
    playing: list[RoomBots],
    tally: Tally,
    mode: str,
    count: int,
    warmup: float,
    seconds: float,
    interval: float,
) -> dict[str, Any]:
    start = time.perf_counter()
    end = start + warmup + seconds
    pacers: list[asyncio.Task[None]] = []
    for room in playing:
        room.active, room.paced = True, mode == "paced"
        room.dues.clear()
        room.interval, room.end, room.pacer = interval, end, None
        if mode == "paced" and room.skip is None:
            pacers.append(asyncio.get_running_loop().create_task(room.pace(start, interval, end)))
        else:
            room.paced = False
            room.kick()
    await asyncio.sleep(warmup)
    skipping = sum(1 for r in playing if r.skip is not None)
    lag = LoopLag()
    lag.start()
    tally.measuring = True
    measured = time.perf_counter()
    await asyncio.sleep(max(0.0, end - time.perf_counter()))
    tally.measuring = False
    elapsed = time.perf_counter() - measured
    lag.stop()
    for room in playing:
        room.active = False
        room.skip = None
        if room.pacer is not None:
            pacers.append(room.pacer)
    for task in pacers:
        task.cancel()
    # Let what is in flight land, so the next phase starts from quiet rooms.
    for _ in range(40):
        if all(not r.sent_at for r in playing):
            break
        await asyncio.sleep(0.05)
    for room in playing:
        room.sent_at.clear()
        room.seen.clear()
    return {
        "mode": mode,
        "rooms": count,
        "seconds": elapsed,
        "actions": tally.actions,
        "latencies": [round(x, 6) for x in tally.latencies],
        "patch_sizes": dict(Counter(tally.patch_sizes)),
        "ratios": tally.ratios,
        "view_sizes": tally.view_sizes,
        "errors": tally.errors,
        "error_messages": tally.messages,
        "late": tally.late,
        "matches": tally.matches,
        "rematches": tally.rematches,
        "waits": [round(x, 6) for x in tally.waits],
        "carried": tally.carried,
        "setups": [round(x, 6) for x in tally.setups],
        "dropped": tally.dropped,
        "loop_lag": lag.figures(),
        "head_starts_unfinished": skipping,
    }


async def prelude(finishers: list[RoomBots], phase: dict[str, Any]) -> dict[str, Any]:
    """Before a ``paced-finish`` phase: each of ``finishers`` plays on at once, unmeasured, to a
    revision drawn from ``phase["finish"]`` (``[lo, hi)``, just short of a match's length), the
    other rooms idle; then they wait, so that in the phase that follows their matches end and the
    next ones are set up inside the window (the real games' matches last minutes at this pace,
    so a paced window never sees one end otherwise)."""
    lo, hi = (int(x) for x in phase["finish"])
    began = time.perf_counter()
    loop = asyncio.get_running_loop()
    waiting: list[asyncio.Future[None]] = []
    for room in finishers:
        target = room.rng.randrange(lo, max(lo + 1, hi))
        room.skip = max(0, target - room.rev)
        room.there = loop.create_future()
        room.active, room.paced = True, False
        waiting.append(room.there)
        room.kick()
    _, late = await asyncio.wait(waiting, timeout=float(phase.get("timeout", 120)))
    for room in finishers:
        room.active, room.skip, room.there = False, None, None
    # Let what is in flight land (a room stops after its last choice's patches).
    for _ in range(40):
        if all(not r.sent_at for r in finishers):
            break
        await asyncio.sleep(0.05)
    return {
        "mode": "prelude",
        "rooms": len(finishers),
        "seconds": time.perf_counter() - began,
        "unfinished": len(late),
        "revs": [r.rev for r in finishers],
    }


class LoopLag:
    """How late this process's event loop wakes a 5 ms timer, over a window (the generator's own
    delay, charged to the server's latency)."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            armed = time.perf_counter()
            await asyncio.sleep(0.005)
            self.late.append(max(0.0, time.perf_counter() - armed - 0.005))

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def figures(self) -> dict[str, float]:
        ordered = sorted(self.late) or [0.0]
        n = len(ordered)
        return {
            "p50": ordered[n // 2],
            "p99": ordered[min(n - 1, int(0.99 * n))],
            "max": ordered[-1],
            "mean": sum(ordered) / n,
        }


async def open_rooms(args: argparse.Namespace, tally: Tally) -> list[RoomBots]:
    rooms = [
        RoomBots(
            args.kind,
            args.game,
            f"r{args.first + i}",
            tally,
            args.seed + args.first + i,
            args.rematch,
        )
        for i in range(args.rooms)
    ]
    gate = asyncio.Semaphore(max(1, CONNECT_CONCURRENCY // VIEWERS))

    async def one(room: RoomBots) -> None:
        async with gate:
            await room.open(args.url)

    await asyncio.gather(*(one(room) for room in rooms))
    return rooms


async def open_idle(args: argparse.Namespace) -> list[LeanSocket]:
    """Connections that only say ``hello`` (Oasis) and then stay silent."""
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    sockets: list[LeanSocket] = []

    async def one(i: int) -> None:
        async with gate:
            url = args.url + f"idle{args.first + i}" if args.kind == "baseline" else args.url
            welcome: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

            def received(data: bytes, arrived: float) -> None:
                if not welcome.done():
                    welcome.set_result(data)

            socket = await connect(url, received, within=60)
            if args.kind == "oasis":
                socket.send(pack({"type": "hello", "version": 1, "client": "idle", "id": 1}))
                await asyncio.wait_for(welcome, REQUEST_TIMEOUT)
            sockets.append(socket)

    await asyncio.gather(*(one(i) for i in range(args.sockets)))
    return sockets


async def read_line() -> str:
    return await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


def say(kind: str, payload: dict[str, Any]) -> None:
    sys.stdout.write(f"{kind} {json.dumps(payload)}\n")
    sys.stdout.flush()


async def main_async(args: argparse.Namespace) -> None:
    tally = Tally()
    started = time.perf_counter()
    if args.mode == "idle":
        sockets = await open_idle(args)
        say("ready", {"sockets": len(sockets), "setup": time.perf_counter() - started})
        await read_line()
        return
    rooms = await open_rooms(args, tally)
    views = [len(pack(r.views[0])) for r in rooms if r.views[0] is not None]
    say(
        "ready",
        {
            "rooms": len(rooms),
            "setup": time.perf_counter() - started,
            "joined_views": views,
            "setup_errors": [e for r in rooms for e in r.setup_errors],
        },
    )
    for _ in range(100):
        line = (await read_line()).strip()
        if not line.startswith("go "):
            return
        say("result", await run_phase(rooms, tally, json.loads(line[3:])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", required=True, help="ws://127.0.0.1:PORT/")
    parser.add_argument("--kind", choices=("oasis", "baseline"), required=True)
    parser.add_argument("--mode", choices=("rooms", "idle"), default="rooms")
    parser.add_argument("--game", default="yspahan")
    parser.add_argument("--rooms", type=int, default=10)
    parser.add_argument("--first", type=int, default=0, help="index of this worker's first room")
    parser.add_argument("--sockets", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rematch",
        action="store_true",
        help="Oasis: each next match by rematch (protocol 1.5) instead of requests",
    )
    args = parser.parse_args()
    if not args.url.startswith(("ws://127.0.0.1:", "ws://localhost:")):
        parser.error("the load only ever goes to loopback")
    raise_fd_limit()
    import uvloop

    code = 0
    try:
        uvloop.run(main_async(args))
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # no closing handshakes for hundreds of sockets: the runner stops the server


if __name__ == "__main__":
    main()
