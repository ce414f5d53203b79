"""The room core in process: commands at chosen times, decoded frames and effects asserted.

In-process twins of the socket tests of the lobby, resume, spectators, takeover, clocks, bad
input and undo (tests/server/test_*.py prove the shell around the same core): no event loop,
no sockets, no sleeps; time moves only by :meth:`Twin.advance`.
"""

from __future__ import annotations

import pytest

from games.base import Match
from protocol.codec import decode
from protocol.errors import ErrorCode, RequestError
from server.effects import (
    Append,
    AppendChat,
    Done,
    Failed,
    Finish,
    Keep,
    Send,
    StoreSeats,
    Watch,
)
from server.room_state import (
    Evict,
    Gone,
    RelayedChat,
    RoomState,
    StorageLost,
    StoreReady,
    lost_error,
)
from server.spectators import ReleaseDue
from server.store import Action, RoomMeta, StoreError
from tests.server.core.twin import EPOCH, Member, Twin, seated, started, to_move, token_of
from tests.server.test_undo import _path


def _act(twin: Twin, member: Member, choice: object = 0) -> dict[str, object]:
    return twin.request(member, {"type": "act", "rev": twin.core.rev, "choice": choice})


def _mover(twin: Twin, members: list[Member]) -> Member:
    return members[to_move(twin)]


# Lobby -------------------------------------------------------------------------------------------


def test_a_seat_is_taken_with_a_token_and_the_full_view_once_the_store_has_it() -> None:
    twin = Twin()
    twin.open()
    ann = Member("ann")
    joined = twin.request(ann, {"type": "join", "seat": 1, "name": "ann"})
    assert joined["type"] == "joined" and joined["seat"] == 1 and joined["rev"] == 0
    assert isinstance(joined["token"], str) and joined["view"]["own"] is not None
    stored = [e for e in twin.effects if isinstance(e, StoreSeats)]
    assert stored and stored[0].required and stored[0].meta.tokens[1]  # the digest, stored
    assert ann.of_type("room")[-1]["info"]["seats"][1]["name"] == "ann"


def test_a_join_the_store_refuses_frees_the_seat_again() -> None:
    twin = Twin()
    twin.open()
    twin.fail[StoreSeats] = Failed(RequestError(ErrorCode.UNAVAILABLE, "storage unavailable"))
    answer = twin.request(Member("ann"), {"type": "join", "seat": 0, "name": "ann"})
    assert answer["type"] == "error" and answer["code"] == "unavailable"
    assert not twin.core.seating.seats[0].taken


def test_a_full_room_refuses_a_join() -> None:
    twin = Twin()
    twin.open()
    seated(twin, "ann", "bob")
    answer = twin.request(Member("cat"), {"type": "join", "name": "cat"})
    assert answer["type"] == "error" and answer["code"] == "room_full"


def test_start_needs_every_seat_unless_the_host_fills_them_with_bots() -> None:
    twin = Twin(3)
    twin.open()
    ann, bob = seated(twin, "ann", "bob")
    assert twin.request(ann, {"type": "start"})["code"] == "not_allowed"
    assert twin.request(bob, {"type": "start", "bots": True})["code"] == "not_allowed"
    assert twin.request(ann, {"type": "start", "bots": True})["type"] == "ack"
    assert twin.core.state is RoomState.PLAYING and twin.core.seating.seats[2].bot


def test_leaving_an_open_room_frees_the_seat() -> None:
    twin = Twin()
    twin.open()
    ann, bob = seated(twin, "ann", "bob")
    assert twin.request(bob, {"type": "leave"})["type"] == "ack"
    assert not twin.core.seating.seats[1].taken and "r1" not in bob.rooms
    assert ann.of_type("room")[-1]["info"]["seats"][1]["taken"] is False


def test_an_empty_room_is_retired_and_closed_after_its_idle_time() -> None:
    twin = Twin(idle_ttl=30.0)
    twin.open()
    twin.advance(29.9)
    assert twin.core.status.state is RoomState.OPEN
    twin.advance(0.2)
    assert twin.core.state is RoomState.CLOSED
    assert twin.kinds()[-2:] == ["Retire", "Closed"]


