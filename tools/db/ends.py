"""Opens and ends a transaction in one greenlet each, and closes a finished session at once; never runs a statement.

``AsyncEngine.begin`` spawns four greenlets per transaction (connect, begin, commit, close)
and runs the close in a task of its own, which costs a turn of the event loop; measured on this
project's two-core machine, that is 70–100 µs of CPU a transaction on either database, about
one and a half statements' worth, and an approval opens three transactions. ``begin`` here
connects and begins in one greenlet and commits and hands the connection back in another,
through the same SQLAlchemy calls (``Engine.connect``, ``Connection.begin``, the transaction's
own exit, ``Connection.close``), so the engine's events (SQLite's ``BEGIN IMMEDIATE``, the pool's
ping and reset) happen exactly as before.

A block that raises (a cancel included) ends as ``AsyncEngine.begin`` ends it: rolled back and
closed in a task that runs to completion even if the caller is cancelled again meanwhile
(SQLAlchemy's own ``_run_to_completion``, private to the pinned version). A cancel that arrives
while the commit is under way rolls back and closes the connection in that same greenlet before
it reaches the caller, as SQLAlchemy's commit would; a second cancel during that close makes the
pool throw the connection away rather than hand it out again.

``Session`` is an ``AsyncSession`` that, when nothing is open any more (committed, or never
begun), closes without a greenlet or a task: all that is left is forgetting its objects, which
does no I/O. A session with a transaction still open closes as ``AsyncSession`` does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession
from sqlalchemy.ext.asyncio.base import _run_to_completion
from sqlalchemy.util.concurrency import greenlet_spawn

__all__ = ["Session", "begin"]


@asynccontextmanager
async def begin(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """``engine.begin()``: a connection in a transaction, committed when the block ends and
    rolled back when it raises; the connection goes back to the pool either way."""
    sync = await greenlet_spawn(_begun, engine.sync_engine)
    try:
        yield AsyncConnection(engine, sync)
    except BaseException as error:
        await _run_to_completion(
            greenlet_spawn(_ended, sync, type(error), error, error.__traceback__)
        )
        raise
    await greenlet_spawn(_ended, sync, None, None, None)


def _begun(engine: Engine) -> Connection:
    conn = engine.connect()
    try:
        conn.begin()
    except BaseException:
        conn.close()
        raise
    return conn


def _ended(conn: Connection, type_: Any, value: Any, traceback: Any) -> None:
    """The transaction's own exit (commit, or rollback after an error), then the close."""
    try:
        transaction = conn.get_transaction()
        if transaction is not None:
            transaction.__exit__(type_, value, traceback)
    finally:
        conn.close()


class Session(AsyncSession):
    """An ``AsyncSession`` that closes at once when no transaction is left open."""

    async def __aexit__(self, type_: Any, value: Any, traceback: Any) -> None:
        sync = self.sync_session
        if sync.get_transaction() is None:
            sync.close()  # no connection held: only its objects to forget
            return
        await super().__aexit__(type_, value, traceback)
