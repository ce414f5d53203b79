"""deploy/Dockerfile and its ignore file against pyproject.toml and server/config.py."""

from __future__ import annotations

import os

from server.config import parse_args
from tests.deploy import files

SERVER_SOURCES = ["pyproject.toml", "README.md"]
BUILD_SCRIPTS = ["scripts/build_compiled.py", "scripts/hatch_build.py"]
"""The compiled hot paths' builder and the wheel's build hook (pyproject.toml)."""


def test_image_is_built_in_two_stages_on_slim_python_3_11() -> None:
    stages = files.dockerfile()
    assert len(stages) >= 2
    for stage in stages:
        assert stage.base.startswith("python:3.11-slim"), stage.base
    build, final = stages[0], stages[-1]
    assert build.name is not None
    assert any("pip wheel" in run for run in build.all("RUN"))
    uses_build = [
        args
        for keyword, args in final.instructions
        if f"from={build.name}" in args and keyword in ("COPY", "RUN")
    ]
    assert uses_build, "the final stage must install the wheels of the build stage"
    assert any("pip install" in run and "--no-index" in run for run in final.all("RUN"))


def test_build_stage_copies_everything_the_wheel_is_made_of() -> None:
    build = files.dockerfile()[0]
    copied: set[str] = set()
    for args in build.all("COPY"):
        words = [w for w in args.split() if not w.startswith("--")]
        copied.update(w.rstrip("/") for w in words[:-1])
    needed = {*SERVER_SOURCES, *BUILD_SCRIPTS, *files.wheel_packages()}
    assert needed <= copied, f"not copied: {sorted(needed - copied)}"


def test_build_stage_compiles_the_hot_paths_into_the_wheel_and_the_runtime_has_no_compiler() -> (
    None
):
    """gcc and mypyc in the build stage, ``scripts/build_compiled.py`` run before ``pip wheel``
    (the wheel carries the .so files: pyproject.toml's ``artifacts``); no compiler at run time."""
    stages = files.dockerfile()
    build, final = stages[0], stages[-1]
    runs = " && ".join(build.all("RUN"))
    assert "gcc" in runs and "mypy" in runs
    # (the dependencies' wheels first, for mypyc to read their types; Oasis's wheel last)
    assert runs.index("scripts/build_compiled.py") < runs.rindex("pip wheel --no-deps")
    assert not any("gcc" in run or "mypy" in run for run in final.all("RUN"))


def test_ignore_file_keeps_the_sources_and_leaves_out_local_state() -> None:
    patterns = files.dockerignore()
    for source in SERVER_SOURCES:
        assert not files.ignored(source, patterns), source
    for package in files.wheel_packages():
        for directory, subdirectories, names in os.walk(files.ROOT / package):
            subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
            for name in names:
                if name.endswith((".pyc", ".so")):  # (a local build: the image compiles its own)
                    continue
                relative = (files.ROOT / directory / name).relative_to(files.ROOT).as_posix()
                assert not files.ignored(relative, patterns), f"{relative} would be left out"
    for local in [".venv/bin/python", ".git/HEAD", "var/redis/appendonly.aof", "tests/x.py"]:
        assert files.ignored(local, patterns), f"{local} would be sent to the builder"
    assert files.ignored("server/__pycache__/app.cpython-311.pyc", patterns)
    assert files.ignored("protocol/tree.cpython-311-x86_64-linux-gnu.so", patterns)
    for script in BUILD_SCRIPTS:
        assert not files.ignored(script, patterns), f"{script} would be left out"
    assert files.ignored("scripts/serve", patterns)


def test_image_runs_a_declared_console_script_in_exec_form() -> None:
    final = files.dockerfile()[-1]
    assert not final.all("ENTRYPOINT"), "CMD alone: `docker run image --help` should not stack"
    command = files.exec_form(final.last("CMD"))
    scripts = files.console_scripts()
    assert command[0] in scripts, f"{command[0]} is not in [project.scripts]"
    assert scripts[command[0]] == "server.main:main"


def test_image_listens_on_all_interfaces_on_the_exposed_port() -> None:
    final = files.dockerfile()[-1]
    env = final.env()
    config = parse_args(files.exec_form(final.last("CMD"))[1:], env=env)
    assert config.host == "0.0.0.0"
    exposed = [int(word.split("/")[0]) for args in final.all("EXPOSE") for word in args.split()]
    assert exposed == [config.port]


def test_image_runs_as_a_numeric_non_root_user() -> None:
    final = files.dockerfile()[-1]
    user, _, group = final.last("USER").partition(":")
    # Numeric, so that Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
    assert user.isdigit() and int(user) != 0
    assert not group or (group.isdigit() and int(group) != 0)
    assert any(f"--uid {user}" in run for run in final.all("RUN")), "the user must exist"
    deployment = files.k8s("Deployment", "oasis")
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)


def test_image_leaves_redis_url_to_the_environment() -> None:
    assert "REDIS_URL" not in files.dockerfile()[-1].env()


def test_health_check_asks_healthz_on_the_configured_port_without_curl() -> None:
    final = files.dockerfile()[-1]
    options, command = files.healthcheck(final)
    assert command[:2] == ["python", "-c"]
    assert "urllib.request" in command[2] and "/healthz" in command[2]
    assert "OASIS_PORT" in command[2], "the check must follow the port the server is given"
    assert files.compose_seconds(options["timeout"]) > 3, "longer than urlopen's own timeout"
    # The command itself runs against a live server in test_server_agrees.py.


def test_stop_signal_is_the_one_the_server_handles() -> None:
    stops = files.dockerfile()[-1].all("STOPSIGNAL")
    assert stops in ([], ["SIGTERM"])
