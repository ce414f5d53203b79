"""Who is really playing: sentences for what changed in a room's seats and clocks.

Pure functions of two snapshots (the room's ``info`` before and after a ``room`` frame, the
view's ``clock`` before and after a patch): a player who dropped, a bot standing in for them
(SPEC section 19), the player back, a clock that ran out and had a bot move (or forfeited the
seat, section 20). ``me`` is the viewer's seat, so the sentences can say "you".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clients.printable import printable
from clients.render.common import seat_label


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
