"""Keeps the state of every card in the ``proposals`` table; every move is one conditional UPDATE.

A card moves ``pending → executing`` exactly once however many presses race for it, because
the move is ``UPDATE … WHERE status = 'pending'`` and only one statement can match. The same
holds for every later move, so two processes never both decide one card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Caller
from tools.db import Database, ProposalRow

__all__ = ["CardRecord", "CardStatus", "CardStore"]


class CardStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    INTERRUPTED = "interrupted"
    UNKNOWN = "outcome_unknown"


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
    surface: dict[str, Any] | None

    @classmethod
    def of(cls, row: ProposalRow) -> CardRecord:
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
            surface=row.surface,
        )


class CardStore:
    """Reads cards and moves them between states; knows nothing about tools or surfaces."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, card_id: str) -> CardRecord | None:
        async with self._db.session() as session:
            row = await session.get(ProposalRow, card_id)
            return CardRecord.of(row) if row else None

    async def pending_for(self, userid: int, tenantid: int, now: datetime) -> list[CardRecord]:
        """The cards still waiting on this person, oldest first."""
        stmt = (
            select(ProposalRow)
            .where(
                ProposalRow.user_id == userid,
                ProposalRow.tenant_id == tenantid,
                ProposalRow.status == CardStatus.PENDING,
                ProposalRow.expires_at > now,
            )
            .order_by(ProposalRow.created_at)
        )
        async with self._db.session() as session:
            return [CardRecord.of(row) for row in (await session.scalars(stmt)).all()]

    async def in_state(
        self, status: CardStatus, *, claimed_before: datetime | None = None
    ) -> list[CardRecord]:
        """Cards in ``status``; with ``claimed_before``, only those decided before that time."""
        stmt = select(ProposalRow).where(ProposalRow.status == status)
        if claimed_before is not None:
            stmt = stmt.where(ProposalRow.decided_at <= claimed_before)
        async with self._db.session() as session:
            return [CardRecord.of(row) for row in (await session.scalars(stmt)).all()]

    async def move(
        self,
        card_id: str,
        *,
        frm: CardStatus,
        to: CardStatus,
        session: AsyncSession | None = None,
        **values: Any,
    ) -> bool:
        """Moves a card from one state to another; False when it was not in ``frm`` any more.

        With ``session`` the move joins that transaction (the write and the card's move to
        ``done`` commit together); without, it commits on its own.
        """
        stmt = (
            update(ProposalRow)
            .where(ProposalRow.id == card_id, ProposalRow.status == frm)
            .values(status=to, **values)
            .execution_options(synchronize_session=False)
        )
        if session is not None:
            return _matched(await session.execute(stmt))
        async with self._db.session() as own, own.begin():
            return _matched(await own.execute(stmt))

    async def claim(self, card_id: str, caller: Caller, now: datetime) -> bool:
        """``pending → executing`` if still pending and unexpired; False for every loser."""
        stmt = (
            update(ProposalRow)
            .where(
                ProposalRow.id == card_id,
                ProposalRow.status == CardStatus.PENDING,
                ProposalRow.expires_at > now,
            )
            .values(
                status=CardStatus.EXECUTING,
                decided_by=caller.userid,
                decided_by_name=caller.name or f"user {caller.userid}",
                decided_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        async with self._db.session() as session, session.begin():
            return _matched(await session.execute(stmt))

    async def attach_surface(self, card_id: str, surface: dict[str, Any]) -> None:
        """Records where a surface posted the card, so whichever process decides it can update it."""
        stmt = update(ProposalRow).where(ProposalRow.id == card_id).values(surface=surface)
        async with self._db.session() as session, session.begin():
            await session.execute(stmt)

    async def load(self, session: AsyncSession, card_id: str) -> ProposalRow | None:
        return await session.get(ProposalRow, card_id)

    async def rows(self) -> Sequence[ProposalRow]:
        async with self._db.session() as session:
            return (await session.scalars(select(ProposalRow))).all()


def _matched(result: Any) -> bool:
    return bool(result.rowcount == 1)
