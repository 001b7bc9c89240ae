"""Turns a write the model asked for into a card: resolve, route, seal, store, audit; never runs it.

A write tool is two halves that never run together. ``propose`` resolves what would happen and
returns a card; ``execute`` performs it and is reachable only through ``tools.approval``, with a
signed card in hand, pressed by a person it is issued to. The model reaches the first and has
no path at all to the second.

Nothing runs unasked: no confidence threshold, no list of writes considered safe, no amount
below which a change goes through. The card is the only thing between a model and a merchant's
live data, so it shows what was *resolved* (ids and names), never the model's phrasing: the
sentence and the action come from different places and only one of them can be checked.

A proposal is one transaction: the card, the cards it replaced, and their audit lines.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import editing, routing, schema
from tools.agent import Agent
from tools.audit import AuditEntry, Outcome
from tools.card_record import CardRecord, CardStatus
from tools.db import prescoped
from tools.errors import ConflictError
from tools.tokens import CardClaims, args_digest
from tools.tool import ExecuteFn, ProposeFn, Result, Scope, Tool, ToolContext

if TYPE_CHECKING:
    from tools.registry import Registry

__all__ = ["NOT_DONE_NOTE", "propose", "write_tool"]

NOT_DONE_NOTE = (
    "This has NOT been done. It is waiting for the person to approve it on the card. "
    "Tell them what will happen and that they need to press Approve; do not say it is done."
)


def write_tool(base: Tool, propose: ProposeFn, execute: ExecuteFn) -> Tool:
    """Makes a write tool from a base (name, description, args, role) and its two halves.

    The only way to get ``Scope.WRITE`` onto a tool; ``Tool`` refuses a write with a handler.
    """
    return replace(base, scope=Scope.WRITE, propose=propose, execute=execute)


async def propose(
    registry: Registry,
    ctx: ToolContext,
    clean: BaseModel,
    *,
    agent: Agent,
    tool: Tool,
    entry: AuditEntry,
    timer: float,
    edited: CardRecord | None = None,
) -> Result:
    """What ``Registry.call`` does instead of running a write: resolve, seal, store, audit, answer.

    The card and the "proposed" audit line commit together in the session the tool resolved in.
    ``edited`` is the card a person edited (``tools.editing``): it must be the card this one
    replaces, in this same transaction, or no card is made.
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
    conn = await prescoped.connection(ctx.session)
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
            edited=(edited.card_id, editing.outcome(edited.details, proposal.details))
            if edited
            else None,
        )
        if proposal.target
        else []
    )
    if edited is not None:
        editing.replaced_it(edited, replaced, ctx.now)
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
        editable=tool.editable,
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
