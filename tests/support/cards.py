"""Cards for tests: built in memory (what renders or stores one), or stored as bare rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tools import CardRecord, CardStatus
from tools.db import Database, ProposalRow

__all__ = ["card_record", "store_cards"]

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def card_record(**changes: Any) -> CardRecord:
    """A pending approve_request card of Arjun's in Fiesta Foods, with ``changes`` applied."""
    base = CardRecord(
        card_id="c0ffee",
        tool="approve_request",
        agent="countersign",
        userid=2,
        tenantid=1,
        args={},
        digest="d",
        summary="Approve request 3.",
        details=(),
        warning=None,
        status=CardStatus.PENDING,
        created_at=AT,
        expires_at=AT + timedelta(minutes=30),
        decided_by=None,
        decided_by_name=None,
        decided_at=None,
        reason=None,
        outcome=None,
        posting=None,
    )
    return replace(base, **changes)


async def store_cards(db: Database, *statuses: str, first: int = 0) -> None:
    """Stores one bare card row per status (ids from ``first``), for what only counts them."""
    now = datetime.now(UTC)
    async with db.session(write=True) as session:
        for n, status in enumerate(statuses, start=first):
            session.add(
                ProposalRow(
                    id=f"{n:032x}",
                    tool="t",
                    agent="a",
                    user_id=1,
                    tenant_id=1,
                    args={},
                    digest="d",
                    summary="s",
                    details=[],
                    warning=None,
                    status=status,
                    created_at=now,
                    expires_at=now,
                )
            )
        await session.commit()
