"""Client addresses behind a proxy: X-Forwarded-For from trusted proxies, and nobody else."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.forwarded import client_address, parse_networks
from tests.server.conftest import MakeApp

PROXIES = parse_networks("10.0.0.0/8, 127.0.0.1")


def test_a_trusted_proxy_names_the_client() -> None:
    assert client_address("10.1.2.3", "203.0.113.7", PROXIES) == "203.0.113.7"
    # the rightmost address that is not a trusted proxy: a proxy chain
    assert client_address("10.1.2.3", "198.51.100.1, 203.0.113.7, 10.9.9.9", PROXIES) == (
        "203.0.113.7"
    )


def test_anyone_else_is_counted_under_their_own_address_whatever_they_send() -> None:
    assert client_address("203.0.113.7", "1.2.3.4", PROXIES) == "203.0.113.7"
    assert client_address("10.1.2.3", "1.2.3.4", []) == "10.1.2.3"
    assert client_address("10.1.2.3", None, PROXIES) == "10.1.2.3"
    assert client_address("10.1.2.3", "not an address", PROXIES) == "10.1.2.3"


def test_a_bad_proxy_entry_is_refused_with_its_text() -> None:
    with pytest.raises(ValueError, match="'nonsense'"):
        parse_networks("10.0.0.0/8,nonsense")


async def test_the_per_address_limit_counts_forwarded_clients(make_app: MakeApp) -> None:
    app = await make_app(max_connections_per_ip=1, trusted_proxies="127.0.0.1")
    url = f"ws://127.0.0.1:{app.port}/"
    ann = await connect(url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
    bob = await connect(url, additional_headers={"X-Forwarded-For": "203.0.113.2"})
    with pytest.raises(InvalidStatus) as refused:
        await connect(url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
    assert refused.value.response.status_code == 429
    await ann.close()
    await bob.close()


async def test_repeated_forwarded_headers_are_one_list_never_an_http_error(
    make_app: MakeApp,
) -> None:
    # Issue 14: two X-Forwarded-For lines gave a silent HTTP 500. They are one list, in order.
    app = await make_app(max_connections_per_ip=1, trusted_proxies="127.0.0.1, 10.0.0.0/8")
    url = f"ws://127.0.0.1:{app.port}/"
    two_lines = [("X-Forwarded-For", "203.0.113.1"), ("X-Forwarded-For", "10.0.0.5")]
    ann = await connect(url, additional_headers=two_lines)
    with pytest.raises(InvalidStatus) as refused:  # counted as 203.0.113.1, the same client
        await connect(url, additional_headers=[("X-Forwarded-For", "203.0.113.1")])
    assert refused.value.response.status_code == 429
    other = [("X-Forwarded-For", "203.0.113.1"), ("X-Forwarded-For", "203.0.113.2")]
    bob = await connect(url, additional_headers=other)  # the rightmost: 203.0.113.2
    garbled = [("X-Forwarded-For", "203.0.113.3"), ("X-Forwarded-For", "nonsense")]
    carl = await connect(url, additional_headers=garbled)  # untrusted: the peer, 127.0.0.1
    with pytest.raises(InvalidStatus) as peer:  # ... which is now full
        await connect(url, additional_headers=garbled)
    assert peer.value.response.status_code == 429
    for ws in (ann, bob, carl):
        await ws.close()


def test_joined_lines_are_one_list_in_order() -> None:
    from server.forwarded import joined

    assert joined([]) is None
    assert joined(["198.51.100.1", "203.0.113.7, 10.9.9.9"]) == (
        "198.51.100.1, 203.0.113.7, 10.9.9.9"
    )
    assert client_address("10.1.2.3", joined(["203.0.113.7", "10.9.9.9"]), PROXIES) == (
        "203.0.113.7"
    )
