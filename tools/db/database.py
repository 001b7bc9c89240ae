"""Opens the database (SQLite by default, PostgreSQL in production) and hands out sessions."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from tools.db import tenancy

__all__ = ["DEFAULT_URL", "Database"]

DEFAULT_URL = "sqlite+aiosqlite:///countersign.db"
_IMMEDIATE = "countersign_begin_immediate"


class Database:
    """One engine and its session factory; every process opens exactly one."""

    def __init__(self, url: str = DEFAULT_URL, *, echo: bool = False) -> None:
        self.url = make_url(url)
        kwargs: dict[str, Any] = {"echo": echo}
        if self.is_sqlite:
            kwargs["connect_args"] = {"timeout": 30}
        else:
            kwargs.update(pool_pre_ping=True, pool_size=10, max_overflow=20)
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.is_sqlite:
            _serialise_sqlite_writers(self.engine)
        self._writer = self.engine.execution_options(**{_IMMEDIATE: True})
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._writes = async_sessionmaker(self._writer, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    def session(self, *, write: bool = False) -> AsyncSession:
        """A session for the engine's own tables (proposals, audit); not limited to a tenant.

        ``write=True`` marks a transaction that reads and then writes (on SQLite it takes the
        write lock up front; see ``_serialise_sqlite_writers``).
        """
        return self._writes() if write else self._sessions()

    def begin(self, *, write: bool = False) -> AbstractAsyncContextManager[AsyncConnection]:
        """A Core connection in a transaction that commits when the block ends (rolls back on error).

        For the engine's own tables (cards, audit, leases) on the approval path, where an ORM
        session's unit of work would cost more than the statements themselves. ``write=True``
        as for ``session``.
        """
        return (self._writer if write else self.engine).begin()

    def tenant_session(self, tenantid: int, *, write: bool = False) -> AsyncSession:
        """A session whose every ORM statement sees only ``tenantid``'s rows."""
        session = self.session(write=write)
        session.info[tenancy.TENANT_KEY] = tenantid
        return session

    async def dispose(self) -> None:
        await self.engine.dispose()


def _serialise_sqlite_writers(engine: AsyncEngine) -> None:
    """Makes SQLite transactions that read then write take the write lock when they begin.

    SQLite's default deferred transactions upgrade a read lock to a write lock at the first
    write; when another connection wrote in between, the upgrade fails at once with "database
    is locked" instead of waiting: fifty presses of one card failed that way. Write sessions
    therefore BEGIN IMMEDIATE and queue on the busy timeout. Read sessions stay deferred, so a
    long write never stalls a reader (WAL lets them read the last committed state).
    """

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; commits skip an fsync
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
