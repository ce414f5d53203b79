"""The YAML subset reader the deploy tests parse compose and Kubernetes files with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy import files
from tests.deploy.yaml_subset import YamlSubsetError, loads_all

ALL_YAML = sorted([*files.DEPLOY.glob("*.yaml"), *(files.DEPLOY / "k8s").rglob("*.yaml")])


def test_reads_mappings_sequences_flows_and_scalars() -> None:
    text = """
# comment
a: 1            # trailing comment
b: "two # not a comment"
c: 'it''s'
d: [x, "y", 3, [4]]
e: {k: v, n: 2}
f:
  - plain text
  - key: value
    other: 2.5
  -
    deep: true
g:
- same-indent item
h: null
i: ~
j: 'yes'
"""
    (doc,) = loads_all(text)
    assert doc == {
        "a": 1,
        "b": "two # not a comment",
        "c": "it's",
        "d": ["x", "y", 3, [4]],
        "e": {"k": "v", "n": 2},
        "f": ["plain text", {"key": "value", "other": 2.5}, {"deep": True}],
        "g": ["same-indent item"],
        "h": None,
        "i": None,
        "j": "yes",
    }


def test_reads_documents_anchors_and_merge_keys() -> None:
    text = """
base: &base
  x: 1
  y: 2
---
kind: Other
"""
    assert loads_all(text) == [{"base": {"x": 1, "y": 2}}, {"kind": "Other"}]
    merged = """
x-node: &node
  image: a
  env: {A: "1"}
one:
  <<: *node
  image: b
two: *node
"""
    (doc,) = loads_all(merged)
    assert doc["one"] == {"image": "b", "env": {"A": "1"}}
    assert doc["two"] == {"image": "a", "env": {"A": "1"}}


@pytest.mark.parametrize(
    "text",
    [
        "a: yes",  # a boolean to YAML 1.1 readers, a string to 1.2 ones
        "a: On",
        "a: 0755",
        "a: 1:30",
        "a: |\n  block",
        "a: !!str 1",
        "a: 1\na: 2",
        "a:\n\t- tab",
        "a: [1, 2",
        "a: b: c",
        "a: *missing",
        "a: 1\n  b: 2",
        "a: True",
    ],
)
def test_refuses_what_is_outside_the_subset(text: str) -> None:
    with pytest.raises(YamlSubsetError):
        loads_all(text)


@pytest.mark.parametrize("path", ALL_YAML, ids=lambda p: p.relative_to(files.DEPLOY).as_posix())
def test_deploy_yaml_stays_in_the_subset(path: Path) -> None:
    assert loads_all(path.read_text(encoding="utf-8"), str(path))


def test_deploy_yaml_reads_as_pyyaml_reads_it() -> None:
    yaml = pytest.importorskip("yaml")  # not a dependency; compared when it happens to be there
    for path in ALL_YAML:
        text = path.read_text(encoding="utf-8")
        assert list(yaml.safe_load_all(text)) == loads_all(text, str(path)), path
