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
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import routing, schema
from tools.agent import Agent
from tools.audit import AuditEntry, Outcome
from tools.caller import Caller, Role
from tools.errors import (
    AlreadyApprovedError,
    CardBusyError,
    CardExpiredError,
    CardMismatchError,
    ConflictError,
    CountersignError,
    InvalidCardError,
    NotAllowedError,
    NotAWriteError,
    NotYourCardError,
    RoleRequiredError,
    UnknownToolError,
)
from tools.people import Person
from tools.proposals import Approval, CardRecord, CardStatus, claimed
from tools.tokens import CardClaims, args_digest
from tools.tool import ExecuteFn, ProposeFn, Result, Scope, Tool, ToolContext
from tools.trail import Trail, lost_claim

if TYPE_CHECKING:
    from tools.registry import Registry

__all__ = [
    "NOT_DONE_NOTE",
    "Decision",
    "approve",
    "issued_to",
    "needed_role",
    "propose",
    "qualified",
    "stored_card",
    "verify",
    "write_tool",
]

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

    @property
    def partly(self) -> bool:
        """An approval was recorded and the card waits for another one; nothing ran yet."""
        return self.card.status is CardStatus.PENDING


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
    issued = await routing.routing(
        ctx.session, ctx.caller, tool_role=tool.role, amount=proposal.amount
    )
    conn = await ctx.session.connection()
    replaced = (
        await routing.replace_live(
            registry.cards,
            conn,
            tenantid=ctx.caller.tenantid,
            target=proposal.target,
            tool=tool.name,
            digest=digest,
            now=ctx.now,
            new_card=card_id,
            summary=proposal.summary,
        )
        if proposal.target
        else []
    )
    claims = CardClaims(card_id, tool.name, ctx.caller.userid, ctx.caller.tenantid, digest)
    token = registry.signer.mint(claims)
    await _insert(
        registry,
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
        issued_to=[i.stored() for i in issued.issued_to],
        approvals=[],
        approvals_needed=issued.approvals,
        approved_count=0,
        needed_role=issued.role,
        routed=issued.routed,
        target=proposal.target,
        standing=proposal.standing,
    )
    for old in replaced:
        await registry.audit.add(conn, _ended(entry, old, card_id, ctx.now))
    entry.args, entry.card_id, entry.rows = sealed, card_id, 1
    entry.outcome, entry.detail = Outcome.PROPOSED, proposal.summary
    entry.took_ms = (time.perf_counter() - timer) * 1000
    await registry.audit.add(conn, entry)
    await ctx.session.commit()
    proposal = replace(
        proposal,
        args=resolved,
        card=token,
        card_id=card_id,
        expires_at=expires_at,
        routing=issued,
        replaced=tuple(old.card_id for old in replaced),
    )
    return Result(
        rows=[proposal.public()],
        count=1,
        scope="nothing has changed yet",
        note=NOT_DONE_NOTE,
        proposal=proposal,
    )


async def _insert(registry: Registry, conn: AsyncConnection, **values: Any) -> None:
    """Stores the card; a live card on the same target stored meanwhile is a plain refusal."""
    try:
        await registry.cards.insert(conn, **values)
    except IntegrityError:  # the whole proposal rolls back with its session
        raise ConflictError(
            "Someone asked for a change to the same thing at this very moment, so no card "
            "was made. Ask again to see the card that is waiting."
        ) from None


def _ended(proposing: AuditEntry, old: CardRecord, new_card: str, now: datetime) -> AuditEntry:
    """The audit line of a pending card a new proposal on the same target ended: replaced,
    or found expired before any sweep had moved it."""
    expired = old.expires_at <= now
    return AuditEntry(
        at=proposing.at,
        agent=old.agent,
        tool=old.tool,
        userid=None if expired else proposing.userid,
        tenantid=old.tenantid,
        scope=str(Scope.WRITE),
        args=old.args,
        outcome=Outcome.EXPIRED if expired else Outcome.SUPERSEDED,
        detail="time ran out" if expired else f"replaced by card {new_card}",
        card_id=old.card_id,
    )


