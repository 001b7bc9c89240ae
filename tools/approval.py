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

Transactions: a proposal is one (the card and its audit line). An approval is two: the claim
with its "approved / executing" line, committed before the write leaves; then the write, its
live re-check, the card's move to ``done`` and the outcome's audit line. A refusal commits only
its audit line.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import schema
from tools.agent import Agent
from tools.audit import AuditEntry, Outcome
from tools.caller import Caller
from tools.errors import (
    CardDecidedError,
    CardExpiredError,
    CardMismatchError,
    CountersignError,
    InvalidCardError,
    NotAllowedError,
    NotAWriteError,
    NotYourCardError,
    RoleRequiredError,
    UnknownToolError,
)
from tools.proposals import CardRecord, CardStatus, claimed
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
    timer: float,
) -> Result:
    """What ``Registry.call`` does instead of running a write: resolve, seal, store, audit, answer.

    The card and the "proposed" audit line commit together in the session the tool resolved in.
    """
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
    token = registry.signer.mint(claims)
    conn = await ctx.session.connection()
    await registry.cards.insert(
        conn,
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
    entry.args, entry.card_id, entry.rows = sealed, card_id, 1
    entry.outcome, entry.detail = Outcome.PROPOSED, proposal.summary
    entry.took_ms = (time.perf_counter() - timer) * 1000
    await registry.audit.add(conn, entry)
    await ctx.session.commit()
    proposal = replace(proposal, args=resolved, card=token, card_id=card_id, expires_at=expires_at)
    return Result(
        rows=[proposal.public()],
        count=1,
        scope="nothing has changed yet",
        note=NOT_DONE_NOTE,
        proposal=proposal,
    )


class _Trail:
    """The audit entry of one decision, written at each step that must leave a trace."""

    def __init__(self, registry: Registry, agent: Agent, caller: Caller) -> None:
        self.registry = registry
        self._clock = time.perf_counter()
        self.entry = AuditEntry(
            at=registry.clock(),
            agent=agent.name,
            tool="(approval)",
            userid=caller.userid,
            tenantid=caller.tenantid,
            scope=str(Scope.WRITE),
        )

    def _at(self, outcome: Outcome, detail: str, rows: int) -> AuditEntry:
        self.entry.outcome, self.entry.detail, self.entry.rows = outcome, detail, rows
        self.entry.took_ms = (time.perf_counter() - self._clock) * 1000
        return self.entry

    async def write(self, outcome: Outcome, detail: str, rows: int = 0) -> None:
        """On its own transaction."""
        await self.registry.audit.write(self._at(outcome, detail, rows))

    async def add(
        self, conn: AsyncConnection, outcome: Outcome, detail: str, rows: int = 0
    ) -> None:
        """In ``conn``'s transaction, committing with what it describes."""
        await self.registry.audit.add(conn, self._at(outcome, detail, rows))

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
        async with registry.db.begin() as conn:
            if expired.card_id:
                await registry.cards.move(
                    expired.card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn
                )
            await trail.add(conn, Outcome.EXPIRED, str(expired))
        raise
    except InvalidCardError as invalid:
        raise await trail.refuse(invalid) from None
    trail.entry.tool, trail.entry.card_id = claims.tool, claims.card_id
    if not _issued_to(claims, caller):
        raise await trail.refuse(
            NotYourCardError(card_id=claims.card_id, owner_userid=claims.userid)
        )
    tool = registry.lookup_or_none(claims.tool)
    if tool is None:
        raise await trail.refuse(UnknownToolError(claims.tool))
    if tool.scope is not Scope.WRITE or tool.execute is None:
        raise await trail.refuse(NotAWriteError(claims.tool, card_id=claims.card_id))
    return claims, tool


def _issued_to(claims: CardClaims, caller: Caller) -> bool:
    """Whether the card was issued to the person pressing it: the one place that decides it.

    A card is not transferable. Without this, one person's approval could be replayed by
    another, including by somebody in a different shop.
    """
    return claims.userid == caller.userid and claims.tenantid == caller.tenantid


def _check(
    registry: Registry,
    *,
    trail: _Trail,
    presented: Agent,
    claims: CardClaims,
    tool: Tool,
    record: CardRecord | None,
    caller: Caller,
) -> BaseModel:
    """The stored card against the token, the proposer's allow-list, the role, the arguments.

    The allow-list is that of the agent that *proposed* the card, stored with it: the agent of
    the surface pressing it could allow tools the proposer never could, and a card must not
    borrow that. Checked again here, not only at proposal: a card must not outlive a narrowed
    allow-list or a demotion.

    The stored arguments then go through the schema again. Not a trust check (the card is
    signed, so these are arguments this server sealed) but a types one. They round-trip
    through JSON, and the first version of this design read a request id sealed as ``41``
    back as the float ``41.0``, which a handler took for request 0: "request 0 is not waiting
    for approval" read like a stale card, so it failed silently.
    """
    if record is None or (record.tool, record.userid, record.tenantid) != (
        claims.tool,
        claims.userid,
        claims.tenantid,
    ):
        raise InvalidCardError("no such card was issued")
    trail.entry.agent = record.agent
    proposer = registry.proposer(record.agent, presented)
    if proposer is None or not proposer.allows(tool.name):
        raise NotAllowedError(record.agent, tool.name)
    if not caller.role.satisfies(tool.role):
        raise RoleRequiredError(tool.name, str(tool.role), str(caller.role))
    clean = schema.validate(tool.name, tool.args, record.args)
    trail.entry.args = clean.model_dump(mode="json")
    if args_digest(trail.entry.args) != claims.digest:
        raise CardMismatchError(card_id=claims.card_id)
    return clean


async def approve(registry: Registry, agent: Agent, token: str, caller: Caller) -> Decision:
    """Runs a write a person agreed to, once, after every check of the seed in its order.

    Verify the card (expiry is its own error) → same person and tenant → the tool still exists
    and still writes → the proposing agent's allow-list and the caller's role again → the
    arguments through the schema and against the digest → claim the card and audit "approved /
    executing" (committed together, before the write) → execute, re-validating live, move the
    card to done and audit the outcome (one transaction).
    """
    trail = _Trail(registry, agent, caller)
    claims, tool = await _verify(registry, trail, token, caller)
    with registry.lease.executing(claims.card_id):
        record, clean = await _claim(
            registry, trail, presented=agent, claims=claims, tool=tool, caller=caller
        )
        return await _execute(registry, trail, tool=tool, record=record, clean=clean, caller=caller)


async def _claim(
    registry: Registry,
    trail: _Trail,
    *,
    presented: Agent,
    claims: CardClaims,
    tool: Tool,
    caller: Caller,
) -> tuple[CardRecord, BaseModel]:
    """Checks the stored card and claims it, or audits why not; one transaction either way.

    Written before the write, deliberately. Everything up to the claim is a refusal that
    changed nothing; everything after might change something, and the trail has to say so even
    if the process dies mid-write.
    """
    now, holder = registry.clock(), registry.lease.holder
    refused: CountersignError | None = None
    async with registry.db.begin(write=True) as conn:
        record = await registry.cards.get(claims.card_id, conn=conn)
        try:
            clean = _check(
                registry,
                trail=trail,
                presented=presented,
                claims=claims,
                tool=tool,
                record=record,
                caller=caller,
            )
            if not await registry.cards.claim(
                claims.card_id, caller, now, holder=holder, conn=conn
            ):
                raise await _lost_claim(registry, conn, claims.card_id)
        except CountersignError as refusal:
            refused = refusal
            await trail.add(conn, Outcome.REFUSED, str(refusal))
        else:
            await trail.add(conn, Outcome.APPROVED, "executing")
    if refused is not None:
        raise refused
    assert record is not None
    return claimed(record, caller, now, holder), clean


async def _execute(
    registry: Registry,
    trail: _Trail,
    *,
    tool: Tool,
    record: CardRecord,
    clean: BaseModel,
    caller: Caller,
) -> Decision:
    """The write, its live re-check, the card's move to ``done`` and its audit line, at once."""
    assert tool.execute is not None
    assert record.decided_at is not None
    card_id = record.card_id
    try:
        async with registry.db.tenant_session(caller.tenantid, write=True) as session:
            ctx = await registry.context(session, caller, record.decided_at, card_id)
            result = await tool.execute(ctx, clean)
            await session.flush()
            conn, outcome = await session.connection(), _describe(result)
            if not await registry.cards.move(
                card_id, frm=CardStatus.EXECUTING, to=CardStatus.DONE, conn=conn, outcome=outcome
            ):
                # The reconciler of another process declared this card interrupted while we
                # ran; rolling back keeps its "nothing was changed" true.
                await session.rollback()
                return await _interrupted(registry, trail, card_id)
            await trail.add(conn, Outcome.DONE, outcome, result.count)
            await session.commit()
    except CountersignError as failed:
        return await _failed(
            registry, trail, record, note=str(failed), detail=str(failed), error=failed
        )
    except Exception as broken:
        note = f"it failed unexpectedly ({type(broken).__name__}); nothing was changed"
        await _failed(
            registry, trail, record, note=note, detail=f"{type(broken).__name__}: {broken}"
        )
        raise
    return Decision(replace(record, status=CardStatus.DONE, outcome=outcome), result)


async def _failed(
    registry: Registry,
    trail: _Trail,
    record: CardRecord,
    *,
    note: str,
    detail: str,
    error: CountersignError | None = None,
) -> Decision:
    """``executing → failed`` with what the person reads, and its audit line, in one transaction."""
    async with registry.db.begin() as conn:
        moved = await registry.cards.move(
            record.card_id, frm=CardStatus.EXECUTING, to=CardStatus.FAILED, conn=conn, outcome=note
        )
        await trail.add(conn, Outcome.FAILED, detail)
        if moved:
            return Decision(replace(record, status=CardStatus.FAILED, outcome=note), None, error)
        stored = await registry.cards.get(record.card_id, conn=conn)
    assert stored is not None
    return Decision(stored, None, error)


async def _interrupted(registry: Registry, trail: _Trail, card_id: str) -> Decision:
    record = await registry.cards.get(card_id)
    assert record is not None
    await trail.write(Outcome.INTERRUPTED, record.outcome or "")
    return Decision(record)


def _describe(result: Result) -> str:
    if result.note:
        return result.note
    return f"{result.count} row(s) changed" if result.count != 1 else "done"


async def _lost_claim(registry: Registry, conn: AsyncConnection, card_id: str) -> CountersignError:
    """Why a claim matched nothing: somebody decided first, or the card ran out of time."""
    record = await registry.cards.get(card_id, conn=conn)
    assert record is not None
    if record.status is CardStatus.PENDING or record.status is CardStatus.EXPIRED:
        await registry.cards.move(card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn)
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
    refused: CountersignError | None = None
    async with registry.db.begin(write=True) as conn:
        if await registry.cards.move(
            claims.card_id,
            frm=CardStatus.PENDING,
            to=CardStatus.REJECTED,
            conn=conn,
            decided_by=caller.userid,
            decided_by_name=caller.name or f"user {caller.userid}",
            decided_at=now,
            reason=reason or None,
        ):
            await trail.add(conn, Outcome.REJECTED, reason or "no reason given")
        else:
            refused = await _lost_claim(registry, conn, claims.card_id)
            await trail.add(conn, Outcome.REFUSED, str(refused))
        record = await registry.cards.get(claims.card_id, conn=conn)
    if refused is not None:
        raise refused
    assert record is not None
    return Decision(record)
