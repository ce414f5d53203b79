"""The wire: msgpack framing, JSON Patch diffs, the view hash, error codes. No I/O.

See ``protocol/SPEC.md`` for the contract a frontend implements.
"""

PROTOCOL_VERSION = 1
