"""Core statements scoped to a tenant once, when built, and run in a tenant session; never unscoped.

``tools.db.tenancy`` scopes every statement a tenant session executes, at execution: it walks
the statement, adds the tenant's criterion, and for ORM statements builds their compile state
again. Right for the tools' many ad-hoc reads, and the largest cost of an approval: about a
millisecond of Python per statement on this project's two-core machine, eight statements a
stock correction, against a tenth of that for the driver and the database to answer them.

A statement on a hot path is therefore scoped here, once, at import: ``tenant_statement`` adds
the same criteria ``tenancy`` would (every tenant table of every FROM, an UPDATE's or DELETE's
target; an INSERT's ``tenant_id``) with the tenant as a bound parameter, and remembers the
statement it made. ``execute`` runs only statements made that way, and fills that parameter
from the session's own tenant; a caller cannot name a tenant at all. The session's connection
runs them as plain Core, with compiled-statement caching and no ORM on the way; ``run``, for
the approval path's own statements, runs them compiled once on the driver
(``tools.db.compiled``) after the same checks.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, TypeVar

from sqlalchemy import CursorResult, Integer, bindparam
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql.dml import Delete, Insert, Update
from sqlalchemy.sql.selectable import CompoundSelect, Select

from tools.db.compiled import Rows, _run_scoped
from tools.db.tenancy import (
    _TENANT_COLUMN,
    TENANT_KEY,
    CrossTenantWriteError,
    TenantScopeError,
    UnscopedStatementError,
    _is_tenant_table,
    _refuse_text,
    _scoped,
)

__all__ = ["TENANT_PARAM", "connection", "execute", "run", "tenant_statement"]

# The bound parameter every pre-scoped statement compares ``tenant_id`` with.
TENANT_PARAM = "countersign_tenant"
_TENANT = bindparam(TENANT_PARAM, type_=Integer())

S = TypeVar("S", Select[Any], CompoundSelect[Any], Insert, Update, Delete)

# The statements ``tenant_statement`` made. Identity, not a flag on the statement: an execution
# option anyone could set would let an unscoped statement through.
_MADE: weakref.WeakSet[Any] = weakref.WeakSet()
# Where a session keeps the connection of its current transaction (see ``connection``).
_HELD = "countersign.prescoped.connection"


def tenant_statement(statement: S) -> S:
    """``statement`` limited to the tenant ``execute`` runs it for; build it once, at import.

    Raises:
        UnscopedStatementError: a ``text()`` fragment, an INSERT … SELECT or upsert, a
            statement kind that cannot be scoped, or one that touches no tenant table.
        CrossTenantWriteError: the statement itself sets ``tenant_id``.
    """
    _refuse_text(statement)
    if isinstance(statement, Insert):
        scoped: Any = _insert(statement)
    elif isinstance(statement, Update | Delete | Select | CompoundSelect):
        if isinstance(statement, Update) and _names_tenant(statement):
            raise CrossTenantWriteError("an UPDATE may not set tenant_id")
        scoped = _scoped(statement, _TENANT)
    else:
        raise UnscopedStatementError(f"{type(statement).__name__} cannot be scoped to a tenant")
    if TENANT_PARAM not in scoped.compile().params:
        # No tenant table in it: ``execute`` would hand it a tenant it has nowhere to put.
        raise UnscopedStatementError("it touches no tenant table; run it as plain Core")
    _MADE.add(scoped)
    made: S = scoped
    return made


def _insert(statement: Insert) -> Insert:
    if not _is_tenant_table(statement):
        return statement  # refused by the caller: nothing to scope
    if statement.select is not None or statement._post_values_clause is not None:
        raise UnscopedStatementError("INSERT … SELECT and upserts cannot be scoped to a tenant")
    if _names_tenant(statement) or statement._multi_values:
        raise CrossTenantWriteError("a pre-scoped INSERT takes its tenant from the session")
    return statement.values({_TENANT_COLUMN: _TENANT})


def _names_tenant(statement: Insert | Update) -> bool:
    return any(
        str(getattr(column, "key", column)) == _TENANT_COLUMN
        for column in (statement._values or {})
    )


async def execute(
    session: AsyncSession, statement: Any, params: Mapping[str, Any] | None = None
) -> CursorResult[Any]:
    """Runs a ``tenant_statement`` in ``session``'s transaction, for the session's tenant.

    Plain Core on the session's connection: pending ORM changes of the session are not flushed
    first (flush before mixing the two on one row).

    Raises:
        TenantScopeError: ``session`` is not a tenant session.
        UnscopedStatementError: ``statement`` was not made by ``tenant_statement``.
        CrossTenantWriteError: ``params`` name a tenant.
    """
    values = _scoped_values(session, statement, params)
    conn = await connection(session)
    result: CursorResult[Any] = await conn.execute(statement, values)
    return result


async def run(
    session: AsyncSession, statement: Any, params: Mapping[str, Any] | None = None
) -> Rows:
    """``execute`` for the approval path: the statement compiled once, run on the driver
    (``tools.db.compiled``), its rows as named tuples. The same checks, the same tenant.

    For statements built once at import with plain parameters (no expanding ``IN``); anything
    else is refused (``CompiledStatementError``) and belongs with ``execute``.
    """
    values = _scoped_values(session, statement, params)
    return await _run_scoped(await connection(session), statement, values)


def _scoped_values(
    session: AsyncSession, statement: Any, params: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``params`` with the session's tenant, once the statement and the session qualify."""
    tenantid = session.info.get(TENANT_KEY)
    if tenantid is None:
        raise TenantScopeError("a pre-scoped statement runs only in a tenant session")
    if statement not in _MADE:
        raise UnscopedStatementError("only statements made by tenant_statement run here")
    values = dict(params or {})
    if TENANT_PARAM in values or _TENANT_COLUMN in values:
        raise CrossTenantWriteError("a pre-scoped statement takes its tenant from the session")
    values[TENANT_PARAM] = tenantid
    return values


async def connection(session: AsyncSession) -> AsyncConnection:
    """The session's connection in its current transaction, asked of the session once per
    transaction: ``AsyncSession.connection`` costs more than some of the statements it runs."""
    transaction = session.sync_session.get_transaction()
    held = session.info.get(_HELD)
    if transaction is not None and transaction.is_active and held and held[0] is transaction:
        conn: AsyncConnection = held[1]
        return conn
    conn = await session.connection()
    session.info[_HELD] = (session.sync_session.get_transaction(), conn)
    return conn
