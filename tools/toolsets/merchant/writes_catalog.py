"""adjust_stock and set_price: a manager corrects stock at a branch, an owner changes a price.

``propose`` resolves branch and product and shows before → after, never writes; ``execute``
locks the stock line or the product, checks again against what is there now, and writes it
with a ledger row (StockMovement, PriceChange) keyed by the card's id.
"""

from __future__ import annotations

from decimal import Decimal
from typing import cast

from pydantic import Field, field_validator
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.db.prescoped import run, tenant_statement
from tools.errors import ConflictError, NotFoundError
from tools.proposing.write import write_tool
from tools.schema import Amount, Args, RowId
from tools.tool import Proposal, ProposalDetail, Result, Tool, ToolContext
from tools.toolsets.merchant.models import PriceChange, Product, Stock, StockMovement
from tools.toolsets.merchant.scope import (
    BranchRef,
    Money,
    ProductRef,
    find_product,
    resolve_branch,
    resolve_product,
)
from tools.toolsets.merchant.writes_common import (
    APPROVAL_NOTE,
    Reason,
    arrow,
    branch_label,
    card_key,
    done,
    locked,
    product_label,
    tenant_money,
)

__all__ = [
    "ADJUST_STOCK",
    "MAX_STOCK_DELTA",
    "PRICE_WARNING_PERCENT",
    "SET_PRICE",
    "AdjustStockArgs",
    "SetPriceArgs",
]

# Larger than any real correction, small enough that no sum of them overflows the column.
MAX_STOCK_DELTA = 100_000
# A price moving by more than this share (up or down) gets a warning: likely a typo.
PRICE_WARNING_PERCENT = Decimal(30)

_SKU = "SKU (e.g. FF-PANEER-WRAP) or product name."


class AdjustStockArgs(Args):
    """Which stock line to correct, by how many units, and why."""

    branch: str | RowId = Field(description="Branch id or name.")
    sku: str = Field(min_length=1, max_length=200, description=_SKU)
    delta: int = Field(
        ge=-MAX_STOCK_DELTA,
        le=MAX_STOCK_DELTA,
        description="Units to add (positive, e.g. 20) or remove (negative, e.g. -5); never 0.",
    )
    reason: Reason = Field(description="Why the stock changes, e.g. 'delivery arrived'.")

    @field_validator("delta")
    @classmethod
    def _not_zero(cls, delta: int) -> int:
        if delta == 0:
            raise ValueError("a change of 0 units changes nothing")
        return delta


class SetPriceArgs(Args):
    """Which product gets which new price."""

    sku: str = Field(min_length=1, max_length=200, description=_SKU)
    price: Amount = Field(description="In major units (e.g. 299.00, not paise or cents).")


# The stock line, its update and its ledger row: the statements of the commonest write, scoped to
# the tenant once (``tools.db.prescoped``) instead of on every execution.
_S = Stock.__table__.c
_LINE = select(_S.id, _S.quantity).where(
    _S.branch_id == bindparam("branch"), _S.product_id == bindparam("product")
)
_STOCK_LINE = tenant_statement(_LINE)
# A second card for the same line waits here and then sees the first one's quantity, so two
# removals cannot both pass the "never below zero" check.
_STOCK_LINE_LOCKED = tenant_statement(_LINE.with_for_update())
_SET_QUANTITY = tenant_statement(
    update(cast("Table", Stock.__table__)).where(_S.id == bindparam("stock"))
)
_MOVEMENT = tenant_statement(insert(cast("Table", StockMovement.__table__)))


async def _stock_line(
    session: AsyncSession, branch: BranchRef, product: ProductRef, *, lock: bool
) -> tuple[int, int]:
    """The stock line's id and quantity."""
    stmt = _STOCK_LINE_LOCKED if lock else _STOCK_LINE
    row = (await run(session, stmt, {"branch": branch.id, "product": product.id})).first()
    if row is None:
        raise NotFoundError(
            f"{branch.name} (branch {branch.id}) does not stock {product.name} (SKU {product.sku})."
        )
    return row.id, row.quantity


def _after(quantity: int, delta: int, branch: BranchRef, product: ProductRef) -> int:
    after = quantity + delta
    if after < 0:
        raise ConflictError(
            f"{branch.name} (branch {branch.id}) has {quantity} of {product.name} "
            f"(SKU {product.sku}); removing {-delta} would leave {after}, so nothing was changed."
        )
    return after


def _stock_summary(delta: int, product: ProductRef, branch: BranchRef) -> str:
    units = (
        f"{abs(delta)} unit{'s' if abs(delta) != 1 else ''} of {product.name} (SKU {product.sku})"
    )
    where = f"{branch.name} (branch {branch.id})"
    if delta > 0:
        return f"Add {units} to the stock at {where}."
    return f"Remove {units} from the stock at {where}."


