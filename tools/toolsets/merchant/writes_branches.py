"""close_branch and reopen_branch: an owner opens or closes a branch.

``propose`` resolves the branch by id or name and counts the work still open there, never
writes; ``execute`` locks the branch, checks it is still in the state the card showed, flips it.
"""

from __future__ import annotations

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.errors import ConflictError, NotFoundError
from tools.proposing.write import write_tool
from tools.schema import Args, RowId
from tools.tool import Proposal, ProposalDetail, Result, Tool, ToolContext
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    BranchStatus,
    Order,
    OrderStatus,
    RequestStatus,
)
from tools.toolsets.merchant.scope import find_branch
from tools.toolsets.merchant.writes_common import (
    APPROVAL_NOTE,
    arrow,
    branch_label,
    done,
    locked,
    stamp,
)

__all__ = ["CLOSE_BRANCH", "REOPEN_BRANCH", "CloseBranchArgs", "ReopenBranchArgs"]


class CloseBranchArgs(Args):
    """Which open branch to close."""

    branch: str | RowId = Field(description="Branch id or name.")


class ReopenBranchArgs(Args):
    """Which closed branch to open again."""

    branch: str | RowId = Field(description="Branch id or name.")


async def lock_branch(session: AsyncSession, ref: str | int) -> Branch:
    """The branch under a row lock, read fresh: whatever the session held before is replaced.

    Without ``populate_existing`` a branch the session had already loaded keeps its old status
    after the lock is granted, and a branch closed meanwhile would be "closed" twice.
    """
    branch_id = ref if isinstance(ref, int) else (await find_branch(session, ref)).id
    branch = (
        await session.scalars(locked(select(Branch).where(Branch.id == branch_id)))
    ).one_or_none()
    if branch is None:
        raise NotFoundError(f"There is no branch {branch_id}. List the branches to see them.")
    return branch


def _ensure_status(branch: Branch, wanted: BranchStatus, verb: str) -> None:
    if branch.status == wanted:
        return
    raise ConflictError(
        f"{branch.name} (branch {branch.id}) is already {branch.status} "
        f"(since {stamp(branch.status_changed_at)}), so there is nothing to {verb}."
    )


async def _open_work(session: AsyncSession, branch_id: int) -> tuple[int, int]:
    """How many orders are still open and how many requests still wait at this branch."""
    orders = (
        select(func.count())
        .select_from(Order)
        .where(Order.branch_id == branch_id, Order.status == OrderStatus.OPEN)
    )
    requests = (
        select(func.count())
        .select_from(BranchRequest)
        .where(BranchRequest.branch_id == branch_id, BranchRequest.status == RequestStatus.PENDING)
    )
    return int(await session.scalar(orders) or 0), int(await session.scalar(requests) or 0)


def _close_warning(branch: Branch, orders: int, requests: int) -> str | None:
    parts = []
    if orders:
        parts.append(f"{orders} open order{'s' if orders != 1 else ''}")
    if requests:
        parts.append(f"{requests} pending request{'s' if requests != 1 else ''}")
    if not parts:
        return None
    return (
        f"{branch.name} still has {' and '.join(parts)}; closing it does not cancel or decide them."
    )


async def _branch(ctx: ToolContext, ref: str | int) -> Branch:
    """The branch a card names; under the write's row lock when re-read for an approved card."""
    return await (lock_branch if ctx.executing else find_branch)(ctx.session, ref)


async def _propose_close(ctx: ToolContext, args: CloseBranchArgs) -> Proposal:
    branch = await _branch(ctx, args.branch)
    _ensure_status(branch, BranchStatus.OPEN, "close")
    orders, requests = await _open_work(ctx.session, branch.id)
    return Proposal(
        summary=f"Close {branch.name} (branch {branch.id}, {branch.city}).",
        details=(
            ProposalDetail("Branch", branch_label(branch)),
            ProposalDetail("Status", arrow(BranchStatus.OPEN, BranchStatus.CLOSED)),
            ProposalDetail("Open orders", str(orders)),
            ProposalDetail("Pending requests", str(requests)),
        ),
        warning=_close_warning(branch, orders, requests),
        args=CloseBranchArgs(branch=branch.id),
        target=f"branch:{branch.id}",
        standing=f"{branch.name} stays open",
        subject=f"Branch {branch.id}",
    )


async def _propose_reopen(ctx: ToolContext, args: ReopenBranchArgs) -> Proposal:
    branch = await _branch(ctx, args.branch)
    _ensure_status(branch, BranchStatus.CLOSED, "reopen")
    return Proposal(
        summary=f"Reopen {branch.name} (branch {branch.id}, {branch.city}).",
        details=(
            ProposalDetail("Branch", branch_label(branch)),
            ProposalDetail("Status", arrow(BranchStatus.CLOSED, BranchStatus.OPEN)),
            ProposalDetail("Closed since", stamp(branch.status_changed_at)),
        ),
        args=ReopenBranchArgs(branch=branch.id),
        target=f"branch:{branch.id}",
        standing=f"{branch.name} stays closed",
        subject=f"Branch {branch.id}",
    )


async def _flip(ctx: ToolContext, ref: str | int, frm: BranchStatus, to: BranchStatus) -> Result:
    branch = await lock_branch(ctx.session, ref)
    _ensure_status(branch, frm, "close" if to is BranchStatus.CLOSED else "reopen")
    branch.status = to
    branch.status_changed_at = ctx.now
    await ctx.session.flush()
    note = f"{branch.name} (branch {branch.id}) is now {to}."
    row = {"branch_id": branch.id, "branch": branch.name, "status": str(to)}
    return done(ctx, note, row, f"branch {branch.id}")


async def _execute_close(ctx: ToolContext, args: CloseBranchArgs) -> Result:
    return await _flip(ctx, args.branch, BranchStatus.OPEN, BranchStatus.CLOSED)


async def _execute_reopen(ctx: ToolContext, args: ReopenBranchArgs) -> Result:
    return await _flip(ctx, args.branch, BranchStatus.CLOSED, BranchStatus.OPEN)


CLOSE_BRANCH = write_tool(
    Tool(
        name="close_branch",
        destructive=True,
        title="closing a branch",
        description="Close an open branch (by id or name). " + APPROVAL_NOTE,
        args=CloseBranchArgs,
        role=Role.OWNER,
    ),
    _propose_close,
    _execute_close,
)

REOPEN_BRANCH = write_tool(
    Tool(
        name="reopen_branch",
        destructive=False,
        title="reopening a branch",
        description="Reopen a closed branch (by id or name). " + APPROVAL_NOTE,
        args=ReopenBranchArgs,
        role=Role.OWNER,
    ),
    _propose_reopen,
    _execute_reopen,
)
