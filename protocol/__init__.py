"""The wire, whole: everything a server or a Python frontend needs to speak protocol v1. No I/O.

See ``protocol/SPEC.md`` for the contract a frontend implements. The public surface is the
modules below, each with its own ``__all__`` (a test pins them); names that start with ``_``
are private to the package.

- :mod:`.codec`: msgpack framing with limits, the canonical encoding (one writer) and the
  container headers;
- :mod:`.errors`: the error hierarchy and its stable codes;
- :mod:`.messages`: client frames, parsed into typed requests;
- :mod:`.frames`: server frames, typed, built by the server and parsed by clients;
- :mod:`.pointer`: JSON Pointers (the one writer and parser of patch paths);
- :mod:`.patch`: JSON Patch diff (the server's) and apply (path copying, every client's);
- :mod:`.tree`: documents kept as canonical bytes per field, and the diff between versions;
- :mod:`.hashing`: the view hash, the one rule;
- :mod:`.mirror`: a client's view of one room rebuilt from frames.

Nothing here imports the rest of the project.
"""

from protocol import codec, errors, frames, hashing, messages, mirror, patch, pointer, tree

PROTOCOL_VERSION = 1
"""The major version: ``hello.version`` must equal it."""
PROTOCOL_MINOR = 5
"""The minor version, in ``welcome.minor``: what this server adds to version 1 without breaking
a client of an older minor (SPEC "Versions")."""

__all__ = [
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
]