def test_a_store_failure_at_start_keeps_the_room_open_and_seats_no_bots() -> None:
    twin = Twin(3)
    twin.open()
    (ann,) = seated(twin, "ann")
    twin.fail[StoreSeats] = Failed(RequestError(ErrorCode.UNAVAILABLE, "storage unavailable"))
    assert twin.request(ann, {"type": "start", "bots": True})["code"] == "unavailable"
    assert twin.core.state is RoomState.OPEN
    assert [s.taken for s in twin.core.seating.seats] == [True, False, False]
    assert twin.request(ann, {"type": "start", "bots": True})["type"] == "ack"


def test_one_human_plays_a_whole_match_against_random_bots() -> None:
    twin = Twin(4, seed=11, host="human")
    twin.open()
    (human,) = seated(twin, "human")
    assert twin.request(human, {"type": "start", "bots": True})["type"] == "ack"
    while twin.core.state is RoomState.PLAYING:
        assert to_move(twin) == 0  # the bots moved at once (no bot delay)
        assert _act(twin, human)["type"] == "ack"
    assert twin.core.state is RoomState.FINISHED
    assert [a.rev for a in twin.store.logs["r1"]] == list(range(1, twin.core.rev + 1))
    assert human.rev == twin.core.rev and human.view["shared"]["result"] is not None
    assert [s.bot for s in twin.core.seating.seats] == [False, True, True, True]
    keep = [e for e in twin.effects if isinstance(e, Keep)]
    assert keep[-1].rev == twin.core.rev  # the end is kept (snapshot and archive)


# Chat --------------------------------------------------------------------------------------------


def test_chat_reaches_the_room_is_kept_and_is_rate_limited_at_chosen_times() -> None:
    twin = Twin()
    ann, bob = started(twin, "ann", "bob")
    twin.advance(2.0)
    assert twin.request(ann, {"type": "chat", "text": "hello"})["type"] == "ack"
    line = bob.of_type("chat")[-1]
    assert line["text"] == "hello" and line["from"] == {"seat": 0, "name": "ann"}
    assert line["ts"] == EPOCH + 2.0  # the wall-clock time of the command, from the core
    stored = [e.line["text"] for e in twin.effects if isinstance(e, AppendChat)]
    assert stored == ["hello"]
    eve = Member("eve")
    assert [c["text"] for c in twin.request(eve, {"type": "spectate"})["chat"]] == ["hello"]
    codes = [twin.request(ann, {"type": "chat", "text": f"{i}"}).get("code") for i in range(5)]
    assert codes == [None, None, None, None, "slow_down"]  # a burst of 5, then 1 a second
    twin.advance(0.9)
    assert twin.request(ann, {"type": "chat", "text": "x"})["code"] == "slow_down"
    twin.advance(0.1)
    assert twin.request(ann, {"type": "chat", "text": "y"})["type"] == "ack"


def test_spectators_chat_only_where_the_room_lets_them() -> None:
    twin = Twin(spectator_chat=False)
    ann, _ = started(twin, "ann", "bob")
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    assert twin.request(eve, {"type": "chat", "text": "hi"})["code"] == "not_allowed"
    assert twin.request(Member("zed"), {"type": "chat", "text": "hi"})["code"] == "not_allowed"
    assert twin.request(ann, {"type": "chat", "text": "hello"})["type"] == "ack"
    assert [line["text"] for line in eve.of_type("chat")] == ["hello"]
    relayed = Twin()
    relayed.open()
    relayed.handle(RelayedChat("abcdef123", "from afar"))
    assert [line["from"] for line in relayed.core.chat.log.lines] == [
        {"seat": None, "name": "spectator abcdef"}
    ]


def test_a_chat_line_the_store_refuses_is_not_said() -> None:
    twin = Twin()
    ann, bob = started(twin, "ann", "bob")
    twin.fail[AppendChat] = Failed(StoreError("down"))
    assert twin.request(ann, {"type": "chat", "text": "hello"})["code"] == "unavailable"
    assert not bob.of_type("chat") and not twin.core.chat.log.lines


