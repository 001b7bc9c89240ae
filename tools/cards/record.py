"""What a card is: its states, whom it is issued to, its approvals; never reads or writes a table.

A ``CardRecord`` is a card read whole from the ``proposals`` table (``tools.cards.store`` reads
and moves it). Everything here is a value: deciding who may move a card, and moving it, happen
elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["Approval", "CardRecord", "CardStatus", "Issuee"]


class CardStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    INTERRUPTED = "interrupted"
    UNKNOWN = "outcome_unknown"
    WITHDRAWN = "withdrawn"
    SUPERSEDED = "superseded"


@dataclass(frozen=True, slots=True)
class Issuee:
    """A person a card is issued to: one of those who may approve (or reject) it."""

    userid: int
    name: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> Issuee:
        return cls(int(data["userid"]), str(data.get("name") or ""))

    def stored(self) -> dict[str, Any]:
        return {"userid": self.userid, "name": self.name}


@dataclass(frozen=True, slots=True)
class Approval:
    """One approval a card received (a card needing two keeps the first while it waits)."""

    userid: int
    name: str
    at: datetime

    @classmethod
    def of(cls, data: dict[str, Any]) -> Approval:
        return cls(int(data["userid"]), str(data.get("name") or ""), _when(data["at"]))

    def stored(self) -> dict[str, Any]:
        return {"userid": self.userid, "name": self.name, "at": self.at.isoformat()}


def _when(value: object) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


@dataclass(frozen=True, slots=True)
class CardRecord:
    """A card as stored: what it says, whose it is, and what became of it."""

    card_id: str
    tool: str
    agent: str
    userid: int
    tenantid: int
    args: dict[str, Any]
    digest: str
    summary: str
    details: tuple[tuple[str, str], ...]
    warning: str | None
    status: CardStatus
    created_at: datetime
    expires_at: datetime
    decided_by: int | None
    decided_by_name: str | None
    decided_at: datetime | None
    reason: str | None
    outcome: str | None
    posting: dict[str, Any] | None
    # The process executing the card (see ``tools.cards.lease``); None before it is claimed.
    holder: str | None = None
    # Who may decide it (its asker alone unless the merchant's policy routed it), the
    # approvals it has and how many it needs, and the role an approver must hold.
    issued_to: tuple[Issuee, ...] = ()
    approvals: tuple[Approval, ...] = ()
    approvals_needed: int = 1
    needed_role: str | None = None
    routed: bool = False
    target: str | None = None
    standing: str | None = None
    escalated_at: datetime | None = None
    replaced_by: str | None = None
    # The batch it is shown in (one card, one Approve for several writes); None: on its own.
    batch_id: str | None = None
    # When its decision was shown (every copy updated, the audit line posted); None: not yet.
    # ``showing_by`` is the process that took the showing, at ``showing_at`` (``tools.keeping.showing``).
    shown_at: datetime | None = None
    showing_by: str | None = None
    showing_at: datetime | None = None
    # What it moves (minor units) and what that adds up with toward the two-approver amount.
    amount: int | None = None
    tally: str | None = None
    # Who may not decide it although their role would: who raised the request it approves.
    kept_out: tuple[int, ...] = ()

    def issued_to_person(self, userid: int, tenantid: int) -> bool:
        """Whether this person may decide the card: one of those it is issued to, same tenant,
        and not kept out of it by the self-approval rule.

        A card stored before routing is issued to its asker alone.
        """
        if tenantid != self.tenantid or userid in self.kept_out:
            # Kept out even when an escalation added them: Priya raising a request and then
            # being sent the card as the owner must not approve her own request.
            return False
        if not self.issued_to:
            return userid == self.userid
        return any(issuee.userid == userid for issuee in self.issued_to)

    def approved_by(self, userid: int) -> bool:
        return any(approval.userid == userid for approval in self.approvals)

    @property
    def waiting_for(self) -> tuple[Issuee, ...]:
        """Those it is issued to who have not approved it yet."""
        return tuple(i for i in self.issued_to if not self.approved_by(i.userid))

    @classmethod
    def of(cls, row: Any) -> CardRecord:
        """From a ``proposals`` row: an ORM ``ProposalRow`` or a Core row of the table."""
        return cls(
            card_id=row.id,
            tool=row.tool,
            agent=row.agent,
            userid=row.user_id,
            tenantid=row.tenant_id,
            args=row.args,
            digest=row.digest,
            summary=row.summary,
            details=tuple((d["label"], d["value"]) for d in row.details),
            warning=row.warning,
            status=CardStatus(row.status),
            created_at=row.created_at,
            expires_at=row.expires_at,
            decided_by=row.decided_by,
            decided_by_name=row.decided_by_name,
            decided_at=row.decided_at,
            reason=row.reason,
            outcome=row.outcome,
            posting=row.surface,
            holder=row.holder,
            issued_to=tuple(Issuee.of(i) for i in row.issued_to or ()),
            approvals=tuple(Approval.of(a) for a in row.approvals or ()),
            approvals_needed=row.approvals_needed or 1,
            needed_role=row.needed_role,
            routed=bool(row.routed),
            target=row.target,
            standing=row.standing,
            escalated_at=row.escalated_at,
            replaced_by=row.replaced_by,
            batch_id=row.batch_id,
            shown_at=row.shown_at,
            showing_by=row.showing_by,
            showing_at=row.showing_at,
            amount=row.amount,
            tally=row.tally,
            kept_out=tuple(int(u) for u in row.kept_out or ()),
        )
