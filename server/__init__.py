"""The Oasis server: asyncio + websockets, rooms, persistence in Redis, clocks, bots, metrics.

An application, not a library: the outside reaches it through :mod:`.main` (``oasis-server``),
:mod:`.replay` (``oasis replay``), :mod:`.app` (the server in one process, as tests and
benchmarks run it) and :mod:`.config` (its settings). Every other module is the server's own.
It imports ``games`` and ``protocol``, never ``clients`` (``tests/test_layers.py``).
"""

__all__ = ["app", "config", "main", "replay"]
