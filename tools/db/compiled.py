"""Runs a pre-built Core statement, compiled once per dialect, in a transaction SQLAlchemy began;
never begins, commits or scopes a transaction itself, and never runs a statement on a tenant table
that ``tools.db.prescoped`` did not scope.

``AsyncConnection.execute`` does a great deal per statement that a statement built once at import
does not need: it computes the statement's cache key (a walk of the whole expression), looks the
compiled form up, builds an execution context, runs the parameters through ``construct_params``,
fires the connection's events, wraps the cursor in a ``CursorResult``, and does all of it in a
greenlet of its own. Measured on one prepared SELECT by id inside a transaction, CPU per
statement on this project's two-core machine:

=====================================  ========  ==========
                                        SQLite    PostgreSQL
=====================================  ========  ==========
``AsyncConnection.execute``             250 µs    145 µs
the DBAPI cursor in a greenlet          190 µs     95 µs
this module                             128 µs     51 µs
the raw driver (aiosqlite, asyncpg)     127 µs     43 µs
=====================================  ========  ==========

An approval cycle is 18 to 21 statements. So the approval path compiles each of its statements
once per dialect (and, for an INSERT or an UPDATE, per set of columns it is given): the SQL text,
the order of its positional parameters with their types' bind processors, the literal values
the statement itself carries, and the result columns with their result processors. Each
execution only orders and converts the parameters and awaits the driver on the connection of
the transaction SQLAlchemy began, with no greenlet. On PostgreSQL that is asyncpg under
SQLAlchemy's asyncpg adapter: the adapter's transaction is started first if this is its first
statement, exactly as the adapter starts it for ``execute``, and asyncpg's errors go through the
adapter's own translation. On SQLite it is aiosqlite, on which SQLAlchemy's begin already sent
BEGIN. The drivers themselves are awaited in ``tools.db.drivers``: a driver error comes out as
SQLAlchemy's, a dropped connection is invalidated, and a statement cancelled mid-way throws its
connection away, all as through ``execute``.

What this does not support is refused, never worked around: statements needing Python-side
defaults or expanding (``IN``) parameters, ``text()`` anywhere in a statement (its tables, and
so whether it reaches a merchant's rows, cannot be known), statements returning rows of unknown
columns, result columns that cannot name a row (two of one name) or whose conversion needs the
driver's type of the column (asyncpg's Float and Numeric), and dialects with named parameters
when the plan is made; a connection with no transaction begun when it runs; and drivers other
than aiosqlite and asyncpg when the ``Database`` is opened. Only ``run`` is public, and it
refuses a tenant table's statement; those run through ``tools.db.prescoped``.
"""

from __future__ import annotations

import weakref
from collections import namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import UpdateBase
from sqlalchemy.sql.util import find_tables
from sqlalchemy.util import is_exit_exception

from tools.db.drivers import DRIVERS, abandon, translated
from tools.db.tenancy import UnscopedStatementError, _refuse_text, _tenant_tables

__all__ = ["DRIVERS", "CompiledStatementError", "Rows", "run"]

Processor = Callable[[Any], Any] | None


class CompiledStatementError(RuntimeError):
    """A statement (or a connection) this runner cannot run as SQLAlchemy would; a bug."""


