"""What a new match costs the node: a rematch's settings, the room's event loop, the memory store.

A rematch that changes nothing of the finished room's settings keeps them; the records a new
match makes (its settings, status and holdings, a rematch's commands, the archive) are built by
their own ``__init__``, not the one ``dataclass`` writes (interpreted, about 30,000 instructions
for the settings alone), each field under its own name; a room
asks for the running loop once, where it is made, not again when it starts
(``asyncio.get_running_loop`` is a ``getpid`` system call on Python 3.11); the memory store's
``fail`` (a property made of two functions, the store's class being compiled as an ordinary
Python class) tells its listeners of each change only. Each holds in pure Python and in the
compiled tree alike.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from games import registry
from games.base import Match
from server.app import App
from server.clock import parse_clock
from server.lobby import _rematch_settings
from server.quotas import Holdings, Quota
from server.room_state import Admit, Moved, RoomSettings, RoomState, Status
from server.store import ArchiveRecord, MemoryStore
from server.store.records import Action
from tests.server.conftest import MakeApp


def _settings(*, quick: bool, host: str) -> RoomSettings:
    return RoomSettings(
        game="tiny",
        players=3,
        options={"x": 1},
        public=False,
        spectator_delay=2,
        spectator_chat=False,
        quick=quick,
        host=host,
        replay_of="arch",
        replay_interval=0.5,
        bot="greedy",
        clock=parse_clock({"initial": 60, "increment": 1}),
    )


def test_a_rematch_its_host_asks_for_again_keeps_the_finished_rooms_settings() -> None:
    old = _settings(quick=False, host="ann")
    assert _rematch_settings(old, "ann") is old


@pytest.mark.parametrize(("quick", "host"), [(True, "ann"), (False, "bob"), (True, "bob")])
def test_a_rematch_that_changes_the_settings_makes_new_ones(quick: bool, host: str) -> None:
    old = _settings(quick=quick, host="ann")
    made = _rematch_settings(old, host)
    assert made is not old
    assert made == dataclasses.replace(old, quick=False, host=host)
    # (every field given a value other than its default above: one left out would differ)
    for field in dataclasses.fields(RoomSettings):
        if field.name not in ("quick", "host"):
            assert getattr(made, field.name) != field.default, field.name
            assert getattr(made, field.name) == getattr(old, field.name), field.name


def _fields(record: object) -> dict[str, object]:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}  # type: ignore[arg-type]


@pytest.mark.parametrize("flag", ["public", "spectator_chat", "quick"])
def test_the_settings_keep_each_field_given_under_its_own_name(flag: str) -> None:
    given: dict[str, object] = {
        "game": "tiny",
        "players": 3,
        "options": {"x": 1},
        "public": False,
        "spectator_delay": 2,
        "spectator_chat": False,
        "quick": False,
        "host": "ann",
        "replay_of": "arch",
        "replay_interval": 0.5,
        "bot": "greedy",
        "clock": parse_clock({"initial": 60, "increment": 1}),
    }
    given[flag] = True  # (one flag at a time: three booleans cannot differ otherwise)
    assert _fields(RoomSettings(**given)) == given  # type: ignore[arg-type]
    defaults = RoomSettings("tiny", 2, {}, True, 0, True, False, "bob")
    assert (defaults.replay_of, defaults.replay_interval, defaults.bot, defaults.clock) == (
        None,
        0.0,
        "random",
        None,
    )


def test_a_new_matchs_records_keep_each_field_given_under_its_own_name() -> None:
    status = {
        "state": RoomState.PLAYING,
        "paused": True,
        "lost": False,
        "unsure": True,
        "finish_pending": {"r": 1},
        "rematch": "new",
        "everyone_moved": True,
    }
    assert _fields(Status(**status)) == status  # type: ignore[arg-type]
    assert _fields(Status()) == {
        "state": RoomState.OPEN,
        "paused": False,
        "lost": False,
        "unsure": False,
        "finish_pending": None,
        "rematch": None,
        "everyone_moved": False,
    }
    quota = Quota("rooms", 5, "rooms")
    assert Holdings().held == [] and Holdings().held is not Holdings().held
    assert Holdings([(quota, "k")]).held == [(quota, "k")]
    admit = {"id": 7, "source": "old", "seats": (("ann", 0, "a"),), "spectators": ("bob",)}
    assert _fields(Admit(**admit)) == admit  # type: ignore[arg-type]
    assert _fields(Moved("new", ("ann",))) == {"to": "new", "members": ("ann",)}  # type: ignore[arg-type]
    archive = {
        "room": "r1",
        "game": "tiny",
        "players": 2,
        "options": {"x": 1},
        "seed": 5,
        "actions": [Action(1, 0, {"kind": "draw"})],
        "result": {"scores": [1, 2]},
        "chat": [{"text": "gg"}],
        "meta": {"host": "ann"},
        "finished": 12.5,
        "schema_version": 7,
    }
    assert _fields(ArchiveRecord(**archive)) == archive  # type: ignore[arg-type]
    archive.pop("schema_version")
    assert ArchiveRecord(**archive).schema_version == 1  # type: ignore[arg-type]


async def test_a_room_asks_for_the_running_loop_once_when_made_and_started(
    make_app: MakeApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    app: App = await make_app()
    game = registry.get("tiny")
    settings = dataclasses.replace(_settings(quick=False, host="ann"), options={}, replay_of=None)
    match = Match(game, game.setup(3, {}, 5))
    running = asyncio.get_running_loop
    asked: list[asyncio.AbstractEventLoop] = []

    def counted() -> asyncio.AbstractEventLoop:
        asked.append(running())
        return asked[-1]

    monkeypatch.setattr(asyncio, "get_running_loop", counted)
    room = app.lobby._room("loop-test", settings, match, 5)
    made = len(asked)
    room.start_task()
    monkeypatch.undo()
    # Once where it is made; its start asks nothing more of its own (the one call there is its
    # inbox's, for the first timer the opened room arms, kept by the inbox from then on).
    assert made == 1 and len(asked) == 2 and set(asked) == {running()}
    assert room._now() == pytest.approx(running().time(), abs=1.0)
    await room.stop()


def test_the_memory_stores_fail_tells_its_listeners_of_each_change_only() -> None:
    store = MemoryStore()
    told: list[bool] = []
    store.on_ready_change(told.append)
    store.fail = False
    assert told == [] and store.fail is False and store.ready()
    store.fail = True
    store.fail = True
    assert told == [False] and store.fail is True and not store.ready()
    store.fail = False
    assert told == [False, True] and store.fail is False and store.ready()
