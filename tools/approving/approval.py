"""Runs a write a person agreed to, once: the claim, the first of two approvals, the write.

``execute`` is reachable only from here, with a signed card in hand, pressed by a person it is
issued to (``tools.approving.checks``); the model has no path to it. ``propose`` (``tools.proposing.write``)
checked the write was possible; ``execute`` checks again against the live database, in the
same transaction as the write. Between the two a person read a card, and meanwhile someone
else may have approved the same request or closed the branch. That second check is also what
makes replaying a card harmless.

Transactions: an approval of a native write is two. The claim with its "approved / executing"
line, committed before the write leaves; then the write, its live re-check, the card's move to
``done`` and the outcome's audit line. A write to another system (an MCP server's tool) sends
its call between two transactions and inside none (``tools.approving.sending``). The first of two
approvals is one (it is recorded on the card with its audit line, and nothing runs). A refusal
commits only its audit line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection

from tools.agent import Agent
from tools.approving.as_shown import ensure_as_shown
from tools.approving.checks import check, needed_role, standing_approvals, verify
from tools.approving.sending import described, recorded, send
from tools.approving.trail import Trail, lost_claim
from tools.audit.log import Outcome
from tools.caller import Caller
from tools.cards.record import Approval, CardRecord, CardStatus
from tools.cards.store import claimed
from tools.cards.tokens import CardClaims
from tools.db import prescoped
from tools.db.refusals import refusal
from tools.deps import Deps
from tools.errors import (
    CardBusyError,
    CountersignError,
    OutcomeUnknownError,
)
from tools.tool import ExecuteFn, Result, Tool

__all__ = ["Decision", "approve", "approve_verified"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What became of a card a person decided: the card as now stored, and the write's result."""

    card: CardRecord
    result: Result | None = None
    error: CountersignError | None = None

    @property
    def ok(self) -> bool:
        return self.card.status is CardStatus.DONE

    @property
    def partly(self) -> bool:
        """An approval was recorded and the card waits for another one; nothing ran yet."""
        return self.card.status is CardStatus.PENDING


# How often an approval re-reads a card whose approvals changed under it (another approver
# counted first). Each retry means somebody else's approval landed, so two are plenty.
_RACES = 3


async def approve(deps: Deps, agent: Agent, token: str, caller: Caller) -> Decision:
    """Runs a write a person agreed to, once, after every check of the seed in its order.

    Verify the card (expiry is its own error) → the tool still exists and still writes → the
    card is issued to this person → the proposing agent's allow-list and the caller's role
    again → the arguments through the schema and against the digest → claim the card and
    audit "approved / executing" (committed together, before the write) → execute,
    re-validating live, move the card to done and audit the outcome (one transaction).

    A card needing two approvers stops short of the claim on its first approval: that one is
    recorded on the card and audited, and the card stays pending for a second, different
    person. The write runs once, on the second.
    """
    trail = Trail(deps, agent, caller)
    claims, tool = await verify(deps, trail, token, caller)
    return await approve_verified(deps, trail, agent=agent, claims=claims, tool=tool, caller=caller)


async def approve_verified(
    deps: Deps,
    trail: Trail,
    *,
    agent: Agent,
    claims: CardClaims,
    tool: Tool,
    caller: Caller,
) -> Decision:
    """Everything ``approve`` does once the claims are verified: the stored card's checks, the
    claim (or a first of two approvals), the write. A batch runs each of its cards through
    here, with claims its own verified token vouched for (``tools.batches.deciding``)."""
    with deps.lease.executing(claims.card_id):
        for _ in range(_RACES):
            step = await _claim(
                deps, trail, presented=agent, claims=claims, tool=tool, caller=caller
            )
            if isinstance(step, Decision):
                return step
            if step is not None:
                record, clean = step
                return await _execute(
                    deps, trail, tool=tool, record=record, clean=clean, caller=caller
                )
        raise await trail.refuse(CardBusyError(card_id=claims.card_id))