class Rows:
    """A statement's rows (named tuples: ``row.quantity`` and ``row[1]``) and its row count."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self.rowcount = rows, rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any | None:
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise CompiledStatementError(f"expected one row, got {len(self._rows)}")
        return self._rows[0]

    def scalar(self) -> Any | None:
        return self._rows[0][0] if self._rows else None


class _Plan:
    """One statement as one dialect runs it, with the columns an INSERT or UPDATE sets."""

    __slots__ = (
        "binds",
        "defaults",
        "names",
        "results",
        "row",
        "sql",
        "statement",
        "tenant",
    )

    def __init__(self, statement: Any, dialect: Dialect, keys: Sequence[str] | None) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=keys)
        assert isinstance(compiled, SQLCompiler)
        _refuse_unsupported(compiled, dialect)
        # Its tables cannot be known, so neither can whether it reaches a tenant's rows.
        _refuse_text(statement)
        self.statement = statement  # keeps the id in the cache key from being reused
        self.tenant = _touches_tenant_table(statement)
        self.sql: str = compiled.string
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())
        binds = [compiled.binds[name] for name in self.names]
        self.binds: tuple[Processor, ...] = tuple(
            bind.type._cached_bind_processor(dialect) for bind in binds
        )
        # Literals the statement carries (``status = 'pending'``, a column's scalar default).
        self.defaults: dict[str, Any] = {
            name: bind.value
            for name, bind in zip(self.names, binds, strict=True)
            if not bind.required
        }
        entries = compiled._result_columns or []
        self.row: Any = _row([entry.keyname for entry in entries])
        self.results: tuple[Processor, ...] = tuple(
            _result(entry.type, dialect) for entry in entries
        )

    def parameters(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        values = []
        for name, process in zip(self.names, self.binds, strict=True):
            try:
                value = params[name] if name in params else self.defaults[name]
            except KeyError:
                raise CompiledStatementError(f"no value for parameter {name!r}") from None
            # None too: a JSON column stores it as JSON null, as SQLAlchemy would.
            values.append(value if process is None else process(value))
        return tuple(values)

    def rows(self, raw: Sequence[Any]) -> list[Any]:
        make, results = self.row._make, self.results
        if not any(results):
            return [make(row) for row in raw]
        return [
            make(value if p is None else p(value) for p, value in zip(results, row, strict=True))
            for row in raw
        ]


def _row(names: list[str]) -> Any:
    """The row type; names a named tuple cannot carry (twice the same) are refused now, not at
    the first run."""
    try:
        return namedtuple("Row", names)
    except ValueError as bad:
        raise CompiledStatementError(f"result columns {names!r} cannot name a row") from bad


def _result(type_: Any, dialect: Dialect) -> Processor:
    """The type's result processor, which must not need the driver's own type of the column
    (asyncpg's records do not carry it)."""
    try:
        process: Processor = type_._cached_result_processor(dialect, None)
    except Exception as needs:  # e.g. asyncpg's Numeric asks which numeric type came back
        raise CompiledStatementError(f"a {type_!r} result column is not supported") from needs
    return process


def _refuse_unsupported(compiled: SQLCompiler, dialect: Dialect) -> None:
    if not compiled.positional:
        raise CompiledStatementError(f"{dialect.name} takes named parameters; not supported")
    if compiled.insert_prefetch or compiled.update_prefetch:
        raise CompiledStatementError("a Python-side column default would not be computed")
    if compiled.post_compile_params or compiled.literal_execute_params:
        raise CompiledStatementError("expanding or literal-execute parameters are not supported")
    if compiled.escaped_bind_names:
        raise CompiledStatementError("escaped parameter names are not supported")
    returns_rows = (
        getattr(compiled.statement, "is_select", False)
        or compiled.isplaintext
        or bool(compiled.effective_returning)
    )
    if returns_rows and not compiled._result_columns:
        # Run, its rows would be dropped: the runner fetches only columns it knows of.
        raise CompiledStatementError("a statement returning rows of unknown columns (text())")


# Per dialect, per (statement, columns set): the plans made so far.
_PLANS: weakref.WeakKeyDictionary[Dialect, dict[tuple[int, frozenset[str] | None], _Plan]] = (
    weakref.WeakKeyDictionary()
)


def _plan(dialect: Dialect, statement: Any, params: Mapping[str, Any]) -> _Plan:
    keys = frozenset(params) if isinstance(statement, UpdateBase) else None
    plans = _PLANS.get(dialect)
    if plans is None:
        plans = _PLANS[dialect] = {}
    plan = plans.get((id(statement), keys))
    if plan is None:
        plan = plans[(id(statement), keys)] = _Plan(
            statement, dialect, sorted(keys) if keys is not None else None
        )
    return plan


async def run(
    conn: AsyncConnection, statement: Any, params: Mapping[str, Any] | None = None
) -> Rows:
    """Runs a statement on the engine's own tables (cards, audit, policies) in ``conn``'s
    transaction.

    Raises:
        UnscopedStatementError: the statement touches a tenant table; those run only through
            ``tools.db.prescoped.execute``, for the session's tenant.
        CompiledStatementError: see the module's docstring.
    """
    params = params or {}
    plan = _plan(conn.dialect, statement, params)
    if plan.tenant:
        raise UnscopedStatementError("a tenant table's statement runs through prescoped.execute")
    return await _run(conn, plan, params)


async def _run_scoped(conn: AsyncConnection, statement: Any, params: Mapping[str, Any]) -> Rows:
    """``run`` without the tenant check: only for ``tools.db.prescoped``, which scoped the
    statement to the session's tenant and filled in its tenant."""
    return await _run(conn, _plan(conn.dialect, statement, params), params)


async def _run(conn: AsyncConnection, plan: _Plan, params: Mapping[str, Any]) -> Rows:
    sync = conn.sync_connection
    if sync is None or not sync.in_transaction():
        # Run on the DBAPI connection outside SQLAlchemy's transaction, a statement would
        # autocommit (SQLite) or start a transaction nobody commits (asyncpg).
        raise CompiledStatementError("run only inside a transaction SQLAlchemy began")
    values, dialect = plan.parameters(params), sync.dialect
    try:
        raw, rowcount = await DRIVERS[dialect.driver](
            sync.connection, plan.sql, values, bool(plan.results)
        )
    except dialect.loaded_dbapi.Error as error:
        raise await translated(conn, plan.sql, values, error) from error
    except BaseException as error:
        if is_exit_exception(error):  # cancelled, interrupted, timed out
            await abandon(conn, error)
        raise
    return Rows(plan.rows(raw), rowcount)


def _touches_tenant_table(statement: Any) -> bool:
    tenant = _tenant_tables()
    return any(
        getattr(table, "name", None) in tenant
        for table in find_tables(statement, include_crud=True, include_joins=True)
    )
