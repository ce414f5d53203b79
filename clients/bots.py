"""``oasis bots``: many matches of client-side random bots over the protocol, as load and soak.

Each match is a room created by one bot connection, joined by one bot per seat, started, and
played to the end: every bot waits until its own view lists choices, picks one at random by
index and sends it with the revision it saw, exactly as a frontend would. The bots share a pool
of ``--connections`` sockets (connection ``k`` holds seat ``i`` of room ``r`` when
``k = (r * players + i) mod connections``, so no socket holds two seats of one room, as SPEC
section 9 requires) because the server limits connections per address; each socket then carries
many rooms, which is also what a busy frontend looks like.

Every view is mirrored with hash checks (:mod:`protocol.mirror`), so a desync shows up as a
resync in the summary. Progress is one line per finished match and one every ``--every``
seconds; the summary gives matches, actions, actions per second, errors by code, resyncs and
protocol problems. The exit status is 0 when every match finished without an error.

Limits and failures: every session paces itself under the server's ``welcome.limits``
(:class:`~clients.connection.Session`), so the bots never exceed the frame rate. A request lost
with its connection never makes a bot retry at once (that spun the event loop, which then could
not even answer keepalive pings): the bot waits, with a growing delay, for its session to
reconnect and resume the room (it does so by itself, with backoff), then goes on from the view;
a session that gives up reconnecting fails each of its matches with a line that says why, so the
tool always ends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from clients.connection import ClientError, ConnectionLost, ServerError, Session
from protocol.mirror import Mirror

STALL_SECONDS = 60.0
"""A bot that sees no change for this long gives its match up as stalled."""
RETRY_DELAYS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)
"""Seconds a bot waits after a lost or refused request, growing with each one in a row (and
back to the first after an accepted choice)."""


FATAL_CODES = frozenset({"storage_lost", "not_found", "bad_token"})
"""Refusals after which a seat cannot go on: its match fails with the server's reason."""


@dataclass
class Stats:
    requested: int = 0
    finished: int = 0
    failed: int = 0
    actions: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    def summary(self, sessions: list[Session]) -> dict[str, Any]:
        resyncs = sum(m.resyncs for s in sessions for m in s.rooms.values())
        problems = sum(len(s.problems) for s in sessions)
        return {
            "matches": self.finished,
            "failed": self.failed,
            "requested": self.requested,
            "actions": self.actions,
            "seconds": round(self.seconds, 3),
            "actions_per_second": round(self.actions / self.seconds, 1),
            "errors": sum(self.errors.values()),
            "errors_by_code": dict(sorted(self.errors.items())),
            "resyncs": resyncs,
            "protocol_problems": problems,
        }