async def _claim(
    deps: Deps,
    trail: Trail,
    *,
    presented: Agent,
    claims: CardClaims,
    tool: Tool,
    caller: Caller,
) -> tuple[CardRecord, BaseModel] | Decision | None:
    """Checks the stored card and claims it (or records a first of two approvals), or audits
    why not; one transaction either way. None: another approval counted meanwhile; read again.

    Written before the write, deliberately. Everything up to the claim is a refusal that
    changed nothing; everything after might change something, and the trail has to say so even
    if the process dies mid-write.
    """
    now = deps.clock()
    refused: CountersignError | None = None
    async with deps.db.begin(write=True) as conn:
        record = await deps.cards.get(claims.card_id, conn=conn)
        try:
            clean = check(
                deps,
                trail=trail,
                presented=presented,
                claims=claims,
                tool=tool,
                record=record,
                caller=caller,
            )
            assert record is not None
            return await _count(deps, trail, conn, record, clean, tool=tool, caller=caller, now=now)
        except CountersignError as refusal:
            refused = refusal
            await trail.add(conn, Outcome.REFUSED, str(refusal))
    assert refused is not None
    raise refused


async def _count(
    deps: Deps,
    trail: Trail,
    conn: AsyncConnection,
    record: CardRecord,
    clean: BaseModel,
    *,
    tool: Tool,
    caller: Caller,
    now: datetime,
) -> tuple[CardRecord, BaseModel] | Decision | None:
    """Counts this approval with those still standing: recorded on a card that needs more, the
    claim on the last one. None: another approval was counted first; read again."""
    seen = len(record.approvals)
    standing = await standing_approvals(conn, record, needed_role(record, tool))
    approvals = (*standing, Approval(caller.userid, _name(caller), now))
    if len(approvals) < record.approvals_needed:
        if await deps.cards.approve_once(
            record.card_id, seen=seen, approvals=approvals, now=now, conn=conn
        ):
            progress = f"approval {len(approvals)} of {record.approvals_needed}"
            await trail.add(conn, Outcome.APPROVED, progress)
            return Decision(replace(record, approvals=approvals))
    else:
        decided = await _start_executing(
            deps, trail, conn, record, caller, seen=seen, approvals=approvals, now=now
        )
        if decided is not None:
            return decided, clean
    if await _raced(deps, conn, record.card_id, seen, now):
        return None
    raise await lost_claim(deps, conn, record.card_id)


async def _start_executing(
    deps: Deps,
    trail: Trail,
    conn: AsyncConnection,
    record: CardRecord,
    caller: Caller,
    *,
    seen: int,
    approvals: tuple[Approval, ...],
    now: datetime,
) -> CardRecord | None:
    """``pending → executing`` under this process's lease, with the "approved / executing"
    audit line; the card as claimed, or None: the card was no longer as read."""
    holder, needs_two = deps.lease.holder, record.approvals_needed > 1
    if not await deps.cards.claim(
        record.card_id,
        caller,
        now,
        holder=holder,
        conn=conn,
        seen=seen,
        approvals=approvals if needs_two else (),
        decided_by_name=_names(approvals) if needs_two else None,
    ):
        return None
    await trail.add(conn, Outcome.APPROVED, "executing")
    decided = claimed(record, caller, now, holder)
    if needs_two:
        decided = replace(decided, approvals=approvals, decided_by_name=_names(approvals))
    return decided


async def _raced(deps: Deps, conn: AsyncConnection, card_id: str, seen: int, now: datetime) -> bool:
    """Whether a claim missed only because another approval was counted first."""
    current = await deps.cards.get(card_id, conn=conn)
    return (
        current is not None
        and current.status is CardStatus.PENDING
        and current.expires_at > now
        and len(current.approvals) != seen
    )


def _name(caller: Caller) -> str:
    return caller.name or f"user {caller.userid}"


def _names(approvals: tuple[Approval, ...]) -> str:
    return " and ".join(a.name for a in approvals)


