"""Opens the one database a command uses and always disposes of it; never migrates by itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.engine import URL

from bot.cli.failures import database_errors
from tools.db import Database

__all__ = ["open_database", "probe_database"]


@asynccontextmanager
async def open_database(url: URL) -> AsyncIterator[Database]:
    """A ``Database`` for the block; its failures become one readable line (``CliError``).

    Disposing matters even on failure: an engine left open keeps asyncpg connections and
    aiosqlite threads alive past the event loop, which then print errors on the way out.
    """
    db = Database(url.render_as_string(hide_password=False))
    try:
        with database_errors(url):
            yield db
    finally:
        await db.dispose()


async def probe_database(url: URL) -> None:
    """Connects once, so a wrong or unreachable database is reported before anything starts."""
    async with open_database(url) as db, db.session() as session:
        await session.execute(text("SELECT 1"))
