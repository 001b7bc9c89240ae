"""Turns the failures a person can fix into one readable line; never hides a bug.

A wrong DATABASE_URL, a database that is down or not migrated yet, an unknown email: these are
answers, printed on stderr with exit status 1 and no traceback. Anything else is a bug and keeps
its traceback, so it can be reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

__all__ = ["SUPPORTED_DRIVERS", "CliError", "checked_url", "database_errors", "shown_url"]

# The drivers this build installs; any other needs a package we do not ship.
SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")

_URL_HELP = (
    "Set DATABASE_URL to sqlite+aiosqlite:///countersign.db or "
    "postgresql+asyncpg://USER:PASSWORD@HOST:5432/DATABASE."
)
_MIGRATE_HELP = "Please run `countersign db upgrade` (or `countersign demo` for sample data) first."


# What the database raises when it is wrong, down or not migrated.
_DATABASE_FAILURES = (SQLAlchemyError, OSError, asyncpg.PostgresError, asyncpg.InterfaceError)


class CliError(Exception):
    """An expected failure; its message is the single line the person reads.

    ``output`` is what the command still has to show (a table with a row that failed): it is
    printed on stdout before the message goes to stderr, and the exit status is still 1.
    """

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.output = output


def checked_url(raw: str) -> URL:
    """Parses DATABASE_URL, refusing what this build cannot open, with what to set instead.

    Raises:
        CliError: the URL does not parse or names a driver that is not installed.
    """
    try:
        url = make_url(raw)
    except ArgumentError:
        # The raw value is not echoed: it may hold a password.
        raise CliError(f"DATABASE_URL is not a database address. {_URL_HELP}") from None
    if url.drivername not in SUPPORTED_DRIVERS:
        raise CliError(
            f"DATABASE_URL uses the driver {url.drivername!r}, which this build cannot use. "
            + _URL_HELP
        )
    return url


def shown_url(url: URL) -> str:
    """The URL as it may be printed: the password masked."""
    return url.render_as_string(hide_password=True)


@contextmanager
def database_errors(url: URL) -> Iterator[None]:
    """Rewrites failures of the database itself (down, refusing, not migrated) as ``CliError``.

    Only the database's own errors are caught; a refusal from the product (say, an unknown
    email) and bugs pass through unchanged.
    """
    try:
        yield
    except _DATABASE_FAILURES as failed:
        raise CliError(describe(failed, url)) from failed


def describe(failed: BaseException, url: URL) -> str:
    """One line saying what went wrong with the database at ``url`` and what to do."""
    where = shown_url(url)
    reason = _reason(failed)
    if _tables_missing(reason):
        return f"The database {where} has no Countersign tables yet ({reason}). {_MIGRATE_HELP}"
    return (
        f"Could not use the database {where}: {reason}. "
        "Please check DATABASE_URL and that the database server is running and reachable."
    )


def _reason(failed: BaseException) -> str:
    # SQLAlchemy's own text adds the SQL and a link; the driver's message is the useful part.
    cause = failed.orig if isinstance(failed, DBAPIError) and failed.orig is not None else failed
    text = str(cause).strip() or type(cause).__name__
    return " ".join(text.split())


def _tables_missing(reason: str) -> bool:
    # SQLite says "no such table: people"; PostgreSQL says 'relation "people" does not exist'
    # (and 'database "x" does not exist' when it is the database that is missing).
    lowered = reason.lower()
    return "no such table" in lowered or ("relation" in lowered and "does not exist" in lowered)
