"""Keeps a person's thumbs up or down on one of the model's answers in the audit log; never a card.

A press is an audit row like any other (inserted, never changed): the tool is ``FEEDBACK``,
the person and merchant are the presser's, and ``args`` names the conversation, the answer
(the platform's id of its message) and the rating. ``countersign audit --feedback`` reads them
back, per merchant. An answer's feedback says nothing about a card: cards carry no thumbs, and
their buttons are their decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from tools.audit.log import AuditEntry, AuditLog, Outcome
from tools.caller import Caller
from tools.db import AuditRow, Database

__all__ = ["FEEDBACK", "Feedback", "FeedbackLog"]

FEEDBACK = "answer_feedback"
_GOOD, _BAD = "helpful", "not helpful"


@dataclass(frozen=True, slots=True)
class Feedback:
    """One press: who, in which merchant, on which answer of which conversation, and how."""

    at: datetime
    userid: int | None
    tenantid: int | None
    conversation: str
    answer: str
    good: bool


class FeedbackLog:
    """Records feedback presses and reads them back, newest first."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(
        self,
        caller: Caller,
        *,
        platform: str,
        conversation: str,
        answer: str,
        good: bool,
        at: datetime,
    ) -> None:
        """One row for one press (a second press on the same answer is a row of its own)."""
        entry = AuditEntry(
            at=at,
            agent=platform,
            tool=FEEDBACK,
            userid=caller.userid,
            tenantid=caller.tenantid,
            scope="-",
            outcome=Outcome.OK,
            detail=_GOOD if good else _BAD,
            args={"conversation": conversation, "answer": answer, "good": good},
        )
        await AuditLog(self._db).write(entry)

    async def recent(self, *, tenantid: int | None = None, limit: int = 50) -> list[Feedback]:
        """The newest presses, of one merchant when asked."""
        stmt = (
            select(AuditRow)
            .where(AuditRow.tool == FEEDBACK)
            .order_by(AuditRow.id.desc())
            .limit(limit)
        )
        if tenantid is not None:
            stmt = stmt.where(AuditRow.tenant_id == tenantid)
        async with self._db.session() as session:
            rows: Sequence[AuditRow] = (await session.scalars(stmt)).all()
        return [_feedback(row) for row in rows]


def _feedback(row: AuditRow) -> Feedback:
    args = row.args or {}
    return Feedback(
        at=row.at,
        userid=row.user_id,
        tenantid=row.tenant_id,
        conversation=str(args.get("conversation", "")),
        answer=str(args.get("answer", "")),
        good=bool(args.get("good")),
    )
