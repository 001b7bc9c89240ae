"""The audit trail of one decision on a card, and why a claim matched nothing; never decides.

Shared by approval, rejection and withdrawal: each writes its lines at the steps that must
leave a trace, and a press that lost its race is told who decided first.
"""

from __future__ import annotations

import time

from sqlalchemy.ext.asyncio import AsyncConnection

from tools.agent import Agent
from tools.audit.log import AuditEntry, Outcome
from tools.caller import Caller
from tools.cards.record import CardStatus
from tools.deps import Deps
from tools.errors import CardDecidedError, CardExpiredError, CountersignError
from tools.tool import Scope

__all__ = ["Trail", "lost_claim"]


class Trail:
    """The audit entry of one decision, written at each step that must leave a trace."""

    def __init__(self, deps: Deps, agent: Agent, caller: Caller) -> None:
        self.deps = deps
        self._clock = time.perf_counter()
        self.entry = AuditEntry(
            at=deps.clock(),
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
        await self.deps.audit.write(self._at(outcome, detail, rows))

    async def add(
        self, conn: AsyncConnection, outcome: Outcome, detail: str, rows: int = 0
    ) -> None:
        """In ``conn``'s transaction, committing with what it describes."""
        await self.deps.audit.add(conn, self._at(outcome, detail, rows))

    async def refuse(self, error: CountersignError) -> CountersignError:
        await self.write(Outcome.REFUSED, str(error))
        return error


async def lost_claim(deps: Deps, conn: AsyncConnection, card_id: str) -> CountersignError:
    """Why a claim matched nothing: somebody decided first, or the card ran out of time."""
    record = await deps.cards.get(card_id, conn=conn)
    assert record is not None
    if record.status is CardStatus.PENDING or record.status is CardStatus.EXPIRED:
        await deps.cards.move(card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn)
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
    CardStatus.WITHDRAWN: "withdrawn",
    CardStatus.SUPERSEDED: "replaced by a newer card",
}
