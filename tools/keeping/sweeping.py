"""Moves cards on without a press: expiry and escalation, each with its audit line; never shows one.

The sweeps (``bot.presses.sweeps``) run these in every process. Each card moves by one conditional
UPDATE, so whichever process matched it is the one that shows it; its audit line is written in
the transaction of the move, so no expiry or escalation goes unrecorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from tools.audit.log import AuditEntry, Outcome
from tools.cards.record import CardRecord, Issuee
from tools.deps import Deps
from tools.people import routing

__all__ = ["escalate", "expire_due", "note_escalation", "owners"]


async def expire_due(deps: Deps, now: datetime) -> list[CardRecord]:
    """Moves every live card whose time ran out to ``expired``; the ones this call moved."""

    async def audited(conn: AsyncConnection, record: CardRecord) -> None:
        await deps.audit.add(conn, _entry(record, now, Outcome.EXPIRED, "time ran out"))

    return await deps.cards.expire_due(now, audited=audited)


async def owners(deps: Deps, tenantid: int) -> list[Issuee]:
    """The merchant's owners: whom a card nobody decided is escalated to."""
    async with deps.db.tenant_session(tenantid) as session:
        return await routing.owners(session)


async def escalate(
    deps: Deps, card_id: str, issued_to: Sequence[Issuee], now: datetime, *, detail: str
) -> CardRecord | None:
    """Issues a live card to ``issued_to``, once, audited with ``detail``; the card as it now
    stands, or None: another process escalated it first, or it ended meanwhile."""

    async def audited(conn: AsyncConnection, record: CardRecord) -> None:
        await deps.audit.add(conn, _entry(record, now, Outcome.ESCALATED, detail))

    return await deps.cards.escalate(card_id, issued_to, now, audited=audited)


async def note_escalation(deps: Deps, record: CardRecord, now: datetime, *, detail: str) -> None:
    """Audits what became of an escalation's copies, in a transaction of its own: written once
    they went out, so it never says an owner was told who was not."""
    await deps.audit.write(_entry(record, now, Outcome.ESCALATED, detail))


def _entry(record: CardRecord, now: datetime, outcome: Outcome, detail: str) -> AuditEntry:
    return AuditEntry(
        at=now,
        agent=record.agent,
        tool=record.tool,
        userid=None,
        tenantid=record.tenantid,
        scope="write",
        outcome=outcome,
        detail=detail,
        card_id=record.card_id,
    )
