"""``oasis watch ROOM``: follow a match as a spectator until its final scores.

On a terminal it is the full screen of :mod:`clients.fullscreen`, redrawn at every move, with
the play loop of :mod:`clients.play` in a spectator's seat (no choices; chat, help and ``q``
work). In the line mode (``--plain``, or output that is not a terminal) it prints the whole
screen when it joins, one line per event as patches arrive (with the
revision they belong to), the whole screen again whenever the turn passes to another player (at
most once every ``--every`` seconds, so a fast bot match does not flood the terminal), and at the
end the final screen and one ``Final scores:`` line. A spectator never acts; it resumes by
itself after a drop (``spectate`` with its last revision).

A room still ``open`` is watched too: it waits for the match to start. A spectator of a room
with ``spectator_delay`` sees everything that many seconds late, as the server intends.

Rematches (SPEC section 9): the full screen goes on into the players' next match, moved there
by the server, or, in a room with ``spectator_delay`` (whose spectators the server leaves where
their late feed is), by itself a moment after the end was shown (:mod:`clients.after_match`).
The line mode ends at the final scores, naming the next match when the room already does.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from clients import render
from clients.connection import Session
from clients.fullscreen import FullScreen, use_full_screen
from clients.gamedata import GameData
from clients.notices import chat_text, server_option
from clients.plain import Plain
from clients.play import Player
from clients.printable import printable
from clients.render.common import result_line
from protocol.mirror import Mirror, Update


def _turn_seat(mirror: Mirror) -> Any:
    turn = mirror.shared.get("turn")
    return turn.get("seat") if isinstance(turn, dict) else None


def follow(session: Session, mirror: Mirror, screen: Plain) -> None:
    """Print this room's events and chat as they come."""

    def on_frame(room: str, frame: dict[str, Any], update: Update) -> None:
        if room != mirror.room:
            return
        if frame.get("type") == "patch":
            for event in update.events:
                text = render.event_line(mirror.game, event, mirror.info, mirror.view)
                screen.log(int(frame.get("rev", -1)), text)
        elif frame.get("type") == "chat":
            screen.chat(chat_text(frame))

    session.listeners.append(on_frame)


async def watch_room(session: Session, room: str, screen: Plain, every: float = 2.0) -> int:
    """Spectate ``room`` on an open session until the match is over; the exit status."""
    mirror = await session.join({"type": "spectate", "room": room})
    screen.mirror = mirror
    screen.line(f"Watching room {room} ({mirror.game}) as a spectator.", "bold")
    follow(session, mirror, screen)
    screen.show(mirror)
    shown_seat = _turn_seat(mirror)
    shown_at = time.monotonic()
    shown_state = mirror.info.get("state")
    while not mirror.over:
        seen = session.version
        await session.changed(seen)
        if session.gone is not None:
            screen.error(str(session.gone))
            return 1
        state = mirror.info.get("state")
        if state != shown_state:
            shown_state = state
            screen.line(f"The room is now {state}.", "bold")
        seat = _turn_seat(mirror)
        now = time.monotonic()
        if seat != shown_seat and now - shown_at >= every and not mirror.over:
            screen.show(mirror)
            shown_seat, shown_at = seat, now
    screen.show(mirror)
    screen.line(result_line(mirror.result or {}, mirror.info), "bold green")
    rematch = mirror.info.get("rematch")
    if isinstance(rematch, str):
        new = printable(rematch)
        again = f"oasis watch {new}{server_option(session.home)}"
        screen.line(f"The players went on to a new match: room {new} ({again})")
    return 0


async def watch(args: argparse.Namespace) -> int:
    screen = Plain()
    opened = Session(args.server)
    opened.notices.append(screen.notice)
    async with opened:
        if not use_full_screen(getattr(args, "plain", False)):
            return await watch_room(opened, args.room, screen, args.every)
        mirror = await opened.join({"type": "spectate", "room": args.room})
        screen.line(f"Watching room {args.room} ({mirror.game}) as a spectator.", "bold")
        data = GameData(args.server)
        ui = FullScreen(mirror, data)
        player = Player(opened, mirror, ui, auto=False, server=args.server, data=data)
        opened.notices[:] = [ui.notice]
        ui.open()
        try:
            return await player.run()
        finally:
            ui.close()
