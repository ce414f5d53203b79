"""The lobby commands: list rooms, create one, join one, quick match, play against bots.

Each command is one coroutine over a :class:`~clients.connection.Session` and returns the exit
status; :func:`run` wraps it so the user sees a sentence, never a traceback, whatever fails
(set ``OASIS_DEBUG=1`` to get the traceback too). Exit statuses: 0 done, 1 the server or the
connection failed, 2 a usage error, 130 interrupted.

``create`` and ``play`` make the caller the room's host: after taking seat 0 it waits for the
others and starts the match itself once every seat is taken; ``play`` (or ``create --bots``)
starts at once with server bots in the free seats.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

from rich.table import Table

from clients.connection import ClientError, ServerError, Session
from clients.errors import explain
from clients.fullscreen import FullScreen, use_full_screen
from clients.gamedata import GameData
from clients.notices import server_option
from clients.plain import Plain
from clients.play import AUTO_DELAY, Player, announce_seat
from clients.render.common import add_row
from protocol.mirror import Mirror


def run(main: Callable[[], Coroutine[Any, Any, int]], prog: str = "oasis") -> int:
    """Run one command's coroutine; turn every failure into a message and an exit status."""
    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except ClientError as exc:
        print(f"{prog}: {explain(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # the promise: no traceback for the user, whatever happens
        if os.environ.get("OASIS_DEBUG"):
            traceback.print_exc()
        print(f"{prog}: {explain(exc)}", file=sys.stderr)
        return 1


def new_session(args: argparse.Namespace, screen: Plain, *, reconnect: bool = True) -> Session:
    """A session (not yet open) whose connection notices and protocol problems are printed."""
    opened = Session(args.server, reconnect=reconnect)
    opened.notices.append(screen.notice)
    return opened


def _options(args: argparse.Namespace) -> dict[str, Any]:
    raw = getattr(args, "options", None)
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ClientError(f"--options must be a JSON map ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ClientError("--options must be a JSON map, e.g. '{\"variant\": 1}'")
    return value


async def rooms(args: argparse.Namespace) -> int:
    screen = Plain()
    async with new_session(args, screen, reconnect=False) as opened:
        frame: dict[str, Any] = {"type": "list_rooms"}
        if args.game:
            frame["game"] = args.game
        if getattr(args, "after", None):
            frame["after"] = args.after
        answer = await opened.request(frame)
    listing = [r for r in answer.get("rooms") or [] if isinstance(r, dict)]
    following = answer.get("next") if isinstance(answer.get("next"), str) else None
    if not args.all:
        listing = [r for r in listing if r.get("state") != "finished"]
    more = f"oasis rooms --after {following}" + (f" --game {args.game}" if args.game else "")
    if not listing:
        what = "public rooms" if args.all else "open or running public rooms"
        screen.line(f"No {what}." + (f" (game {args.game})" if args.game else ""))
        if following:
            screen.line(f"More rooms: {more}")
        return 0
    table = Table(title="Public rooms", title_justify="left")
    for column in ("room", "game", "players", "state", "seats", "spectators"):
        table.add_column(column)
    for info in listing:
        seats = info.get("seats") or []
        taken = sum(1 for s in seats if isinstance(s, dict) and s.get("taken"))
        add_row(
            table,
            str(info.get("room")),
            str(info.get("game")),
            str(info.get("players")),
            str(info.get("state")),
            f"{taken}/{len(seats)} taken",
            str(info.get("spectators", 0)),
        )
    screen.console.print(table)
    if following:
        screen.line(f"More rooms: {more}")
    return 0


def clock_option(text: str, on_timeout: str) -> dict[str, Any]:
    """``300+5`` -> ``{"initial": 300, "increment": 5, "on_timeout": ...}`` (SPEC section 20)."""
    initial, _, increment = text.partition("+")
    try:
        return {
            "initial": float(initial),
            "increment": float(increment or 0),
            "on_timeout": on_timeout,
        }
    except ValueError:
        raise ClientError(f"--clock wants SECONDS or SECONDS+INCREMENT, not {text!r}") from None


async def _create(session: Session, args: argparse.Namespace) -> str:
    frame: dict[str, Any] = {
        "type": "create",
        "game": args.game,
        "players": args.players,
        "public": not args.private,
    }
    options = _options(args)
    if options:
        frame["options"] = options
    if args.delay:
        frame["spectator_delay"] = args.delay
    if args.seed is not None:
        frame["seed"] = args.seed
    if getattr(args, "bot", None):
        frame["bot"] = args.bot
    if getattr(args, "clock", None):
        frame["clock"] = clock_option(args.clock, getattr(args, "on_timeout", "bot"))
    answer = await session.request(frame)
    room = answer.get("room")
    if not isinstance(room, str):
        raise ClientError("the server did not say which room it created")
    return room


async def _play(
    session: Session,
    mirror: Mirror,
    screen: Plain,
    args: argparse.Namespace,
    *,
    host: bool,
    bots: bool = False,
) -> int:
    """Play the seat of ``mirror`` on the full screen (or in lines) until the end or a quit."""
    announce_seat(screen, mirror, args.server)
    data = GameData(args.server)
    ui: Plain | FullScreen
    if use_full_screen(getattr(args, "plain", False)):
        ui = FullScreen(mirror, data)
    else:
        screen.mirror = mirror
        screen.data = data
        ui = screen
    player = Player(
        session,
        mirror,
        ui,
        host=host,
        auto_start=host,
        auto=not getattr(args, "no_auto", False),
        auto_delay=getattr(args, "auto_delay", AUTO_DELAY),
        server=args.server,
        data=data,
    )
    if bots:
        player.started = True
        try:
            await session.request({"type": "start", "room": mirror.room, "bots": True})
        except ServerError as exc:
            screen.message(explain(exc), "error")
            return 1
    if isinstance(ui, FullScreen):
        session.notices[:] = [ui.notice]
        ui.open()
    try:
        return await player.run()
    finally:
        ui.close()
        session.notices[:] = [screen.notice]


def join_lines(room: str, server: str) -> str:
    """How others join a room, on one line to copy."""
    where = server_option(server)
    return f"Others join with: oasis join {room}{where} · spectators: oasis watch {room}{where}"


async def create(args: argparse.Namespace) -> int:
    screen = Plain()
    async with new_session(args, screen) as opened:
        room = await _create(opened, args)
        screen.line(f"Created room {room} ({args.game}, {args.players} players).", "bold")
        screen.line(join_lines(room, args.server))
        if args.detach:
            return 0
        mirror = await opened.join({"type": "join", "room": room, "name": args.name})
        return await _play(opened, mirror, screen, args, host=True, bots=args.bots)


async def play(args: argparse.Namespace) -> int:
    """Play now: a new room with server bots in every other seat (or ``--room`` to join one)."""
    if not args.room and not args.game:
        raise ClientError("say which game to play (--game ishtar or --game yspahan) or --room")
    screen = Plain()
    async with new_session(args, screen) as opened:
        if args.room:
            mirror = await opened.join({"type": "join", "room": args.room, "name": args.name})
            return await _play(opened, mirror, screen, args, host=False)
        room = await _create(opened, args)
        mirror = await opened.join({"type": "join", "room": room, "name": args.name})
        return await _play(opened, mirror, screen, args, host=True, bots=True)


async def join(args: argparse.Namespace) -> int:
    screen = Plain()
    async with new_session(args, screen) as opened:
        frame: dict[str, Any] = {"type": "join", "room": args.room, "name": args.name}
        if args.seat is not None:
            frame["seat"] = args.seat - 1
        if args.token:
            frame["token"] = args.token
        mirror = await opened.join(frame)
        if args.token:
            mirror.token = args.token
        return await _play(opened, mirror, screen, args, host=False)


async def quick(args: argparse.Namespace) -> int:
    screen = Plain()
    async with new_session(args, screen) as opened:
        frame = {"type": "quick", "game": args.game, "players": args.players, "name": args.name}
        mirror = await opened.join(frame)
        screen.line("Quick match: the room starts by itself when every seat is taken.")
        return await _play(opened, mirror, screen, args, host=False)