async def verify(
    registry: Registry, trail: Trail, token: str, caller: Caller
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
    if claims.tenantid != caller.tenantid:
        # Another merchant's card: refused before the database is asked anything about it.
        raise await trail.refuse(
            NotYourCardError(card_id=claims.card_id, owner_userid=claims.userid)
        )
    tool = registry.lookup_or_none(claims.tool)
    if tool is None:
        raise await trail.refuse(UnknownToolError(claims.tool))
    if tool.scope is not Scope.WRITE or tool.execute is None:
        raise await trail.refuse(NotAWriteError(claims.tool, card_id=claims.card_id))
    return claims, tool


def stored_card(claims: CardClaims, record: CardRecord | None) -> CardRecord:
    """The stored card the token names, or a refusal: a token and its row must agree."""
    if record is None or (record.tool, record.userid, record.tenantid) != (
        claims.tool,
        claims.userid,
        claims.tenantid,
    ):
        raise InvalidCardError("no such card was issued")
    return record


def issued_to(record: CardRecord, caller: Caller) -> None:
    """Whether the card is issued to the person pressing it: the one place that decides it.

    A card is not transferable. Who it is issued to was decided by the server when it was
    made (the asker, or the people the merchant's policy routed it to) and stored with it;
    neither the token's bearer nor the model can add anyone. Without this, one person's
    approval could be replayed by another, including by somebody in a different shop.

    Raises:
        NotYourCardError: it is not.
    """
    if not record.issued_to_person(caller.userid, caller.tenantid):
        raise NotYourCardError(card_id=record.card_id, owner_userid=record.userid)


def needed_role(record: CardRecord, tool: Tool) -> Role:
    """The role a person deciding the card must hold now: the stricter of the tool's and the
    one the policy asked for when the card was issued."""
    needed = Role(record.needed_role) if record.needed_role else tool.role
    return needed if needed.satisfies(tool.role) else tool.role


def qualified(record: CardRecord, tool: Tool, caller: Caller) -> None:
    """Whether the presser's role, as it is now, may decide the card.

    Raises:
        RoleRequiredError: it may not (a demotion since the card was issued, say).
    """
    needed = needed_role(record, tool)
    if not caller.role.satisfies(needed):
        raise RoleRequiredError(tool.name, str(needed), str(caller.role))


async def _standing_approvals(
    conn: AsyncConnection, record: CardRecord, needed: Role
) -> tuple[Approval, ...]:
    """The card's earlier approvals whose approvers still hold the role in its merchant.

    A first approval counts only while its approver could still give it: Arjun approving
    1 of 2 and then losing the role must not leave Meera's press to run the write alone.
    """
    if not record.approvals:
        return ()
    people = Person.__table__
    rows = await conn.execute(
        select(people.c.id, people.c.role).where(
            people.c.id.in_([a.userid for a in record.approvals]),
            people.c.tenant_id == record.tenantid,
        )
    )
    roles = {row.id: Role(row.role) for row in rows}
    return tuple(
        a for a in record.approvals if a.userid in roles and roles[a.userid].satisfies(needed)
    )


def _check(
    registry: Registry,
    *,
    trail: Trail,
    presented: Agent,
    claims: CardClaims,
    tool: Tool,
    record: CardRecord | None,
    caller: Caller,
) -> BaseModel:
    """The stored card against the token, its issuees, the proposer's allow-list, the role,
    the arguments.

    The allow-list is that of the agent that *proposed* the card, stored with it: the agent of
    the surface pressing it could allow tools the proposer never could, and a card must not
    borrow that. Checked again here, not only at proposal: a card must not outlive a narrowed
    allow-list or a demotion. The role is the stricter of the tool's and the one the policy
    asked for when the card was issued, against the presser's role as it is now.

    The stored arguments then go through the schema again. Not a trust check (the card is
    signed, so these are arguments this server sealed) but a types one. They round-trip
    through JSON, and the first version of this design read a request id sealed as ``41``
    back as the float ``41.0``, which a handler took for request 0: "request 0 is not waiting
    for approval" read like a stale card, so it failed silently.
    """
    record = stored_card(claims, record)
    issued_to(record, caller)
    trail.entry.agent = record.agent
    proposer = registry.proposer(record.agent, presented)
    if proposer is None or not proposer.allows(tool.name):
        raise NotAllowedError(record.agent, tool.name)
    qualified(record, tool, caller)
    if record.approved_by(caller.userid):
        raise AlreadyApprovedError(card_id=record.card_id)
    clean = schema.validate(tool.name, tool.args, record.args)
    trail.entry.args = clean.model_dump(mode="json")
    if args_digest(trail.entry.args) != claims.digest:
        raise CardMismatchError(card_id=claims.card_id)
    return clean


# How often an approval re-reads a card whose approvals changed under it (another approver
# counted first). Each retry means somebody else's approval landed, so two are plenty.
_RACES = 3


async def approve(registry: Registry, agent: Agent, token: str, caller: Caller) -> Decision:
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
    trail = Trail(registry, agent, caller)
    claims, tool = await verify(registry, trail, token, caller)
    with registry.lease.executing(claims.card_id):
        for _ in range(_RACES):
            step = await _claim(
                registry, trail, presented=agent, claims=claims, tool=tool, caller=caller
            )
            if isinstance(step, Decision):
                return step
            if step is not None:
                record, clean = step
                return await _execute(
                    registry, trail, tool=tool, record=record, clean=clean, caller=caller
                )
        raise await trail.refuse(CardBusyError(card_id=claims.card_id))


async def _claim(
    registry: Registry,
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
            assert record is not None
            seen = len(record.approvals)
            standing = await _standing_approvals(conn, record, needed_role(record, tool))
            approvals = (*standing, Approval(caller.userid, _name(caller), now))
            if len(approvals) < record.approvals_needed:
                if await registry.cards.approve_once(
                    record.card_id, seen=seen, approvals=approvals, now=now, conn=conn
                ):
                    progress = f"approval {len(approvals)} of {record.approvals_needed}"
                    await trail.add(conn, Outcome.APPROVED, progress)
                    return Decision(replace(record, approvals=approvals))
            elif await registry.cards.claim(
                record.card_id,
                caller,
                now,
                holder=holder,
                conn=conn,
                seen=seen,
                approvals=approvals if record.approvals_needed > 1 else (),
                decided_by_name=_names(approvals) if record.approvals_needed > 1 else None,
            ):
                await trail.add(conn, Outcome.APPROVED, "executing")
                decided = claimed(record, caller, now, holder)
                if record.approvals_needed > 1:
                    decided = replace(
                        decided, approvals=approvals, decided_by_name=_names(approvals)
                    )
                return decided, clean
            if await _raced(registry, conn, record.card_id, seen, now):
                return None
            raise await lost_claim(registry, conn, record.card_id)
        except CountersignError as refusal:
            refused = refusal
            await trail.add(conn, Outcome.REFUSED, str(refusal))
    assert refused is not None
    raise refused


async def _raced(
    registry: Registry, conn: AsyncConnection, card_id: str, seen: int, now: datetime
) -> bool:
    """Whether a claim missed only because another approval was counted first."""
    current = await registry.cards.get(card_id, conn=conn)
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
    registry: Registry,
    trail: Trail,
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
    trail: Trail,
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


async def _interrupted(registry: Registry, trail: Trail, card_id: str) -> Decision:
    record = await registry.cards.get(card_id)
    assert record is not None
    await trail.write(Outcome.INTERRUPTED, record.outcome or "")
    return Decision(record)


def _describe(result: Result) -> str:
    if result.note:
        return result.note
    return f"{result.count} row(s) changed" if result.count != 1 else "done"
