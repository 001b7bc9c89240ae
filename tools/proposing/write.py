"""Turns a write the model asked for into a card: resolve, route, seal, store, audit; never runs it.

A write tool is two halves that never run together. ``propose`` resolves what would happen and
returns a card; ``execute`` performs it and is reachable only through ``tools.approving.approval``, with a
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
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import schema
from tools.agent import Agent
from tools.audit.log import AuditEntry, Outcome
from tools.caller import Caller
from tools.cards.record import CardRecord, CardStatus
from tools.cards.tokens import CardClaims, args_digest
from tools.cards.visible import too_long
from tools.db import prescoped
from tools.deps import Deps
from tools.errors import ConflictError, TooLongToShowError
from tools.people import routing
from tools.proposing import editing
from tools.tool import (
    ExecuteFn,
    Proposal,
    ProposeFn,
    Result,
    Routing,
    Scope,
    Tool,
    ToolContext,
)

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
    deps: Deps,
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
    ``edited`` is the card a person edited (``tools.proposing.editing``): it must be the card this one
    replaces, in this same transaction, or no card is made.
    """
    proposal, resolved = await _resolve(ctx, clean, tool)
    card = _Sealed.of(resolved, ctx.now + deps.card_ttl)
    people = await routing.people(ctx.session)
    issued = await routing.for_proposal(
        ctx.session, ctx.caller, people, proposal, tool_role=tool.role, now=ctx.now, edited=edited
    )
    conn = await prescoped.connection(ctx.session)
    replaced = await _replace_live(
        deps, conn, ctx, card, people, tool=tool, proposal=proposal, edited=edited
    )
    token = deps.signer.mint(card.claims(tool.name, ctx.caller))
    row = _row(ctx, card, agent=agent, tool=tool, proposal=proposal, issued=issued)
    await _insert(deps, conn, **row)
    await _audit(deps, conn, entry, card, proposal, replaced=replaced, timer=timer, now=ctx.now)
    await ctx.session.commit()
    return _answer(proposal, card, token=token, issued=issued, replaced=replaced, tool=tool)


@dataclass(frozen=True, slots=True)
class _Sealed:
    """A card about to be stored: its id, when it stops being valid, and its arguments as the
    schema resolved them (``args``), as stored (``stored``) and sealed by ``digest``."""

    card_id: str
    expires_at: datetime
    args: BaseModel
    stored: dict[str, Any]
    digest: str

    @classmethod
    def of(cls, resolved: BaseModel, expires_at: datetime) -> _Sealed:
        stored = resolved.model_dump(mode="json")
        return cls(uuid.uuid4().hex, expires_at, resolved, stored, args_digest(stored))

    def claims(self, tool: str, asker: Caller) -> CardClaims:
        """What the card's signed token vouches for: this card, its tool, its asker, its digest."""
        return CardClaims(self.card_id, tool, asker.userid, asker.tenantid, self.digest)


async def _resolve(ctx: ToolContext, clean: BaseModel, tool: Tool) -> tuple[Proposal, BaseModel]:
    """What the write would do, as the tool resolves it, and its arguments through the schema."""
    assert tool.propose is not None
    # A refusal here is the useful kind: "that request is already approved" reaches the person
    # before they press anything.
    proposal = await tool.propose(ctx, clean)
    # Approve sends every argument, so a card shows every one whole or is not made: a memo
    # of 2,025 characters was shown cut at 500 with Approve still offered, and the server
    # received the 1,525 nobody saw ("… and also pay ATTACKER 99999").
    why = too_long((d.label, d.value) for d in proposal.details)
    if why is not None:
        raise TooLongToShowError(why)
    # Resolved arguments go through the schema now, as they will at approval, so a tool that
    # resolves into something its own schema rejects fails here, not on the manager's phone.
    return proposal, schema.validate(tool.name, tool.args, proposal.args or clean)


async def _replace_live(
    deps: Deps,
    conn: AsyncConnection,
    ctx: ToolContext,
    card: _Sealed,
    people: list[Caller],
    *,
    tool: Tool,
    proposal: Proposal,
    edited: CardRecord | None,
) -> list[CardRecord]:
    """The pending cards on the same target this card ends (``routing.replace_live``); none
    without a target. An edit must end the very card it edits (``editing.replaced_it``)."""
    replaced: list[CardRecord] = []
    if proposal.target:
        replaced = await routing.replace_live(
            deps.cards,
            conn,
            asker=ctx.caller,
            found=people,
            target=proposal.target,
            tool=tool.name,
            digest=card.digest,
            now=ctx.now,
            new_card=card.card_id,
            summary=proposal.summary,
            edited=(edited.card_id, editing.outcome(edited.details, proposal.details))
            if edited
            else None,
        )
    if edited is not None:
        editing.replaced_it(edited, replaced, ctx.now)
    return replaced


def _row(
    ctx: ToolContext,
    card: _Sealed,
    *,
    agent: Agent,
    tool: Tool,
    proposal: Proposal,
    issued: Routing,
) -> dict[str, Any]:
    """The card as stored: pending, issued to whom the policy routed it, approved by nobody yet."""
    return {
        "id": card.card_id,
        "tool": tool.name,
        "agent": agent.name,
        "user_id": ctx.caller.userid,
        "tenant_id": ctx.caller.tenantid,
        "args": card.stored,
        "digest": card.digest,
        "summary": proposal.summary,
        "details": [{"label": d.label, "value": d.value} for d in proposal.details],
        "warning": proposal.warning,
        "status": CardStatus.PENDING,
        "created_at": ctx.now,
        "expires_at": card.expires_at,
        "issued_to": [i.stored() for i in issued.issued_to],
        "approvals": [],
        "approvals_needed": issued.approvals,
        "approved_count": 0,
        "needed_role": issued.role,
        "routed": issued.routed,
        "target": proposal.target,
        "standing": proposal.standing,
        "amount": proposal.amount,
        "tally": routing.tally_of(proposal) if proposal.amount is not None else None,
        # Left out when nobody is kept out, so the column stays NULL rather than JSON null.
        **({"kept_out": list(issued.kept_out)} if issued.kept_out else {}),
    }


async def _insert(deps: Deps, conn: AsyncConnection, **values: Any) -> None:
    """Stores the card; a live card on the same target stored meanwhile is a plain refusal."""
    try:
        await deps.cards.insert(conn, **values)
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


async def _audit(
    deps: Deps,
    conn: AsyncConnection,
    entry: AuditEntry,
    card: _Sealed,
    proposal: Proposal,
    *,
    replaced: list[CardRecord],
    timer: float,
    now: datetime,
) -> None:
    """The audit lines of the cards this one ended, then its own "proposed" line."""
    for old in replaced:
        await deps.audit.add(conn, _ended(entry, old, card.card_id, now))
    entry.args, entry.card_id, entry.rows = card.stored, card.card_id, 1
    entry.outcome, entry.detail = Outcome.PROPOSED, proposal.summary
    entry.took_ms = (time.perf_counter() - timer) * 1000
    await deps.audit.add(conn, entry)


def _answer(
    proposal: Proposal,
    card: _Sealed,
    *,
    token: str,
    issued: Routing,
    replaced: list[CardRecord],
    tool: Tool,
) -> Result:
    """The tool's answer: the card for the surface, and for the model that nothing changed yet."""
    proposal = replace(
        proposal,
        args=card.args,
        card=token,
        card_id=card.card_id,
        expires_at=card.expires_at,
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
