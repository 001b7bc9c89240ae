"""Writes and the person in front of them: propose a card, then approve (run once) or reject it.

A write tool is two halves that never run together. ``propose`` resolves what would happen and
returns a card; ``execute`` performs it and is reachable only through ``approve``, with a signed
card in hand, pressed by the person it was issued to. The model reaches the first and has no
path at all to the second.

Nothing runs unasked: no confidence threshold, no list of writes considered safe, no amount
below which a change goes through. The card is the only thing between a model and a merchant's
live data, so it shows what was *resolved* (ids and names), never the model's phrasing: the
sentence and the action come from different places and only one of them can be checked.

``propose`` checks the write is possible; ``execute`` checks again against the live database,
in the same transaction as the write. Between the two a person read a card, and meanwhile
someone else may have approved the same request or closed the branch. That second check is also
what makes replaying a card harmless.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tools import schema
from tools.agent import Agent
from tools.audit import AuditEntry, Outcome
from tools.caller import Caller
from tools.db import ProposalRow
from tools.errors import (
    CardDecidedError,
    CardExpiredError,
    CardMismatchError,
    CountersignError,
    InvalidCardError,
    NotAWriteError,
    NotYourCardError,
    UnknownToolError,
)
from tools.proposals import CardRecord, CardStatus
from tools.tokens import CardClaims, args_digest
from tools.tool import ExecuteFn, ProposeFn, Result, Scope, Tool, ToolContext

if TYPE_CHECKING:
    from tools.registry import Registry

__all__ = ["NOT_DONE_NOTE", "Decision", "approve", "propose", "reject", "write_tool"]

# Told to the model with every proposal, in words it will repeat. Without it the model reports
# the action in the past tense, and the person believes a refund went out that did not.
NOT_DONE_NOTE = (
    "This has NOT been done. It is waiting for the person to approve it on the card. "
    "Tell them what will happen and that they need to press Approve; do not say it is done."
)


def write_tool(base: Tool, propose: ProposeFn, execute: ExecuteFn) -> Tool:
    """Makes a write tool from a base (name, description, args, role) and its two halves.

    The only way to get ``Scope.WRITE`` onto a tool; ``Tool`` refuses a write with a handler.
    """
    return replace(base, scope=Scope.WRITE, propose=propose, execute=execute)


@dataclass(frozen=True, slots=True)
class Decision:
    """What became of a card a person decided: the card as now stored, and the write's result."""

    card: CardRecord
    result: Result | None = None
    error: CountersignError | None = None

    @property
    def ok(self) -> bool:
        return self.card.status is CardStatus.DONE


async def propose(
    registry: Registry,
    ctx: ToolContext,
    clean: BaseModel,
    *,
    agent: Agent,
    tool: Tool,
    entry: AuditEntry,
) -> Result:
    """What ``Registry.call`` does instead of running a write: resolve, seal, store, answer."""
    assert tool.propose is not None
    # A refusal here is the useful kind: "that request is already approved" reaches the person
    # before they press anything.
    proposal = await tool.propose(ctx, clean)
    # Resolved arguments go through the schema now, as they will at approval, so a tool that
    # resolves into something its own schema rejects fails here, not on the manager's phone.
    resolved = schema.validate(tool.name, tool.args, proposal.args or clean)
    sealed = resolved.model_dump(mode="json")
    card_id, expires_at = uuid.uuid4().hex, ctx.now + registry.card_ttl
    digest = args_digest(sealed)
    claims = CardClaims(card_id, tool.name, ctx.caller.userid, ctx.caller.tenantid, digest)
    ctx.session.add(
        ProposalRow(
            id=card_id,
            tool=tool.name,
            agent=agent.name,
            user_id=ctx.caller.userid,
            tenant_id=ctx.caller.tenantid,
            args=sealed,
            digest=digest,
            summary=proposal.summary,
            details=[{"label": d.label, "value": d.value} for d in proposal.details],
            warning=proposal.warning,
            status=CardStatus.PENDING,
            created_at=ctx.now,
            expires_at=expires_at,
        )
    )
    await ctx.session.commit()
    entry.args = sealed
    proposal = replace(
        proposal,
        args=resolved,
        card=registry.signer.mint(claims),
        card_id=card_id,
        expires_at=expires_at,
    )
    return Result(
        rows=[proposal.public()],
        count=1,
        scope="nothing has changed yet",
        note=NOT_DONE_NOTE,
        proposal=proposal,
    )


