"""Records every call that reaches the database driver: statements, begins, commits, rollbacks.

The approval path runs its statements on the driver (``tools.db.compiled``) rather than through
``Connection.execute``, so SQLAlchemy's ``before_cursor_execute`` event does not see them; this
listens one step further down, where every path meets. On SQLite that is aiosqlite's own
methods; on PostgreSQL SQLAlchemy's asyncpg adapter (``_prepare_and_execute``, the start of its
transaction, commit, rollback), the only door to asyncpg. A commit or rollback the asyncpg
adapter does not pass on (no transaction was started) is not recorded; SQLite's BEGIN is itself
one of the statements, and the pool's rollback of a connection handed back is recorded too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import aiosqlite
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_adapter

__all__ = ["Kind", "Step", "driver_calls"]

Kind = Literal["begin", "sql", "commit", "rollback"]


@dataclass(frozen=True, slots=True)
class Step:
    """One call the driver received."""

    kind: Kind
    sql: str = ""
    params: Any = None
    many: bool = False


@contextmanager
def driver_calls(steps: list[Step]) -> Iterator[None]:
    """Appends to ``steps`` every call the driver receives while the block runs (any engine).

    Not for concurrent use: it patches the driver's classes for the block's duration.
    """

    def sql(original: Callable[..., Any], many: bool) -> Callable[..., Any]:
        def recorded(target: Any, operation: str, parameters: Any = None) -> Any:
            steps.append(Step("sql", operation, parameters, many))
            return original(target, operation, parameters)

        return recorded

    def marker(original: Callable[..., Any], kind: Kind, *, pg: bool) -> Callable[..., Any]:
        def recorded(conn: Any, *args: Any) -> Any:
            if not pg or conn._transaction is not None:
                steps.append(Step(kind))
            return original(conn, *args)

        return recorded

    def begin(original: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(conn: Any) -> Any:
            steps.append(Step("begin"))
            return original(conn)

        return recorded

    pg_conn, pg_cursor = (
        asyncpg_adapter.AsyncAdapt_asyncpg_connection,
        asyncpg_adapter.AsyncAdapt_asyncpg_cursor,
    )
    patches: list[tuple[type, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
        (aiosqlite.Connection, "execute", lambda f: sql(f, False)),
        (aiosqlite.Connection, "executemany", lambda f: sql(f, True)),
        (aiosqlite.Cursor, "execute", lambda f: sql(f, False)),
        (aiosqlite.Cursor, "executemany", lambda f: sql(f, True)),
        (aiosqlite.Connection, "commit", lambda f: marker(f, "commit", pg=False)),
        (aiosqlite.Connection, "rollback", lambda f: marker(f, "rollback", pg=False)),
        (pg_cursor, "_prepare_and_execute", lambda f: sql(f, False)),
        (pg_cursor, "_executemany", lambda f: sql(f, True)),
        (pg_conn, "_start_transaction", begin),
        (pg_conn, "commit", lambda f: marker(f, "commit", pg=True)),
        (pg_conn, "rollback", lambda f: marker(f, "rollback", pg=True)),
    ]
    originals = [(cls, name, cls.__dict__[name]) for cls, name, _ in patches]
    for cls, name, wrap in patches:
        setattr(cls, name, wrap(cls.__dict__[name]))
    try:
        yield
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
