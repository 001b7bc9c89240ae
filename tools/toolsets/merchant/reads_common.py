"""What the read tools share: argument types, counted pages, money and time; never writes.

Every query here runs in the caller's tenant session, which adds the tenant filter itself
(``tools.db.tenancy``); nothing in the read tools names a tenant id.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, TypeVar, cast

from pydantic import ConfigDict, StringConstraints
from sqlalchemy import ColumnElement, Row, Table, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.base import ExecutableOption

from tools.db.prescoped import execute, tenant_statement
from tools.schema import Args
from tools.tool import Result, ToolContext
from tools.toolsets.merchant.models import Branch
from tools.toolsets.merchant.scope import ROW_LIMIT, Money, find_branch, load_tenant

__all__ = [
    "BRANCHES",
    "BRANCH_COLUMNS",
    "BranchRef",
    "ReadArgs",
    "SearchText",
    "all_branches",
    "branch_filter",
    "counted",
    "describe",
    "like_pattern",
    "money_for",
    "one",
    "stamp",
    "whose",
]

M = TypeVar("M")

# Every branch (one page), read on most turns: Core statements scoped to the tenant once, at
# import (``tools.db.prescoped``), instead of ORM statements scoped on every execution.
BRANCHES = cast("Table", Branch.__table__)
BRANCH_COLUMNS = (
    BRANCHES.c.id,
    BRANCHES.c.name,
    BRANCHES.c.city,
    BRANCHES.c.status,
    BRANCHES.c.status_changed_at,
)
_ALL_BRANCHES = tenant_statement(select(*BRANCH_COLUMNS).order_by(BRANCHES.c.id).limit(ROW_LIMIT))
_ALL_BRANCHES_COUNTED = tenant_statement(select(func.count()).select_from(BRANCHES))

# Names, ids and search terms as the model writes them. Control characters are refused up
# front: PostgreSQL rejects a NUL in a text parameter with a driver error where SQLite accepts
# it, and a read must answer the same way on both.
_PLAIN_TEXT = StringConstraints(
    strip_whitespace=True, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f]*$"
)
SearchText = Annotated[str, _PLAIN_TEXT]
BranchRef = Annotated[str, _PLAIN_TEXT]


class ReadArgs(Args):
    """Arguments of a read tool; a number given where a name or id is expected is read as text.

    Models often send a branch id as the number 3 rather than the string "3"; refusing that
    would only cost a retry.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


async def money_for(ctx: ToolContext) -> Money:
    """The formatter for the caller's currency and locale."""
    return Money(await load_tenant(ctx.session, ctx.caller.tenantid))


def whose(ctx: ToolContext) -> str:
    """The merchant's name for a scope line."""
    return ctx.tenant_name or f"merchant {ctx.caller.tenantid}"


def stamp(moment: datetime | None) -> str | None:
    """A timestamp as ISO 8601 to the minute, in UTC."""
    return moment.isoformat(timespec="minutes") if moment else None


def like_pattern(text: str) -> str:
    """A case-folded ``LIKE`` pattern matching ``text`` anywhere, with ``%`` and ``_`` literal."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")
    return f"%{escaped}%"


async def branch_filter(
    ctx: ToolContext, ref: str | None, column: InstrumentedAttribute[int]
) -> tuple[Branch | None, list[ColumnElement[bool]]]:
    """Resolves an optional branch reference into the branch and a condition on ``column``."""
    if ref is None:
        return None, []
    branch = await find_branch(ctx.session, ref)
    return branch, [column == branch.id]


async def counted(
    session: AsyncSession,
    model: type[M],
    conditions: Sequence[ColumnElement[bool]],
    *,
    order: Sequence[Any],
    options: Sequence[ExecutableOption] = (),
) -> tuple[Sequence[M], int]:
    """At most ``ROW_LIMIT`` rows of ``model`` matching ``conditions``, and how many match in all.

    Only one page is loaded; the true count comes from its own query, so a scope line can say
    "50 of 312" without the 312 rows crossing the wire.
    """
    total = await session.scalar(select(func.count()).select_from(model).where(*conditions))
    stmt = select(model).where(*conditions).options(*options).order_by(*order).limit(ROW_LIMIT)
    return (await session.scalars(stmt)).all(), int(total or 0)


async def all_branches(session: AsyncSession) -> tuple[Sequence[Row[Any]], int]:
    """At most ``ROW_LIMIT`` branches of the session's merchant by id, and how many it has."""
    total = int((await execute(session, _ALL_BRANCHES_COUNTED)).scalar() or 0)
    return (await execute(session, _ALL_BRANCHES)).all(), total


def one(ctx: ToolContext, row: dict[str, Any], what: str) -> Result:
    """A single-record result; its scope line names the record instead of counting it."""
    return Result(rows=[row], count=1, scope=f"{whose(ctx)}: {what}")


def describe(*parts: str | None) -> str:
    """Joins the filter phrases of a scope line, skipping the ones not in use."""
    return " ".join(part for part in parts if part)