async def _execute(
    deps: Deps,
    trail: Trail,
    *,
    tool: Tool,
    record: CardRecord,
    clean: BaseModel,
    caller: Caller,
) -> Decision:
    """The write, its live re-check, the card's move to ``done`` and its audit line: at once for
    a native write, outside any transaction for an external one; a write that fails moves the
    card to ``failed`` (``outcome_unknown``, sent with no answer) with what the person reads."""
    # Checked before the try, so a broken invariant raises as it is and is never recorded as
    # a failed write.
    execute, decided_at = tool.execute, record.decided_at
    assert execute is not None
    assert decided_at is not None
    try:
        if not tool.external:
            return await _write(
                deps, trail, tool, execute, record=record, clean=clean, caller=caller, at=decided_at
            )
        result = await send(tool, execute, deps, record=record, clean=clean, caller=caller)
    except OutcomeUnknownError as lost:
        # Sent, and no answer came: neither done nor failed, and never sent again on its own.
        return await _failed(
            deps, trail, record, note=str(lost), detail=str(lost), error=lost, unknown=True
        )
    except CountersignError as failed:
        return await _failed(
            deps, trail, record, note=str(failed), detail=str(failed), error=failed
        )
    except Exception as broken:
        detail = f"{type(broken).__name__}: {broken}"
        refused = refusal(broken)
        if refused is not None:
            # The database said no to the statement itself (a price beyond its column, a
            # duplicate name). That used to be raised as the database being unreachable: the
            # card was failed in the table but live in the channel, and the person was told to
            # press again, which could only fail again. It is a failed card like any other.
            note = f"the database refused it: {refused}; nothing was changed"
            return await _failed(deps, trail, record, note=note, detail=detail)
        note = f"it failed unexpectedly ({type(broken).__name__}); nothing was changed"
        await _failed(deps, trail, record, note=note, detail=detail)
        raise
    # The server answered: what is left is recording it. A database failure here propagates
    # as it is, never as "nothing was changed": the card stays executing, and once this press
    # is no longer running the reconciler says "outcome unknown".
    card = await recorded(deps, trail, record, result)
    return Decision(card, result)


async def _write(
    deps: Deps,
    trail: Trail,
    tool: Tool,
    execute: ExecuteFn,
    *,
    record: CardRecord,
    clean: BaseModel,
    caller: Caller,
    at: datetime,
) -> Decision:
    """Re-reads what the card showed, runs the write (as approved ``at``) in the caller's tenant
    and moves the card to ``done`` with its audit line, all in one transaction."""
    card_id = record.card_id
    async with deps.db.tenant_session(caller.tenantid, write=True) as session:
        ctx = await deps.context(session, caller, at, card_id, approved_by=record.decided_by_name)
        await ensure_as_shown(tool, ctx, clean, record)
        result = await execute(ctx, clean)
        if session.new or session.dirty or session.deleted:
            # ORM changes of the write go out before the card's move, so a row the database
            # refuses fails the write, not the move; a write made of Core statements has none,
            # and an empty flush still costs a greenlet.
            await session.flush()
        conn, outcome = await prescoped.connection(session), described(result)
        if not await deps.cards.move(
            card_id, frm=CardStatus.EXECUTING, to=CardStatus.DONE, conn=conn, outcome=outcome
        ):
            # The reconciler of another process declared this card interrupted while we
            # ran; rolling back keeps its "nothing was changed" true.
            await session.rollback()
            return await _interrupted(deps, trail, card_id)
        await trail.add(conn, Outcome.DONE, outcome, result.count)
        await session.commit()
    return Decision(replace(record, status=CardStatus.DONE, outcome=outcome), result)


async def _failed(
    deps: Deps,
    trail: Trail,
    record: CardRecord,
    *,
    note: str,
    detail: str,
    error: CountersignError | None = None,
    unknown: bool = False,
) -> Decision:
    """``executing → failed`` (or, ``unknown``, ``outcome_unknown``) with what the person reads,
    and its audit line, in one transaction."""
    status = CardStatus.UNKNOWN if unknown else CardStatus.FAILED
    async with deps.db.begin() as conn:
        moved = await deps.cards.move(
            record.card_id, frm=CardStatus.EXECUTING, to=status, conn=conn, outcome=note
        )
        await trail.add(conn, Outcome.UNKNOWN if unknown else Outcome.FAILED, detail)
        if moved:
            return Decision(replace(record, status=status, outcome=note), None, error)
        stored = await deps.cards.get(record.card_id, conn=conn)
    assert stored is not None
    return Decision(stored, None, error)


async def _interrupted(deps: Deps, trail: Trail, card_id: str) -> Decision:
    record = await deps.cards.get(card_id)
    assert record is not None
    await trail.write(Outcome.INTERRUPTED, record.outcome or "")
    return Decision(record)
