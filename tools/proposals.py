"""Keeps the state of every card in the ``proposals`` table; every move is one conditional UPDATE.

A card moves ``pending → executing`` exactly once however many presses race for it, because
the move is ``UPDATE … WHERE status = 'pending'`` and only one statement can match. The same
holds for every later move, so two processes never both decide one card.

Statements are SQLAlchemy Core on the table, not ORM loads: they sit on every press's path, and
a card is a row read or moved whole, with no identity map or unit of work to pay for. Each
method runs in its own transaction, or joins the caller's when given ``conn``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Select, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from tools.caller import Caller
from tools.db import PROPOSALS, Database, ProposalRow

__all__ = ["CardRecord", "CardStatus", "CardStore", "claimed"]

_CARDS = PROPOSALS


class CardStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"
    DONE = "done"
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    INTERRUPTED = "interrupted"
    UNKNOWN = "outcome_unknown"


# Built once: the statements of every press. A statement built per call costs more Python
# (expression objects, their cache key) than the database spends running it. The columns set
# by an UPDATE come from the parameters' keys at execution.
_BY_ID = select(_CARDS).where(_CARDS.c.id == bindparam("card"))
_INSERT = _CARDS.insert()
_MOVE = update(_CARDS).where(_CARDS.c.id == bindparam("card"), _CARDS.c.status == bindparam("frm"))
_CLAIM = update(_CARDS).where(
    _CARDS.c.id == bindparam("card"),
    _CARDS.c.status == CardStatus.PENDING.value,
    _CARDS.c.expires_at > bindparam("now", type_=_CARDS.c.expires_at.type),
)
_SET = update(_CARDS).where(_CARDS.c.id == bindparam("card"))


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
    # The process executing the card (see ``tools.lease``); None before it is claimed.
    holder: str | None = None

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
            surface=row.surface,
            holder=row.holder,
        )


class CardStore:
    """Reads cards and moves them between states; knows nothing about tools or surfaces."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, card_id: str, *, conn: AsyncConnection | None = None) -> CardRecord | None:
        records = await self._select(_BY_ID, conn, {"card": card_id})
        return records[0] if records else None

    async def insert(self, conn: AsyncConnection, **values: Any) -> None:
        """Stores a new card in the caller's transaction (the proposal and its audit commit together)."""
        await conn.execute(_INSERT, values)

    async def pending_for(self, userid: int, tenantid: int, now: datetime) -> list[CardRecord]:
        """The cards still waiting on this person, oldest first."""
        stmt = (
            select(_CARDS)
            .where(
                _CARDS.c.user_id == userid,
                _CARDS.c.tenant_id == tenantid,
                _CARDS.c.status == CardStatus.PENDING,
                _CARDS.c.expires_at > now,
            )
            .order_by(_CARDS.c.created_at)
        )
        return await self._select(stmt)

    async def in_state(
        self, status: CardStatus, *, claimed_before: datetime | None = None
    ) -> list[CardRecord]:
        """Cards in ``status``; with ``claimed_before``, only those decided before that time."""
        stmt = select(_CARDS).where(_CARDS.c.status == status)
        if claimed_before is not None:
            stmt = stmt.where(_CARDS.c.decided_at <= claimed_before)
        return await self._select(stmt)

    async def move(
        self,
        card_id: str,
        *,
        frm: CardStatus,
        to: CardStatus,
        conn: AsyncConnection | None = None,
        **values: Any,
    ) -> bool:
        """Moves a card from one state to another; False when it was not in ``frm`` any more.

        With ``conn`` the move joins that transaction (the write and the card's move to
        ``done`` commit together); without, it commits on its own.
        """
        params = {"card": card_id, "frm": frm.value, "status": to.value, **values}
        return await self._update(_MOVE, params, conn)

    async def claim(
        self,
        card_id: str,
        caller: Caller,
        now: datetime,
        *,
        holder: str | None = None,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """``pending → executing`` if still pending and unexpired; False for every loser.

        ``holder`` names the process that will execute the card, so the reconciler can tell a
        write still running from one whose process is gone.
        """
        params = {"card": card_id, "now": now, **_claim(caller, now, holder)}
        params["status"] = CardStatus.EXECUTING.value
        return await self._update(_CLAIM, params, conn)

    async def attach_surface(self, card_id: str, surface: dict[str, Any]) -> None:
        """Records where a surface posted the card, so whichever process decides it can update it."""
        await self.update(card_id, surface=surface)

    async def update(self, card_id: str, **values: Any) -> None:
        await self._update(_SET, {"card": card_id, **values})

    async def load(self, session: AsyncSession, card_id: str) -> ProposalRow | None:
        return await session.get(ProposalRow, card_id)

    async def rows(self) -> Sequence[ProposalRow]:
        async with self._db.session() as session:
            return (await session.scalars(select(ProposalRow))).all()

    async def _select(
        self,
        stmt: Select[Any],
        conn: AsyncConnection | None = None,
        params: dict[str, Any] | None = None,
    ) -> list[CardRecord]:
        if conn is not None:
            return [CardRecord.of(row) for row in await conn.execute(stmt, params)]
        async with self._db.engine.connect() as own:
            return [CardRecord.of(row) for row in await own.execute(stmt, params)]

    async def _update(
        self, stmt: Any, params: dict[str, Any], conn: AsyncConnection | None = None
    ) -> bool:
        if conn is not None:
            return _matched(await conn.execute(stmt, params))
        async with self._db.begin() as own:
            return _matched(await own.execute(stmt, params))


def _matched(result: Any) -> bool:
    return bool(result.rowcount == 1)


def claimed(record: CardRecord, caller: Caller, now: datetime, holder: str | None) -> CardRecord:
    """The record as ``CardStore.claim`` leaves it, without reading it back."""
    return replace(record, **_claim(caller, now, holder))


def _claim(caller: Caller, now: datetime, holder: str | None) -> dict[str, Any]:
    return {
        "status": CardStatus.EXECUTING,
        "decided_by": caller.userid,
        "decided_by_name": caller.name or f"user {caller.userid}",
        "decided_at": now,
        "holder": holder,
    }
