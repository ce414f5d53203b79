"""An engine with a bug: it imports a module that does not exist."""

import tests.games.engines.no_such_helper  # noqa: F401

GAME = None
