"""The view hash rules in the room core (SPEC section 4): each seat's frames follow its
connection's rule, the spectators' frames are the same under both, and a resume under another
rule than the buffered frames' gets the full view.

Every member of the twin checks every hash it is sent under its own rule
(:meth:`tests.server.core.twin.Member.receive`), so each test below fails on a frame hashed
under the wrong rule."""

from __future__ import annotations

from protocol.hashing import view_hash
from server.effects import Watch
from server.room_state import Gone
from tests.server.core.twin import Member, Twin, started, to_move, token_of


def _act(twin: Twin, members: list[Member]) -> None:
    mover = members[to_move(twin)]
    answer = twin.request(mover, {"type": "act", "rev": twin.core.rev, "choice": 0})
    assert answer["type"] == "ack", answer


def test_seats_of_either_rule_and_spectators_play_a_whole_match() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob", rules=(2, 1))
    eve, zed = Member("eve", 2), Member("zed", 1)
    twin.request(eve, {"type": "spectate"})
    twin.request(zed, {"type": "spectate"})
    start = len(twin.effects)
    while twin.core.play.match.decision is not None:
        _act(twin, members)
    ann, bob = members
    patches = [f for f in ann.frames if f["type"] == "patch"]
    assert len(patches) > 5 and bob.rev == ann.rev == eve.rev == zed.rev == twin.core.rev
    # ann's hashes are rule 2's, which differ from rule 1's for a seat's view.
    assert patches[-1]["hash"] == view_hash(ann.view, 2) != view_hash(ann.view, 1)
    # One spectator frame per revision, for both spectators: the same bytes under both rules.
    watched = [e for e in twin.effects[start:] if isinstance(e, Watch)]
    assert len({e.data for e in watched}) == len(watched) >= len(patches)
    assert eve.view == zed.view and eve.view["own"] is None


def _one_seat_missed_a_revision(twin: Twin) -> tuple[list[Member], Member]:
    """Seats of rules 2 and 1; the one not to move drops, and the other moves."""
    members = started(twin, "ann", "bob", rules=(2, 1))
    away = members[1 - to_move(twin)]
    twin.handle(Gone(), away)
    _act(twin, members)
    return members, away


def test_a_seats_buffered_frames_follow_its_last_connections_rule() -> None:
    twin = Twin()
    _, away = _one_seat_missed_a_revision(twin)
    back = Member("back", away.hash_rule)
    back.view, back.rev = away.view, away.rev
    joined = twin.request(back, {"type": "join", "token": token_of(away), "rev": 0})
    assert joined["view"] is None and [p["rev"] for p in back.of_type("patch")] == [1]


def test_a_resume_under_the_other_rule_gets_the_full_view() -> None:
    twin = Twin()
    members, away = _one_seat_missed_a_revision(twin)
    other_rule = 3 - away.hash_rule
    back = Member("back", other_rule)
    joined = twin.request(back, {"type": "join", "token": token_of(away), "rev": 0})
    assert joined["view"] is not None and joined["rev"] == twin.core.rev == 1
    assert joined["hash"] == view_hash(joined["view"], other_rule)
    assert not back.of_type("patch")
    # From now on the seat's frames follow the new connection's rule.
    _act(twin, [back if m is away else m for m in members])
    assert back.rev == 2 and back.of_type("patch")[-1]["hash"] == view_hash(back.view, other_rule)


def test_sync_and_a_spectators_resume_follow_the_members_rule() -> None:
    twin = Twin()
    members = started(twin, "ann", "bob", rules=(2, 1))
    for member in members:
        state = twin.request(member, {"type": "sync"})
        assert state["hash"] == view_hash(state["view"], member.hash_rule)
    assert view_hash(members[0].view, 1) != view_hash(members[0].view, 2)
    eve = Member("eve", 2)
    twin.request(eve, {"type": "spectate"})
    twin.handle(Gone(), eve)
    _act(twin, members)
    again = Member("eve again", 1)
    again.view, again.rev = eve.view, eve.rev
    joined = twin.request(again, {"type": "spectate", "rev": 0})
    assert joined["view"] is None and again.rev == 1  # the same patches under either rule
