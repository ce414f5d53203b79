"""Sentences about a room for its player: who is really playing, what a week scored, what
becomes of a seat left, the new match a rematch moved us into, a chat line.

Pure functions of two snapshots (the room's ``info`` before and after a ``room`` frame, the
view's ``clock`` before and after a patch): a player who dropped, a bot standing in for them
(SPEC section 19), the player back, a clock that ran out and had a bot move (or forfeited the
seat, section 20). ``me`` is the viewer's seat, so the sentences can say "you". And the new
match a rematch moved us into (section 9): who is in it, and what it waits for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from clients.connection import DEFAULT_SERVER
from clients.printable import printable
from clients.render.common import seat_label
from protocol.mirror import Mirror


def _seats(info: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    return {
        int(entry["seat"]): entry
        for entry in info.get("seats") or []
        if isinstance(entry, dict) and type(entry.get("seat")) is int
    }


def _who(info: Mapping[str, Any], seat: int, me: int | None) -> str:
    return "you" if seat == me else seat_label(info, seat)


def seat_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], me: int | None = None
) -> list[str]:
    """Sentences for the seats whose player came, went, or got a stand-in between two infos."""
    out: list[str] = []
    old, new = _seats(before), _seats(after)
    started = after.get("state") == "playing"
    for seat, now in sorted(new.items()):
        was = old.get(seat)
        if was is None:
            continue
        who = _who(after, seat, me)
        if not was.get("taken") and now.get("taken"):
            kind = "a bot" if now.get("bot") else printable(now.get("name") or "a player")
            out.append(f"{kind} took seat P{seat + 1}" if seat != me else "you took your seat")
            continue
        if now.get("bot") and not now.get("standin"):
            continue  # a bot seat for the whole match: nothing to tell while it plays
        if now.get("forfeited") and not was.get("forfeited"):
            continue  # told by the clock (clock_changes)
        if now.get("standin") and not was.get("standin"):
            kind = printable(now.get("bot_kind") or "a")
            back = "you come" if seat == me else "they come"
            out.append(f"a {kind} bot now plays for {who} until {back} back")
        elif was.get("standin") and not now.get("standin") and now.get("connected"):
            out.append(f"{who} {'are' if seat == me else 'is'} back; the stand-in bot stops")
        elif was.get("connected") and not now.get("connected") and started and seat != me:
            out.append(
                f"{who} disconnected; a bot takes the seat over if they do not come back soon"
            )
        elif (
            not was.get("connected")
            and now.get("connected")
            and started
            and seat != me
            and not was.get("standin")
        ):
            out.append(f"{who} is back")
    return out


def clock_changes(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    info: Mapping[str, Any],
    me: int | None = None,
) -> list[str]:
    """Sentences for clocks that ran out between two views' ``clock`` parts."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out: list[str] = []
    old_timeouts = before.get("timeouts") or []
    new_timeouts = after.get("timeouts") or []
    old_forfeited = set(before.get("forfeited") or [])
    for seat in sorted(set(after.get("forfeited") or []) - old_forfeited):
        if type(seat) is int:
            who = _who(info, seat, me)
            out.append(f"{who} ran out of time and forfeited; a bot plays the seat to the end")
    for seat, count in enumerate(new_timeouts):
        was = old_timeouts[seat] if seat < len(old_timeouts) else 0
        if type(count) is int and type(was) is int and count > was:
            who = _who(info, seat, me)
            whose = "your" if seat == me else "their"
            out.append(f"{who} ran out of time: a bot made {whose} move")
    return out


def new_match(room: str, info: Mapping[str, Any], me: int | None = None) -> str:
    """The sentence for a rematch that moved us into ``room`` (``me`` None: as a spectator)."""
    free = [
        f"P{seat + 1}" for seat, entry in sorted(_seats(info).items()) if not entry.get("taken")
    ]
    where = f"New match: room {printable(room)}"
    if len(free) == 1:
        return f"{where}; {free[0]} is free (its player had left)"
    if free:
        return f"{where}; {' and '.join(free)} are free (their players had left)"
    if me is None:
        return f"{where}, the same players; you watch it"
    return f"{where}, the same players; you are {seat_label(info, me)}"


def week_scoring(
    events: list[dict[str, Any]], info: Mapping[str, Any]
) -> tuple[str, list[str]] | None:
    """Yspahan's scoring of the week that ``events`` end, seat by seat (None: no week ends)."""
    ends = [e for e in events if e.get("kind") == "week_end"]
    if not ends:
        return None
    cut = events.index(ends[-1])
    start = max((i for i, e in enumerate(events[:cut]) if e.get("kind") == "day_end"), default=0)
    scored: dict[int, list[str]] = {}
    for event in events[start:cut]:
        if event.get("kind") == "score" and type(event.get("seat")) is int:
            reason = printable(event.get("reason") or event.get("category") or "")
            if event.get("category") == "bazaar":  # a souk scored twice: say why
                reason = f"Bazaar {reason}"
            scored.setdefault(event["seat"], []).append(f"{event.get('points')} ({reason})")
    lines = []
    for seat in sorted(scored):
        total = sum(int(p.split()[0]) for p in scored[seat] if p.split()[0].isdigit())
        lines.append(f"{seat_label(info, seat)}: +{total} VP = {', '.join(scored[seat])}")
    return f"Week {ends[-1].get('week')} scoring", lines or ["nobody scored this week"]


def server_option(server: str) -> str:
    """`` --server URL`` when it is not the default, for commands printed to copy."""
    plain = server.rstrip("/")
    return "" if plain == DEFAULT_SERVER else f" --server {printable(server)}"


def leaving_lines(mirror: Mirror, server: str) -> list[str]:
    """What happens to the seat, and the one-line command that comes back to it."""
    room = printable(mirror.room)
    if mirror.spectator:
        return [
            f"You stopped watching room {room}; watch again with: oasis watch {room}"
            f"{server_option(server)}"
        ]
    state = mirror.info.get("state")
    if state == "open":
        return [f"You left room {room} before the match started: your seat is free again."]
    if not mirror.token or state != "playing":
        return []
    bots = any(
        isinstance(s, dict) and s.get("bot") and s.get("seat") != mirror.seat
        for s in mirror.info.get("seats") or []
    )
    seat = f"P{(mirror.seat or 0) + 1}"
    what = (
        "the match goes on: after the server's grace period (a minute by default) a bot plays"
        " your seat"
    )
    what += " and finishes the match for you" if bots else " until you come back"
    return [
        f"You keep your seat {seat} in room {room}; {what}.",
        f"Come back with: oasis join {room} --token={printable(mirror.token)}"
        f"{server_option(server)}",
    ]


def chat_text(frame: dict[str, Any]) -> Text:
    sender = frame.get("from") or {}
    seat = sender.get("seat")
    who = f"P{seat + 1} " if isinstance(seat, int) else "spectator "
    text = Text(f"<{who}{printable(sender.get('name', ''))}> ", style="bold cyan")
    text.append(printable(frame.get("text", "")))
    return text
