"""A strict reader for the small YAML subset the files of ``deploy/`` are written in.

PyYAML is not a dependency of the project, and the deploy tests need only a few fields, so this
reads the subset those files use and refuses everything else with :class:`YamlSubsetError`
naming the file and line (a file that leaves the subset fails its test loudly instead of being
misread). The subset:

- documents separated by ``---``; ``#`` comments (at line start or after a space);
- block mappings and block sequences by indentation (spaces only); a sequence may sit at its
  key's indentation (``key:`` then ``- item``); ``- key: value`` starts a mapping item;
- one-line flow collections: ``[a, "b", 1]`` and ``{a: 1}``, nested;
- scalars: plain, ``"double"`` (escapes ``\\"``, ``\\\\``, ``\\n``, ``\\t``) and ``'single'``
  (``''``); a plain scalar is an int, a float, ``true``/``false``, ``null``/``~`` or a string;
- anchors on a block mapping (``key: &name``), aliases (``*name``) and the merge key ``<<``.

Refused: tabs, block scalars (``|``, ``>``), tags, multi-line scalars, duplicate keys, and the
plain words YAML 1.1 reads as booleans (``yes``, ``no``, ``on``, ``off``): quote
them, so that every YAML reader (compose's, kubectl's, PyYAML) agrees with this one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_AMBIGUOUS = {"yes", "no", "on", "off"}
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class YamlSubsetError(ValueError):
    """The text is outside the subset (or not YAML at all)."""


@dataclass
class _Line:
    number: int
    indent: int
    text: str


def load_all(path: Path) -> list[Any]:
    """Every document of the file at ``path``."""
    return loads_all(path.read_text(encoding="utf-8"), str(path))


def load(path: Path) -> Any:
    """The only document of the file at ``path``."""
    documents = load_all(path)
    if len(documents) != 1:
        raise YamlSubsetError(f"{path}: {len(documents)} documents, expected one")
    return documents[0]


def loads_all(text: str, name: str = "<text>") -> list[Any]:
    documents: list[list[_Line]] = [[]]
    for number, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError(f"{name}:{number}: tab in indentation")
        content = _strip_comment(raw, name, number).rstrip()
        if not content.strip():
            continue
        if content == "---":
            documents.append([])
            continue
        if content.startswith(("%", "...")):
            raise YamlSubsetError(f"{name}:{number}: directives are outside the subset")
        indent = len(content) - len(content.lstrip(" "))
        documents[-1].append(_Line(number, indent, content.strip()))
    result = []
    for lines in documents:
        if lines:
            result.append(_Reader(lines, name).document())
    return result


def _strip_comment(raw: str, name: str, number: int) -> str:
    quote = ""
    for i, char in enumerate(raw):
        if quote:
            if char == "\\" and quote == '"':
                continue
            if char == quote and not (quote == '"' and i > 0 and raw[i - 1] == "\\"):
                quote = ""
        elif char in "\"'" and (i == 0 or raw[i - 1] in " [{,:-"):
            quote = char
        elif char == "#" and (i == 0 or raw[i - 1] in " \t"):
            return raw[:i]
    if quote:
        raise YamlSubsetError(f"{name}:{number}: unterminated quote")
    return raw


class _Reader:
    def __init__(self, lines: list[_Line], name: str) -> None:
        self.lines = lines
        self.name = name
        self.i = 0
        self.anchors: dict[str, Any] = {}

    def fail(self, line: _Line, message: str) -> YamlSubsetError:
        return YamlSubsetError(f"{self.name}:{line.number}: {message}: {line.text!r}")

    def document(self) -> Any:
        first = self.lines[0]
        value = self.block(first.indent)
        if self.i < len(self.lines):
            raise self.fail(self.lines[self.i], "unexpected indentation")
        return value

    def block(self, indent: int) -> Any:
        line = self.lines[self.i]
        if line.indent != indent:
            raise self.fail(line, f"expected indentation {indent}")
        if _is_item(line.text):
            return self.sequence(indent)
        return self.mapping(indent)

    def sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.indent < indent:
                break
            if line.indent > indent or not _is_item(line.text):
                if line.indent == indent:
                    break
                raise self.fail(line, "unexpected indentation")
            rest = line.text[1:].lstrip(" ")
            if not rest:
                self.i += 1
                items.append(self.nested(line, indent))
            elif _split_key(rest) is not None and not rest.startswith(("[", "{", '"', "'")):
                # "- key: value": a mapping whose first key sits where `key` starts.
                column = indent + (len(line.text) - len(rest))
                self.lines[self.i] = _Line(line.number, column, rest)
                items.append(self.mapping(column))
            elif _is_item(rest):
                raise self.fail(line, "nested '- -' items are outside the subset")
            else:
                self.i += 1
                items.append(self.inline(rest, line))
        return items

    def mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise self.fail(line, "unexpected indentation")
            if _is_item(line.text):
                break
            split = _split_key(line.text)
            if split is None:
                raise self.fail(line, "expected 'key: value'")
            key_text, rest = split
            key = self.key(key_text, line)
            if key in result:
                raise self.fail(line, f"duplicate key {key!r}")
            self.i += 1
            anchor = None
            if rest.startswith("&"):
                anchor, _, rest = rest[1:].partition(" ")
                if not _NAME.fullmatch(anchor):
                    raise self.fail(line, "bad anchor name")
                rest = rest.strip()
            value = self.nested(line, indent) if not rest else self.inline(rest, line)
            if anchor is not None:
                self.anchors[anchor] = value
            if key == "<<":
                if not isinstance(value, dict):
                    raise self.fail(line, "'<<' merges a mapping only")
                merged.update(value)
                continue
            result[key] = value
        return {**merged, **result}

    def nested(self, line: _Line, indent: int) -> Any:
        """The block under ``line`` (deeper, or a sequence at the same indentation), or null."""
        if self.i >= len(self.lines):
            return None
        following = self.lines[self.i]
        if following.indent > indent:
            return self.block(following.indent)
        if following.indent == indent and _is_item(following.text) and not _is_item(line.text):
            return self.sequence(indent)
        return None

    def key(self, text: str, line: _Line) -> str:
        if text == "<<":
            return text
        value = _Flow(text, self, line).scalar_token(text)
        if not isinstance(value, str):
            value = text  # YAML keys such as `8765` stay text here; none are used as numbers
        return value

    def inline(self, text: str, line: _Line) -> Any:
        if text.startswith(("|", ">")):
            raise self.fail(line, "block scalars are outside the subset")
        if text.startswith(("!", "@", "`", "%")):
            raise self.fail(line, "tags and reserved indicators are outside the subset")
        if text.startswith("&"):
            raise self.fail(line, "anchors on scalars are outside the subset")
        if text.startswith("*"):
            name = text[1:]
            if name not in self.anchors:
                raise self.fail(line, f"unknown alias {name!r}")
            return self.anchors[name]
        flow = _Flow(text, self, line)
        value = flow.value()
        flow.end()
        return value


class _Flow:
    """One line's value: a scalar or a flow collection."""

    def __init__(self, text: str, reader: _Reader, line: _Line) -> None:
        self.text = text
        self.pos = 0
        self.reader = reader
        self.line = line

    def fail(self, message: str) -> YamlSubsetError:
        return self.reader.fail(self.line, message)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def end(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            raise self.fail(f"unexpected text at column {self.pos}")

    def value(self, in_flow: bool = False) -> Any:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("missing value")
        char = self.text[self.pos]
        if char == "[":
            return self.collection("]", in_flow)
        if char == "{":
            return self.collection("}", in_flow)
        if char in "\"'":
            return self.quoted(char)
        stop = ",]}" if in_flow else ""
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stop:
            if self.text.startswith(": ", self.pos) or (in_flow and self.text[self.pos] == ":"):
                break
            self.pos += 1
        return self.scalar_token(self.text[start : self.pos].strip())

    def collection(self, close: str, in_flow: bool) -> Any:
        self.pos += 1
        items: list[Any] = []
        pairs: dict[str, Any] = {}
        while True:
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == close:
                self.pos += 1
                return items if close == "]" else pairs
            item = self.value(in_flow=True)
            self.skip()
            if close == "}":
                if self.pos >= len(self.text) or self.text[self.pos] != ":":
                    raise self.fail("expected ':' in a flow mapping")
                self.pos += 1
                if not isinstance(item, str) or item in pairs:
                    raise self.fail("bad or duplicate flow mapping key")
                pairs[item] = self.value(in_flow=True)
                self.skip()
            else:
                items.append(item)
            if self.pos >= len(self.text):
                raise self.fail("unterminated flow collection")
            if self.text[self.pos] == ",":
                self.pos += 1
            elif self.text[self.pos] != close:
                raise self.fail(f"expected ',' or {close!r}")

    def quoted(self, quote: str) -> str:
        self.pos += 1
        out: list[str] = []
        escapes = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "/": "/"}
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if quote == '"' and char == "\\":
                following = self.text[self.pos + 1 : self.pos + 2]
                if following not in escapes:
                    raise self.fail(f"escape \\{following} is outside the subset")
                out.append(escapes[following])
                self.pos += 2
                continue
            if char == quote:
                if quote == "'" and self.text.startswith("''", self.pos):
                    out.append("'")
                    self.pos += 2
                    continue
                self.pos += 1
                return "".join(out)
            out.append(char)
            self.pos += 1
        raise self.fail("unterminated quoted scalar")

    def scalar_token(self, token: str) -> Any:
        if not token:
            raise self.fail("empty plain scalar")
        if token[0] in "\"'":
            flow = _Flow(token, self.reader, self.line)
            value = flow.quoted(token[0])
            flow.end()
            return value
        if token[0] in "&*!|>@`%[]{}," or token.startswith(("- ", "? ")) or " #" in token:
            raise self.fail(f"plain scalar {token!r} is outside the subset")
        lower = token.lower()
        if lower in _AMBIGUOUS:
            raise self.fail(f"quote {token!r}: YAML 1.1 readers take it for a boolean")
        if lower in ("true", "false"):
            if token not in ("true", "false"):
                raise self.fail(f"write {lower!r} in lower case")
            return token == "true"
        if token in ("null", "~"):
            return None
        if _INT.fullmatch(token):
            return int(token)
        if _FLOAT.fullmatch(token):
            return float(token)
        if re.fullmatch(r"[-+]?0[0-9xob_]+|[-+]?\.(inf|nan)|[0-9]+(:[0-9]+)+", lower):
            raise self.fail(f"quote {token!r}: YAML readers disagree on what it is")
        return token


def _is_item(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _split_key(text: str) -> tuple[str, str] | None:
    """``key: rest`` -> (key, rest); None when the line holds no mapping key."""
    if text[0] in "\"'":
        close = text.find(text[0], 1)
        if close < 0:
            return None
        after = text[close + 1 :]
        if after == ":" or after.startswith(": "):
            return text[: close + 1], after[1:].strip()
        return None
    if text[0] in "[{":
        return None
    for match in re.finditer(r":( |$)", text):
        return text[: match.start()], text[match.end() :].strip()
    return None
