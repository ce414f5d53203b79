"""The deploy files against the running server: every variable they set is a setting, every
health path they use answers 200 from ``oasis-server`` started with a compose node's variables,
the image's health check command passes against it, and it stops within the grace periods."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from protocol import PROTOCOL_VERSION
from protocol.codec import decode, encode
from server.config import Config, from_env, parse_args
from tests.deploy import files
from tests.deploy.files import container, oasis_nodes, pod_spec
from tests.services import RedisServer, free_port, wait_for_port


def test_variable_names_are_the_ones_the_server_reads() -> None:
    defaults = Config()
    for f in fields(Config):
        default = getattr(defaults, f.name)
        sample: str
        expected: Any
        if isinstance(default, bool):
            sample, expected = ("false", False) if default else ("true", True)
        elif isinstance(default, int):
            sample, expected = str(default + 7), default + 7
        elif isinstance(default, float):
            sample, expected = str(default + 0.5), default + 0.5
        else:
            sample, expected = "x-sample", "x-sample"
        config = from_env({files.env_name(f.name): sample})
        assert getattr(config, f.name) == expected, f"{files.env_name(f.name)} -> {f.name}"


def variables_set() -> list[tuple[str, str, Any]]:
    """(where, name, value) of every variable the deploy files give the server."""
    found: list[tuple[str, str, Any]] = []
    found += [("Dockerfile", k, v) for k, v in files.dockerfile()[-1].env().items()]
    for name, service in files.compose()["services"].items():
        found += [(f"compose {name}", k, v) for k, v in service.get("environment", {}).items()]
    for obj in files.k8s_objects():
        if obj["kind"] == "ConfigMap":
            found += [(obj["_file"], k, v) for k, v in obj["data"].items()]
        if obj["kind"] in ("Deployment", "StatefulSet"):
            for c in obj["spec"]["template"]["spec"]["containers"]:
                found += [(obj["_file"], e["name"], e.get("value")) for e in c.get("env", [])]
    return found


def test_every_variable_the_files_set_is_a_setting_of_the_server() -> None:
    settings = files.settings()
    found = variables_set()
    assert found
    for where, name, _ in found:
        if name.startswith("OASIS_") or name == "REDIS_URL":
            assert name in settings, f"{where}: {name} is not a setting of server/config.py"
        else:
            assert name in files.NOT_SERVER_VARIABLES, f"{where}: what reads {name}?"


def test_every_value_the_files_set_parses() -> None:
    for where, name, value in variables_set():
        if name in files.settings():
            assert isinstance(value, str), f"{where}: quote the value of {name}"
            parse_args([], env={name: value})


def health_paths() -> set[str]:
    """Every HTTP path a deploy file asks the server for."""
    _, check = files.healthcheck(files.dockerfile()[-1])
    paths = set(re.findall(r"/[a-z]+", check[2].split("%s", 1)[1]))
    c = container()
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        if probe in c:
            paths.add(c[probe]["httpGet"]["path"])
    annotations = files.k8s("Deployment", "oasis")["spec"]["template"]["metadata"]
    paths.add(annotations["annotations"]["prometheus.io/path"])
    send = next(
        d for d in files.haproxy()["backend oasis_nodes"] if d[:2] == ["http-check", "send"]
    )
    paths.add(send[send.index("uri") + 1])
    return paths


def test_health_paths_are_the_three_the_server_serves() -> None:
    assert health_paths() == {"/healthz", "/readyz", "/metrics"}


class Node:
    """``oasis-server`` as a compose node runs it (the image's CMD and variables, the service's
    variables), on loopback, a free port and the test's Redis."""

    def __init__(self, redis: RedisServer, log: Path) -> None:
        service = next(iter(oasis_nodes().values()))
        image = files.dockerfile()[-1]
        command = files.exec_form(image.last("CMD"))
        script = Path(sys.executable).parent / command[0]
        assert script.exists(), f"{command[0]} is not installed in {script.parent}"
        self.port = free_port()
        env = {
            k: v for k, v in os.environ.items() if k not in files.settings()
        }  # nothing of the machine's own configuration
        env.update(image.env())
        env.update(service["environment"])
        env.update(REDIS_URL=redis.url, OASIS_HOST="127.0.0.1", OASIS_PORT=str(self.port))
        self.env = env
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [str(script), *command[1:]], env=env, stdout=subprocess.DEVNULL, stderr=out
            )
        try:
            wait_for_port(self.port, timeout=15)
        except TimeoutError:
            self.stop()
            raise AssertionError(f"oasis-server did not listen:\n{self.output()}") from None

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def get(self, path: str) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                r.read()
                return int(r.status)
        except urllib.error.HTTPError as error:
            error.close()
            return error.code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def node(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    started = Node(redis, tmp_path_factory.mktemp("node") / "server.log")
    try:
        yield started
    finally:
        started.stop()


def test_server_answers_200_on_every_path_the_files_use(node: Node) -> None:
    for path in sorted(health_paths()):
        assert node.get(path) == 200, f"{path}:\n{node.output()}"


def test_image_health_check_command_passes_and_fails_when_it_should(node: Node) -> None:
    _, check = files.healthcheck(files.dockerfile()[-1])
    command = [sys.executable if check[0] == "python" else check[0], *check[1:]]
    env = {**os.environ, "OASIS_PORT": str(node.port)}
    passed = subprocess.run(command, env=env, capture_output=True, timeout=10, check=False)
    assert passed.returncode == 0, passed.stderr.decode()
    env["OASIS_PORT"] = str(free_port())  # nothing listens there
    failed = subprocess.run(command, env=env, capture_output=True, timeout=10, check=False)
    assert failed.returncode != 0


def test_websocket_url_with_a_room_parameter_reaches_the_server(node: Node) -> None:
    # The load balancer hashes on ?room=<id>; the server must accept that URL as its own.
    with connect(f"ws://127.0.0.1:{node.port}/?room=r-deploy", open_timeout=5) as ws:
        ws.send(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "client": "t"}))
        reply = decode(ws.recv(timeout=5))  # type: ignore[arg-type]
    assert reply["type"] == "welcome", reply


