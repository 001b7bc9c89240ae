"""Appends to the audit log: every call, proposal, refusal, decision and outcome; never edits a row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from tools.db import AUDIT, AuditRow, Database, compiled

__all__ = ["AuditEntry", "AuditLog", "Outcome"]

log = structlog.get_logger("countersign.audit")
_INSERT = AUDIT.insert()


class Outcome(StrEnum):
    OK = "ok"
    PROPOSED = "proposed"
    REFUSED = "refused"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    UNKNOWN = "outcome_unknown"
    WITHDRAWN = "withdrawn"
    SUPERSEDED = "superseded"
    ESCALATED = "escalated"


@dataclass(slots=True)
class AuditEntry:
    """One line of the trail, filled in as a call goes and written when it ends."""

    at: datetime
    agent: str
    tool: str
    userid: int | None
    tenantid: int | None
    scope: str
    outcome: Outcome = Outcome.OK
    detail: str = ""
    rows: int = 0
    took_ms: float = 0.0
    args: dict[str, Any] | None = None
    card_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


class AuditLog:
    """Appends entries: each in its own committed transaction, or in the caller's transaction.

    An entry written on its own cannot be undone by a later failure. One written with ``add``
    commits or rolls back with what it describes: a proposal and its card, a claim and its
    "approved / executing" line, a write and its outcome.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    async def write(self, entry: AuditEntry) -> None:
        async with self._db.begin() as conn:
            await self.add(conn, entry)

    async def add(self, conn: AsyncConnection, entry: AuditEntry) -> None:
        """Inserts the entry in ``conn``'s transaction (logged now; the row is the record)."""
        await compiled.run(
            conn,
            _INSERT,
            {
                "at": entry.at,
                "agent": entry.agent,
                "tool": entry.tool,
                "user_id": entry.userid,
                "tenant_id": entry.tenantid,
                "scope": entry.scope,
                "outcome": str(entry.outcome),
                "detail": entry.detail,
                "rows": entry.rows,
                "took_ms": round(entry.took_ms, 3),
                "args": entry.args,
                "card_id": entry.card_id,
            },
        )
        log.info(
            "audited",
            tool=entry.tool,
            outcome=str(entry.outcome),
            tenant=entry.tenantid,
            user=entry.userid,
            card_id=entry.card_id,
        )

    async def recent(
        self, *, tenantid: int | None = None, limit: int = 50, card_id: str | None = None
    ) -> Sequence[AuditRow]:
        """The newest entries first, optionally for one tenant or one card."""
        stmt = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
        if tenantid is not None:
            stmt = stmt.where(AuditRow.tenant_id == tenantid)
        if card_id is not None:
            stmt = stmt.where(AuditRow.card_id == card_id)
        async with self._db.session() as session:
            return (await session.scalars(stmt)).all()
