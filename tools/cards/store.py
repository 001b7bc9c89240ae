"""Stores cards and moves each by one conditional UPDATE; never judges whether a press may move it.

A card moves ``pending → executing`` exactly once however many presses race for it, because
the move is ``UPDATE … WHERE status = 'pending'`` and only one statement can match. The same
holds for every later move, so two processes never both decide one card. Whether a person may
move a card is checked before any move (``tools.approving.checks``); the store only makes each move
happen once. What a card is lives in ``tools.cards.record``.

Statements are SQLAlchemy Core on the table, not ORM loads: they sit on every press's path, and
a card is a row read or moved whole, with no identity map or unit of work to pay for. Those of
every press are built once and run compiled once (``tools.db.compiled``). Each method runs in
its own transaction, or joins the caller's when given ``conn``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from tools.caller import Caller
from tools.cards.record import Approval, CardRecord, CardStatus, Issuee
from tools.db import PROPOSALS, Database, ProposalRow, compiled

__all__ = ["DECIDED", "CardStore", "claimed", "reopened"]

_CARDS = PROPOSALS

# Writes a card's audit line in the transaction that moves it.
Audited = Callable[[AsyncConnection, CardRecord], Awaitable[None]]


# Built once: the statements of every press. A statement built per call costs more Python
# (expression objects, their cache key) than the database spends running it. The columns set
# by an UPDATE come from the parameters' keys at execution.
_BY_ID = select(_CARDS).where(_CARDS.c.id == bindparam("card"))
_INSERT = _CARDS.insert()
_MOVE = update(_CARDS).where(_CARDS.c.id == bindparam("card"), _CARDS.c.status == bindparam("frm"))
# A claim and an approval of a card needing two both compare the approvals counted so far:
# two managers approving at once cannot both count as "the first", nor both as "the second".
_CLAIM = update(_CARDS).where(
    _CARDS.c.id == bindparam("card"),
    _CARDS.c.status == CardStatus.PENDING.value,
    _CARDS.c.expires_at > bindparam("now", type_=_CARDS.c.expires_at.type),
    _CARDS.c.approved_count == bindparam("seen"),
)
# Pending cards on a target, expired or not: one not yet swept still holds the target.
_ON_TARGET = select(_CARDS).where(
    _CARDS.c.tenant_id == bindparam("tenant"),
    _CARDS.c.target == bindparam("target"),
    _CARDS.c.status == CardStatus.PENDING.value,
)
_SET = update(_CARDS).where(_CARDS.c.id == bindparam("card"))
# The states whose decision is shown on the card's copies (and, but for those nobody decided,
# in an audit line): every state a card does not leave.
DECIDED = frozenset(CardStatus) - {CardStatus.PENDING, CardStatus.EXECUTING}
_INSTANT = timedelta(microseconds=1)


def reopened(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    """Whether a change of a card's stored ``posting`` changed its copies (not only the private
    lists beside them, which are redrawn whole and never carry its audit line)."""

    def copies(where: dict[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (where or {}).items() if k != "lists"}

    return copies(before) != copies(after)


class CardStore:
    """Reads cards and moves them between states; knows nothing about tools or surfaces."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, card_id: str, *, conn: AsyncConnection | None = None) -> CardRecord | None:
        row = (await self._run(_BY_ID, {"card": card_id}, conn)).first()
        return CardRecord.of(row) if row is not None else None

    async def insert(self, conn: AsyncConnection, **values: Any) -> None:
        """Stores a new card in the caller's transaction (the proposal and its audit commit together)."""
        await compiled.run(conn, _INSERT, values)

    async def pending_for(self, userid: int, tenantid: int, now: datetime) -> list[CardRecord]:
        """The cards still waiting on this person's decision, oldest first.

        Those issued to them: their own, and those the merchant's policy routed to them.
        """
        return [
            card
            for card in await self.pending_in(tenantid, now)
            if card.issued_to_person(userid, tenantid) and not card.approved_by(userid)
        ]

    async def asked_by(self, userid: int, tenantid: int, now: datetime) -> list[CardRecord]:
        """The live cards this person asked for that wait on somebody else, oldest first."""
        return [
            card
            for card in await self.pending_in(tenantid, now)
            if card.userid == userid
            and not (card.issued_to_person(userid, tenantid) and not card.approved_by(userid))
        ]

    async def pending_in(self, tenantid: int, now: datetime) -> list[CardRecord]:
        """Every live card of a merchant, oldest first (a merchant has a handful at a time)."""
        stmt = (
            select(_CARDS)
            .where(
                _CARDS.c.tenant_id == tenantid,
                _CARDS.c.status == CardStatus.PENDING,
                _CARDS.c.expires_at > now,
            )
            .order_by(_CARDS.c.created_at)
        )
        return await self._select(stmt)

    async def pending_on(
        self, conn: AsyncConnection, tenantid: int, target: str
    ) -> list[CardRecord]:
        """The pending cards of a merchant that would change ``target`` (expired ones too)."""
        rows = await compiled.run(conn, _ON_TARGET, {"tenant": tenantid, "target": target})
        return [CardRecord.of(row) for row in rows]

    async def approve_once(
        self,
        card_id: str,
        *,
        seen: int,
        approvals: Sequence[Approval],
        now: datetime,
        conn: AsyncConnection,
    ) -> bool:
        """Records the approvals of a card that needs more (this one added, any that no longer
        stand dropped), if nobody counted one meanwhile."""
        params = {
            "card": card_id,
            "now": now,
            "seen": seen,
            "approved_count": len(approvals),
            "approvals": [a.stored() for a in approvals],
        }
        return await self._update(_CLAIM, params, conn)

    async def expire_due(
        self, now: datetime, *, audited: Audited | None = None
    ) -> list[CardRecord]:
        """Moves every live card whose time ran out to ``expired``; the ones *this* call moved.

        One conditional UPDATE per card: whichever process's sweep matches it first is the one
        that updates its messages; the others match nothing. ``audited`` adds the card's audit
        line in the transaction of its move, so no expiry goes unrecorded.
        """
        due = select(_CARDS.c.id).where(
            _CARDS.c.status == CardStatus.PENDING, _CARDS.c.expires_at <= now
        )
        moved: list[CardRecord] = []
        async with self._db.begin() as conn:
            ids = list((await conn.execute(due)).scalars())
        for card_id in ids:
            async with self._db.begin() as conn:
                if not await self.move(
                    card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn
                ):
                    continue
                record = await self.get(card_id, conn=conn)
                assert record is not None
                if audited is not None:
                    await audited(conn, record)
                moved.append(record)
        return moved

    async def escalation_due(self, before: datetime, now: datetime) -> list[CardRecord]:
        """Live cards made before ``before`` that wait on others (routed, or needing a second
        approver) and whose owners were not told yet."""
        stmt = select(_CARDS).where(
            _CARDS.c.status == CardStatus.PENDING,
            or_(_CARDS.c.routed.is_(True), _CARDS.c.approvals_needed > 1),
            _CARDS.c.escalated_at.is_(None),
            _CARDS.c.created_at <= before,
            _CARDS.c.expires_at > now,
        )
        return await self._select(stmt)

    async def escalate(
        self,
        card_id: str,
        issued_to: Sequence[Issuee],
        now: datetime,
        *,
        audited: Audited | None = None,
    ) -> CardRecord | None:
        """Adds the owners to those a live card is issued to, once, with its audit line; the
        card as it now stands, or None if another process did it (or it ended) meanwhile."""
        stmt = update(_CARDS).where(
            _CARDS.c.id == card_id,
            _CARDS.c.status == CardStatus.PENDING,
            _CARDS.c.escalated_at.is_(None),
            _CARDS.c.expires_at > now,
        )
        params = {"escalated_at": now, "issued_to": [i.stored() for i in issued_to]}
        async with self._db.begin() as conn:
            if not _matched(await conn.execute(stmt, params)):
                return None
            record = await self.get(card_id, conn=conn)
            assert record is not None
            if audited is not None:
                await audited(conn, record)
            return record

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
        seen: int = 0,
        approvals: Sequence[Approval] = (),
        decided_by_name: str | None = None,
    ) -> bool:
        """``pending → executing`` if still pending, unexpired and with ``seen`` approvals
        counted; False for every loser.

        ``holder`` names the process that will execute the card, so the reconciler can tell a
        write still running from one whose process is gone. ``approvals`` are every approval
        the card then has (this one included), ``decided_by_name`` names them all.
        """
        params = {"card": card_id, "now": now, "seen": seen, **_claim(caller, now, holder)}
        params["status"] = CardStatus.EXECUTING.value
        if approvals:
            params["approvals"] = [a.stored() for a in approvals]
            params["approved_count"] = len(approvals)
        if decided_by_name:
            params["decided_by_name"] = decided_by_name
        return await self._update(_CLAIM, params, conn)

    async def take_showing(
        self,
        card_id: str,
        *,
        by: str,
        seen_by: str | None,
        seen_at: datetime | None,
        now: datetime,
    ) -> bool:
        """Makes process ``by`` the one to show a decided card's decision, if it is not shown
        yet and nobody took the showing since it was read (``seen_by`` at ``seen_at``);
        False for every other taker.

        The new ``showing_at`` is later than the one seen even when the clock is not (a
        stepped one, or two takes in one microsecond): otherwise two processes retaking the
        same card at one instant would both match.
        """
        at = max(now, seen_at + _INSTANT) if seen_at is not None else now
        stmt = (
            update(_CARDS)
            .where(
                _CARDS.c.id == card_id,
                _CARDS.c.shown_at.is_(None),
                _CARDS.c.status.in_(sorted(s.value for s in DECIDED)),
                _CARDS.c.showing_by.is_not_distinct_from(seen_by),
                _CARDS.c.showing_at.is_not_distinct_from(seen_at),
            )
            .values(showing_by=by, showing_at=at)
        )
        async with self._db.begin() as conn:
            return _matched(await conn.execute(stmt))

    async def mark_shown(self, card_id: str, now: datetime) -> None:
        """Records that a card's decision went out: every copy updated, the audit line posted."""
        stmt = update(_CARDS).where(_CARDS.c.id == card_id, _CARDS.c.shown_at.is_(None))
        async with self._db.begin() as conn:
            await conn.execute(stmt.values(shown_at=now))

    async def attach_posting(self, card_id: str, posting: dict[str, Any]) -> None:
        """Records where a surface posted the card, so whichever process decides it can update it."""
        await self.update(card_id, surface=posting)

    async def change_posting(
        self, card_id: str, change: Callable[[dict[str, Any] | None], dict[str, Any]]
    ) -> CardRecord | None:
        """Rewrites where a card's copies are, from what is stored at that moment; the card as
        it then stands.

        Read and written under the row's lock (SQLite: the writer's lock), so two processes
        adding copies (a turn's DMs, an escalation's, a copy posted anew) never drop each
        other's. A copy recorded on a decision already shown reopens its showing
        (``reopened``): the record of "shown" covered the copies there were, and a copy
        recorded later, left live by a process killed before drawing it, is redrawn.
        """
        async with self._db.begin(write=True) as conn:
            row = (await conn.execute(_BY_ID.with_for_update(), {"card": card_id})).first()
            if row is None:
                return None
            posting = change(row.surface)
            reset: dict[str, Any] = {}
            if row.shown_at is not None and reopened(row.surface, posting):
                reset = {"shown_at": None, "showing_by": None, "showing_at": None}
            await conn.execute(_SET, {"card": card_id, "surface": posting, **reset})
            return replace(CardRecord.of(row), posting=posting, **reset)

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
        return _matched(await self._run(stmt, params, conn))

    async def _run(
        self, stmt: Any, params: dict[str, Any], conn: AsyncConnection | None
    ) -> compiled.Rows:
        """A statement built once (above), in ``conn``'s transaction or in one of its own."""
        if conn is not None:
            return await compiled.run(conn, stmt, params)
        async with self._db.begin() as own:
            return await compiled.run(own, stmt, params)


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
