"""The effector's frames held on their connections while a list of effects is carried out
(:meth:`server.effector.Effector.execute`), with stand-ins for the connections and the room:
pure Python only (compiled, the effector takes its members' real classes), so this file is not
among ``tests/test_compiled.py``'s."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from server.effector import Effector
from server.effects import Send


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


def _effector() -> Effector:
    game = SimpleNamespace(settings=SimpleNamespace(game="tiny"))
    metrics = SimpleNamespace(actions=SimpleNamespace(labels=lambda game: None))
    stand_in: Any = SimpleNamespace()
    return Effector(
        stand_in,
        game,  # type: ignore[arg-type]
        fanout=SimpleNamespace(members=set()),  # type: ignore[arg-type]
        inbox=stand_in,
        keeper=stand_in,
        metrics=metrics,  # type: ignore[arg-type]
        log=None,
        on_close=None,
    )


async def test_a_socket_s_frames_of_one_list_go_in_one_write_in_order() -> None:
    a, b = _Conn(), _Conn()
    effects: list[Any] = [Send([a, b], b"1"), Send([a], b"2", b"2-ack"), Send([b], b"3")]
    assert await _effector().execute(effects, 0.0) is None
    assert a.writes == [[b"1", b"2", b"2-ack"]] and b.writes == [[b"1", b"3"]]
    assert a.held is None and b.held is None


async def test_a_failed_write_leaves_no_frame_held_for_a_later_list() -> None:
    """A write that raises ends the list; the frames gathered for the other sockets are
    dropped, not left on their connections where another room's list would add to them."""
    broken, other = _Conn(fails=True), _Conn()
    with pytest.raises(OSError, match="the socket is gone"):
        await _effector().execute([Send([broken, other], b"1")], 0.0)
    assert broken.held is None and other.held is None and other.writes == []
    # The next list writes what it gathers, and only that.
    assert await _effector().execute([Send([other], b"2")], 0.0) is None
    assert other.writes == [[b"2"]]
