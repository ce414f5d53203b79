"""The ``oasis`` command: the reference client's commands and the project's tools.

This launcher sits above every layer and imports each command's module only when that command
runs, so the client commands keep to ``clients -> protocol`` and never load the rules engines.
"""

__all__ = ["cli"]
