"""Client addresses behind a proxy: ``X-Forwarded-For``, believed from trusted proxies only.

Behind a load balancer every connection comes from the balancer's address, so the per-address
limit and the logs would see one client. A proxy listed in ``trusted_proxies`` (addresses or
CIDR networks) appends the address it received the connection from to ``X-Forwarded-For``
(HAProxy: ``option forwardfor``); the client is the rightmost address of that list that is not
itself a trusted proxy. A connection from anywhere else is its own address, whatever it sends:
a client cannot choose the address it is counted under.

Repeated headers: several ``X-Forwarded-For`` lines are one list, joined in the order they came
(RFC 9110 section 5.3: a repeated field is its values joined with commas), so one rule covers
both a proxy chain that adds lines and one that extends a line (:func:`joined`). A malformed
entry anywhere in that list makes the whole header untrusted (the peer address counts), never an
error: an HTTP request is never refused because of this header.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> list[Network]:
    """``"10.0.0.0/8, 127.0.0.1"`` -> networks; ValueError names a bad entry."""
    out: list[Network] = []
    for item in text.split(","):
        item = item.strip()
        if item:
            try:
                out.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(f"trusted proxy {item!r} is not an address or network") from None
    return out


def joined(values: Sequence[str]) -> str | None:
    """Every ``X-Forwarded-For`` line of a request as one list (None when there is none)."""
    return ", ".join(values) if values else None


def _trusted(address: str, networks: Iterable[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(peer: str, forwarded_for: str | None, trusted: list[Network]) -> str:
    """The address a connection from ``peer`` counts as (see the module docstring)."""
    if not trusted or not forwarded_for or not _trusted(peer, trusted):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",")]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # a malformed list: believe nothing of it
        if not _trusted(hop, trusted):
            return hop
    return hops[0] if hops else peer