# Playing: the order of the effects ---------------------------------------------------------------


def _order(twin: Twin, since: int) -> list[str]:
    """The effects since ``since``: names, with each Send named by the frame it carries."""
    out = []
    for effect in twin.effects[since:]:
        if isinstance(effect, Send):
            then = "" if effect.then is None else "+" + decode(effect.then)["type"]
            out.append(decode(effect.data)["type"] + then)
        else:
            out.append(type(effect).__name__)
    return out


def test_a_choice_is_stored_then_fanned_out_and_acknowledged_then_snapshotted() -> None:
    """The sender's ack goes with its patch, in the same write (after it)."""
    twin = Twin()
    members = started(twin, "ann", "bob")
    before = len(twin.effects)
    sends = ["patch", "patch"]
    sends[to_move(twin)] = "patch+ack"
    ack = _act(twin, _mover(twin, members))
    assert ack["type"] == "ack" and ack["rev"] == 1
    order = _order(twin, before)
    assert order == ["Append", *sends, "Watch", "Publish", "Revised", "Keep"]
    append = twin.effects[before]
    assert isinstance(append, Append) and append.action.rev == 1
    for member in members:
        assert member.rev == 1 and member.of_type("patch")[-1]["rev"] == 1


def test_a_choice_takes_two_rounds_through_the_core_and_only_the_end_waits_for_its_keep() -> None:
    """The act and the append's answer; the snapshot of a revision that does not end the match
    is not waited for (the archive at the end is: whether it was written)."""
    twin = Twin()
    members = started(twin, "ann", "bob")
    start = len(twin.handed)
    _act(twin, _mover(twin, members))
    assert [type(c).__name__ for c in twin.handed[start:]] == ["Act", "Done"]
    keep = twin.effects[-1]
    assert isinstance(keep, Keep) and not keep.waits
    while twin.core.state is not RoomState.FINISHED:
        _act(twin, _mover(twin, members))
    keep = [e for e in twin.effects if isinstance(e, Keep)][-1]
    assert keep.waits and keep.rev == twin.core.rev
    assert [type(c).__name__ for c in twin.handed[-3:]] == ["Act", "Done", "Done"]


def test_the_last_choice_is_acknowledged_after_the_room_frame_of_the_end() -> None:
    """Every choice's ack goes with its patch but the last one's: the ``room`` frame that says
    the match finished comes between them, as frame by frame."""
    twin = Twin()
    members = started(twin, "ann", "bob")
    while True:
        mover = _mover(twin, members)
        mover.take()
        assert _act(twin, mover)["type"] == "ack"
        if twin.core.state is RoomState.FINISHED:
            break
        assert [f["type"] for f in mover.frames] == ["patch", "ack"]
    assert [f["type"] for f in mover.frames] == ["patch", "room", "ack"]
    last = [e for e in twin.effects if isinstance(e, Send) and e.to == (mover.conn,)][-1]
    assert last.then is None and decode(last.data)["type"] == "ack"


def test_a_clock_room_stores_its_clocks_with_the_choice_in_one_round_trip() -> None:
    twin = Twin(clock={"initial": 30, "increment": 2})
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    twin.advance(5.0)
    before = len(twin.effects)
    _act(twin, members[seat])
    order = _order(twin, before)
    sends = ["patch", "patch"]
    sends[seat] = "patch+ack"
    expected = ["Append", *sends, "Watch", "Publish", "Revised", "Arm", "Keep"]
    assert order == expected  # (Arm: the next seat's clock)
    append = twin.effects[before]
    assert isinstance(append, Append) and append.meta is not None
    stored = append.meta["clock_state"]
    assert stored == {**members[0].view["clock"], "running": None}  # the clocks after it
    assert stored["remaining_ms"][seat] == 27000
    assert not any(isinstance(e, StoreSeats) for e in twin.effects[before:])


