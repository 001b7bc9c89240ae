"""Records every call that reaches the database driver: statements, begins, commits, rollbacks.

The approval path runs its statements on the driver (``tools.db.compiled``) rather than through
``Connection.execute``, so SQLAlchemy's ``before_cursor_execute`` event does not see them; this
listens one step further down, at the drivers' own public methods, where every path meets:
aiosqlite's connection and cursor, asyncpg's connection, prepared statements and transactions.
On PostgreSQL a transaction's BEGIN, COMMIT and ROLLBACK are recorded as such (not as the
statements asyncpg sends for them); on SQLite BEGIN is itself one of the statements, and the
pool's rollback of a connection handed back is recorded too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import aiosqlite
import asyncpg
from asyncpg import transaction
from asyncpg.prepared_stmt import PreparedStatement

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

    Not for concurrent use: it patches the drivers' classes for the block's duration.
    """
    inside = [False]  # in a transaction's own start/commit/rollback: its BEGIN is not a step

    def sql(original: Callable[..., Any], many: bool, *, query: bool = False) -> Callable[..., Any]:
        def recorded(target: Any, *args: Any, **kwargs: Any) -> Any:
            if not inside[0]:
                text, params = (target.get_query(), args) if query else (args[0], args[1:])
                steps.append(Step("sql", text, _one(params, many=many), many))
            return original(target, *args, **kwargs)

        return recorded

    def marker(original: Callable[..., Any], kind: Kind) -> Callable[..., Any]:
        async def recorded(target: Any, *args: Any) -> Any:
            steps.append(Step(kind))
            inside[0] = True
            try:
                return await original(target, *args)
            finally:
                inside[0] = False

        return recorded

    patches: list[tuple[type, str, Callable[[Callable[..., Any]], Callable[..., Any]]]] = [
        (aiosqlite.Connection, "execute", lambda f: _sqlite(f, steps, many=False)),
        (aiosqlite.Connection, "executemany", lambda f: _sqlite(f, steps, many=True)),
        (aiosqlite.Cursor, "execute", lambda f: _sqlite(f, steps, many=False)),
        (aiosqlite.Cursor, "executemany", lambda f: _sqlite(f, steps, many=True)),
        (aiosqlite.Connection, "commit", lambda f: _sqlite_marker(f, steps, "commit")),
        (aiosqlite.Connection, "rollback", lambda f: _sqlite_marker(f, steps, "rollback")),
        (transaction.Transaction, "start", lambda f: marker(f, "begin")),
        (transaction.Transaction, "commit", lambda f: marker(f, "commit")),
        (transaction.Transaction, "rollback", lambda f: marker(f, "rollback")),
    ]
    for name in ("execute", "fetch", "fetchrow", "fetchval", "fetchmany", "executemany"):
        many = name in ("executemany", "fetchmany")
        patches.append((asyncpg.Connection, name, lambda f, many=many: sql(f, many)))
    for name in ("fetch", "fetchrow", "fetchval", "fetchmany", "executemany"):
        many = name in ("executemany", "fetchmany")
        patches.append((PreparedStatement, name, lambda f, many=many: sql(f, many, query=True)))
    originals = [(cls, name, cls.__dict__[name]) for cls, name, _ in patches]
    for cls, name, wrap in patches:
        setattr(cls, name, wrap(cls.__dict__[name]))
    try:
        yield
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)


def _one(params: tuple[Any, ...], *, many: bool) -> Any:
    """asyncpg's positional arguments as one parameter sequence (or the sequence of them)."""
    if many:
        return params[0] if params else []
    return params


def _sqlite(original: Callable[..., Any], steps: list[Step], *, many: bool) -> Callable[..., Any]:
    def recorded(target: Any, operation: str, parameters: Any = None) -> Any:
        steps.append(Step("sql", operation, parameters, many))
        return original(target, operation, parameters)

    return recorded


def _sqlite_marker(
    original: Callable[..., Any], steps: list[Step], kind: Kind
) -> Callable[..., Any]:
    def recorded(conn: Any) -> Any:
        steps.append(Step(kind))
        return original(conn)

    return recorded