class _Trail:
    """One audit entry for one decision, written when the decision ends, whatever the ending."""

    def __init__(self, registry: Registry, agent: Agent, caller: Caller) -> None:
        self.registry = registry
        self.started, self._clock = registry.clock(), time.perf_counter()
        self.entry = AuditEntry(
            at=self.started,
            agent=agent.name,
            tool="(approval)",
            userid=caller.userid,
            tenantid=caller.tenantid,
            scope=str(Scope.WRITE),
        )

    async def write(self, outcome: Outcome, detail: str, rows: int = 0) -> None:
        self.entry.outcome, self.entry.detail, self.entry.rows = outcome, detail, rows
        self.entry.took_ms = (time.perf_counter() - self._clock) * 1000
        await self.registry.audit.write(self.entry)

    async def refuse(self, error: CountersignError) -> CountersignError:
        await self.write(Outcome.REFUSED, str(error))
        return error


async def _verify(
    registry: Registry, trail: _Trail, token: str, caller: Caller
) -> tuple[CardClaims, Tool]:
    """The checks that need no database: signature and expiry, then the card's owner and tool."""
    try:
        claims = registry.signer.parse(token)
    except CardExpiredError as expired:
        trail.entry.card_id = expired.card_id
        if expired.card_id:
            await registry.cards.move(
                expired.card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED
            )
        await trail.write(Outcome.EXPIRED, str(expired))
        raise
    except InvalidCardError as invalid:
        raise await trail.refuse(invalid) from None
    trail.entry.tool, trail.entry.card_id = claims.tool, claims.card_id
    # A card is not transferable. Without this, one person's approval could be replayed by
    # another, including by somebody in a different shop.
    if claims.userid != caller.userid or claims.tenantid != caller.tenantid:
        raise await trail.refuse(
            NotYourCardError(card_id=claims.card_id, owner_userid=claims.userid)
        )
    tool = registry.lookup_or_none(claims.tool)
    if tool is None:
        raise await trail.refuse(UnknownToolError(claims.tool))
    if tool.scope is not Scope.WRITE or tool.execute is None:
        raise await trail.refuse(NotAWriteError(claims.tool, card_id=claims.card_id))
    return claims, tool


async def _load_args(
    registry: Registry, trail: _Trail, claims: CardClaims, tool: Tool
) -> BaseModel:
    """The stored arguments, through the schema again and matched against the signed digest.

    Not a trust check: the card is signed, so these are arguments this server sealed. It is a
    types one. The arguments round-trip through JSON, and the first version of this design read
    a request id sealed as ``41`` back as the float ``41.0``, which a handler took for request 0:
    "request 0 is not waiting for approval" read like a stale card, so it failed silently.
    """
    record = await registry.cards.get(claims.card_id)
    if record is None or record.tool != claims.tool or record.tenantid != claims.tenantid:
        raise await trail.refuse(InvalidCardError("no such card was issued"))
    try:
        clean = schema.validate(tool.name, tool.args, record.args)
    except CountersignError as invalid:
        raise await trail.refuse(invalid) from None
    trail.entry.args = clean.model_dump(mode="json")
    if args_digest(trail.entry.args) != claims.digest:
        raise await trail.refuse(CardMismatchError(card_id=claims.card_id))
    return clean


async def approve(registry: Registry, agent: Agent, token: str, caller: Caller) -> Decision:
    """Runs a write a person agreed to, once, after every check of the seed in its order.

    Verify the card (expiry is its own error) → same person and tenant → the tool still exists
    and still writes → the agent's allow-list and the caller's role again (a card must not
    outlive a change to either) → the arguments through the schema and against the digest →
    claim the card → audit "approved / executing" → execute, re-validating live → audit outcome.
    """
    trail = _Trail(registry, agent, caller)
    claims, tool = await _verify(registry, trail, token, caller)
    try:
        registry.check_access(agent, tool, caller)
    except CountersignError as refused:
        raise await trail.refuse(refused) from None
    clean = await _load_args(registry, trail, claims, tool)
    now = registry.clock()
    if not await registry.cards.claim(claims.card_id, caller, now):
        raise await trail.refuse(await _lost_claim(registry, claims.card_id, now))
    # Written before the write, deliberately. Everything above was a refusal that changed
    # nothing; everything below might change something, and the trail has to say so even if
    # the process dies mid-write.
    await trail.write(Outcome.APPROVED, "executing")
    return await _execute(
        registry, trail, tool=tool, card_id=claims.card_id, clean=clean, caller=caller, now=now
    )


