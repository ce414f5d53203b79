"""Small pure parts of the server: configuration, limits, lifecycles, tokens, error mapping."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import os
import secrets

import pytest

from games.errors import IllegalChoice, NotYourTurnError, OptionsError
from protocol.errors import ErrorCode, FrameError, RequestError
from server.config import Config, from_env, parse_args
from server.connection import TRANSITIONS as CONN_TRANSITIONS
from server.connection import ConnEvent, ConnState
from server.errors import close_code, wire_error
from server.inbox import Inbox
from server.limits import IpCounter, SendBuffer, SendVerdict, TokenBucket
from server.metrics import Metrics
from server.quotas import Holdings, Quota
from server.room_state import TRANSITIONS as ROOM_TRANSITIONS
from server.room_state import Lifecycle, RoomEvent, RoomSettings, RoomState, Status
from server.seats import Seat, digest, find_by_token, new_token, urlsafe


def test_flags_override_the_environment_which_overrides_defaults() -> None:
    env = {"OASIS_PORT": "9000", "REDIS_URL": "redis://x", "OASIS_ALLOW_SEED": "yes"}
    assert from_env(env) == Config(port=9000, redis_url="redis://x", allow_seed=True)
    config = parse_args(["--port", "9100", "--rate-burst", "5", "--no-allow-seed"], env)
    assert (config.port, config.rate_burst, config.allow_seed) == (9100, 5, False)
    assert config.redis_url == "redis://x"
    assert config.max_frame_bytes == Config().max_frame_bytes


def test_loop_and_store_are_settings_with_a_fixed_set_of_values() -> None:
    assert (Config().loop, Config().store) == ("uvloop", "redis")
    config = parse_args([], {"OASIS_LOOP": "asyncio", "OASIS_STORE": "memory"})
    assert (config.loop, config.store) == ("asyncio", "memory")
    assert parse_args(["--store", "redis"], {"OASIS_STORE": "memory"}).store == "redis"
    for bad in (["--loop", "trio"], ["--store", "disk"]):
        with pytest.raises(SystemExit):
            parse_args(bad, {})


def test_the_memory_store_setting_starts_no_redis_and_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from server import main as server_main
    from server.store import MemoryStore

    def no_embedded(directory: str) -> None:
        raise AssertionError("OASIS_STORE=memory must not start a redis-server")

    seen: list[object] = []

    async def fake_run(config: Config, url: str | None) -> None:
        seen.append(server_main.open_store(config, url))

    monkeypatch.setattr(server_main, "start_embedded", no_embedded)
    monkeypatch.setattr(server_main, "run", fake_run)
    with pytest.raises(SystemExit):
        server_main.main(
            [
                "--store",
                "memory",
                "--loop",
                "asyncio",
                "--redis-url",
                "redis://x",
                "--log-level",
                "warning",
            ]
        )
    assert len(seen) == 1 and isinstance(seen[0], MemoryStore)


def test_a_token_bucket_refills_at_its_rate() -> None:
    bucket = TokenBucket(rate=2.0, burst=3.0, stamp=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(0.5) and not bucket.take(0.5)
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]


def test_ip_counter_refuses_past_the_limit_and_forgets_released_addresses() -> None:
    ips = IpCounter(2)
    assert ips.acquire("a") and ips.acquire("a") and not ips.acquire("a")
    assert ips.full("a") and not ips.full("b")
    ips.release("a")
    assert ips.acquire("a")
    ips.release("a")
    ips.release("a")
    assert len(ips) == 0  # "b" was only checked (a handshake that never got further): not kept


def test_send_buffer_lags_then_closes_when_it_lags_again_soon_after_a_resync() -> None:
    buffer = SendBuffer(limit=100, lag_window=10.0)
    assert buffer.after_write(100, now=0.0) is SendVerdict.SENT
    assert buffer.after_write(101, now=1.0) is SendVerdict.LAGGING
    assert buffer.lagging
    buffer.resynced(now=2.0)
    assert [buffer.lagging] == [False]  # (a list: mypy would keep the narrowing above)
    assert buffer.after_write(500, now=5.0) is SendVerdict.CLOSE
    buffer.resynced(now=6.0)
    assert buffer.after_write(500, now=20.0) is SendVerdict.LAGGING


def test_lifecycle_tables_allow_only_their_transitions() -> None:
    assert CONN_TRANSITIONS[(ConnState.AWAITING_HELLO, ConnEvent.HELLO)] is ConnState.READY
    assert (ConnState.READY, ConnEvent.HELLO) not in CONN_TRANSITIONS
    assert (ConnState.AWAITING_HELLO, ConnEvent.REQUEST) not in CONN_TRANSITIONS
    assert ROOM_TRANSITIONS[(RoomState.OPEN, RoomEvent.START)] is RoomState.PLAYING
    assert (RoomState.FINISHED, RoomEvent.START) not in ROOM_TRANSITIONS
    assert not any(state is RoomState.CLOSED for state, _ in ROOM_TRANSITIONS)


@pytest.mark.parametrize("state", list(RoomState))
@pytest.mark.parametrize("event", list(RoomEvent))
def test_a_room_changes_state_by_the_table_only(state: RoomState, event: RoomEvent) -> None:
    """Every state and event through :meth:`Lifecycle.transition` (which scans the table's
    rows by identity): the table's new state, the gauge moved from one state to the other,
    the creator's quota given back on finishing or closing; anything else ``not_allowed``
    naming both, nothing changed."""
    metrics, quota, holdings = Metrics(), Quota("rooms", 5, "rooms"), Holdings()
    holdings.take(quota, "10.0.0.1")
    status = Status(state=state)
    lifecycle = Lifecycle(status, metrics, holdings)
    lifecycle.count()
    gauge = metrics.rooms.children
    assert {k: v.value for k, v in gauge.items()} == {state.value: 1.0}
    new = ROOM_TRANSITIONS.get((state, event))
    if new is None:
        with pytest.raises(RequestError) as caught:
            lifecycle.transition(event)
        assert caught.value.code is ErrorCode.NOT_ALLOWED
        assert caught.value.message == f"cannot {event.value} a room that is {state.value}"
        assert status.state is state and len(holdings.held) == 1
        return
    lifecycle.transition(event)
    assert status.state is new
    counted = {k: v.value for k, v in gauge.items() if v.value}
    assert counted == ({} if new is RoomState.CLOSED else {new.value: 1.0})
    gives_back = new in (RoomState.FINISHED, RoomState.CLOSED)
    assert len(holdings.held) == (0 if gives_back else 1)
    assert quota.total() == (0 if gives_back else 1)


def test_a_new_seat_has_every_field_at_its_declared_default() -> None:
    """``Seat`` writes its own ``__init__`` (the dataclass's is interpreted): it must set
    every field, each to the default the class declares."""
    seat = Seat(3)
    assert seat.index == 3
    for field in dataclasses.fields(Seat):
        if field.name != "index":
            assert getattr(seat, field.name) == field.default, field.name


@pytest.mark.parametrize("size", [0, 1, 2, 3, 31, 32, 33])
def test_a_token_is_written_as_secrets_token_urlsafe_writes_it(size: int) -> None:
    for raw in (bytes(range(256))[:size], b"\xfb\xff\xfe" * 11, os.urandom(size)):
        assert urlsafe(raw) == base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    token = new_token()
    assert (
        len(token) == len(secrets.token_urlsafe(32))
        and len(base64.urlsafe_b64decode(token + "=")) == 32
    )


def test_tokens_are_stored_as_digests_and_found_in_constant_time() -> None:
    from tests.server.core.twin import Member

    seats = [Seat(0), Seat(1)]
    token = seats[1].claim("ann", Member("ann", hash_rule=1))
    assert seats[1].hash_rule == 1 and seats[0].hash_rule == 2  # (its holder's; none: 2)
    assert seats[1].token_digest == digest(token) and token.encode() not in seats[1].token_digest
    assert find_by_token(seats, token) is seats[1]
    assert find_by_token(seats, token + "x") is None
    assert find_by_token(seats, "") is None


@pytest.mark.parametrize(
    ("exc", "code", "expected"),
    [
        (NotYourTurnError("x"), ErrorCode.NOT_YOUR_TURN, True),
        (IllegalChoice("x"), ErrorCode.ILLEGAL_CHOICE, True),
        (OptionsError("x"), ErrorCode.BAD_OPTIONS, True),
        (RequestError(ErrorCode.STALE_REV, "x"), ErrorCode.STALE_REV, True),
        (FrameError(ErrorCode.TOO_DEEP, "x"), ErrorCode.TOO_DEEP, True),
        (KeyError("secret"), ErrorCode.INTERNAL, False),
    ],
)
def test_errors_map_to_the_wire_in_one_place(
    exc: Exception, code: ErrorCode, expected: bool
) -> None:
    got = wire_error(exc)
    assert got[0] is code and got[2] is expected
    if not expected:
        assert "secret" not in got[1]


def test_close_codes_come_from_the_protocol_table() -> None:
    assert close_code(ErrorCode.FRAME_TOO_LARGE) == 1009
    assert close_code(ErrorCode.RATE_LIMITED) == 1008
    assert close_code(ErrorCode.UNSUPPORTED_VERSION) == 1002
    assert close_code(ErrorCode.STALE_REV) is None


def test_the_collector_thresholds_follow_the_setting() -> None:
    import gc

    from server.collector import GC_OLDER, tune_gc

    before = gc.get_threshold()
    try:
        assert parse_args([], env={}).gc_young == 50_000
        assert parse_args([], env={}).gc == "freeze"
        assert parse_args(["--gc", "collect"], env={}).gc == "collect"
        with pytest.raises(SystemExit):
            parse_args([], env={"OASIS_GC": "never"})
        tune_gc(parse_args(["--gc-young", "12345"], env={}).gc_young)
        assert gc.get_threshold() == (12345, *GC_OLDER)
        gc.set_threshold(*before)
        tune_gc(parse_args([], env={"OASIS_GC_YOUNG": "0"}).gc_young)
        assert gc.get_threshold() == before
    finally:
        gc.set_threshold(*before)


def test_the_patch_buffer_keeps_the_last_frames_of_every_audience_as_bytes_alone() -> None:
    import gc

    from server.seats import PatchBuffer, missed
    from server.views import Revision

    buffer = PatchBuffer(players=2, size=3)
    for rev in range(1, 6):
        frames = (b"seat0-%d" % rev, b"seat1-%d" % rev)
        rules = bytes([1, 1 if rev < 5 else 2])  # seat 1's connection asked for rule 2 at 5
        buffer.append(Revision(rev, frames, rules, b"spec-%d" % rev, b"", 0, "h"))
    assert len(buffer) == 3
    assert missed(buffer, 0, 2, 5) == [b"seat0-3", b"seat0-4", b"seat0-5"]
    assert missed(buffer, 1, 2, 4) == [b"seat1-3", b"seat1-4"]
    assert missed(buffer, 1, 4, 5, rule=2) == [b"seat1-5"]
    # Frames made under another view hash rule than the asker's: the full view.
    assert missed(buffer, 1, 2, 5) is None and missed(buffer, 1, 2, 5, rule=2) is None
    assert missed(buffer, None, 3, 5) == [b"spec-4", b"spec-5"]
    assert missed(buffer, None, 3, 5, rule=2) == [b"spec-4", b"spec-5"]
    assert missed(buffer, 0, 4, 4) == []
    assert missed(buffer, 0, 1, 5) is None  # revision 2 is no longer kept: the full view
    assert missed(buffer, 0, None, 5) is None
    # A revision that does not follow the newest kept starts the buffer again.
    buffer.append(Revision(9, (b"seat0-9", b"seat1-9"), b"\x01\x01", b"spec-9", b"", 0, "h"))
    assert len(buffer) == 1
    assert missed(buffer, 0, 5, 9) is None and missed(buffer, 0, 8, 9) == [b"seat0-9"]
    # What a revision leaves behind is bytes and ints: nothing the collector tracks or counts.
    kept = [*(frame for frames in buffer.frames for frame in frames), *buffer.rules]
    assert kept and not any(gc.is_tracked(x) for x in kept)
    assert {type(x) for x in kept} == {bytes}


def test_start_up_objects_are_frozen_out_of_the_collectors_reach() -> None:
    import gc

    from server.main import freeze_start_up

    holder = {"x": [object()]}  # a container the collector tracks, made before the freeze
    try:
        freeze_start_up()
        assert gc.get_freeze_count() > 0
        assert all(holder is not o for o in gc.get_objects())  # frozen: no generation has it
        made_after: dict[str, list[object]] = {"y": []}
        assert any(made_after is o for o in gc.get_objects())
    finally:
        gc.unfreeze()


async def test_a_full_inbox_refuses_clients_but_never_the_room_s_own_timers() -> None:
    inbox: Inbox[str] = Inbox("r1", 2, lambda: False)
    inbox.submit(None, "act 1")
    inbox.submit(None, "act 2")
    with pytest.raises(RequestError) as refused:
        inbox.submit(None, "act 3")
    assert refused.value.code is ErrorCode.UNAVAILABLE
    assert not inbox.put_nowait("stop")  # (the task's last command: not worth a flooded room)
    inbox.later(0.0, "clock timeout")  # a timer fires into the full inbox: queued all the same
    inbox.post("release due")
    async with asyncio.timeout(1):  # (a dropped one would leave the last get waiting)
        got = [(await inbox.get())[1] for _ in range(4)]
    assert got == ["act 1", "act 2", "release due", "clock timeout"]  # (the timer: next turn)


async def test_the_inbox_wakes_its_waiting_task_and_survives_a_cancelled_wait() -> None:
    inbox: Inbox[str] = Inbox("r1", 4, lambda: False)
    waiting = asyncio.ensure_future(inbox.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    inbox.submit(None, "act")
    assert (await asyncio.wait_for(waiting, 1))[1] == "act"
    cancelled = asyncio.ensure_future(inbox.get())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    inbox.post("after")  # (no waiter left behind: queued for the next get)
    assert (await asyncio.wait_for(inbox.get(), 1))[1] == "after"


def test_a_restored_rooms_spectator_delay_stays_as_its_meta_stored_it() -> None:
    """``info`` carries the settings' ``spectator_delay`` as it is: an int a restored meta held
    stays an int, compiled too (the field is ``int | float``: a compiled ``float`` makes 2.0)."""
    settings = RoomSettings("tiny", 2, {}, True, 2, True, False, "h")
    assert type(settings.spectator_delay) is int


async def test_the_room_task_takes_queued_commands_without_a_wait_and_awaits_an_arrival() -> None:
    # (server.effector.serve_room's way: next() while commands are queued, else arrival())
    inbox: Inbox[str] = Inbox("r1", 4, lambda: False)
    assert inbox.next() is None
    inbox.submit(None, "act 1")
    inbox.post("release due")
    assert [item[1] for item in (inbox.next(), inbox.next()) if item] == ["act 1", "release due"]
    assert inbox.next() is None
    arrived = inbox.arrival()
    assert not arrived.done()
    inbox.submit(None, "act 2")
    assert arrived.done()
    await asyncio.wait_for(arrived, 1)
    item = inbox.next()
    assert item is not None and item[1] == "act 2"
    cancelled = inbox.arrival()
    cancelled.cancel()  # (the task cancelled while it waited)
    inbox.post("after")  # (a cancelled waiter is skipped: queued all the same)
    item = inbox.next()
    assert item is not None and item[1] == "after"
    again = inbox.arrival()
    inbox.post("last")
    assert again.done()