def read_until_closed(ws: ClientConnection) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while True:
        try:
            data = ws.recv(timeout=10)
        except ConnectionClosed:
            return frames
        frames.append(decode(data))  # type: ignore[arg-type]


def test_sigterm_stops_the_node_well_within_the_grace_periods(
    redis: RedisServer, tmp_path: Path
) -> None:
    node = Node(redis, tmp_path / "server.log")
    try:
        assert node.get("/readyz") == 200
        with connect(f"ws://127.0.0.1:{node.port}/?room=r-stop", open_timeout=5) as ws:
            ws.send(encode({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "client": "t"}))
            assert decode(ws.recv(timeout=5))["type"] == "welcome"  # type: ignore[arg-type]
            started = time.monotonic()
            node.process.send_signal(signal.SIGTERM)
            frames = read_until_closed(ws)
            assert [f["type"] for f in frames] == ["bye"]
            assert ws.close_code == 1001
            code = node.process.wait(timeout=30)
            took = time.monotonic() - started
    finally:
        node.stop()
    assert code == 0, node.output()
    pre_stop = float(container()["lifecycle"]["preStop"]["exec"]["command"][1])
    k8s_budget = pod_spec()["terminationGracePeriodSeconds"] - pre_stop
    compose_budget = files.compose_seconds(next(iter(oasis_nodes().values()))["stop_grace_period"])
    assert took < min(k8s_budget, compose_budget), f"{took:.1f} s"


def redis_arguments() -> dict[str, list[str]]:
    """The redis-server arguments of compose and of the StatefulSet."""
    statefulset = files.k8s("StatefulSet", "redis")
    (k8s_redis,) = statefulset["spec"]["template"]["spec"]["containers"]
    return {"compose": files.compose()["services"]["redis"]["command"], "k8s": k8s_redis["args"]}


@pytest.mark.parametrize("where", ["compose", "k8s"])
def test_redis_arguments_turn_the_append_only_file_on(where: str, tmp_path: Path) -> None:
    import redis as redis_client

    args = list(redis_arguments()[where])
    assert args[0] == "redis-server"
    if "--dir" in args:
        del args[args.index("--dir") : args.index("--dir") + 2]
    port = free_port()
    process = subprocess.Popen(
        [*args, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        client = redis_client.Redis(port=port, decode_responses=True)
        try:
            assert client.config_get("appendonly") == {"appendonly": "yes"}
            assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
            # A bound, so a full Redis refuses writes (rooms pause) instead of the node dying.
            assert int(client.config_get("maxmemory")["maxmemory"]) >= 256 * 2**20
            assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        finally:
            client.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def shipped_allocator() -> dict[str, str]:
    """The allocator the deploy files choose: the image's ``PYTHONMALLOC`` and
    ``GLIBC_TUNABLES``, which compose and the manifests must not set otherwise."""
    image = files.dockerfile()[-1].env()
    for where, name, value in variables_set():
        if name in ("PYTHONMALLOC", "GLIBC_TUNABLES"):
            assert value == image.get(name), f"{where}: {name}={value} against the image's"
    chosen = {
        "python": "pymalloc"
        if image.get("PYTHONMALLOC", "pymalloc") == "pymalloc"
        else image["PYTHONMALLOC"]
    }
    if image.get("GLIBC_TUNABLES"):
        chosen["tunables"] = image["GLIBC_TUNABLES"]
    return chosen


def test_the_server_reports_the_allocator_the_deploy_files_ship(node: Node) -> None:
    # (RSS back within 10 % after a burst of rooms needs glibc's malloc: BENCHMARKS.md)
    assert shipped_allocator()["python"] == "malloc"
    reported = None
    deadline = time.monotonic() + 10  # (logged just after the port listens)
    while reported is None and time.monotonic() < deadline:
        lines = node.log.read_text().splitlines()
        events = [json.loads(line) for line in lines if line.startswith("{")]
        reported = next((e for e in events if e.get("event") == "memory_allocator"), None)
        time.sleep(0.05)
    assert reported is not None, node.output()
    assert {k: reported[k] for k in ("python", "tunables") if k in reported} == shipped_allocator()
    assert reported["c"].startswith("glibc")  # (no preloaded allocator in the image)