def test_a_refused_append_changes_nothing_and_answers_unavailable() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    twin.fail[Append] = Failed(RequestError(ErrorCode.UNAVAILABLE, "storage unavailable"))
    answer = _act(twin, _mover(twin, members))
    assert answer["type"] == "error" and answer["code"] == "unavailable"
    assert twin.core.rev == 0 and not any(m.of_type("patch") for m in members)


def test_an_append_whose_outcome_was_unknown_is_adopted_before_the_next_choice() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    legal = twin.core.play.match.resolve(seat, 0)
    twin.store.logs["r1"] = [Action(1, seat, legal)]  # it landed though the call failed
    error = RequestError(ErrorCode.UNAVAILABLE, "storage unavailable; try again")
    twin.fail[Append] = Failed(error, unsure=True)
    assert _act(twin, members[seat])["code"] == "unavailable"
    assert twin.core.rev == 0 and twin.core.status.unsure
    answer = _act(twin, members[seat])  # at rev 0: the room is at rev 1 once it adopted it
    assert answer["code"] == "stale_rev"
    assert twin.core.rev == 1 and all(m.rev == 1 for m in members)
    assert not twin.core.status.unsure


# Bad input ---------------------------------------------------------------------------------------


def test_choices_are_checked_at_the_boundary() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    mover, other = _mover(twin, members), members[1 - to_move(twin)]
    watcher = Member("eve")
    twin.request(watcher, {"type": "spectate"})
    before = len(twin.effects)
    cases: list[tuple[Member, dict[str, object], str]] = [
        (other, {"rev": 0, "choice": 0}, "not_your_turn"),
        (mover, {"rev": 0, "choice": 0, "seat": 1 - to_move(twin)}, "not_allowed"),
        (watcher, {"rev": 0, "choice": 0}, "not_allowed"),
        (Member("zed"), {"rev": 0, "choice": 0}, "not_allowed"),
        (mover, {"rev": 7, "choice": 0}, "stale_rev"),
        (mover, {"rev": 0, "choice": 99}, "illegal_choice"),
        (mover, {"rev": 0, "choice": {"kind": "fly"}}, "illegal_choice"),
        (mover, {"rev": 0, "choice": {"kind": "play", "card": 99}}, "illegal_choice"),
        (mover, {"rev": 0, "choice": {"card": 1}}, "malformed_choice"),
        (mover, {"rev": 0, "choice": "first"}, "malformed_choice"),
        (mover, {"rev": 0, "choice": True}, "malformed_choice"),
        (mover, {"rev": 0, "choice": [0]}, "malformed_choice"),
        (other, {"rev": 0, "choice": "first"}, "not_your_turn"),
    ]
    for member, fields, code in cases:
        error = twin.request(member, {"type": "act", **fields})
        assert (error["type"], error["code"], error["room"]) == ("error", code, "r1"), fields
    assert twin.core.rev == 0 and twin.core.play.match.to_move == to_move(twin)
    assert all(isinstance(e, Send) for e in twin.effects[before:])  # the errors, nothing stored
    assert _act(twin, mover)["rev"] == 1
    assert twin.request(other, {"type": "act", "rev": 0, "choice": 0})["code"] == "stale_rev"


def test_a_wrong_token_is_refused_and_changes_nothing() -> None:
    twin = Twin()
    started(twin, "ann", "bob")
    answer = twin.request(Member("mal"), {"type": "join", "token": "x" * 43})
    assert answer["type"] == "error" and answer["code"] == "bad_token"
    assert all(seat.conn is not None for seat in twin.core.seating.seats)


# Resume ------------------------------------------------------------------------------------------


def test_a_dropped_seat_resumes_with_only_the_missed_patches() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    mover = to_move(twin)
    away = members[1 - mover]
    twin.handle(Gone(), away)
    _act(twin, members[mover])
    back = Member("back")
    back.view, back.rev = away.view, away.rev  # the client kept its view at rev 0
    joined = twin.request(back, {"type": "join", "token": token_of(away), "rev": 0})
    assert joined["type"] == "joined" and joined["view"] is None and joined["rev"] == 0
    assert [p["rev"] for p in back.of_type("patch")] == [1]
    assert twin.core.seating.seats[1 - mover].conn is back.conn
    assert back.view["shared"] == members[mover].view["shared"]


