"""Every package declares its public surface in ``__all__``, and this table pins each one
(httpx's lesson): a name joins or leaves a surface on purpose, with this test changed.

In ``protocol`` every module declares one too, and every public name a module defines is in it:
a helper other modules must not rely on starts with ``_`` (the size rule's helpers are), and so
does a private module whose names a public one exports as its own (``protocol._spliced``, the
compiled half of :mod:`protocol.frames`).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
LAYERS = ("protocol", "games", "server", "clients", "oasis")

SURFACES: dict[str, set[str]] = {
    "protocol": {
        "PROTOCOL_MINOR",
        "PROTOCOL_VERSION",
        "codec",
        "errors",
        "frames",
        "hashing",
        "messages",
        "mirror",
        "patch",
        "pointer",
        "tree",
    },
    "protocol.codec": {
        "DEFAULT_LIMITS",
        "Limits",
        "array_header",
        "array_length",
        "canonical",
        "canonical_array",
        "canonical_copy",
        "canonical_key",
        "canonical_map",
        "check_value",
        "decode",
        "encode",
        "map_header",
        "pack",
        "unpack",
    },
    "protocol.errors": {
        "CLOSE_CODES",
        "ErrorCode",
        "FrameError",
        "ProtocolError",
        "QuotaExceeded",
        "RequestError",
        "ServerFrameError",
    },
    "protocol.frames": {
        "SERVER_TYPES",
        "Ack",
        "Bye",
        "ChatLine",
        "ErrorFrame",
        "Joined",
        "Patch",
        "Pause",
        "Pong",
        "Redirect",
        "RevisionFrames",
        "RoomInfo",
        "Rooms",
        "ServerFrame",
        "State",
        "Welcome",
        "ack_head",
        "encode_ack",
        "encode_events",
        "encode_frame",
        "encode_frame_with",
        "encode_ops",
        "encode_patch",
        "parse_frame",
    },
    "protocol.hashing": {
        "HASH_RULES",
        "ChainedHasher",
        "DocumentHasher",
        "ViewHasher",
        "chained_hash",
        "document_hash",
        "hash_bytes",
        "view_hash",
    },
    "protocol.messages": {
        "clean_text",
        "CLIENT_TYPES",
        "DEFAULT_REPLAY_INTERVAL",
        "LISTED_STATES",
        "MAX_CHAT_CHARS",
        "MAX_CURSOR_CHARS",
        "MAX_DELAY_SECONDS",
        "MAX_ID_CHARS",
        "MAX_NAME_CHARS",
        "MAX_PAGE",
        "MAX_REPLAY_INTERVAL",
        "MAX_ROOM_CHARS",
        "MAX_TOKEN_CHARS",
        "Act",
        "Chat",
        "Create",
        "Hello",
        "Join",
        "Leave",
        "ListRooms",
        "Ping",
        "Quick",
        "Rematch",
        "Replay",
        "Request",
        "RequestId",
        "RoomRequest",
        "Spectate",
        "Start",
        "Sync",
        "Undo",
        "parse",
        "request_id",
    },
    "protocol.mirror": {"Mirror", "Update"},
    "protocol.patch": {"Op", "PatchError", "apply", "diff"},
    "protocol.pointer": {"PointerError", "escape", "index", "parse", "pointer", "unescape"},
    "protocol.tree": {"Tree", "Work", "diff_trees", "track"},
    "games": {
        "JSON",
        "Choice",
        "ChoiceError",
        "Decision",
        "EditionError",
        "Event",
        "Game",
        "GameError",
        "GameOverError",
        "IllegalChoice",
        "MalformedChoice",
        "Match",
        "NotYourTurnError",
        "OptionsError",
        "Result",
        "Rng",
        "SnapshotError",
        "UndoRefused",
        "View",
        "audience_view",
    },
    "games.registry": {"get", "names", "register"},
    "games.ishtar": {"GAME", "Ishtar"},
    "games.yspahan": {"GAME", "Yspahan"},
    "server": {"app", "config", "main", "replay"},
    "server.store": {
        "SCHEMA_VERSION",
        "UNDO",
        "Action",
        "ArchiveRecord",
        "CorruptRecordError",
        "MemoryStore",
        "NotOwnerError",
        "RevisionError",
        "RoomGoneError",
        "RoomMeta",
        "RoomRecord",
        "SeatMeta",
        "Snapshot",
        "Store",
        "StoreError",
        "is_undo",
    },
    "server.relay": {"Publisher", "Relay", "spectator_counts"},
    "server.cluster": {"Cluster", "default_url", "fence_of"},
    "server.bots": {"BOT_KINDS", "DEFAULT_KIND", "Bot", "RandomPlayer", "ScoringBot", "make_bot"},
    "clients": {
        "after_match",
        "bots",
        "choices",
        "connection",
        "errors",
        "fullscreen",
        "gamedata",
        "hexgrid",
        "intents",
        "keys",
        "lobby",
        "notices",
        "plain",
        "play",
        "printable",
        "reference",
        "render",
        "watch",
    },
    "clients.render": {
        "BODIES",
        "BOARDS",
        "Board",
        "board",
        "common",
        "event_line",
        "full",
        "ishtar",
        "screen",
        "yspahan",
    },
    "oasis": {"cli"},
}


def _packages() -> list[str]:
    found = []
    for layer in LAYERS:
        for init in sorted((ROOT / layer).rglob("__init__.py")):
            if "node_modules" in init.parts:
                continue  # the browser client's npm packages (clients/web)
            found.append(".".join(init.parent.relative_to(ROOT).parts))
    return found


def _protocol_modules() -> list[str]:
    return [f"protocol.{p.stem}" for p in sorted((ROOT / "protocol").glob("[!_]*.py"))]


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_each_surface_is_the_declared_one_and_every_name_in_it_exists(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == SURFACES[name]
    assert len(module.__all__) == len(set(module.__all__))
    for item in module.__all__:
        if not hasattr(module, item):
            importlib.import_module(f"{name}.{item}")  # a submodule of the surface


def test_every_package_and_every_protocol_module_is_in_the_table() -> None:
    assert set(_packages()) | set(_protocol_modules()) <= set(SURFACES)
    assert len(_protocol_modules()) >= 9


@pytest.mark.parametrize("name", _protocol_modules())
def test_every_public_name_a_protocol_module_defines_is_in_its_surface(name: str) -> None:
    path = ROOT / Path(*name.split(".")).with_suffix(".py")
    defined: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("protocol._"):
            defined |= {a.asname or a.name for a in node.names}  # (its own, kept apart)
    public = {n for n in defined if not n.startswith("_")}
    assert public == set(importlib.import_module(name).__all__)