class Bots:
    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.args = args
        self.out = out
        self.stats = Stats(requested=args.rooms)
        self.sessions: list[Session] = []
        self.rng = random.Random(args.seed)

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def run(self) -> int:
        args = self.args
        count = max(args.connections or min(args.rooms * args.players, 30), args.players)
        try:
            for i in range(count):
                self.sessions.append(await Session(args.server, f"oasis-bots/{i}").open())
            self.say(
                f"oasis bots: {args.rooms} {args.game} matches of {args.players} players over "
                f"{count} connections to {args.server}"
            )
            reporter = asyncio.ensure_future(self._report())
            limit = asyncio.Semaphore(args.parallel or args.rooms)
            await asyncio.gather(*(self._match(r, limit) for r in range(args.rooms)))
            reporter.cancel()
        finally:
            for session in self.sessions:
                with contextlib.suppress(Exception):
                    await session.close()
        summary = self.stats.summary(self.sessions)
        self.say(
            "summary: {matches} matches ({failed} failed), {actions} actions in {seconds} s, "
            "{actions_per_second} actions/s, {errors} errors {errors_by_code}, "
            "{resyncs} resyncs, {protocol_problems} protocol problems".format(**summary)
        )
        ok = summary["failed"] == 0 and summary["errors"] == 0
        return 0 if ok and not summary["protocol_problems"] else 1

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(self.args.every)
            s = self.stats
            self.say(
                f"progress: {s.finished}/{s.requested} matches, {s.actions} actions, "
                f"{s.actions / s.seconds:.0f} actions/s, {sum(s.errors.values())} errors"
            )

    def _session(self, room_index: int, seat: int) -> Session:
        players: int = self.args.players
        return self.sessions[(room_index * players + seat) % len(self.sessions)]

    async def _match(self, index: int, limit: asyncio.Semaphore) -> None:
        async with limit:
            t0 = time.monotonic()
            try:
                room, mirrors = await self._setup(index)
                seats = [
                    asyncio.ensure_future(self._drive(self._session(index, seat), mirror, index))
                    for seat, mirror in enumerate(mirrors)
                ]
                try:
                    counts = await asyncio.gather(*seats)
                finally:  # one seat failed: the others of its match stop too
                    for task in seats:
                        task.cancel()
            except ClientError as exc:
                self.stats.failed += 1
                self.stats.errors[getattr(exc, "code", "connection")] += 1
                self.say(f"match {index + 1} failed: {exc}")
                return
            self.stats.finished += 1
            scores = (mirrors[0].result or {}).get("scores")
            self.say(
                f"[{self.stats.finished}/{self.stats.requested}] room {room}: "
                f"{sum(counts)} actions in {time.monotonic() - t0:.2f} s, "
                f"scores {scores}"
            )
            for seat in range(len(mirrors)):
                self._session(index, seat).forget(room)

    async def _setup(self, index: int) -> tuple[str, list[Mirror]]:
        args = self.args
        host = self._session(index, 0)
        # Private: a load run must not flood the lobby that people browse.
        frame: dict[str, Any] = {
            "type": "create",
            "game": args.game,
            "players": args.players,
            "public": False,
        }
        if args.seed is not None:
            frame["seed"] = args.seed + index
        answer = await host.request(frame)
        room = str(answer["room"])
        mirrors = []
        for seat in range(args.players):
            session = self._session(index, seat)
            join = {"type": "join", "room": room, "seat": seat, "name": f"bot{seat + 1}"}
            mirrors.append(await session.join(join))
        await host.request({"type": "start", "room": room})
        return room, mirrors

    async def _drive(self, session: Session, mirror: Mirror, index: int) -> int:
        """Play one seat to the end of its match; the number of accepted choices."""
        rng = random.Random(self.rng.random())
        acted: int | None = None
        count = failures = 0
        while True:

            def ready(acted: int | None = acted) -> bool:
                return mirror.over or (bool(mirror.choices) and mirror.rev != acted)

            try:
                await session.wait(ready, patience=STALL_SECONDS)
            except TimeoutError:
                raise ClientError(f"stalled at rev {mirror.rev}") from None
            if mirror.over:
                return count
            rev = mirror.rev
            frame = {
                "type": "act",
                "room": mirror.room,
                "rev": rev,
                "choice": rng.randrange(len(mirror.choices)),
            }
            try:
                await session.request(frame)
            except ServerError as exc:
                self.stats.errors[exc.code] += 1
                if exc.code in FATAL_CODES:
                    raise
                if exc.code != "stale_rev":
                    await self._back_off(session, failures)
                    failures += 1
                    continue
            except ConnectionLost as exc:
                self.stats.errors["connection_lost"] += 1
                await self._back_off(session, failures, exc)
                failures += 1
                continue
            else:
                self.stats.actions += 1
                count += 1
                failures = 0
            acted = rev

    async def _back_off(
        self, session: Session, failures: int, lost: ConnectionLost | None = None
    ) -> None:
        """Wait before the next try: a growing delay, and after a lost connection until the
        session is connected again (it resumes the room itself); fail the match if it gave up."""
        await asyncio.sleep(RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)])
        if lost is None or session.connected:
            return
        try:
            await session.wait(lambda: session.connected, patience=STALL_SECONDS)
        except TimeoutError:
            raise ClientError(
                f"connection lost ({lost}) and not back within {STALL_SECONDS:g} s"
            ) from None
        except ConnectionLost as gone:
            raise ClientError(f"connection lost for good: {gone}") from None


async def bots(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    if args.rooms < 1 or args.players < 1:
        print("oasis bots: --rooms and --players must be at least 1", file=sys.stderr)
        return 2
    return await Bots(args, out).run()
