"""The protocol's JSON Schemas (``protocol/schema/``, draft 2020-12) as validators for the tests.

Every file is registered under its ``$id`` so that references between them (``view.json#/...``
from ``ishtar.json``) resolve offline. :func:`problems` lists what is wrong with a value against
one definition (an empty list: it validates), each problem naming where in the value it is.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from protocol.codec import canonical

SCHEMAS = Path(__file__).parents[2] / "protocol" / "schema"
BASE = "https://oasis.invalid/schema/"


@functools.cache
def documents() -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.json"))}


@functools.cache
def _registry() -> Registry[Any]:
    return Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in documents().values()
    )


@functools.cache
def validator(name: str, definition: str | None = None) -> Draft202012Validator:
    """A validator of ``name``'s definition ``definition`` (None: the whole file's schema)."""
    target = BASE + name + ("" if definition is None else f"#/$defs/{definition}")
    return Draft202012Validator({"$ref": target}, registry=_registry())


def problems(name: str, definition: str | None, value: Any) -> list[str]:
    found = []
    for error in validator(name, definition).iter_errors(value):
        where = "/".join(str(p) for p in error.absolute_path)
        found.append(f"{name}#{definition or ''} at /{where}: {error.message[:300]}")
    return found


def check(name: str, definition: str | None, value: Any) -> None:
    found = problems(name, definition, value)
    assert not found, "\n".join(found[:5])


def _resolve(name: str, pointer: str) -> tuple[str, str, Any]:
    """The schema at ``name#pointer``, following ``$ref`` chains: (file, pointer, schema)."""
    while True:
        node: Any = documents()[name]
        for part in pointer.strip("/").split("/") if pointer.strip("/") else []:
            node = node[int(part)] if isinstance(node, list) else node[part]
        target = node.get("$ref") if isinstance(node, dict) else None
        if target is None:
            return name, pointer, node
        file, _, pointer = target.partition("#")
        if file:
            name = file.removeprefix(BASE)


_PLAIN = {"type", "properties", "required", "additionalProperties", "description"}
_LIST = {"type", "items", "minItems", "maxItems", "description"}


class Checker:
    """Validates values against definitions, remembering what it already validated.

    Whole matches send thousands of views whose parts mostly repeat from one revision to the
    next; the library validates a view in about 0.1 s. So the checker descends the schema like
    a validator (plain objects, plain arrays, ``allOf``, nullable ``oneOf``, the if/then tables of
    choices and events picked by their ``kind``), checks the structure at each level itself
    (types, required and unknown keys, lengths) and hands everything else to the ``jsonschema``
    library, each distinct (definition, value) once. ``tests/protocol/test_schemas.py`` proves it
    finds what the library finds.
    """

    def __init__(self) -> None:
        self._seen: set[tuple[str, str, bytes]] = set()
        self.validated = 0

    def check(self, name: str, definition: str, value: Any) -> list[str]:
        return self._check(name, f"/$defs/{definition}", value, "")

    def _check(self, name: str, pointer: str, value: Any, where: str) -> list[str]:
        key = (name, pointer, canonical(value))
        if key in self._seen:
            return []
        name, pointer, schema = _resolve(name, pointer)
        found = self._descend(name, pointer, schema, value, where)
        if not found:
            self._seen.add(key)
        return found

    def _descend(self, name: str, pointer: str, schema: Any, value: Any, where: str) -> list[str]:
        if not isinstance(schema, dict):
            return self._full(name, pointer, value, where)
        keys = set(schema)
        if "allOf" in schema and keys <= _PLAIN | {"allOf"}:
            found = self._descend(
                name, pointer, {k: v for k, v in schema.items() if k != "allOf"}, value, where
            )
            for i, branch in enumerate(schema["allOf"]):
                if set(branch) == {"if", "then"} and _simple_if(branch["if"]):
                    ((field, test),) = branch["if"]["properties"].items()
                    if not isinstance(value, dict) or value.get(field) != test["const"]:
                        continue
                    found += self._check(name, f"{pointer}/allOf/{i}/then", value, where)
                else:
                    found += self._check(name, f"{pointer}/allOf/{i}", value, where)
            return found
        if keys <= {"description"}:
            return []
        one = schema.get("oneOf")
        if keys <= {"oneOf", "description"} and len(one) == 2 and {"type": "null"} in one:
            if value is None:
                return []
            other = 1 - one.index({"type": "null"})
            return self._check(name, f"{pointer}/oneOf/{other}", value, where)
        is_object = schema.get("type", "object") == "object" and "properties" in schema
        if keys <= _PLAIN and is_object and isinstance(value, dict):
            props = schema.get("properties", {})
            found = [
                f"{name}#{pointer} at {where or '/'}: missing {k!r}"
                for k in schema.get("required", [])
                if k not in value
            ]
            extra = schema.get("additionalProperties", True)
            for k, v in value.items():
                if k in props:
                    found += self._check(name, f"{pointer}/properties/{k}", v, f"{where}/{k}")
                elif extra is False:
                    found.append(f"{name}#{pointer} at {where or '/'}: undocumented {k!r}")
                elif extra is not True:
                    found += self._check(name, f"{pointer}/additionalProperties", v, f"{where}/{k}")
            return found
        if keys <= _LIST and schema.get("type") == "array" and isinstance(value, list):
            found = []
            if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
                found.append(f"{name}#{pointer} at {where or '/'}: {len(value)} items")
            if isinstance(schema.get("items"), dict):
                for i, item in enumerate(value):
                    found += self._check(name, f"{pointer}/items", item, f"{where}/{i}")
            return found
        return self._full(name, pointer, value, where)

    def _full(self, name: str, pointer: str, value: Any, where: str) -> list[str]:
        self.validated += 1
        validator = _pointer_validator(name, pointer)
        return [
            f"{name}#{pointer} at {where}/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(value)
        ]


def _simple_if(schema: Any) -> bool:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return (
        set(schema) == {"properties"}
        and isinstance(props, dict)
        and len(props) == 1
        and set(next(iter(props.values()))) == {"const"}
    )


@functools.cache
def _pointer_validator(name: str, pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{BASE}{name}#{pointer}"}, registry=_registry())
