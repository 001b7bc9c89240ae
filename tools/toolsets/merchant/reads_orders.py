"""Read tools over orders, their refunds and stock levels; never writes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

from pydantic import Field
from sqlalchemy import ColumnElement, Select, Table, bindparam, func, select
from sqlalchemy.orm import selectinload

from tools.caller import Role
from tools.db.prescoped import execute, tenant_statement
from tools.errors import NotFoundError
from tools.schema import RowId
from tools.tool import Result, Tool, ToolContext
from tools.toolsets.merchant.models import (
    Branch,
    Order,
    OrderStatus,
    Person,
    Product,
    Refund,
    Stock,
)
from tools.toolsets.merchant.reads_common import (
    BranchRef,
    ReadArgs,
    SearchText,
    branch_filter,
    counted,
    describe,
    like_pattern,
    money_for,
    one,
    stamp,
    whose,
)
from tools.toolsets.merchant.reads_sales import period_start
from tools.toolsets.merchant.scope import (
    ROW_LIMIT,
    Money,
    find_branch,
    find_product,
    load_tenant,
    page,
)

__all__ = ["ORDER_TOOLS"]


class ListOrdersArgs(ReadArgs):
    branch: BranchRef | None = Field(default=None, description="Branch name or id; omit for all.")
    status: OrderStatus | None = Field(default=None, description="Omit for all.")
    customer: SearchText | None = Field(
        default=None,
        description="Part of the customer's name, any case.",
    )
    days: int = Field(default=30, ge=1, le=365, description="Days back (1-365).")
    today: bool = Field(default=False, description="Only today (local).")


class GetOrderArgs(ReadArgs):
    order_id: RowId = Field(description="The order number.")


class StockLevelsArgs(ReadArgs):
    branch: BranchRef | None = Field(default=None, description="Branch name or id; omit for all.")
    sku: SearchText | None = Field(
        default=None,
        description="SKU or product name; omit for all.",
    )


def _order_row(order: Order, money: Money) -> dict[str, Any]:
    return {
        "id": order.id,
        "branch_id": order.branch_id,
        "branch": order.branch.name,
        "customer": order.customer,
        "status": order.status,
        "total": money(order.total),
        "total_minor": order.total,
        "refunded": money(order.refunded),
        "refunded_minor": order.refunded,
        "created_at": stamp(order.created_at),
        "note": order.note,
    }


async def list_orders(ctx: ToolContext, args: ListOrdersArgs) -> Result:
    """Orders of the last ``days`` days, newest first, filtered by branch, status and customer."""
    branch, conditions = await branch_filter(ctx, args.branch, Order.branch_id)
    zone = (await load_tenant(ctx.session, ctx.caller.tenantid)).time_zone
    conditions += _order_conditions(ctx, args, zone)
    found, total = await counted(
        ctx.session,
        Order,
        conditions,
        order=[Order.created_at.desc(), Order.id.desc()],
        options=[selectinload(Order.branch)],
    )
    money = await money_for(ctx)
    filters = describe(
        _when(args, zone),
        f"at {branch.name}" if branch else None,
        f"for customers matching {args.customer!r}" if args.customer else None,
    )
    noun = f"{args.status} orders" if args.status else "orders"
    rows = [_order_row(o, money) for o in found]
    return page(rows, total=total, noun=noun, whose=whose(ctx), filters=filters)


def _when(args: ListOrdersArgs, zone: str) -> str:
    if args.today:
        return f"today (since 00:00 {zone})"
    return "in the last day" if args.days == 1 else f"in the last {args.days} days"


def _order_conditions(
    ctx: ToolContext, args: ListOrdersArgs, zone: str
) -> list[ColumnElement[bool]]:
    if args.today:
        since = period_start("today", ctx.now, zone)
    else:
        since = ctx.now - timedelta(days=args.days)
    conditions = [Order.created_at >= since]
    if args.status:
        conditions.append(Order.status == args.status)
    if args.customer:
        pattern = like_pattern(args.customer)
        conditions.append(func.lower(Order.customer).like(pattern, escape="\\"))
    return conditions


async def get_order(ctx: ToolContext, args: GetOrderArgs) -> Result:
    """One order with what was paid, refunded and is left to refund, and each refund made."""
    stmt = select(Order).where(Order.id == args.order_id).options(selectinload(Order.branch))
    order = await ctx.session.scalar(stmt)
    if order is None:
        raise NotFoundError(
            f"There is no order {args.order_id}. "
            'Say "orders" to see the recent orders and their numbers.'
        )
    money = await money_for(ctx)
    left = max(order.total - order.refunded, 0)
    row = _order_row(order, money) | {
        "refundable": money(left),
        "refundable_minor": left,
        "refunds": await _refunds(ctx, order.id, money),
    }
    return one(ctx, row, f"order {order.id} at {order.branch.name}")


async def _refunds(ctx: ToolContext, order_id: int, money: Money) -> list[dict[str, Any]]:
    stmt = (
        select(Refund, Person.name)
        .join(Person, Person.id == Refund.approved_by)
        .where(Refund.order_id == order_id)
        .order_by(Refund.created_at, Refund.id)
    )
    return [
        {
            "id": refund.id,
            "amount": money(refund.amount),
            "amount_minor": refund.amount,
            "reason": refund.reason,
            "approved_by_id": refund.approved_by,
            "approved_by": approver,
            "at": stamp(refund.created_at),
        }
        for refund, approver in await ctx.session.execute(stmt)
    ]


# Stock levels, read on many turns, as Core statements scoped to the tenant once per filter
# combination (``tools.db.prescoped``), the page joined to its branch and product.
_STOCK = cast("Table", Stock.__table__)
_STOCK_BRANCH = cast("Table", Branch.__table__)
_STOCK_PRODUCT = cast("Table", Product.__table__)
_STOCK_FROM = _STOCK.join(_STOCK_BRANCH, _STOCK_BRANCH.c.id == _STOCK.c.branch_id).join(
    _STOCK_PRODUCT, _STOCK_PRODUCT.c.id == _STOCK.c.product_id
)
_STOCK_COLUMNS = (
    _STOCK.c.branch_id,
    _STOCK_BRANCH.c.name.label("branch"),
    _STOCK_BRANCH.c.status.label("branch_status"),
    _STOCK.c.product_id,
    _STOCK_PRODUCT.c.sku,
    _STOCK_PRODUCT.c.name.label("product"),
    _STOCK.c.quantity,
)
_STOCK_STATEMENTS: dict[tuple[str, ...], tuple[Select[Any], Select[Any]]] = {}


def _stock_statements(used: tuple[str, ...]) -> tuple[Select[Any], Select[Any]]:
    """The count and the page of stock lines filtered on ``used`` columns; built once each."""
    if used not in _STOCK_STATEMENTS:
        where = [_STOCK.c[name] == bindparam(name) for name in used]
        total = select(func.count()).select_from(_STOCK).where(*where)
        rows = (
            select(*_STOCK_COLUMNS)
            .select_from(_STOCK_FROM)
            .where(*where)
            .order_by(_STOCK.c.branch_id, _STOCK.c.product_id)
            .limit(ROW_LIMIT)
        )
        _STOCK_STATEMENTS[used] = (tenant_statement(total), tenant_statement(rows))
    return _STOCK_STATEMENTS[used]


async def stock_levels(ctx: ToolContext, args: StockLevelsArgs) -> Result:
    """Quantity on hand per branch and product, optionally for one branch or one product."""
    branch = await find_branch(ctx.session, args.branch) if args.branch is not None else None
    product = await find_product(ctx.session, args.sku) if args.sku else None
    given = {
        "branch_id": branch.id if branch else None,
        "product_id": product.id if product else None,
    }
    values = {name: value for name, value in given.items() if value is not None}
    counting, paging = _stock_statements(tuple(values))
    total = int((await execute(ctx.session, counting, values)).scalar() or 0)
    rows = [dict(row._mapping) for row in (await execute(ctx.session, paging, values)).all()]
    filters = describe(
        f"at {branch.name}" if branch else None,
        f"for {product.sku} ({product.name})" if product else None,
    )
    return page(rows, total=total, noun="stock levels", whose=whose(ctx), filters=filters)


ORDER_TOOLS = [
    Tool(
        name="list_orders",
        title="listing orders",
        description="Customer orders of the last N days, newest first.",
        args=ListOrdersArgs,
        handler=list_orders,
        role=Role.STAFF,
    ),
    Tool(
        name="get_order",
        title="showing an order",
        description=("One order: total, refunded, what can still be refunded, and its refunds."),
        args=GetOrderArgs,
        handler=get_order,
        role=Role.STAFF,
    ),
    Tool(
        name="stock_levels",
        title="showing stock levels",
        description=("Stock on hand per branch and product (SKU, name, quantity)."),
        args=StockLevelsArgs,
        handler=stock_levels,
        role=Role.STAFF,
    ),
]
