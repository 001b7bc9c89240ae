"""Opens the database (SQLite by default, PostgreSQL in production) and hands out sessions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from tools.db import tenancy

__all__ = ["DEFAULT_URL", "Database"]

DEFAULT_URL = "sqlite+aiosqlite:///countersign.db"


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
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    def session(self) -> AsyncSession:
        """A session for the engine's own tables (proposals, audit); not limited to a tenant."""
        return self._sessions()

    def tenant_session(self, tenantid: int) -> AsyncSession:
        """A session whose every ORM statement sees only ``tenantid``'s rows."""
        session = self._sessions()
        session.info[tenancy.TENANT_KEY] = tenantid
        return session

    async def dispose(self) -> None:
        await self.engine.dispose()


def _serialise_sqlite_writers(engine: AsyncEngine) -> None:
    """Makes every SQLite transaction take the write lock when it begins.

    SQLite's default deferred transactions upgrade a read lock to a write lock at the first
    write; when another connection wrote in between, the upgrade fails at once with "database
    is locked" instead of waiting — fifty presses of one card failed that way. BEGIN IMMEDIATE
    makes them queue on the busy timeout instead. WAL lets readers outside a transaction proceed.
    """

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
