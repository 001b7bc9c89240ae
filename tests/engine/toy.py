"""A small toolset that exercises every rule of the engine without depending on the merchant tools.

``rename_branch`` carries every argument type a card must round-trip (int, Decimal, date,
enum); ``explode`` fails in execute after its audit; ``wait_forever`` blocks mid-write so a test
can kill the process there; ``wait_for_signal`` blocks mid-write until SIGUSR1, so a test can act
while a press is in flight and then let it finish. ``count_stock`` writes a quantity its schema
leaves unbounded on purpose, so the database itself can refuse the write.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import signal
from decimal import Decimal
from pathlib import Path

from pydantic import Field
from sqlalchemy import func, select

from tools import Args, Proposal, ProposalDetail, Result, Role, Tool, ToolContext, write_tool
from tools.errors import ConflictError, NotFoundError
from tools.toolsets.merchant.models import Branch, BranchStatus, RequestKind, Stock

SEEN_TYPES: list[tuple[type, ...]] = []


class CountArgs(Args):
    status: BranchStatus | None = None


class RenameArgs(Args):
    branch_id: int
    name: str = Field(min_length=1, max_length=100)
    budget: Decimal = Decimal("0")
    opens: dt.date = dt.date(2026, 1, 1)
    kind: RequestKind = RequestKind.EXPENSE


async def count_branches(ctx: ToolContext, args: CountArgs) -> Result:
    stmt = select(func.count()).select_from(Branch)
    if args.status:
        stmt = stmt.where(Branch.status == args.status)
    total = int(await ctx.session.scalar(stmt) or 0)
    return Result(rows=[{"branches": total}], count=1, scope=f"{ctx.tenant_name}: branch count")


async def _branch(ctx: ToolContext, branch_id: int) -> Branch:
    branch = await ctx.session.get(Branch, branch_id, with_for_update=True)
    if branch is None:
        raise NotFoundError(f"There is no branch {branch_id}.")
    return branch


async def propose_rename(ctx: ToolContext, args: RenameArgs) -> Proposal:
    branch = await _branch(ctx, args.branch_id)
    if branch.status != BranchStatus.OPEN:
        raise ConflictError(f"Branch {branch.id} ({branch.name}) is closed.")
    return Proposal(
        summary=f"Rename branch {branch.id} from {branch.name} to {args.name}.",
        details=(ProposalDetail("Branch", f"{branch.name} (branch {branch.id})"),),
    )


async def execute_rename(ctx: ToolContext, args: RenameArgs) -> Result:
    SEEN_TYPES.append(tuple(type(v) for v in (args.branch_id, args.budget, args.opens, args.kind)))
    branch = await _branch(ctx, args.branch_id)
    if branch.status != BranchStatus.OPEN:
        raise ConflictError(
            f"Branch {branch.id} ({branch.name}) was closed since the card was made."
        )
    branch.name = args.name
    return Result(rows=[{"branch_id": branch.id, "name": args.name}], count=1, scope="renamed")


async def explode(ctx: ToolContext, args: RenameArgs) -> Result:
    raise RuntimeError("the payment provider hung up")


async def wait_forever(ctx: ToolContext, args: RenameArgs) -> Result:
    branch = await _branch(ctx, args.branch_id)
    branch.name = args.name
    await ctx.session.flush()
    marker = Path(args.name)
    marker.write_text("mid-write")
    await asyncio.sleep(3600)
    return Result(rows=[], count=0, scope="unreachable")


async def wait_for_signal(ctx: ToolContext, args: RenameArgs) -> Result:
    branch = await _branch(ctx, args.branch_id)
    branch.name = args.name
    await ctx.session.flush()
    go = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, go.set)
    Path(args.name).write_text("mid-write")
    await go.wait()
    return Result(rows=[{"branch_id": branch.id, "name": args.name}], count=1, scope="renamed")


class CountStockArgs(Args):
    stock_id: int = Field(ge=1, le=2**31 - 1)
    # Unbounded on purpose: the stock column is a 32-bit INTEGER, which PostgreSQL enforces.
    quantity: int


async def propose_count(ctx: ToolContext, args: CountStockArgs) -> Proposal:
    return Proposal(
        summary=f"Set stock line {args.stock_id} to {args.quantity} units.",
        details=(ProposalDetail("Quantity", str(args.quantity)),),
    )


async def execute_count(ctx: ToolContext, args: CountStockArgs) -> Result:
    stock = await ctx.session.get(Stock, args.stock_id, with_for_update=True)
    if stock is None:
        raise NotFoundError(f"There is no stock line {args.stock_id}.")
    stock.quantity = args.quantity
    await ctx.session.flush()
    return Result(rows=[{"stock_id": stock.id}], count=1, scope="counted")


def _base(name: str, role: Role = Role.MANAGER) -> Tool:
    return Tool(name=name, description=f"Test tool {name}.", args=RenameArgs, role=role)


TOY_TOOLS = [
    Tool(
        name="count_branches",
        description="Counts branches.",
        args=CountArgs,
        handler=count_branches,
    ),
    write_tool(_base("rename_branch"), propose_rename, execute_rename),
    write_tool(_base("explode"), propose_rename, explode),
    write_tool(_base("wait_forever"), propose_rename, wait_forever),
    write_tool(_base("wait_for_signal"), propose_rename, wait_for_signal),
    write_tool(
        Tool(
            name="count_stock",
            description="Sets a stock count.",
            args=CountStockArgs,
            role=Role.MANAGER,
        ),
        propose_count,
        execute_count,
    ),
]
