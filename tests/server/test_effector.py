"""The effector's frames held on their connections while a list of effects is carried out
(:meth:`server.effector.Effector.carry`), with stand-ins for the connections and the room:
pure Python only (compiled, the effector takes its members' real classes), so this file is not
among ``tests/test_compiled.py``'s."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from server.effector import Effector
from server.effects import Append, Done, Keep, Send


class _Conn:
    """What the effector uses of a connection: its held frames and their one write."""

    def __init__(self, fails: bool = False) -> None:
        self.held: list[bytes] | None = None
        self.fails = fails
        self.writes: list[list[bytes]] = []

    def flush(self) -> None:
        frames, self.held = self.held, None
        if self.fails:
            raise OSError("the socket is gone")
        assert frames is not None
        self.writes.append(frames)


def _effector(core: Any = None, keeper: Any = None) -> Effector:
    game = core or SimpleNamespace(settings=SimpleNamespace(game="tiny"))
    metrics = SimpleNamespace(actions=SimpleNamespace(labels=lambda game: None))
    stand_in: Any = SimpleNamespace()
    return Effector(
        stand_in,
        game,
        fanout=SimpleNamespace(members=set()),  # type: ignore[arg-type]
        inbox=stand_in,
        keeper=keeper or stand_in,
        metrics=metrics,  # type: ignore[arg-type]
        log=None,
        on_close=None,
    )


async def test_a_socket_s_frames_of_one_list_go_in_one_write_in_order() -> None:
    a, b = _Conn(), _Conn()
    effects: list[Any] = [Send([a, b], b"1"), Send([a], b"2", b"2-ack"), Send([b], b"3")]
    assert _effector().carry(effects, 0, 0.0) == -1
    assert a.writes == [[b"1", b"2", b"2-ack"]] and b.writes == [[b"1", b"3"]]
    assert a.held is None and b.held is None


async def test_a_failed_write_leaves_no_frame_held_for_a_later_list() -> None:
    """A write that raises ends the list; the frames gathered for the other sockets are
    dropped, not left on their connections where another room's list would add to them."""
    broken, other = _Conn(fails=True), _Conn()
    with pytest.raises(OSError, match="the socket is gone"):
        _effector().carry([Send([broken, other], b"1")], 0, 0.0)
    assert broken.held is None and other.held is None and other.writes == []
    # The next list writes what it gathers, and only that.
    assert _effector().carry([Send([other], b"2")], 0, 0.0) == -1
    assert other.writes == [[b"2"]]


class _Core:
    """A room core that answers a command with ``lists`` in turn, one per call, and records
    what it was handed (the command, then each store answer)."""

    def __init__(self, *lists: list[Any]) -> None:
        self.settings = SimpleNamespace(game="tiny")
        self.play = SimpleNamespace(match="match")
        self.lists = list(lists)
        self.handed: list[Any] = []

    def handle(self, item: Any, now: float, conn: Any = None) -> list[Any]:
        self.handed.append(item)
        return self.lists.pop(0) if self.lists else []


class _Keeper:
    """A keeper whose store answers each effect with ``Done(its name)``; it records the
    frames each socket had been written when the store was called."""

    def __init__(self, *conns: _Conn) -> None:
        self.conns = conns
        self.calls: list[tuple[str, list[list[list[bytes]]]]] = []

    def due(self, rev: int, match: Any) -> bool:
        return rev == 2

    async def carry_out(self, effect: Any, match: Any) -> Done:
        name = type(effect).__name__
        self.calls.append((name, [list(c.writes) for c in self.conns]))
        return Done(name)


async def test_a_command_s_store_answers_go_back_to_the_core_after_its_frames_are_written() -> None:
    """``Effector.handle``: each list's frames are written before the store effect it ends
    with is awaited, the store's answer goes back to the core, and a snapshot nobody waits
    for is stored where it stands (when due) and answered to nobody."""
    a = _Conn()
    core = _Core(
        [Send([a], b"1"), Append(None, None)],  # type: ignore[arg-type]
        [Send([a], b"2"), Keep(1, {}, waits=False), Keep(2, {}, waits=False), Send([a], b"3")],
    )
    keeper = _Keeper(a)
    effector = _effector(core, keeper)
    await effector.handle(None, "command", 0.0, lambda: 0.0)  # type: ignore[arg-type]
    assert core.handed[0] == "command" and core.handed[1] == Done("Append")
    assert len(core.handed) == 2  # (the snapshot's answer goes to nobody)
    assert keeper.calls == [("Append", [[[b"1"]]]), ("Keep", [[[b"1"], [b"2"]]])]
    assert a.writes == [[b"1"], [b"2"], [b"3"]]
