"""The CLI session's side of several nodes: ``?room=`` routing hints and where it reconnects.

Following a real ``redirect`` between real nodes is tested in ``tests/server/cluster``."""

from __future__ import annotations

from clients.connection import Session


def test_a_session_about_one_room_names_it_in_the_url() -> None:
    session = Session("ws://lb.example:8765/")
    assert session._with_room(session.url) == "ws://lb.example:8765/"
    session.mirror("5f0c1a9e3b")
    assert session._with_room(session.url) == "ws://lb.example:8765/?room=5f0c1a9e3b"
    assert (
        session._with_room("ws://lb.example:8765/node/oasis-2/?room=old&x=1")
        == "ws://lb.example:8765/node/oasis-2/?x=1&room=5f0c1a9e3b"
    )
    session.mirror("another")
    assert session._with_room(session.url) == "ws://lb.example:8765/"


def test_a_session_remembers_the_address_it_was_opened_with() -> None:
    session = Session("ws://lb.example:8765/")
    assert session.home == session.url