def test_a_resume_after_the_buffer_moved_on_gets_the_full_view() -> None:
    twin = Twin(patch_buffer=1)
    members = started(twin, "ann", "bob")
    token = token_of(members[0])
    for _ in range(3):
        _act(twin, _mover(twin, members))
    back = Member("ann again")
    joined = twin.request(back, {"type": "join", "token": token, "rev": 0})
    assert joined["view"] is not None and joined["rev"] == 3 and not back.of_type("patch")


def test_resuming_elsewhere_takes_the_seat_from_the_old_connection() -> None:
    twin = Twin()
    ann, _ = started(twin, "ann", "bob")
    new = Member("ann's phone")
    twin.request(new, {"type": "join", "token": token_of(ann)})
    assert twin.core.seating.seats[0].conn is new.conn and "r1" not in ann.rooms
    told = ann.of_type("error")[-1]
    assert told["code"] == "not_allowed" and "resumed elsewhere" in told["message"]


# Spectators --------------------------------------------------------------------------------------


def test_a_spectator_joining_mid_match_gets_the_public_view_then_patches() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    _act(twin, _mover(twin, members))
    eve = Member("eve")
    joined = twin.request(eve, {"type": "spectate"})
    assert joined["seat"] is None and joined["rev"] == 1 and joined["view"]["own"] is None
    assert members[0].of_type("room")[-1]["info"]["spectators"] == 1
    _act(twin, _mover(twin, members))
    assert eve.rev == 2 and eve.view["shared"] == members[0].view["shared"]


def test_a_spectator_resumes_from_its_last_rev_with_the_missed_patches() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    _act(twin, _mover(twin, members))
    twin.handle(Gone(), eve)
    _act(twin, _mover(twin, members))
    again = Member("eve again")
    again.view, again.rev = eve.view, eve.rev
    joined = twin.request(again, {"type": "spectate", "rev": 1})
    assert joined["view"] is None and joined["rev"] == 1
    assert again.rev == 2
    state = twin.request(again, {"type": "sync"})
    assert state["view"] == again.view and state["rev"] == 2


def test_a_seat_cannot_spectate_its_own_room() -> None:
    twin = Twin()
    ann, _ = started(twin, "ann", "bob")
    assert twin.request(ann, {"type": "spectate"})["code"] == "not_allowed"


def test_many_arriving_spectators_are_announced_in_batches() -> None:
    twin = Twin()
    ann, _ = started(twin, "ann", "bob")
    for i in range(70):
        twin.request(Member(f"s{i}"), {"type": "spectate"})
    counts = [f["info"]["spectators"] for f in ann.of_type("room")]
    assert counts[-1] == 64  # past 64, one announcement armed, not one per arrival
    assert [name for _, name in twin.timers()].count("Announce") == 1
    twin.advance(0.5)
    assert ann.of_type("room")[-1]["info"]["spectators"] == 70


def _watches(twin: Twin) -> list[bytes]:
    return [e.data for e in twin.effects if isinstance(e, Watch)]


def test_delayed_spectators_get_each_revision_once_it_is_the_delay_old() -> None:
    twin = Twin(spectator_delay=2.0)
    members = started(twin, "ann", "bob")
    eve = Member("eve")
    assert twin.request(eve, {"type": "spectate"})["rev"] == 0
    assert eve.of_type("room")[-1]["info"]["spectators"] == 1  # (the room frame: not delayed)
    _act(twin, _mover(twin, members))  # rev 1 at 0.0
    twin.advance(0.5)
    _act(twin, _mover(twin, members))  # rev 2 at 0.5
    assert eve.rev == 0 and not eve.of_type("patch")
    assert twin.timers().count((2.0, "ReleaseDue")) == 1
    assert [name for _, name in twin.timers()].count("ReleaseDue") == 1
    late = Member("late")
    joined = twin.request(late, {"type": "spectate"})
    assert joined["rev"] == 0 and joined["view"]["shared"]["turn"]["seat"] == 0
    assert twin.request(late, {"type": "sync"})["rev"] == 0
    twin.advance(1.5)  # 2.0: rev 1 is the delay old, rev 2 is not
    assert eve.rev == 1 and late.rev == 1
    assert twin.request(Member("third"), {"type": "spectate"})["rev"] == 1
    assert [name for _, name in twin.timers()].count("ReleaseDue") == 1
    twin.advance(0.49)
    assert eve.rev == 1
    twin.advance(0.01)
    assert eve.rev == 2 and eve.view["shared"] == members[0].view["shared"]
    assert eve.view == twin.request(eve, {"type": "sync"})["view"]
    assert "ReleaseDue" not in [name for _, name in twin.timers()]
    patches = [data for data in _watches(twin) if decode(data)["type"] == "patch"]
    assert len(patches) == 2  # one frame per revision, the same bytes for every spectator


