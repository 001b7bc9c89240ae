"""Read tools over branch requests (stock, refund, discount, expense); never writes.

The list is read on many turns, so it runs as Core statements scoped to the tenant once
(``tools.db.prescoped``); one request by number still loads through the ORM.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, cast

from pydantic import Field
from sqlalchemy import BindParameter, Row, Select, Table, bindparam, func, select
from sqlalchemy.orm import selectinload

from tools.caller import Role
from tools.db.prescoped import execute, tenant_statement
from tools.errors import NotFoundError
from tools.people.tables import Person
from tools.schema import RowId
from tools.tool import Result, Tool, ToolContext
from tools.toolsets.merchant.labels import REQUEST_LABELS
from tools.toolsets.merchant.models import Branch, BranchRequest, RequestKind
from tools.toolsets.merchant.reads_common import (
    BranchRef,
    ReadArgs,
    describe,
    money_for,
    one,
    stamp,
    whose,
)
from tools.toolsets.merchant.scope import ROW_LIMIT, Money, find_branch, page

__all__ = ["REQUEST_TOOLS"]

_REQUEST_LOADS = (
    selectinload(BranchRequest.branch),
    selectinload(BranchRequest.requester),
    selectinload(BranchRequest.decider),
)


class ListRequestsArgs(ReadArgs):
    status: Literal["pending", "approved", "rejected"] | None = Field(
        default="pending",
        description="null for all.",
    )
    branch: BranchRef | None = Field(default=None, description="Branch name or id; omit for all.")
    kind: RequestKind | None = Field(default=None, description="Omit for all.")


class GetRequestArgs(ReadArgs):
    request_id: RowId = Field(description="The request number.")


def _request_row(request: BranchRequest, money: Money) -> dict[str, Any]:
    return {
        "id": request.id,
        "branch_id": request.branch_id,
        "branch": request.branch.name,
        "kind": request.kind,
        "amount": money(request.amount),
        "amount_minor": request.amount,
        "requested_by_id": request.requested_by,
        "requested_by": request.requester.name,
        "reason": request.reason,
        "status": request.status,
        "created_at": stamp(request.created_at),
        "decided_by_id": request.decided_by,
        "decided_by": request.decider.name if request.decider else None,
        "decided_at": stamp(request.decided_at),
        "decision_note": request.decision_note,
    }


def _listed_request(row: Row[Any], money: Money, names: dict[int, str]) -> dict[str, Any]:
    """A request read as Core (``list_requests``): the same fields as ``_request_row``."""
    return {
        "id": row.id,
        "branch_id": row.branch_id,
        "branch": row.branch_name,
        "kind": row.kind,
        "amount": money(row.amount),
        "amount_minor": row.amount,
        "requested_by_id": row.requested_by,
        "requested_by": row.requester_name,
        "reason": row.reason,
        "status": row.status,
        "created_at": stamp(row.created_at),
        "decided_by_id": row.decided_by,
        "decided_by": names.get(row.decided_by) if row.decided_by is not None else None,
        "decided_at": stamp(row.decided_at),
        "decision_note": row.decision_note,
    }


_B = cast("Table", Branch.__table__)
_IDS: BindParameter[int] = bindparam("ids", expanding=True)

# The requests list, also read on many turns, as pre-scoped Core too: one statement per filter
# combination, scoped once and kept. The decider's name is a second read by id, not an outer
# join: the tenant criterion of an outer-joined table would drop every undecided request.
_REQUESTER = cast("Table", Person.__table__).alias("requester")
_PEOPLE = cast("Table", Person.__table__).c
_BR = cast("Table", BranchRequest.__table__)
_REQUEST_COLUMNS = (
    *_BR.c,
    _B.c.name.label("branch_name"),
    _REQUESTER.c.name.label("requester_name"),
)
_REQUESTS_FROM = _BR.join(_B, _B.c.id == _BR.c.branch_id).join(
    _REQUESTER, _REQUESTER.c.id == _BR.c.requested_by
)
_NAMES = tenant_statement(select(_PEOPLE.id, _PEOPLE.name).where(_PEOPLE.id.in_(_IDS)))
_FILTERS = ("status", "kind", "branch_id")
_REQUESTS: dict[tuple[str, ...], tuple[Select[Any], Select[Any]]] = {}


def _requests_statements(used: tuple[str, ...]) -> tuple[Select[Any], Select[Any]]:
    """The count and the page of requests filtered on ``used`` columns; built once each."""
    if used not in _REQUESTS:
        where = [_BR.c[name] == bindparam(name) for name in used]
        total = select(func.count()).select_from(_BR).where(*where)
        rows = (
            select(*_REQUEST_COLUMNS)
            .select_from(_REQUESTS_FROM)
            .where(*where)
            .order_by(_BR.c.created_at.desc(), _BR.c.id.desc())
            .limit(ROW_LIMIT)
        )
        _REQUESTS[used] = (tenant_statement(total), tenant_statement(rows))
    return _REQUESTS[used]


async def list_requests(ctx: ToolContext, args: ListRequestsArgs) -> Result:
    """Branch requests, newest first, filtered by status, branch and kind."""
    branch = await find_branch(ctx.session, args.branch) if args.branch is not None else None
    given = {"status": args.status, "kind": args.kind, "branch_id": branch.id if branch else None}
    values = {name: given[name] for name in _FILTERS if given[name] is not None}
    counting, paging = _requests_statements(tuple(values))
    total = int((await execute(ctx.session, counting, values)).scalar() or 0)
    found = (await execute(ctx.session, paging, values)).all()
    deciders = {row.decided_by for row in found if row.decided_by is not None}
    names: dict[int, str] = {}
    if deciders:
        named = await execute(ctx.session, _NAMES, {"ids": sorted(deciders)})
        names = {person.id: person.name for person in named.all()}
    money = await money_for(ctx)
    noun = f"{args.status} requests" if args.status else "requests"
    filters = describe(
        f"at {branch.name}" if branch else None, f"of kind {args.kind}" if args.kind else None
    )
    rows = [_listed_request(r, money, names) for r in found]
    if not args.status:
        filters = describe("of every status", filters)
    listed = page(rows, total=total, noun=noun, whose=whose(ctx), filters=filters)
    return replace(listed, labels=dict(REQUEST_LABELS))


async def get_request(ctx: ToolContext, args: GetRequestArgs) -> Result:
    """One branch request by its number."""
    stmt = select(BranchRequest).where(BranchRequest.id == args.request_id).options(*_REQUEST_LOADS)
    request = await ctx.session.scalar(stmt)
    if request is None:
        raise NotFoundError(
            f'There is no request {args.request_id}. Say "pending requests" to see their numbers.'
        )
    row = _request_row(request, await money_for(ctx))
    found = one(ctx, row, f"request {request.id} from {request.branch.name}")
    return replace(found, labels=dict(REQUEST_LABELS))


REQUEST_TOOLS = [
    Tool(
        name="list_requests",
        title="listing requests",
        description="Branch requests (stock, refund, discount, expense), newest first.",
        args=ListRequestsArgs,
        handler=list_requests,
        role=Role.STAFF,
    ),
    Tool(
        name="get_request",
        title="showing a request",
        description=("One branch request in full, including who decided it and when."),
        args=GetRequestArgs,
        handler=get_request,
        role=Role.STAFF,
    ),
]
