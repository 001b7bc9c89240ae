"""Configures logging once per process: JSON lines for machines, readable lines for people; never touches stdout.

Commands print their answers on stdout, so a script can read them; every log line, ours
(structlog) and the libraries' (the standard ``logging`` module, e.g. Alembic's migration
steps), goes to stderr instead. Our lines are one JSON object each when that stream is not a
terminal (a process manager, a log shipper: each line parses on its own) and structlog's
console rendering when a person is watching. Whatever the core binds with
``structlog.contextvars`` for a turn or a press (tenant, person, card id) is on every line.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog
from structlog.typing import Processor

__all__ = ["LogLevelError", "configure_logging", "parse_level", "renderer"]


class LogLevelError(ValueError):
    """LOG_LEVEL names no level; the message lists the ones that exist."""


def parse_level(name: str) -> int:
    """The numeric level for a name such as ``"info"`` or ``"DEBUG"``.

    Raises:
        LogLevelError: the name is not a logging level.
    """
    levels = logging.getLevelNamesMapping()
    level = levels.get(name.strip().upper())
    if level is None or name.strip().upper() == "NOTSET":
        known = ", ".join(("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
        raise LogLevelError(f"LOG_LEVEL={name!r} is not a logging level; use one of {known}.")
    return level


def renderer(stream: TextIO) -> Processor:
    """JSON lines unless ``stream`` is a terminal, where a person reads them: then the console's."""
    if stream.isatty():
        return structlog.dev.ConsoleRenderer(colors=True)
    return structlog.processors.JSONRenderer()


def configure_logging(level_name: str, *, stream: TextIO | None = None) -> None:
    """Sends structlog and standard-library logging to ``stream`` (stderr) at ``level_name``.

    Raises:
        LogLevelError: the name is not a logging level.
    """
    stream = stream or sys.stderr
    level = parse_level(level_name)
    # Libraries speak at WARNING unless DEBUG is asked for: at INFO, Alembic alone prints five
    # lines of "Context impl SQLiteImpl" on every `countersign demo`, burying the answer.
    library_level = level if level <= logging.DEBUG else max(level, logging.WARNING)
    logging.basicConfig(
        level=library_level, stream=stream, format="%(levelname)-8s %(name)s: %(message)s"
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *([] if stream.isatty() else [structlog.processors.format_exc_info]),
            renderer(stream),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # One write per line (print() makes two: the text, then the newline). Workers share
        # stderr, and with an unbuffered stream another worker's line could land in between.
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        # Not cached: tests swap the configuration with structlog.testing.capture_logs, and a
        # logger cached before the swap would keep writing to stderr and miss the capture.
        cache_logger_on_first_use=False,
    )