def _releases(twin: Twin) -> list[float]:
    return [due for due, name in twin.timers() if name == "ReleaseDue"]


def test_a_stale_release_timer_releases_what_is_due_and_arms_no_second_one() -> None:
    twin = Twin(spectator_delay=1.0)
    members = started(twin, "ann", "bob")
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    _act(twin, _mover(twin, members))
    twin.advance(0.5)
    _act(twin, _mover(twin, members))
    twin.advance(0.6)  # 1.1: the armed timer fired, released rev 1, armed one for 1.5
    assert eve.rev == 1 and _releases(twin) == [1.5]
    twin.now = 1.6
    twin.handle(ReleaseDue(0.3))  # (one fired late, or twice: not the one armed last)
    assert eve.rev == 2 and _releases(twin) == [1.5]
    twin.advance(0.0)
    assert eve.rev == 2 and _releases(twin) == []


def test_seat_chat_reaches_delayed_spectators_after_the_delay_theirs_at_once() -> None:
    twin = Twin(spectator_delay=2.0)
    ann, bob = started(twin, "ann", "bob")
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    assert twin.request(ann, {"type": "chat", "text": "psst"})["type"] == "ack"
    assert [f["text"] for f in bob.of_type("chat")] == ["psst"]
    assert not eve.of_type("chat")
    late = Member("late")
    assert twin.request(late, {"type": "spectate"})["chat"] == []
    assert twin.request(eve, {"type": "chat", "text": "hi"})["type"] == "ack"
    assert [f["text"] for f in eve.of_type("chat")] == ["hi"]
    twin.advance(2.0)
    assert [f["text"] for f in eve.of_type("chat")] == ["hi", "psst"]
    chat = twin.request(Member("later"), {"type": "spectate"})["chat"]
    assert [line["text"] for line in chat] == ["psst", "hi"]


# Stand-ins ---------------------------------------------------------------------------------------


def test_a_gone_player_is_replaced_by_a_bot_after_the_grace_and_gets_the_seat_back() -> None:
    twin = Twin(grace=60.0)
    ann, bob = started(twin, "ann", "bob")
    token = token_of(bob)
    twin.handle(Gone(), bob)
    twin.advance(59.9)
    assert not twin.core.seating.seats[1].standin
    twin.advance(0.2)
    assert twin.core.seating.seats[1].bot_kind == "heuristic"
    info = ann.of_type("room")[-1]["info"]["seats"][1]
    assert info["standin"] and info["bot_kind"] == "heuristic"
    if to_move(twin) == 0:
        _act(twin, ann)
    assert to_move(twin) == 0  # the stand-in moved for seat 1 at once (bot_delay 0)
    back = Member("bob again")
    twin.request(back, {"type": "join", "token": token})
    assert not twin.core.seating.seats[1].standin
    assert ann.of_type("room")[-1]["info"]["seats"][1]["standin"] is False


def test_a_player_back_within_the_grace_period_is_never_replaced() -> None:
    twin = Twin(grace=60.0)
    _, bob = started(twin, "ann", "bob")
    twin.handle(Gone(), bob)
    twin.advance(30.0)
    twin.request(Member("bob again"), {"type": "join", "token": token_of(bob)})
    twin.advance(60.0)
    assert not twin.core.seating.seats[1].standin  # the timer of the earlier absence fired, void


