"""Stored cards built in memory, for tests of what renders or stores one without an engine."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tools import CardRecord, CardStatus

__all__ = ["card_record"]

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
        surface=None,
    )
    return replace(base, **changes)
