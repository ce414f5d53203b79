"""deploy/k8s against the server's configuration and the image."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from server.config import Config, parse_args
from tests.deploy import files, yaml_subset
from tests.deploy.files import container, pod_spec

SERVER = {"app.kubernetes.io/name": "oasis", "app.kubernetes.io/component": "server"}


def container_env() -> dict[str, str]:
    """The variables the server container gets (the image's, the ConfigMaps', its own)."""
    env = dict(files.dockerfile()[-1].env())
    for source in container().get("envFrom", []):
        env.update(files.k8s("ConfigMap", source["configMapRef"]["name"])["data"])
    for item in container().get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
    return env


def server_config() -> Config:
    command = container().get("command") or files.exec_form(files.dockerfile()[-1].last("CMD"))
    return parse_args([*command[1:], *container().get("args", [])], env=container_env())


def named_port(name_or_number: str | int) -> int:
    if isinstance(name_or_number, int):
        return name_or_number
    ports = {p["name"]: p["containerPort"] for p in container()["ports"]}
    return int(ports[name_or_number])


def test_manifests_hold_each_object_kind_the_issue_asks_for() -> None:
    kinds = {o["kind"] for o in files.k8s_objects()}
    assert {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget", "StatefulSet"} <= kinds


def test_configmap_values_are_strings_and_real_settings() -> None:
    data = files.k8s("ConfigMap", "oasis-config")["data"]
    for name, value in data.items():
        assert isinstance(value, str), f"{name}: quote it, ConfigMap data is strings"
        assert name in files.settings(), f"{name} is not a setting of server/config.py"
    parse_args([], env=data)


def test_server_listens_on_all_interfaces_on_the_container_port() -> None:
    config = server_config()
    assert config.host == "0.0.0.0"
    assert [p["containerPort"] for p in container()["ports"]] == [config.port]
    assert config.port == Config().port


def test_services_reach_the_server_port() -> None:
    for name in ("oasis", "oasis-nodes"):
        service = files.k8s("Service", name)
        assert service["spec"]["selector"] == SERVER
        (port,) = service["spec"]["ports"]
        assert named_port(port["targetPort"]) == server_config().port
    assert files.k8s("Service", "oasis-nodes")["spec"]["clusterIP"] == "None"


def test_selectors_match_the_pods() -> None:
    deployment = files.k8s("Deployment", "oasis")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == SERVER
    assert SERVER.items() <= labels.items()
    pdb = files.k8s("PodDisruptionBudget", "oasis")
    assert pdb["spec"]["selector"]["matchLabels"] == SERVER


def test_probes_use_the_health_endpoints_on_the_server_port() -> None:
    c = container()
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        if probe in c:
            assert named_port(c[probe]["httpGet"]["port"]) == server_config().port
    # That the server answers 200 on these paths: test_server_agrees.py.


def test_termination_grace_covers_pre_stop_and_the_server_stop() -> None:
    c = container()
    command = c["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    pre_stop = float(command[1])
    grace = pod_spec()["terminationGracePeriodSeconds"]
    # App.stop: up to shutdown_grace for the closing handshakes, then up to shutdown_grace for
    # the server to close; 5 s more for the rooms' inboxes and the store.
    assert grace >= pre_stop + 2 * server_config().shutdown_grace + 5


def test_rolling_update_and_disruption_budget_keep_nodes_serving() -> None:
    spec = files.k8s("Deployment", "oasis")["spec"]
    assert spec["replicas"] >= 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pdb = files.k8s("PodDisruptionBudget", "oasis")["spec"]
    assert pdb.get("maxUnavailable", 0) == 1 or pdb.get("minAvailable", 0) >= 1
    assert pdb.get("maxUnavailable", 1) < spec["replicas"]


def test_every_container_has_requests_and_limits() -> None:
    for obj in files.k8s_objects():
        if obj["kind"] not in ("Deployment", "StatefulSet"):
            continue
        for c in obj["spec"]["template"]["spec"]["containers"]:
            resources = c["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), c["name"]
            assert "memory" in resources["limits"], c["name"]


def test_pods_run_as_non_root_without_privileges() -> None:
    for obj in files.k8s_objects():
        if obj["kind"] not in ("Deployment", "StatefulSet"):
            continue
        spec = obj["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["runAsUser"] != 0
        for c in spec["containers"]:
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_redis_is_a_stateful_set_with_aof_on_a_claimed_volume() -> None:
    statefulset = files.k8s("StatefulSet", "redis")
    spec = statefulset["spec"]
    (redis,) = spec["template"]["spec"]["containers"]
    args = redis["args"]
    assert args[0] == "redis-server"
    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    data_dir = args[args.index("--dir") + 1]
    (claim,) = spec["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in redis["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == data_dir
    service = files.k8s("Service", spec["serviceName"])
    assert service["spec"]["selector"] == spec["selector"]["matchLabels"]


def test_server_redis_url_names_the_redis_service() -> None:
    url = urlsplit(server_config().redis_url)
    assert url.scheme == "redis"
    service = files.k8s("Service", str(url.hostname))
    assert url.port in (None, *(p["port"] for p in service["spec"]["ports"]))


def test_kustomization_image_is_the_deployment_image() -> None:
    kustomization = yaml_subset.load(files.K8S / "kustomization.yaml")
    names = {image["name"] for image in kustomization["images"]}
    assert container()["image"].split(":")[0] in names


def kustomize(directory: Path) -> list[dict[str, Any]]:
    """The objects ``kubectl kustomize`` renders (skips the test without kubectl)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    rendered = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, timeout=30, check=False
    )
    assert rendered.returncode == 0, rendered.stderr.decode()
    objects: list[dict[str, Any]] = yaml_subset.loads_all(rendered.stdout.decode(), str(directory))
    return objects


def test_kustomize_renders_the_same_objects_with_the_selectors_intact() -> None:
    objects = kustomize(files.K8S)
    names = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
    assert names == sorted((o["kind"], o["metadata"]["name"]) for o in files.k8s_objects())
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    assert deployment["spec"]["selector"]["matchLabels"] == SERVER
    (rendered_container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert rendered_container["image"] == container()["image"]


def test_single_node_overlay_never_runs_two_pods_at_once() -> None:
    # Until the server has room leases, two pods would both restore and serve every room.
    objects = kustomize(files.SINGLE_NODE)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    names = sorted((o["kind"], o["metadata"]["name"]) for o in objects)
    assert names == sorted((o["kind"], o["metadata"]["name"]) for o in files.k8s_objects())