# Clocks ------------------------------------------------------------------------------------------


def test_the_running_clock_is_charged_and_gains_the_increment() -> None:
    twin = Twin(clock={"initial": 30, "increment": 2})
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    twin.advance(5.0)
    state = twin.request(members[seat], {"type": "sync"})
    assert state["elapsed_ms"] == 5000
    _act(twin, members[seat])
    clock = members[0].view["clock"]
    assert clock["remaining_ms"][seat] == 27000 and clock["running"] == 1 - seat


def test_at_zero_the_bot_moves_for_the_seat_and_the_match_goes_on() -> None:
    twin = Twin(clock={"initial": 10, "increment": 1})
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    twin.advance(9.99)
    assert twin.core.rev == 0
    twin.advance(0.02)
    assert twin.core.rev == 1 and to_move(twin) != seat
    clock = members[0].view["clock"]
    assert clock["timeouts"][seat] == 1 and clock["remaining_ms"][seat] == 1000


def test_forfeit_on_time_hands_the_seat_to_the_random_bot() -> None:
    twin = Twin(clock={"initial": 10, "on_timeout": "forfeit"})
    members = started(twin, "ann", "bob")
    seat = to_move(twin)
    twin.advance(10.01)
    assert twin.core.seating.seats[seat].forfeited
    assert members[0].view["clock"]["forfeited"] == [seat]
    assert members[0].of_type("room")[-1]["info"]["seats"][seat]["bot_kind"] == "random"
    answer = twin.request(members[seat], {"type": "act", "rev": twin.core.rev, "choice": 0})
    assert answer["code"] == "not_allowed" and "forfeited on time" in answer["message"]


def test_a_paused_room_stops_the_clock_and_refuses_choices() -> None:
    twin = Twin(clock={"initial": 10})
    members = started(twin, "ann", "bob")
    twin.advance(4.0)
    twin.handle(StoreReady(False))
    assert members[0].of_type("pause")[-1]["paused"] is True
    twin.advance(60.0)  # no timeout while paused
    assert twin.core.rev == 0
    assert _act(twin, _mover(twin, members))["code"] == "unavailable"
    twin.handle(StoreReady(True))
    assert members[0].of_type("pause")[-1]["paused"] is False
    twin.advance(5.99)
    assert twin.core.rev == 0
    twin.advance(0.02)
    assert twin.core.rev == 1  # 4 s before the pause + 6 s after


def test_an_append_that_finds_the_room_gone_pauses_it_for_good_before_the_refusal() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    mover = _mover(twin, members)
    twin.fail[Append] = Failed(lost_error("r1", 0))
    assert _act(twin, mover)["code"] == "storage_lost"
    kinds = [f["type"] for f in mover.frames[-2:]]
    assert kinds == ["pause", "error"] and twin.core.status.lost
    assert _act(twin, mover)["code"] == "storage_lost"  # (no store effect asked again)
    assert not isinstance(twin.effects[-1], Append)


def test_an_archive_not_written_is_tried_again_when_the_store_is_back() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    twin.archives = False
    while twin.core.state is RoomState.PLAYING:
        _act(twin, _mover(twin, members))
    pending = twin.core.status.finish_pending
    assert pending is not None and pending == twin.core.play.result()
    twin.handle(StoreReady(True))  # still failing: still pending
    assert twin.core.status.finish_pending == pending
    twin.archives = True
    twin.handle(StoreReady(True))
    finishes = [e for e in twin.effects if isinstance(e, Finish)]
    assert len(finishes) == 2 and finishes[-1].result == pending
    assert twin.core.status.finish_pending is None


def test_a_seat_update_that_finds_the_room_gone_marks_it_lost() -> None:
    twin = Twin()
    twin.open()
    (ann,) = seated(twin, "ann")
    twin.fail[StoreSeats] = Done(True)  # not required (a leave): the store no longer has it
    assert twin.request(ann, {"type": "leave"})["type"] == "ack"
    assert twin.core.status.lost


