"""Configures logging once per process: JSON lines for machines, readable lines for people; never touches stdout, never writes a credential.

Commands print their answers on stdout, so a script can read them; every log line, ours
(structlog) and the libraries' (the standard ``logging`` module, e.g. Alembic's migration
steps), goes to stderr instead. Our lines are one JSON object each when that stream is not a
terminal (a process manager, a log shipper: each line parses on its own) and structlog's
console rendering when a person is watching. Whatever the core binds with
``structlog.contextvars`` for a turn or a press (tenant, person, card id) is on every line.

No line holds a credential: ``bot.runtime.redaction`` rewrites ours (a structlog processor) and
the libraries' (the handler's formatter), tracebacks included, and ``AccessLog`` writes a
request's method and path, never its query or headers.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TextIO

import structlog
from aiohttp.abc import AbstractAccessLogger
from aiohttp.web import BaseRequest, StreamResponse
from pydantic import BaseModel, SecretStr
from structlog.typing import Processor

from bot.runtime.redaction import RedactingFormatter, Redactor

__all__ = [
    "AccessLog",
    "LogLevelError",
    "configure_logging",
    "parse_level",
    "renderer",
    "secrets_of",
]


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
        # Plain: the traceback is already text, redacted (``Redactor.exception``) by now.
        return structlog.dev.ConsoleRenderer(
            colors=True, exception_formatter=structlog.dev.plain_traceback
        )
    return structlog.processors.JSONRenderer()


class AccessLog(AbstractAccessLogger):
    """aiohttp's access line without what may be a credential: the query string (an OAuth
    ``code``, a token a client put in the URL) and the headers (Referer, Authorization)."""

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        self.logger.info(
            '%s "%s %s" %s %s %.3fs',
            request.remote,
            request.method,
            request.path,
            response.status,
            response.body_length,
            time,
        )


def configure_logging(
    level_name: str, *, stream: TextIO | None = None, secrets: Iterable[str] = ()
) -> None:
    """Sends structlog and standard-library logging to ``stream`` (stderr) at ``level_name``.

    ``secrets``: the configuration's own (a signing secret, an app password), written nowhere
    even where nothing shows they are one.

    Raises:
        LogLevelError: the name is not a logging level.
    """
    stream = stream or sys.stderr
    level = parse_level(level_name)
    # Libraries speak at WARNING unless DEBUG is asked for: at INFO, Alembic alone prints five
    # lines of "Context impl SQLiteImpl" on every `countersign demo`, burying the answer.
    library_level = level if level <= logging.DEBUG else max(level, logging.WARNING)
    redactor = Redactor(secrets)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter(redactor, "%(levelname)-8s %(name)s: %(message)s"))
    logging.basicConfig(level=library_level, handlers=[handler])
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.ExceptionRenderer(redactor.exception),
            redactor,
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


def secrets_of(settings: BaseModel) -> list[str]:
    """Every secret ``settings`` (the configuration) holds, each key of a comma-separated
    list on its own."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            raw = value.get_secret_value()
            found += [raw, *(part.strip() for part in raw.split(","))]
    return found
