"""``oasis watch ROOM``: follow a match as a spectator until its final scores.

It prints the whole screen when it joins, one line per event as patches arrive (with the
revision they belong to), the whole screen again whenever the turn passes to another player (at
most once every ``--every`` seconds, so a fast bot match does not flood the terminal), and at the
end the final screen and one ``Final scores:`` line. A spectator never acts; it resumes by
itself after a drop (``spectate`` with its last revision).

A room still ``open`` is watched too: it waits for the match to start. A spectator of a room
with ``spectator_delay`` sees everything that many seconds late, as the server intends.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from clients.connection import Session
from clients.play import Screen, follow
from clients.render.common import result_line
from protocol.mirror import Mirror


def _turn_seat(mirror: Mirror) -> Any:
    turn = mirror.shared.get("turn")
    return turn.get("seat") if isinstance(turn, dict) else None


async def watch_room(session: Session, room: str, screen: Screen, every: float = 2.0) -> int:
    """Spectate ``room`` on an open session until the match is over; the exit status."""
    mirror = await session.join({"type": "spectate", "room": room})
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
    return 0


async def watch(args: argparse.Namespace) -> int:
    screen = Screen()
    opened = Session(args.server)
    opened.notices.append(screen.notice)
    async with opened:
        return await watch_room(opened, args.room, screen, args.every)
