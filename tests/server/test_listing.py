"""``list_rooms`` in pages (SPEC section 7): cursors, filters, bounded work; and the index and
budgets underneath, as units."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.errors import QuotaExceeded, RequestError
from server import listing
from server.app import App
from server.listing import Filters, RoomIndex, cursor, cut, parse_cursor
from server.quotas import Budget, Holdings, Quota
from tests.server.client import Client
from tests.server.conftest import MakeClient


async def _pages(client: Client, **fields: Any) -> list[list[str]]:
    pages: list[list[str]] = []
    after = None
    while True:
        frame = {"type": "list_rooms", **fields, **({"after": after} if after else {})}
        answer = await client.request(frame)
        assert answer["type"] == "rooms", answer
        pages.append([r["room"] for r in answer["rooms"]])
        after = answer.get("next")
        if after is None:
            return pages


async def test_pages_hold_every_public_room_once_oldest_first(
    app: App, make_client: MakeClient
) -> None:
    client = await make_client()
    made = []
    for i in range(7):
        ack = await client.request(
            {"type": "create", "game": "tiny", "players": 2, "public": i != 3}
        )
        made.append(ack["room"])
    public = [room for i, room in enumerate(made) if i != 3]
    pages = await _pages(client, limit=3)
    assert [len(p) for p in pages] == [3, 3]
    assert [room for page in pages for room in page] == public
    assert await _pages(client) == [public]  # the default page (50) holds them all


async def test_filters_state_free_seats_and_game(app: App, make_client: MakeClient) -> None:
    host = await make_client("host")
    rooms = [
        (await host.request({"type": "create", "game": "tiny", "players": 2}))["room"]
        for _ in range(3)
    ]
    await host.request({"type": "join", "room": rooms[0]})
    guest = await make_client("guest")
    await guest.request({"type": "join", "room": rooms[0]})  # full, still open
    await host.request({"type": "start", "room": rooms[1], "bots": True})  # playing
    assert await _pages(host, state="open") == [[rooms[0], rooms[2]]]
    assert await _pages(host, free=True) == [[rooms[2]]]
    playing = await _pages(host, state="playing")
    finished = await _pages(host, state="playing", game="yspahan")
    assert playing in ([[rooms[1]]], [[]]) and finished == [[]]  # (tiny may already be over)
    bad = await host.request({"type": "list_rooms", "state": "finished"})
    assert bad["code"] == "bad_request"
    bad = await host.request({"type": "list_rooms", "after": "not a cursor"})
    assert bad["code"] == "bad_request"
    bad = await host.request({"type": "list_rooms", "limit": 101})
    assert bad["code"] == "bad_request"


async def test_a_cursor_survives_rooms_closing_and_opening(
    app: App, make_client: MakeClient
) -> None:
    client = await make_client()
    first = [
        (await client.request({"type": "create", "game": "tiny", "players": 2}))["room"]
        for _ in range(4)
    ]
    page = await client.request({"type": "list_rooms", "limit": 2})
    assert [r["room"] for r in page["rooms"]] == first[:2]
    app.lobby.forget(first[2])  # closed meanwhile
    later = (await client.request({"type": "create", "game": "tiny", "players": 2}))["room"]
    rest = await client.request({"type": "list_rooms", "limit": 2, "after": page["next"]})
    assert [r["room"] for r in rest["rooms"]] == [first[3], later]


def test_a_page_looks_at_no_more_than_max_scan_rooms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "MAX_SCAN", 10)
    index = RoomIndex()
    for i in range(25):
        index.add((float(i), f"r{i:02}"), "tiny" if i % 5 == 0 else "other")
    looked: list[str] = []

    def pick(room: str) -> Any:
        looked.append(room)
        return (lambda: {"room": room}) if room.endswith("0") else None

    def every(room: str) -> Any:
        return lambda: {"room": room}

    rooms, after = cut(index.after(None, None), pick, 50)
    assert len(looked) == 10 and after == cursor((9.0, "r09"))  # ten looked at, one matched
    assert [r["room"] for r in rooms] == ["r00"]
    rooms, after = cut(index.after("tiny", None), every, 2)
    assert [r["room"] for r in rooms] == ["r00", "r05"] and after == cursor((5.0, "r05"))
    rooms, after = cut(index.after("tiny", parse_cursor(after)), every, 5)
    assert [r["room"] for r in rooms] == ["r10", "r15", "r20"] and after is None


def test_cursors_round_trip_and_bad_ones_are_bad_requests() -> None:
    key = (1764590000.123456, "5f0c1a9e3b")
    assert parse_cursor(cursor(key)) == key
    for bad in ("", "x", "1.5", "/room", "nan/room", "inf/room"):
        with pytest.raises(RequestError):
            parse_cursor(bad)


def test_filters_free_means_an_open_room_with_a_free_seat() -> None:
    assert Filters(None, True).accept("open", 1)
    assert not Filters(None, True).accept("open", 0)
    assert not Filters(None, True).accept("playing", 1)
    assert Filters("playing", False).accept("playing", 0)
    assert not Filters("open", False).accept("finished", 2)


def test_a_quota_refuses_at_its_limit_and_holdings_give_back_once() -> None:
    refused: list[str] = []
    quota = Quota("rooms_per_address", 2, "rooms", refused.append)
    held = Holdings()
    held.take(quota, "1.2.3.4")
    held.take(quota, "1.2.3.4")
    with pytest.raises(QuotaExceeded) as exc:
        quota.acquire("1.2.3.4")
    assert exc.value.limit == "rooms_per_address" and refused == ["rooms_per_address"]
    quota.acquire("5.6.7.8")  # another key has its own count
    held.release()
    held.release()
    assert quota.held("1.2.3.4") == 0 and quota.held("5.6.7.8") == 1


def test_a_budget_refills_at_its_rate_and_forgets_refilled_buckets() -> None:
    budget = Budget("list_per_connection", rate=1.0, burst=2, what="room listings")
    budget.take("a", now=0.0)
    budget.take("a", now=0.0)
    with pytest.raises(QuotaExceeded):
        budget.take("a", now=0.5)
    budget.take("a", now=1.6)  # one token back after a second
    budget.take("b", now=1.6)
    budget.prune(now=10.0)
    assert len(budget) == 0
