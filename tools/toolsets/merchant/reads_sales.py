"""Sums up sales per branch over a period: orders, gross, refunded and net; never writes.

Periods are the merchant's days, in its time zone (``Tenant.time_zone``), from the time of the
call, so every surface and every process gives the same figures for the same moment: "today"
starts at 00:00 there, "this_week" on Monday at 00:00, "this_month" on the 1st at 00:00;
"last_7_days" and "last_30_days" reach back exactly that long from now. A shop in Bengaluru
was once told "orders today (since 00:00 UTC)": its day had begun at 05:30.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, assert_never, cast
from zoneinfo import ZoneInfo

from pydantic import Field
from sqlalchemy import Row, Table, bindparam, func, select

from tools.caller import Role
from tools.db.prescoped import execute, tenant_statement
from tools.times import time_stamp
from tools.tool import Result, Tool, ToolContext
from tools.toolsets.merchant.models import Branch, Order, OrderStatus
from tools.toolsets.merchant.reads_common import BranchRef, ReadArgs, all_branches, whose
from tools.toolsets.merchant.scope import Money, counted_noun, find_branch, load_tenant, page

__all__ = ["SALES_TOOLS", "Period", "local_stamp", "period_start"]

Period = Literal["today", "this_week", "last_7_days", "this_month", "last_30_days"]

_LABELS: dict[Period, str] = {
    "today": "today",
    "this_week": "this week",
    "last_7_days": "in the last 7 days",
    "this_month": "this month",
    "last_30_days": "in the last 30 days",
}


class SalesSummaryArgs(ReadArgs):
    branch: BranchRef | None = Field(default=None, description="Branch name or id; omit for all.")
    period: Period = Field(
        default="this_week",
        description="Default this_week (since Monday 00:00, local).",
    )


@dataclass(frozen=True, slots=True)
class _Sales:
    orders: int = 0
    gross: int = 0
    refunded: int = 0

    @property
    def net(self) -> int:
        return self.gross - self.refunded

    def __add__(self, other: _Sales) -> _Sales:
        return _Sales(
            self.orders + other.orders, self.gross + other.gross, self.refunded + other.refunded
        )


def period_start(period: Period, now: datetime, zone: str = "UTC") -> datetime:
    """Where ``period`` begins, in UTC, for a call made at ``now`` by a merchant in ``zone``."""
    local = now.astimezone(ZoneInfo(zone))
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    match period:
        case "today":
            start = midnight
        case "this_week":
            start = midnight - timedelta(days=midnight.weekday())
        case "last_7_days":
            return now - timedelta(days=7)
        case "this_month":
            start = midnight.replace(day=1)
        case "last_30_days":
            return now - timedelta(days=30)
        case _:
            assert_never(period)
    # Midnight of that calendar day in the zone (a DST change between then and now moves it).
    naive = start.replace(tzinfo=None)
    return naive.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def local_stamp(moment: datetime, zone: str) -> str:
    """A moment as the merchant reads it, with its zone's name: "2026-12-01 00:00 Asia/Kolkata"."""
    return time_stamp(moment, zone)


# Read on many turns: a Core statement scoped to the tenant once (``tools.db.prescoped``).
# Cancelled orders never took money, so they are not sales. Refunds count against the order they
# were paid on, so gross minus refunded is what the period's orders finally brought in.
_O = cast("Table", Order.__table__).c
_SALES = tenant_statement(
    select(
        _O.branch_id,
        func.count(_O.id),
        func.coalesce(func.sum(_O.total), 0),
        func.coalesce(func.sum(_O.refunded), 0),
    )
    .where(_O.created_at >= bindparam("start"), _O.created_at <= bindparam("end"))
    .where(_O.status != OrderStatus.CANCELLED)
    .group_by(_O.branch_id)
)


async def _sales_by_branch(ctx: ToolContext, start: datetime) -> dict[int, _Sales]:
    sold: Sequence[Any] = (
        await execute(ctx.session, _SALES, {"start": start, "end": ctx.now})
    ).all()
    # int(): PostgreSQL sums a BIGINT into a NUMERIC, which arrives as a Decimal.
    return {
        branch_id: _Sales(int(count), int(gross), int(refunded))
        for branch_id, count, gross, refunded in sold
    }


def _sales_row(branch: Branch | Row[Any], sales: _Sales, money: Money) -> dict[str, Any]:
    return {
        "branch_id": branch.id,
        "branch": branch.name,
        "branch_status": branch.status,
        "orders": sales.orders,
        "gross": money(sales.gross),
        "gross_minor": sales.gross,
        "refunded": money(sales.refunded),
        "refunded_minor": sales.refunded,
        "net": money(sales.net),
        "net_minor": sales.net,
    }


async def sales_summary(ctx: ToolContext, args: SalesSummaryArgs) -> Result:
    """Per-branch order count, gross, refunded and net for a period, with totals in the note."""
    tenant = await load_tenant(ctx.session, ctx.caller.tenantid)
    start = period_start(args.period, ctx.now, tenant.time_zone)
    branches: Sequence[Branch | Row[Any]]
    if args.branch is None:
        branches, total = await all_branches(ctx.session)
    else:
        branches, total = [await find_branch(ctx.session, args.branch)], 1
    by_branch = await _sales_by_branch(ctx, start)
    money = Money(tenant)
    rows = [_sales_row(b, by_branch.get(b.id, _Sales()), money) for b in branches]
    shown = {b.id for b in branches} if args.branch else set(by_branch)
    overall = sum((by_branch[i] for i in shown if i in by_branch), _Sales())
    zone = tenant.time_zone
    # Each end named: a surface shows each in its reader's zone, and an end without its zone
    # was left in the merchant's clock beside the other in the reader's.
    window = f"{local_stamp(start, zone)} to {local_stamp(ctx.now, zone)}"
    label = _LABELS[args.period]
    result = page(
        rows,
        total=total,
        noun="branches",
        one="branch",
        whose=whose(ctx),
        filters=f"(sales {label})",
    )
    return replace(result, note=_totals_note(label, window, overall, money))


def _totals_note(label: str, window: str, sales: _Sales, money: Money) -> str:
    return (
        f"Total {label} ({window}): {counted_noun(sales.orders, 'order', 'orders')}, "
        f"gross {money(sales.gross)}, "
        f"refunded {money(sales.refunded)}, net {money(sales.net)}. "
        "Cancelled orders are not counted; refunds count against the order they were made on."
    )


SALES_TOOLS = [
    Tool(
        name="sales_summary",
        title="showing sales",
        description=(
            "Sales per branch for a period (local days): orders, gross, refunded, net; "
            "totals in the note."
        ),
        args=SalesSummaryArgs,
        handler=sales_summary,
        role=Role.STAFF,
    ),
]
