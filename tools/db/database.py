"""Opens the database (SQLite by default, PostgreSQL in production) and hands out sessions."""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import Connection, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.util.concurrency import await_

from tools.db import compiled, ends, tenancy

__all__ = ["DEFAULT_URL", "Database"]

DEFAULT_URL = "sqlite+aiosqlite:///countersign.db"
_IMMEDIATE = "countersign_begin_immediate"
# A pooled connection idle for longer than this is pinged before use (see _ping_when_idle).
PING_AFTER_IDLE = 1.0
_IDLE_SINCE = "countersign_idle_since"


class Database:
    """One engine and its session factory; every process opens exactly one."""

    def __init__(self, url: str = DEFAULT_URL, *, echo: bool = False) -> None:
        self.url = make_url(url)
        if self.url.get_driver_name() not in compiled.DRIVERS:
            raise ValueError(
                f"{self.url.drivername}: use sqlite+aiosqlite:// or postgresql+asyncpg:// "
                "(the approval path runs its statements on those two drivers)"
            )
        kwargs: dict[str, Any] = {"echo": echo}
        if self.is_sqlite:
            kwargs["connect_args"] = {"timeout": 30}
        else:
            kwargs.update(pool_size=10, max_overflow=20)
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.is_sqlite:
            _serialise_sqlite_writers(self.engine)
        else:
            _ping_when_idle(self.engine)
        self._writer = self.engine.execution_options(**{_IMMEDIATE: True})
        self._sessions = async_sessionmaker(
            self.engine, expire_on_commit=False, class_=ends.Session
        )
        self._writes = async_sessionmaker(self._writer, expire_on_commit=False, class_=ends.Session)

    @property
    def writing_engine(self) -> AsyncEngine:
        """The engine, its every transaction one that reads and then writes (``write=True``):
        for a library's own store, which cannot ask for that per transaction."""
        return self._writer

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
        as for ``session``. Opened and ended in one greenlet each (``tools.db.ends``).
        """
        return ends.begin(self._writer if write else self.engine)

    def tenant_session(self, tenantid: int, *, write: bool = False) -> AsyncSession:
        """A session whose every ORM statement sees only ``tenantid``'s rows."""
        session = self.session(write=write)
        session.info[tenancy.TENANT_KEY] = tenantid
        return session

    async def dispose(self) -> None:
        await self.engine.dispose()


def _ping_when_idle(engine: AsyncEngine) -> None:
    """Pings a pooled connection before use only when it sat idle for over ``PING_AFTER_IDLE``.

    ``pool_pre_ping`` pinged on every checkout, and the asyncpg ping is three round trips
    (BEGIN, an empty query, ROLLBACK): nine per approval, more than a third of the round trips
    its own SQL needs. A connection handed back a few milliseconds ago is as alive as one just
    pinged; the ping is for connections that sat in the pool across a database restart or a
    network drop, and a restart takes longer than a second. A connection failing the ping is
    discarded and the pool takes (or opens) another, as with ``pool_pre_ping``.
    """
    pool = engine.sync_engine.pool

    def _idle_from_now(dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    event.listen(pool, "connect", _idle_from_now)
    event.listen(pool, "checkin", _idle_from_now)

    @event.listens_for(pool, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        since = record.info.get(_IDLE_SINCE)
        if since is not None and time.monotonic() - since < PING_AFTER_IDLE:
            return
        try:
            dbapi_connection.ping()
        except Exception as dead:  # whatever the driver raised, this connection is not usable
            raise DisconnectionError(f"pooled connection failed its ping: {dead!r}") from dead


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
    def _on_begin(conn: Connection) -> None:
        sql = "BEGIN IMMEDIATE" if conn.get_execution_options().get(_IMMEDIATE) else "BEGIN"
        # Straight to aiosqlite (this runs in SQLAlchemy's greenlet): through exec_driver_sql a
        # BEGIN cost an execution context and a result, twice the driver's own work, in every
        # transaction. Its errors (a lock not granted in time) still surface as SQLAlchemy's.
        dbapi_error = conn.dialect.loaded_dbapi.Error
        try:
            await_(_send(conn.connection.driver_connection, sql))
        except dbapi_error as error:
            raise DBAPIError.instance(sql, (), error, dbapi_error, dialect=conn.dialect) from error


async def _send(driver: Any, sql: str) -> None:
    async with driver.execute(sql):
        pass
