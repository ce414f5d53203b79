"""Structured logs (structlog): one JSON object per line, with connection, room and seat bound.

Loggers are bound explicitly (``log.bind(conn=..., room=..., seat=...)``) rather than through
context variables, because one room task serves many connections and one connection many rooms.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


def configure(fmt: str = "json", level: str = "info") -> None:
    global _base
    _base = None  # (made again under the new configuration)
    renderer: Any
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    # websockets logs handshake failures through the standard library; keep them quiet.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    """A logger on the *current* ``sys.stderr`` (test capture replaces it after configure)."""
    return structlog.PrintLogger(sys.stderr)


_base: tuple[object, Any] | None = None
"""The ``sys.stderr`` of the last :func:`get`, and the logger every logger is bound from while
it is the same (:func:`_stderr_logger`'s output)."""


def get(**bound: Any) -> Any:
    """A logger with ``bound`` fields (typed Any: structlog's bound loggers are dynamic).

    Bound from one logger made once per configuration and ``sys.stderr``: making a logger
    (structlog's configuration read, :func:`_stderr_logger` called) costs about five times
    binding one (42,300 instructions against 7,900), and a rematch makes a room, and its
    logger, every few actions of a short match."""
    global _base
    out = sys.stderr
    if _base is None or _base[0] is not out:
        _base = (out, structlog.get_logger("oasis").bind())
    return _base[1].bind(**bound)