async def _execute(
    registry: Registry,
    trail: _Trail,
    *,
    tool: Tool,
    card_id: str,
    clean: BaseModel,
    caller: Caller,
    now: datetime,
) -> Decision:
    """The write, its live re-check and the card's move to ``done``, in one transaction."""
    assert tool.execute is not None
    try:
        async with registry.db.tenant_session(caller.tenantid, write=True) as session:
            ctx = await registry.context(session, caller, now, card_id=card_id)
            result = await tool.execute(ctx, clean)
            outcome = _describe(result)
            moved = await registry.cards.move(
                card_id,
                frm=CardStatus.EXECUTING,
                to=CardStatus.DONE,
                session=session,
                outcome=outcome,
            )
            if not moved:
                # The reconciler of another process declared this card interrupted while we
                # ran; rolling back keeps its "nothing was changed" true.
                await session.rollback()
                return await _finish(registry, trail, card_id, Outcome.INTERRUPTED)
            await session.commit()
    except CountersignError as failed:
        await registry.cards.move(
            card_id, frm=CardStatus.EXECUTING, to=CardStatus.FAILED, outcome=str(failed)
        )
        return await _finish(registry, trail, card_id, Outcome.FAILED, error=failed)
    except Exception as broken:
        detail = f"it failed unexpectedly ({type(broken).__name__}); nothing was changed"
        await registry.cards.move(
            card_id, frm=CardStatus.EXECUTING, to=CardStatus.FAILED, outcome=detail
        )
        await trail.write(Outcome.FAILED, f"{type(broken).__name__}: {broken}")
        raise
    return await _finish(registry, trail, card_id, Outcome.DONE, result=result)


async def _finish(
    registry: Registry,
    trail: _Trail,
    card_id: str,
    outcome: Outcome,
    *,
    result: Result | None = None,
    error: CountersignError | None = None,
) -> Decision:
    record = await registry.cards.get(card_id)
    assert record is not None
    await trail.write(outcome, record.outcome or str(error or ""), result.count if result else 0)
    return Decision(record, result, error)


def _describe(result: Result) -> str:
    if result.note:
        return result.note
    return f"{result.count} row(s) changed" if result.count != 1 else "done"


async def _lost_claim(registry: Registry, card_id: str, now: datetime) -> CountersignError:
    """Why a claim matched nothing: somebody decided first, or the card ran out of time."""
    record = await registry.cards.get(card_id)
    assert record is not None
    if record.status is CardStatus.PENDING or record.status is CardStatus.EXPIRED:
        await registry.cards.move(card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED)
        return CardExpiredError(card_id=card_id)
    return CardDecidedError(
        card_id=card_id,
        status=_PAST[record.status],
        by=record.decided_by_name,
        at=record.decided_at,
    )


_PAST: dict[CardStatus, str] = {
    CardStatus.EXECUTING: "approved",
    CardStatus.DONE: "approved",
    CardStatus.FAILED: "approved (and failed)",
    CardStatus.REJECTED: "rejected",
    CardStatus.INTERRUPTED: "approved (and interrupted)",
    CardStatus.UNKNOWN: "approved",
    CardStatus.PENDING: "left pending",
    CardStatus.EXPIRED: "expired",
}


async def reject(
    registry: Registry, agent: Agent, token: str, caller: Caller, reason: str = ""
) -> Decision:
    """Declines a card: the same identity checks as approval, then ``pending → rejected``."""
    trail = _Trail(registry, agent, caller)
    claims, _tool = await _verify(registry, trail, token, caller)
    now, reason = registry.clock(), reason.strip()[:500]
    moved = await registry.cards.move(
        claims.card_id,
        frm=CardStatus.PENDING,
        to=CardStatus.REJECTED,
        decided_by=caller.userid,
        decided_by_name=caller.name or f"user {caller.userid}",
        decided_at=now,
        reason=reason or None,
    )
    if not moved:
        raise await trail.refuse(await _lost_claim(registry, claims.card_id, now))
    await trail.write(Outcome.REJECTED, reason or "no reason given")
    record = await registry.cards.get(claims.card_id)
    assert record is not None
    return Decision(record)
