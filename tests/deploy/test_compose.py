"""deploy/compose.yaml and deploy/haproxy.cfg against the server's configuration."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from server.config import Config, parse_args
from tests.deploy import files
from tests.deploy.files import oasis_nodes


def node_config(service: dict[str, Any]) -> Config:
    """What a node runs with: the image's variables, then the service's, then its arguments."""
    env = {**files.dockerfile()[-1].env(), **service.get("environment", {})}
    command = service.get("command", files.exec_form(files.dockerfile()[-1].last("CMD")))
    return parse_args(command[1:], env=env)


def test_compose_runs_two_or_more_nodes_of_the_image() -> None:
    nodes = oasis_nodes()
    assert len(nodes) >= 2
    for service in nodes.values():
        assert service["build"]["context"] == "..", "the context is the repository root"
        assert (files.DEPLOY / service["build"]["context"] / "pyproject.toml").exists()
        assert "ports" not in service, "clients reach the nodes through the load balancer"


def test_nodes_use_the_compose_redis_and_wait_for_it() -> None:
    services = files.compose()["services"]
    for name, service in oasis_nodes().items():
        url = urlsplit(node_config(service).redis_url)
        assert url.scheme == "redis", name
        assert url.hostname in services, f"{name}: {url.hostname} is no compose service"
        assert url.port in (None, 6379)
        assert service["depends_on"][url.hostname]["condition"] == "service_healthy"


def test_compose_redis_keeps_an_append_only_file_on_a_volume() -> None:
    compose = files.compose()
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[0] == "redis-server"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    volume, _, target = redis["volumes"][0].partition(":")
    assert target == "/data", "the official image's working directory, where the AOF goes"
    assert volume in compose["volumes"]
    assert redis["healthcheck"]["test"][:2] == ["CMD", "redis-cli"]


def test_nodes_stop_within_their_grace_period() -> None:
    for name, service in oasis_nodes().items():
        config = node_config(service)
        grace = files.compose_seconds(service["stop_grace_period"])
        # App.stop waits up to shutdown_grace for the closing handshakes, then again for the
        # server to close; 5 s more for the rooms' inboxes and the store.
        assert grace >= 2 * config.shutdown_grace + 5, name


def test_load_balancer_serves_the_server_port_and_mounts_the_config() -> None:
    lb = files.compose()["services"]["lb"]
    assert lb["image"].startswith("haproxy:")
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in lb["volumes"]
    assert (files.DEPLOY / "haproxy.cfg").exists()
    bind = files.haproxy()["frontend oasis"]
    port = int(next(d for d in bind if d[0] == "bind")[1].rsplit(":", 1)[1])
    assert lb["ports"] == [f"{Config().port}:{port}"]
    # One node is enough to start: `up redis oasis-1 lb` runs the single-node setup, and
    # HAProxy marks the nodes that are not there as down.
    assert lb["depends_on"]
    for node, dependency in lb["depends_on"].items():
        assert node in oasis_nodes()
        assert dependency["condition"] == "service_healthy"
    default_server = next(
        d for d in files.haproxy()["backend oasis_nodes"] if d[0] == "default-server"
    )
    assert default_server[-2:] == ["init-addr", "last,libc,none"]


def test_load_balancer_sends_to_every_node_on_its_port() -> None:
    backend = files.haproxy()["backend oasis_nodes"]
    servers = {d[1]: d[2] for d in backend if d[0] == "server"}
    nodes = oasis_nodes()
    assert set(servers) == set(nodes)
    for name, address in servers.items():
        host, _, port = address.rpartition(":")
        assert host == name
        assert int(port) == node_config(nodes[name]).port


def test_load_balancer_hashes_on_the_room_and_checks_readiness() -> None:
    backend = files.haproxy()["backend oasis_nodes"]
    assert ["balance", "url_param", "room"] in backend
    assert ["hash-type", "consistent"] in backend
    assert ["option", "httpchk"] in backend
    send = next(d for d in backend if d[:2] == ["http-check", "send"])
    assert send[send.index("uri") + 1] == "/readyz"  # served: test_server_agrees.py
    assert ["http-check", "expect", "status", "200"] in backend
    default_server = next(d for d in backend if d[0] == "default-server")
    assert "check" in default_server


def test_websocket_tunnels_outlive_the_server_pings() -> None:
    defaults = files.haproxy()["defaults"]
    timeouts = {d[1]: files.haproxy_seconds(d[2]) for d in defaults if d[0] == "timeout"}
    for service in oasis_nodes().values():
        config = node_config(service)
        assert timeouts["tunnel"] > config.ping_interval + config.ping_timeout
        assert timeouts["tunnel"] >= config.idle_timeout
        assert timeouts["client"] > config.hello_timeout


def test_per_address_limit_moves_to_the_load_balancer() -> None:
    cfg = files.haproxy()
    maxconn = int(next(d for d in cfg["global"] if d[0] == "maxconn")[1])
    frontend = cfg["frontend oasis"]
    assert ["tcp-request", "connection", "track-sc0", "src"] in frontend
    reject = next(d for d in frontend if d[:3] == ["tcp-request", "connection", "reject"])
    condition = reject[reject.index("{") + 1 : reject.index("}")]
    assert condition[:2] == ["sc0_conn_cur", "gt"]
    assert int(condition[2]) == Config().max_connections_per_ip
    for name, service in oasis_nodes().items():
        # The nodes see one address (HAProxy's): their own limit must never bind.
        assert node_config(service).max_connections_per_ip >= maxconn, name


def test_each_node_has_its_own_id_and_an_address_that_reaches_it() -> None:
    """A ``redirect`` names the owner's OASIS_PUBLIC_URL: through the load balancer, its path
    must go to that node and no other."""
    cfg = files.haproxy()
    frontend = cfg["frontend oasis"]
    routes = {}
    for d in frontend:
        if d[0] == "use_backend":
            condition = d[d.index("{") + 1 : d.index("}")]
            assert condition[0] == "path_beg"
            routes[condition[1]] = d[1]
    ids = set()
    for name, service in oasis_nodes().items():
        config = node_config(service)
        assert config.node_id == name
        ids.add(config.node_id)
        url = urlsplit(config.public_url)
        lb_port = next(d for d in frontend if d[0] == "bind")[1].rsplit(":", 1)[1]
        assert url.scheme == "ws" and str(url.port) == lb_port, name
        backend = cfg[f"backend {routes[url.path]}"]
        servers = [d for d in backend if d[0] == "server"]
        assert len(servers) == 1 and servers[0][2] == f"{name}:{config.port}", name
    assert len(ids) == len(oasis_nodes())


def test_nodes_believe_the_forwarded_client_address_from_the_load_balancer_only() -> None:
    from server.forwarded import parse_networks

    assert ["option", "forwardfor"] in files.haproxy()["defaults"]
    for name, service in oasis_nodes().items():
        networks = parse_networks(node_config(service).trusted_proxies)
        assert networks, name
        assert all(network.is_private for network in networks), name
