"""Read tools over branches, and the list of every read tool; never writes.

Reads run as soon as the model calls them: they only look. Each answers with rows carrying ids
AND names, money both formatted and in minor units, and a scope line saying whose rows these
are and whether the list was cut short.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

from pydantic import Field
from sqlalchemy import BindParameter, Row, Table, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.db.prescoped import execute, tenant_statement
from tools.tool import Result, Tool, ToolContext
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    Order,
    OrderStatus,
    RequestStatus,
)
from tools.toolsets.merchant.reads_common import (
    BRANCH_COLUMNS,
    BRANCHES,
    BranchRef,
    ReadArgs,
    all_branches,
    one,
    stamp,
    whose,
)
from tools.toolsets.merchant.reads_orders import ORDER_TOOLS
from tools.toolsets.merchant.reads_requests import REQUEST_TOOLS
from tools.toolsets.merchant.reads_sales import SALES_TOOLS
from tools.toolsets.merchant.scope import ROW_LIMIT, find_branch, page

__all__ = ["READ_TOOLS"]


class ListBranchesArgs(ReadArgs):
    status: Literal["open", "closed"] | None = Field(default=None, description="Omit for all.")


class GetBranchArgs(ReadArgs):
    branch: BranchRef = Field(description="Branch name (a unique prefix is enough) or id.")


# The branch list is read on most turns, so it runs as Core statements scoped to the tenant once,
# at import (``tools.db.prescoped``): through the ORM, scoping each statement at execution and
# loading entities cost several times the queries themselves.
_B = BRANCHES
_O, _R = cast("Table", Order.__table__).c, cast("Table", BranchRequest.__table__).c
_IDS: BindParameter[int] = bindparam("ids", expanding=True)
_WITH_STATUS = _B.c.status == bindparam("status")
_BRANCHES_WITH_STATUS = tenant_statement(
    select(*BRANCH_COLUMNS).where(_WITH_STATUS).order_by(_B.c.id).limit(ROW_LIMIT)
)
_BRANCHES_WITH_STATUS_COUNTED = tenant_statement(
    select(func.count()).select_from(_B).where(_WITH_STATUS)
)
_OPEN_ORDERS = tenant_statement(
    select(_O.branch_id, func.count(_O.id))
    .where(_O.branch_id.in_(_IDS), _O.status == OrderStatus.OPEN)
    .group_by(_O.branch_id)
)
_PENDING_REQUESTS = tenant_statement(
    select(_R.branch_id, func.count(_R.id))
    .where(_R.branch_id.in_(_IDS), _R.status == RequestStatus.PENDING)
    .group_by(_R.branch_id)
)


async def _branch_counts(
    session: AsyncSession, ids: Sequence[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """Open orders and pending requests per branch, for the branches in ``ids``."""
    open_orders = await execute(session, _OPEN_ORDERS, {"ids": list(ids)})
    pending = await execute(session, _PENDING_REQUESTS, {"ids": list(ids)})
    return _per_branch(open_orders.all()), _per_branch(pending.all())


def _per_branch(rows: Sequence[Any]) -> dict[int, int]:
    return {int(branch): int(count) for branch, count in rows}


def _branch_row(branch: Branch | Row[Any], open_orders: int, pending: int) -> dict[str, Any]:
    return {
        "id": branch.id,
        "name": branch.name,
        "city": branch.city,
        "status": branch.status,
        "status_changed_at": stamp(branch.status_changed_at),
        "open_orders": open_orders,
        "pending_requests": pending,
    }


async def list_branches(ctx: ToolContext, args: ListBranchesArgs) -> Result:
    """Every branch of the merchant, optionally only the open or the closed ones."""
    if args.status:
        values = {"status": args.status}
        total = int(
            (await execute(ctx.session, _BRANCHES_WITH_STATUS_COUNTED, values)).scalar() or 0
        )
        branches = (await execute(ctx.session, _BRANCHES_WITH_STATUS, values)).all()
    else:
        branches, total = await all_branches(ctx.session)
    orders, pending = await _branch_counts(ctx.session, [b.id for b in branches])
    shown = [_branch_row(b, orders.get(b.id, 0), pending.get(b.id, 0)) for b in branches]
    kind = f"{args.status} " if args.status else ""
    return page(shown, total=total, noun=f"{kind}branches", one=f"{kind}branch", whose=whose(ctx))


async def get_branch(ctx: ToolContext, args: GetBranchArgs) -> Result:
    """One branch by name or id, with its open orders and pending requests counted."""
    branch = await find_branch(ctx.session, args.branch)
    orders, pending = await _branch_counts(ctx.session, [branch.id])
    row = _branch_row(branch, orders.get(branch.id, 0), pending.get(branch.id, 0))
    return one(ctx, row, f"branch {branch.id}, {branch.name}")


_BRANCH_TOOLS = [
    Tool(
        name="list_branches",
        title="listing the branches",
        description=("Branches: id, name, city, open or closed, open orders, pending requests."),
        args=ListBranchesArgs,
        handler=list_branches,
        role=Role.STAFF,
    ),
    Tool(
        name="get_branch",
        title="showing a branch",
        description=(
            "One branch by name or id: status (since when), open orders, pending requests."
        ),
        args=GetBranchArgs,
        handler=get_branch,
        role=Role.STAFF,
    ),
]

READ_TOOLS: list[Tool] = [*_BRANCH_TOOLS, *REQUEST_TOOLS, *ORDER_TOOLS, *SALES_TOOLS]
