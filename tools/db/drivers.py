"""Awaits aiosqlite and asyncpg inside the transaction SQLAlchemy began, for ``tools.db.compiled``;
never begins or ends a transaction, and never keeps a connection a cancelled statement left in
an unknown state.

Each driver function sends one statement and returns its rows and row count. Errors come out as
SQLAlchemy's (through the adapters' own translation), and an exit exception (a cancel, an
interrupt, a timeout) throws the connection away rather than letting the pool hand it out
again, as ``AsyncConnection.execute`` does. This leans on private parts of a pinned SQLAlchemy
(the asyncpg adapter's ``_transaction``, ``_start_transaction``, ``_execute_mutex`` and
``_connection``, both adapters' ``_handle_exception``); the tests run every path on both
databases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.pool import PoolProxiedConnection
from sqlalchemy.util import is_exit_exception

__all__ = ["DRIVERS", "Ran", "abandon", "translated"]

Ran = tuple[Sequence[Any], int]


async def _on_asyncpg(
    pooled: PoolProxiedConnection, sql: str, values: tuple[Any, ...], rows: bool
) -> Ran:
    """On asyncpg, in the transaction of SQLAlchemy's asyncpg adapter: started here if this is
    its first statement, exactly as the adapter starts it for ``execute``, and holding the
    adapter's lock. asyncpg's errors become the adapter's DBAPI errors."""
    adapter: Any = pooled.dbapi_connection
    try:
        async with adapter._execute_mutex:
            if adapter._transaction is None:
                await adapter._start_transaction()
            if rows:
                found = await adapter._connection.fetch(sql, *values)
                return found, len(found)
            status: str = await adapter._connection.execute(sql, *values)
            return [], int(status.rsplit(" ", 1)[-1])  # "UPDATE 1", "INSERT 0 1"
    except Exception as error:
        if is_exit_exception(error):
            raise  # a timeout: the connection is abandoned, not translated (see ``_run``)
        adapter._handle_exception(error)
        raise  # not reached: the adapter raises the DBAPI error


async def _on_aiosqlite(
    pooled: PoolProxiedConnection, sql: str, values: tuple[Any, ...], rows: bool
) -> Ran:
    """Straight on aiosqlite: SQLAlchemy's begin already sent BEGIN on this connection (see
    ``tools.db.database``), so the statement is inside its transaction."""
    driver: Any = pooled.driver_connection
    try:
        async with driver.execute(sql, values) as cursor:
            found = await cursor.fetchall() if rows else []
            return found, cursor.rowcount
    except Exception as error:
        if is_exit_exception(error):
            raise
        # aiosqlite's own ValueError for a closed connection becomes the adapter's
        # OperationalError, which the dialect knows for a disconnect.
        pooled.dbapi_connection._handle_exception(error)  # type: ignore[union-attr]
        raise  # not reached: the adapter raises


# The drivers it runs on (``Database`` refuses any other): the two this project supports.
DRIVERS: dict[
    str, Callable[[PoolProxiedConnection, str, tuple[Any, ...], bool], Awaitable[Ran]]
] = {
    "asyncpg": _on_asyncpg,
    "aiosqlite": _on_aiosqlite,
}


async def abandon(conn: AsyncConnection, error: BaseException) -> None:
    """Makes sure a connection whose statement was cancelled mid-way is never used again, as
    ``execute`` does for an exit exception: whatever was in flight (a BEGIN asyncpg sent but
    the adapter never recorded, a statement still running on aiosqlite's thread) leaves the
    connection in a state the pool's reset cannot see, and a later COMMIT would not be one."""
    sync = conn.sync_connection
    if sync is None or sync.invalidated or sync.closed:
        return
    adapter: Any = sync.connection.dbapi_connection
    if sync.dialect.driver == "asyncpg":
        # Synchronous, so dead even if a second cancel stops the invalidation below.
        adapter._connection.terminate()
    await asyncio.shield(conn.invalidate(error))


async def translated(
    conn: AsyncConnection, sql: str, values: tuple[Any, ...], error: Exception
) -> DBAPIError:
    """The driver's error as ``sqlalchemy.exc`` names it; a dropped connection is invalidated
    so the pool does not hand it out again (as ``execute`` would)."""
    dialect = conn.dialect
    sync = conn.sync_connection
    assert sync is not None
    dropped = dialect.is_disconnect(error, sync.connection.dbapi_connection, None)  # type: ignore[arg-type]
    if dropped:
        await conn.invalidate(error)
    translated = DBAPIError.instance(
        sql,
        values,
        error,
        dialect.loaded_dbapi.Error,
        connection_invalidated=dropped,
        dialect=dialect,
    )
    assert isinstance(translated, DBAPIError)  # a driver error always becomes one
    return translated
