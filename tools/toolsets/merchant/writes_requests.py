"""approve_request and reject_request: a manager decides what a branch asked for.

``propose`` reads and checks, never writes; ``execute`` locks the request, checks it is still
pending and records the decision with the approving card's id.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.errors import ConflictError, NotFoundError
from tools.proposing.write import write_tool
from tools.schema import Args, RowId
from tools.tool import Proposal, ProposalDetail, Result, Tool, ToolContext
from tools.toolsets.merchant.labels import REQUEST_LABELS, kind_words
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    BranchStatus,
    Person,
    RequestStatus,
)
from tools.toolsets.merchant.writes_common import (
    APPROVAL_NOTE,
    Reason,
    arrow,
    branch_label,
    card_key,
    done,
    locked,
    person_name,
    stamp,
    tenant_money,
)

__all__ = ["APPROVE_REQUEST", "REJECT_REQUEST", "ApproveRequestArgs", "RejectRequestArgs"]

_REQUEST_ID = "The request id, e.g. 3."


class ApproveRequestArgs(Args):
    """Which pending branch request to approve, and an optional note for the branch."""

    request_id: RowId = Field(description=_REQUEST_ID)
    note: str | None = Field(
        default=None, max_length=500, description="Optional note for the branch."
    )


class RejectRequestArgs(Args):
    """Which pending branch request to reject, and why."""

    request_id: RowId = Field(description=_REQUEST_ID)
    reason: Reason = Field(description="Why it is rejected, in a sentence the branch will read.")


@dataclass(frozen=True, slots=True)
class _Resolved:
    """A request with the rows a card names: its branch and who asked."""

    request: BranchRequest
    branch: Branch
    requester: Person
    amount: str
    kind: str


async def _load(session: AsyncSession, request_id: int, *, lock: bool) -> BranchRequest:
    stmt = select(BranchRequest).where(BranchRequest.id == request_id)
    if lock:
        # Two cards for one request (two managers) must not both decide it: the second waits
        # here and then sees the first one's decision.
        stmt = locked(stmt)
    request = (await session.scalars(stmt)).one_or_none()
    if request is None:
        raise NotFoundError(
            f"There is no request {request_id}. List the requests to see their ids."
        )
    return request


async def _ensure_pending(session: AsyncSession, request: BranchRequest) -> None:
    if request.status == RequestStatus.PENDING:
        return
    who = await person_name(session, request.decided_by)
    raise ConflictError(
        f"Request {request.id} was already {request.status} by {who} at "
        f"{stamp(request.decided_at)}, so nothing was changed."
    )


async def _resolve(ctx: ToolContext, request: BranchRequest) -> _Resolved:
    # Relationships are lazy="raise": the branch and the requester are loaded explicitly.
    branch = await ctx.session.get(Branch, request.branch_id)
    requester = await ctx.session.get(Person, request.requested_by)
    if branch is None or requester is None:
        raise NotFoundError(f"Request {request.id} names a branch or person that no longer exists.")
    money = await tenant_money(ctx)
    kind = kind_words(request.kind)
    return _Resolved(request, branch, requester, money.show(request.amount), kind)


def _details(found: _Resolved, status_after: RequestStatus) -> list[ProposalDetail]:
    request = found.request
    return [
        ProposalDetail("Request", f"{request.id} — {found.kind}"),
        ProposalDetail("Branch", branch_label(found.branch)),
        ProposalDetail("Amount", found.amount),
        ProposalDetail(REQUEST_LABELS["requested_by"], found.requester.name),
        ProposalDetail(REQUEST_LABELS["reason"], request.reason),
        ProposalDetail("Status", arrow(request.status, status_after)),
    ]


def _warning(found: _Resolved, ctx: ToolContext) -> str | None:
    """Only what is unusual: deciding one's own request, or spending on a closed branch.

    Said of the person by name: the card is read by everyone in the thread and, when it is
    routed, by managers who did not ask ("You asked…" read as if it were about them). A staff
    member asking for their own request is not unusual: someone else decides it.
    """
    notes = []
    requester, asker = found.requester, ctx.caller
    if requester.id == asker.userid and asker.role.satisfies(Role.MANAGER):
        notes.append(f"{requester.name} asked for request {found.request.id} themselves.")
    if found.branch.status == BranchStatus.CLOSED:
        notes.append(f"{found.branch.name} (branch {found.branch.id}) is closed.")
    return " ".join(notes) or None


def _sentence(verb: str, found: _Resolved) -> str:
    return (
        f"{verb} request {found.request.id} — a {found.amount} {found.kind} for "
        f"{found.branch.name} (branch {found.branch.id}), asked by {found.requester.name}."
    )


async def _propose_approve(ctx: ToolContext, args: ApproveRequestArgs) -> Proposal:
    request = await _load(ctx.session, args.request_id, lock=ctx.executing)
    await _ensure_pending(ctx.session, request)
    found = await _resolve(ctx, request)
    details = _details(found, RequestStatus.APPROVED)
    if args.note:
        details.append(ProposalDetail("Note", args.note))
    return Proposal(
        summary=_sentence("Approve", found),
        details=tuple(details),
        warning=_warning(found, ctx),
        args=ApproveRequestArgs(request_id=request.id, note=args.note or None),
        target=f"request:{request.id}",
        # Approving spends the request's amount; the policy's two-approver threshold reads it,
        # added to what the branch's requests of that kind spent within the policy's window:
        # two ₹15,000 expenses of one branch in a day are ₹30,000 by one approver otherwise.
        amount=request.amount,
        tally=f"branch:{found.branch.id}:{request.kind}s",
        # Whoever raised the request does not approve it while someone else could.
        raised_by=request.requested_by,
        standing=f"request {request.id} is still pending",
        subject=f"Request {request.id}",
    )


async def _propose_reject(ctx: ToolContext, args: RejectRequestArgs) -> Proposal:
    request = await _load(ctx.session, args.request_id, lock=ctx.executing)
    await _ensure_pending(ctx.session, request)
    found = await _resolve(ctx, request)
    details = [
        *_details(found, RequestStatus.REJECTED),
        ProposalDetail("Rejected because", args.reason),
    ]
    return Proposal(
        summary=_sentence("Reject", found),
        details=tuple(details),
        args=RejectRequestArgs(request_id=request.id, reason=args.reason),
        target=f"request:{request.id}",
        standing=f"request {request.id} is still pending",
        subject=f"Request {request.id}",
    )


async def _decide(
    ctx: ToolContext, request_id: int, status: RequestStatus, note: str | None
) -> Result:
    """Re-checks the request under a row lock, then records the decision and the card."""
    request = await _load(ctx.session, request_id, lock=True)
    await _ensure_pending(ctx.session, request)
    request.status = status
    request.decided_by = ctx.caller.userid
    request.decided_at = ctx.now
    request.decision_note = note
    request.decided_card_id = card_key(ctx)
    await ctx.session.flush()
    # The column holds one person, the last to approve; the words name everyone who did.
    who = ctx.approved_by or ctx.caller.name or f"user {ctx.caller.userid}"
    row = {"request_id": request.id, "status": str(status), "decided_by": who}
    return done(ctx, f"Request {request.id} was {status} by {who}.", row, f"request {request.id}")


async def _execute_approve(ctx: ToolContext, args: ApproveRequestArgs) -> Result:
    return await _decide(ctx, args.request_id, RequestStatus.APPROVED, args.note)


async def _execute_reject(ctx: ToolContext, args: RejectRequestArgs) -> Result:
    return await _decide(ctx, args.request_id, RequestStatus.REJECTED, args.reason)


APPROVE_REQUEST = write_tool(
    Tool(
        name="approve_request",
        destructive=True,
        title="approving a request",
        description=(
            "Approve a pending branch request (stock purchase, refund, discount or expense). "
            + APPROVAL_NOTE
        ),
        args=ApproveRequestArgs,
        role=Role.MANAGER,
        editable=("note",),
    ),
    _propose_approve,
    _execute_approve,
)

REJECT_REQUEST = write_tool(
    Tool(
        name="reject_request",
        destructive=True,
        title="rejecting a request",
        description=(
            "Reject a pending branch request, with the reason the branch will read. "
            + APPROVAL_NOTE
        ),
        args=RejectRequestArgs,
        role=Role.MANAGER,
        editable=("reason",),
    ),
    _propose_reject,
    _execute_reject,
)
