"""Readers for the files of ``deploy/`` and the server facts they must agree with.

Docker does not run where the tests run, so nothing here builds an image or starts a cluster:
each reader extracts what the server must agree with (variables, ports, paths, commands).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from server.config import Config
from tests.deploy import yaml_subset

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s" / "base"
SINGLE_NODE = DEPLOY / "k8s" / "single-node"

NOT_SERVER_VARIABLES = frozenset(
    {
        "PIP_DISABLE_PIP_VERSION_CHECK",
        "PIP_NO_CACHE_DIR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONMALLOC",
        "PYTHONUNBUFFERED",
        "GLIBC_TUNABLES",
    }
)
"""Variables the deploy files may set that are not the server's (Python's and pip's own)."""


# The server's side ---------------------------------------------------------------------------


def env_name(setting: str) -> str:
    """The variable of one field of :class:`server.config.Config` (its module docstring's rule;
    ``test_variable_names_are_the_ones_the_server_reads`` checks it against ``from_env``)."""
    return "REDIS_URL" if setting == "redis_url" else "OASIS_" + setting.upper()


def settings() -> dict[str, str]:
    """Variable name -> field name, for every setting of the server."""
    return {env_name(f.name): f.name for f in fields(Config)}


def console_scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)
    return dict(project["project"]["scripts"])


def wheel_packages() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)
    return list(project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"])


# Dockerfile ----------------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"no {keyword} in the stage FROM {self.base}"
        return found[-1]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for token in shlex.split(args):
                name, sep, value = token.partition("=")
                assert sep, f"ENV {args!r}: write ENV NAME=value (the legacy form is ambiguous)"
                values[name] = value
        return values


def dockerfile(path: Path = DEPLOY / "Dockerfile") -> list[Stage]:
    """The stages of a Dockerfile, each with its (KEYWORD, arguments) in order."""
    logical: list[str] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            words = args.split()
            words = [w for w in words if not w.startswith("--")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
            continue
        assert stages, f"{keyword} before FROM"
        stages[-1].instructions.append((keyword, args))
    return stages


def exec_form(args: str) -> list[str]:
    """A JSON-array (exec form) CMD/ENTRYPOINT/HEALTHCHECK CMD; shell forms are refused (with a
    shell form SIGTERM reaches /bin/sh, not the server)."""
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def healthcheck(stage: Stage) -> tuple[dict[str, str], list[str]]:
    """(options, command) of the stage's HEALTHCHECK."""
    args = stage.last("HEALTHCHECK")
    options: dict[str, str] = {}
    rest = args
    while rest.startswith("--"):
        option, _, rest = rest.partition(" ")
        name, _, value = option[2:].partition("=")
        options[name] = value
        rest = rest.strip()
    keyword, _, command = rest.partition(" ")
    assert keyword.upper() == "CMD", f"HEALTHCHECK {args!r}"
    return options, exec_form(command)


def dockerignore(path: Path = DEPLOY / "Dockerfile.dockerignore") -> list[str]:
    patterns = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            patterns.append(line)
    return patterns


def ignored(relative: str, patterns: list[str]) -> bool:
    """Whether the context path ``relative`` is left out, by Docker's rules: a pattern matches a
    path or one of its parent directories, ``**`` spans directories, ``!`` takes back, the last
    matching pattern wins."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    result = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        regex = _glob_regex(pattern.removeprefix("!").strip("/"))
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            result = not negate
    return result


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


# HAProxy -------------------------------------------------------------------------------------


def haproxy(path: Path = DEPLOY / "haproxy.cfg") -> dict[str, list[list[str]]]:
    """Section header (``"backend oasis_nodes"``) -> its directives, split into words."""
    sections: dict[str, list[list[str]]] = {}
    current: list[list[str]] | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():
            current = sections.setdefault(" ".join(line.split()), [])
            continue
        assert current is not None, f"directive outside a section: {line!r}"
        current.append(line.split())
    return sections


def haproxy_seconds(value: str) -> float:
    """An HAProxy time (``5s``, ``1h``, ``500ms``, bare = ms) in seconds."""
    units = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    for unit in sorted(units, key=len, reverse=True):
        if value.endswith(unit):
            return float(value[: -len(unit)]) * units[unit]
    return float(value) / 1000


# YAML ----------------------------------------------------------------------------------------


def compose() -> dict[str, Any]:
    document = yaml_subset.load(DEPLOY / "compose.yaml")
    assert isinstance(document, dict)
    return document


def k8s_objects() -> list[dict[str, Any]]:
    """Every object of the manifests that kustomization.yaml lists, in order."""
    kustomization = yaml_subset.load(K8S / "kustomization.yaml")
    objects = []
    for resource in kustomization["resources"]:
        for document in yaml_subset.load_all(K8S / resource):
            assert isinstance(document, dict) and "kind" in document, resource
            document.setdefault("_file", resource)
            objects.append(document)
    return objects


def k8s(kind: str, name: str) -> dict[str, Any]:
    found = [o for o in k8s_objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{len(found)} {kind}/{name} in deploy/k8s"
    return found[0]


def compose_seconds(value: str) -> float:
    """A compose duration (``30s``, ``1m30s``, ``500ms``) in seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6}
    parts = re.findall(r"([0-9.]+)(ms|us|h|m|s)", value)
    assert parts and "".join(n + u for n, u in parts) == value, f"bad duration {value!r}"
    return sum(float(n) * units[u] for n, u in parts)


def oasis_nodes() -> dict[str, dict[str, Any]]:
    """The compose services that run the Oasis image."""
    services = compose()["services"]
    return {
        name: service
        for name, service in services.items()
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
    }


def pod_spec() -> dict[str, Any]:
    """The pod template of the Oasis Deployment."""
    spec: dict[str, Any] = k8s("Deployment", "oasis")["spec"]["template"]["spec"]
    return spec


def container() -> dict[str, Any]:
    """The Oasis container of the Deployment (the only one)."""
    (only,) = pod_spec()["containers"]
    result: dict[str, Any] = only
    return result
