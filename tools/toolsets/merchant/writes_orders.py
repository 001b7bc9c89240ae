"""refund_order: a manager refunds all or part of what is left on an order.

``propose`` resolves "everything left" into an exact amount, never writes; ``execute`` locks the
order, checks that amount is still left and records a Refund row keyed by the card's id.
"""

from __future__ import annotations

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.errors import ConflictError, NotFoundError
from tools.proposing.write import write_tool
from tools.schema import Amount, Args, RowId
from tools.tool import Proposal, ProposalDetail, Result, Tool, ToolContext
from tools.toolsets.merchant.models import Branch, Order, OrderStatus, Refund
from tools.toolsets.merchant.writes_common import (
    APPROVAL_NOTE,
    TenantMoney,
    arrow,
    branch_label,
    card_key,
    done,
    locked,
    stamp,
    tenant_money,
)

__all__ = ["REFUND_ORDER", "REFUND_WARNING_ABOVE", "RefundOrderArgs"]

# A refund above this many whole major units gets a warning on the card. The figures are about
# the same money in each currency (10,000 rupees ≈ 200 dollars in a shop's day), so a Fiesta
# refund and a Harbor refund are flagged at the same size. A currency missing here gets no
# amount warning: a figure that is wrong for it would warn on every card or on none.
REFUND_WARNING_ABOVE: dict[str, int] = {"INR": 10_000, "USD": 200, "EUR": 200, "GBP": 150}


class RefundOrderArgs(Args):
    """Which order to refund, how much, and why."""

    order_id: RowId = Field(description="The order id.")
    amount: Amount | None = Field(
        default=None,
        description=(
            "In major units (e.g. 1250.50, not paise or cents); omit to refund all that is left."
        ),
    )
    reason: str = Field(default="", max_length=500, description="Why the order is refunded.")


async def _load(session: AsyncSession, order_id: int, *, lock: bool) -> Order:
    stmt = select(Order).where(Order.id == order_id)
    if lock:
        # Two refund cards for one order must not both spend what is left: the second waits
        # here and then sees the first one's refund.
        stmt = locked(stmt)
    order = (await session.scalars(stmt)).one_or_none()
    if order is None:
        raise NotFoundError(f"There is no order {order_id}. List the orders to see their ids.")
    return order


def _refundable(order: Order, money: TenantMoney) -> int:
    """What is left to refund, in minor units; a cancelled or fully refunded order is a refusal."""
    if order.status == OrderStatus.CANCELLED:
        raise ConflictError(f"Order {order.id} was cancelled, so it cannot be refunded.")
    left = order.total - order.refunded
    if left <= 0:
        raise ConflictError(
            f"Order {order.id} has already been refunded in full ({money.show(order.refunded)})."
        )
    return left


def _amount(args: RefundOrderArgs, order: Order, money: TenantMoney) -> int:
    """The refund in minor units: the asked amount, or all that is left; never more than left."""
    left = _refundable(order, money)
    minor = left if args.amount is None else money.minor("refund_order", "amount", args.amount)
    if minor <= 0:
        raise ConflictError("A refund has to be more than zero.")
    if minor > left:
        raise ConflictError(
            f"Order {order.id} has only {money.show(left)} left to refund "
            f"(total {money.show(order.total)}, already refunded {money.show(order.refunded)}); "
            f"a refund of {money.show(minor)} is more than that, so nothing was changed."
        )
    return minor


def _warning(minor: int, money: TenantMoney) -> str | None:
    above = REFUND_WARNING_ABOVE.get(money.currency)
    if above is None or minor <= money.major_whole(above):
        return None
    limit = money.show(money.major_whole(above))
    return f"This is a large refund: more than {limit}. Check the order before approving."


def _status_after(order: Order, minor: int) -> str:
    return OrderStatus.REFUNDED if order.refunded + minor >= order.total else order.status


def _status_line(order: Order, minor: int) -> str:
    after = _status_after(order, minor)
    return f"{order.status} (unchanged)" if after == order.status else arrow(order.status, after)


async def _propose(ctx: ToolContext, args: RefundOrderArgs) -> Proposal:
    money = await tenant_money(ctx)
    order = await _load(ctx.session, args.order_id, lock=ctx.executing)
    minor = _amount(args, order, money)
    branch = await ctx.session.get(Branch, order.branch_id)
    where = branch_label(branch) if branch else f"branch {order.branch_id}"
    short = f"{branch.name} (branch {branch.id})" if branch else where
    everything = minor == order.total - order.refunded
    shown = money.show(minor) + (" (all that is left)" if everything else "")
    return Proposal(
        summary=(
            f"Refund {money.show(minor)} on order {order.id} for {order.customer} at {short}."
        ),
        details=(
            # With its time and zone, so each surface shows it in its reader's zone like every
            # other time: a bare "2026-11-06" sat beside "Created at: Nov 6".
            ProposalDetail(
                "Order", f"{order.id} — {order.customer}, placed {stamp(order.created_at)}"
            ),
            ProposalDetail("Branch", where),
            ProposalDetail("Order total", money.show(order.total)),
            ProposalDetail("Refund", shown),
            ProposalDetail(
                "Refunded", arrow(money.show(order.refunded), money.show(order.refunded + minor))
            ),
            ProposalDetail("Status", _status_line(order, minor)),
            ProposalDetail("Reason", args.reason or "none given"),
        ),
        warning=_warning(minor, money),
        # "Everything left" is sealed as the exact amount shown: if a partial refund lands
        # meanwhile, this card must fail rather than quietly refund a different sum.
        args=RefundOrderArgs(order_id=order.id, amount=money.major(minor), reason=args.reason),
        target=f"order:{order.id}:refund",
        amount=minor,
        standing=f"order {order.id} was not refunded",
        subject=f"Order {order.id}",
    )


async def _execute(ctx: ToolContext, args: RefundOrderArgs) -> Result:
    money = await tenant_money(ctx)
    order = await _load(ctx.session, args.order_id, lock=True)
    minor = _amount(args, order, money)
    ctx.session.add(
        Refund(
            order_id=order.id,
            amount=minor,
            reason=args.reason,
            approved_by=ctx.caller.userid,
            card_id=card_key(ctx),
            created_at=ctx.now,
        )
    )
    order.status = _status_after(order, minor)
    order.refunded += minor
    await ctx.session.flush()
    note = (
        f"Refunded {money.show(minor)} on order {order.id}; "
        f"{money.show(order.refunded)} of {money.show(order.total)} is now refunded."
    )
    row = {"order_id": order.id, "refunded": money.show(minor), "status": str(order.status)}
    return done(ctx, note, row, f"order {order.id}")


REFUND_ORDER = write_tool(
    Tool(
        name="refund_order",
        destructive=True,
        title="refunding an order",
        description=(
            "Refund an order, in full or in part (never more than what is left to refund). "
            + APPROVAL_NOTE
        ),
        args=RefundOrderArgs,
        role=Role.MANAGER,
        editable=("amount", "reason"),
    ),
    _propose,
    _execute,
)
