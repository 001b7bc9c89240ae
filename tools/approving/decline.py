"""Ends a card without running it: rejected by someone it is issued to, or withdrawn by its asker.

Both are one transaction: the card's conditional move from ``pending`` and its audit line (or
the refusal's line). Neither can run a write; a card ended here never runs.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from tools.agent import Agent
from tools.approving.approval import Decision
from tools.approving.checks import issued_to, qualified, stored_card, verify
from tools.approving.trail import Trail, lost_claim
from tools.audit.log import Outcome
from tools.caller import Caller
from tools.cards.record import CardRecord, CardStatus
from tools.cards.tokens import CardClaims
from tools.deps import Deps
from tools.errors import CountersignError, NotTheAskerError
from tools.tool import Tool

__all__ = ["end_verified", "reject", "withdraw"]


async def reject(
    deps: Deps, agent: Agent, token: str, caller: Caller, reason: str = ""
) -> Decision:
    """Declines a card: the same identity checks as approval, then ``pending → rejected``."""
    reason = reason.strip()[:500]
    return await _end(
        deps,
        agent,
        token,
        caller,
        to=CardStatus.REJECTED,
        audited=(Outcome.REJECTED, reason or "no reason given"),
        reason=reason or None,
    )


async def withdraw(deps: Deps, agent: Agent, token: str, caller: Caller) -> Decision:
    """Takes back a card its asker no longer wants: ``pending → withdrawn``; only the asker may."""
    return await _end(
        deps,
        agent,
        token,
        caller,
        to=CardStatus.WITHDRAWN,
        audited=(Outcome.WITHDRAWN, "withdrawn by the person who asked"),
    )


def _asker(record: CardRecord, caller: Caller) -> None:
    if (record.userid, record.tenantid) != (caller.userid, caller.tenantid):
        raise NotTheAskerError(card_id=record.card_id)


async def _end(
    deps: Deps,
    agent: Agent,
    token: str,
    caller: Caller,
    *,
    to: CardStatus,
    audited: tuple[Outcome, str],
    reason: str | None = None,
) -> Decision:
    trail = Trail(deps, agent, caller)
    claims, tool = await verify(deps, trail, token, caller)
    return await end_verified(
        deps,
        trail,
        claims=claims,
        tool=tool,
        caller=caller,
        to=to,
        audited=audited,
        reason=reason,
    )


async def end_verified(
    deps: Deps,
    trail: Trail,
    *,
    claims: CardClaims,
    tool: Tool,
    caller: Caller,
    to: CardStatus,
    audited: tuple[Outcome, str],
    reason: str | None = None,
) -> Decision:
    """Ends a card whose claims were verified: rejected by someone it is issued to, or
    withdrawn by its asker; one transaction. A batch ends each of its cards through here."""
    now = deps.clock()
    refused: CountersignError | None = None
    async with deps.db.begin(write=True) as conn:
        try:
            await _end_pending(
                deps, trail, conn, claims, tool, caller=caller, to=to, now=now, reason=reason
            )
        except CountersignError as refusal:
            refused = refusal
            await trail.add(conn, Outcome.REFUSED, str(refusal))
        else:
            await trail.add(conn, *audited)
        ended = await deps.cards.get(claims.card_id, conn=conn)
    if refused is not None:
        raise refused
    assert ended is not None
    return Decision(ended)


async def _end_pending(
    deps: Deps,
    trail: Trail,
    conn: AsyncConnection,
    claims: CardClaims,
    tool: Tool,
    *,
    caller: Caller,
    to: CardStatus,
    now: datetime,
    reason: str | None,
) -> None:
    """Checks this person may end the stored card this way, then moves it from ``pending``.

    Raises:
        CountersignError: they may not, or it was decided meanwhile; the card is unchanged.
    """
    record = stored_card(claims, await deps.cards.get(claims.card_id, conn=conn))
    trail.entry.agent = record.agent
    if to is CardStatus.WITHDRAWN:
        _asker(record, caller)
    else:
        # Rejecting is deciding: the same people, with the role still theirs.
        issued_to(record, caller)
        qualified(record, tool, caller)
    if not await deps.cards.move(
        claims.card_id,
        frm=CardStatus.PENDING,
        to=to,
        conn=conn,
        decided_by=caller.userid,
        decided_by_name=caller.name or f"user {caller.userid}",
        decided_at=now,
        reason=reason,
    ):
        raise await lost_claim(deps, conn, claims.card_id)