async def _propose_stock(ctx: ToolContext, args: AdjustStockArgs) -> Proposal:
    branch = await resolve_branch(ctx.session, args.branch)
    product = await resolve_product(ctx.session, args.sku)
    _, quantity = await _stock_line(ctx.session, branch, product, lock=ctx.executing)
    after = _after(quantity, args.delta, branch, product)
    warning = None
    if after == 0:
        warning = f"This leaves {branch.name} with no {product.name} at all."
    return Proposal(
        summary=_stock_summary(args.delta, product, branch),
        details=(
            ProposalDetail("Branch", branch_label(branch)),
            ProposalDetail("Product", product_label(product)),
            ProposalDetail("Change", f"{args.delta:+d}"),
            ProposalDetail("Quantity", arrow(quantity, after)),
            ProposalDetail("Reason", args.reason),
        ),
        warning=warning,
        args=AdjustStockArgs(
            branch=branch.id, sku=product.sku, delta=args.delta, reason=args.reason
        ),
        target=f"stock:{branch.id}:{product.sku}",
        standing=f"{product.name} at {branch.name} stays at {quantity}",
        subject=f"{product.name} at {branch.name}",
    )


async def _execute_stock(ctx: ToolContext, args: AdjustStockArgs) -> Result:
    branch = await resolve_branch(ctx.session, args.branch)
    product = await resolve_product(ctx.session, args.sku)
    stock_id, before = await _stock_line(ctx.session, branch, product, lock=True)
    # The delta is what was approved ("remove the 5 damaged ones"). A quantity that moved since
    # the card was drawn is refused before this runs (``tools.approving.as_shown``); it is checked again
    # here because a write never trusts that it was only reached that way.
    after = _after(before, args.delta, branch, product)
    await run(ctx.session, _SET_QUANTITY, {"stock": stock_id, "quantity": after})
    movement = {
        "stock_id": stock_id,
        "delta": args.delta,
        "reason": args.reason,
        "approved_by": ctx.caller.userid,
        "card_id": card_key(ctx),
        "created_at": ctx.now,
    }
    await run(ctx.session, _MOVEMENT, movement)
    note = f"{product.name} at {branch.name} (branch {branch.id}): {arrow(before, after)}."
    row = {"branch_id": branch.id, "sku": product.sku, "quantity": after}
    return done(ctx, note, row, f"stock of {product.sku} at branch {branch.id}")


def _percent(old: int, new: int) -> Decimal:
    return ((Decimal(new - old) * 100) / Decimal(old)).quantize(Decimal("0.1"))


async def _lock_product(session: AsyncSession, sku: str) -> Product:
    product = await find_product(session, sku)
    return (await session.scalars(locked(select(Product).where(Product.id == product.id)))).one()


async def _propose_price(ctx: ToolContext, args: SetPriceArgs) -> Proposal:
    money = await tenant_money(ctx)
    product = await (_lock_product if ctx.executing else find_product)(ctx.session, args.sku)
    new = money.minor("set_price", "price", args.price)
    _ensure_changes(product, new, money.show)
    change = _percent(product.price, new)
    warning = None
    if abs(change) > PRICE_WARNING_PERCENT:
        warning = f"This changes the price by {change:+} %, more than {PRICE_WARNING_PERCENT} %."
    old_shown, new_shown = money.show(product.price), money.show(new)
    return Proposal(
        summary=(
            f"Change the price of {product.name} (SKU {product.sku}) from {old_shown} to "
            f"{new_shown} ({change:+} %)."
        ),
        details=(
            ProposalDetail("Product", product_label(product)),
            ProposalDetail("Price", arrow(old_shown, new_shown)),
            ProposalDetail("Change", f"{change:+} %"),
        ),
        warning=warning,
        args=SetPriceArgs(sku=product.sku, price=money.major(new)),
        target=f"price:{product.sku}",
        standing=f"{product.name} still costs {old_shown}",
        subject=product.name,
    )


def _ensure_changes(product: Product, new: int, show: Money) -> None:
    if product.price != new:
        return
    raise ConflictError(
        f"{product.name} (SKU {product.sku}) already costs {show(new)}, so nothing was changed."
    )


async def _execute_price(ctx: ToolContext, args: SetPriceArgs) -> Result:
    money = await tenant_money(ctx)
    product = await _lock_product(ctx.session, args.sku)
    new = money.minor("set_price", "price", args.price)
    _ensure_changes(product, new, money.show)
    # A price that moved since the card was drawn is refused before this runs
    # (``tools.approving.as_shown``): the person agreed to "from ₹120.00 to ₹99.00", not to whatever the
    # price had become. The ledger records the price this replaced.
    old = product.price
    product.price = new
    ctx.session.add(
        PriceChange(
            product_id=product.id,
            old_price=old,
            new_price=new,
            approved_by=ctx.caller.userid,
            card_id=card_key(ctx),
            created_at=ctx.now,
        )
    )
    await ctx.session.flush()
    note = (
        f"{product.name} (SKU {product.sku}) now costs {money.show(new)} (was {money.show(old)})."
    )
    row = {"sku": product.sku, "price": money.show(new), "was": money.show(old)}
    return done(ctx, note, row, f"product {product.sku}")


ADJUST_STOCK = write_tool(
    Tool(
        name="adjust_stock",
        destructive=False,
        title="adjusting stock",
        description=(
            "Add or remove units of a product in a branch's stock (never below zero), with a "
            "reason. " + APPROVAL_NOTE
        ),
        args=AdjustStockArgs,
        role=Role.MANAGER,
        editable=("delta", "reason"),
    ),
    _propose_stock,
    _execute_stock,
)

SET_PRICE = write_tool(
    Tool(
        name="set_price",
        destructive=True,
        title="changing a price",
        description="Set a product's price for every branch. " + APPROVAL_NOTE,
        args=SetPriceArgs,
        role=Role.OWNER,
        editable=("price",),
    ),
    _propose_price,
    _execute_price,
)