def test_a_room_whose_storage_is_lost_pauses_for_good() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    twin.handle(StorageLost())
    assert members[0].of_type("pause")[-1]["reason"] == "storage lost"
    assert _act(twin, _mover(twin, members))["code"] == "storage_lost"
    twin.handle(StoreReady(True))
    assert _act(twin, _mover(twin, members))["code"] == "storage_lost"


# Undo --------------------------------------------------------------------------------------------


def test_an_undo_is_a_stored_revision_that_gives_back_the_views() -> None:
    indices, _, seat = _path("ishtar", 2, 21, lambda m, s, ev: m.can_undo(s))
    twin = Twin(game="ishtar", seed=21)
    members = started(twin, "ann", "bob")
    for index in indices[:-1]:
        assert _act(twin, _mover(twin, members), index)["type"] == "ack"
    before = [m.view for m in members]
    _act(twin, _mover(twin, members), indices[-1])
    rev = twin.core.rev
    ack = twin.request(members[seat], {"type": "undo", "rev": rev})
    assert ack["type"] == "ack" and ack["rev"] == rev + 1
    undo = [e for e in twin.effects if isinstance(e, Append)][-1]
    assert undo.action.undo and undo.action.rev == rev + 1
    for member, view in zip(members, before, strict=True):
        (event,) = member.of_type("patch")[-1]["events"]
        assert event["kind"] == "undone"
        assert member.view["shared"]["game"] == view["shared"]["game"]


def test_undo_is_refused_by_a_spectator_and_where_the_game_has_none() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob")
    eve = Member("eve")
    twin.request(eve, {"type": "spectate"})
    assert twin.request(eve, {"type": "undo", "rev": 0})["code"] == "not_allowed"
    answer = twin.request(_mover(twin, members), {"type": "undo", "rev": 0})
    assert answer["code"] == "not_allowed" and answer["message"]  # the match's reason
    assert twin.core.rev == 0 and not any(isinstance(e, Append) for e in twin.effects)


# The lifecycle -----------------------------------------------------------------------------------


def test_a_replay_room_starts_through_the_table_and_plays_its_script() -> None:
    twin = Twin()
    local = Match.new(twin.core.play.match.game, 2, {}, 3)
    script = []
    for rev in range(1, 4):
        decision = local.decision
        assert decision is not None
        legal = local.resolve(decision.seat, 0)
        local.act(decision.seat, 0)
        script.append(Action(rev, decision.seat, legal))
    twin.core.replay(script)
    assert twin.core.state is RoomState.PLAYING
    eve = Member("eve")
    twin.open()
    twin.request(eve, {"type": "spectate"})
    twin.advance(1.0)
    assert twin.core.rev == 3 and eve.rev == 3


def test_a_restored_room_reaches_its_stored_state_through_the_table() -> None:
    twin = Twin()
    stored = {"state": "playing", "seats": [{"name": "ann"}, {"name": "bob"}], "tokens": ["", ""]}
    meta = RoomMeta.from_json(stored)
    assert twin.core.adopt(0, meta, []) == []
    assert twin.core.state is RoomState.PLAYING
    finished = Twin()
    local = finished.core.play.match
    while (decision := local.decision) is not None:
        local.act(decision.seat, 0)
    assert [type(e).__name__ for e in finished.core.adopt(9, meta, [])] == ["Post"]  # Refinish
    assert finished.core.state is RoomState.FINISHED


def test_a_restored_room_in_no_stored_state_is_refused() -> None:
    twin = Twin()
    with pytest.raises(ValueError, match="never closed"):
        twin.core.adopt(0, RoomMeta.from_json({"state": "closed"}), [])


def test_an_evicted_room_closes_through_the_table_and_not_twice() -> None:
    twin = Twin()
    twin.open()
    assert not twin.core.closed()  # (what the inbox asks before it takes a command)
    twin.handle(Evict())
    assert twin.core.state is RoomState.CLOSED and twin.core.closed()
    twin.core.close()  # idempotent for the actor's last word
    assert twin.core.state is RoomState.CLOSED and twin.core.closed()
