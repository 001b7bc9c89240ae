"""Shows the cards one turn proposed as one batch with one signed token; never approves or runs one.

A turn that proposes several writes ("approve requests 1, 2 and 3") makes one card per write,
each with its own arguments, digest, status, audit lines and target, exactly as alone. This
module groups them: in one transaction it checks each card is live, its asker's and in no
batch yet, raises every card to the strictest approval any of them needs (the highest role,
the most approvers, that role's people), records the batch and its order, and mints one token
naming the batch and a digest of its cards. The cards' own tokens then never reach a button.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from tools.audit.log import AuditEntry, Outcome
from tools.caller import Caller, Role
from tools.cards.record import CardRecord, CardStatus
from tools.cards.store import reopened
from tools.cards.tokens import BatchClaims, args_digest
from tools.db import BATCHES, PROPOSALS
from tools.deps import Deps
from tools.errors import ConflictError
from tools.people import routing
from tools.tool import Routing, Scope

__all__ = [
    "MAX_ITEMS",
    "Batch",
    "BatchRecord",
    "batch_digest",
    "bundle",
    "change_posting",
    "load",
    "routing_of",
]

# One card, one Approve: more than this and nobody reads every line before pressing it.
MAX_ITEMS = 20
BATCH_TOOL = "(batch)"

_JOIN = (
    update(PROPOSALS)
    .where(
        PROPOSALS.c.id == bindparam("card"),
        PROPOSALS.c.status == CardStatus.PENDING.value,
        PROPOSALS.c.batch_id.is_(None),
        PROPOSALS.c.user_id == bindparam("asker"),
        PROPOSALS.c.tenant_id == bindparam("tenant"),
    )
    .values(
        batch_id=bindparam("batch"),
        issued_to=bindparam("issued"),
        approvals_needed=bindparam("needed"),
        needed_role=bindparam("role"),
        routed=bindparam("routed"),
        kept_out=bindparam("kept"),
    )
)


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """A batch as stored, with its cards as they stand, in the order they were proposed."""

    batch_id: str
    userid: int
    tenantid: int
    created_at: datetime
    expires_at: datetime
    digest: str
    items: tuple[CardRecord, ...]
    posting: dict[str, Any] | None = None

    @property
    def live(self) -> tuple[CardRecord, ...]:
        """The cards still waiting for a decision."""
        return tuple(c for c in self.items if c.status is CardStatus.PENDING)


@dataclass(frozen=True, slots=True)
class Batch:
    """A batch just made: as stored, its one signed token, and who it is issued to."""

    record: BatchRecord
    token: str
    routing: Routing


def batch_digest(card_ids: Sequence[str], items: Sequence[CardRecord]) -> str:
    """A digest of the batch's cards in order, each with its own arguments' digest."""
    digests = {c.card_id: c.digest for c in items}
    return args_digest({"items": [[cid, digests.get(cid, "")] for cid in card_ids]})


async def load(
    deps: Deps, batch_id: str, *, conn: AsyncConnection | None = None
) -> BatchRecord | None:
    """The batch and its cards as they stand now, or None."""
    if conn is None:
        async with deps.db.engine.connect() as own:
            return await _load(own, batch_id)
    return await _load(conn, batch_id)


async def _load(conn: AsyncConnection, batch_id: str) -> BatchRecord | None:
    row = (await conn.execute(select(BATCHES).where(BATCHES.c.id == batch_id))).first()
    if row is None:
        return None
    rows = await conn.execute(select(PROPOSALS).where(PROPOSALS.c.batch_id == batch_id))
    cards = {r.id: CardRecord.of(r) for r in rows}
    items = tuple(cards[cid] for cid in row.items if cid in cards)
    return BatchRecord(
        batch_id=row.id,
        userid=row.user_id,
        tenantid=row.tenant_id,
        created_at=row.created_at,
        expires_at=row.expires_at,
        digest=row.digest,
        items=items,
        posting=row.surface,
    )


async def change_posting(
    deps: Deps,
    batch_id: str,
    change: Callable[[dict[str, Any] | None], dict[str, Any]],
) -> BatchRecord | None:
    """Rewrites where the batch's copies are under the row's lock; the batch as it then stands.

    A copy recorded on a batch whose decision was shown reopens its items' showing, as for a
    card of one write (``tools.cards.store.reopened``).
    """
    async with deps.db.begin(write=True) as conn:
        found = select(BATCHES.c.surface).where(BATCHES.c.id == batch_id).with_for_update()
        row = (await conn.execute(found)).first()
        if row is None:
            return None
        posting = change(row.surface)
        await conn.execute(update(BATCHES).where(BATCHES.c.id == batch_id).values(surface=posting))
        if reopened(row.surface, posting):
            shown = (PROPOSALS.c.batch_id == batch_id, PROPOSALS.c.shown_at.is_not(None))
            unshown = {"shown_at": None, "showing_by": None, "showing_at": None}
            await conn.execute(update(PROPOSALS).where(*shown).values(**unshown))
        return await _load(conn, batch_id)


async def bundle(deps: Deps, caller: Caller, card_ids: Sequence[str]) -> Batch:
    """Groups the asker's live cards of one turn into one batch, in one transaction.

    Raises:
        ConflictError: a card is not live, not the asker's, already in a batch, or nobody may
            approve them all together; no batch is made and each card stays as it was.
    """
    if not 2 <= len(card_ids) <= MAX_ITEMS or len(set(card_ids)) != len(card_ids):
        raise ConflictError(f"A batch holds 2 to {MAX_ITEMS} different cards.")
    started, now, batch_id = time.perf_counter(), deps.clock(), uuid.uuid4().hex
    async with deps.db.tenant_session(caller.tenantid, write=True) as session:
        conn = await session.connection()
        live = await _live(deps, conn, caller, card_ids, now)
        issued = await _strictest(session, caller, live)
        await _join(conn, caller, live, batch_id=batch_id, issued=issued)
        digest = batch_digest(card_ids, live)
        expires_at = min(c.expires_at for c in live)
        await _insert(
            conn, caller, card_ids, batch_id=batch_id, digest=digest, now=now, expires_at=expires_at
        )
        entry = _audited(caller, now, batch_id, card_ids, started)
        entry.agent = live[0].agent
        await deps.audit.add(conn, entry)
        record = await _load(conn, batch_id)
        await session.commit()
    assert record is not None
    token = deps.signer.mint_batch(BatchClaims(batch_id, caller.userid, caller.tenantid, digest))
    return Batch(record, token, issued)


async def routing_of(deps: Deps, caller: Caller, card_ids: Sequence[str]) -> Routing | None:
    """Who one card of these cards would be issued to, as ``bundle`` would route it; None when
    they could not be grouped (one was decided meanwhile, or the policy changed). Reads only."""
    if not 2 <= len(card_ids) <= MAX_ITEMS:
        return None
    async with deps.db.tenant_session(caller.tenantid) as session:
        conn = await session.connection()
        try:
            live = await _live(deps, conn, caller, card_ids, deps.clock())
            return await _strictest(session, caller, live)
        except ConflictError:
            return None


async def _live(
    deps: Deps,
    conn: AsyncConnection,
    caller: Caller,
    card_ids: Sequence[str],
    now: datetime,
) -> list[CardRecord]:
    """The cards to group, each still live, the asker's and in no batch; else a refusal."""
    items = [await deps.cards.get(cid, conn=conn) for cid in card_ids]
    live = [c for c in items if c is not None and _joinable(c, caller, now)]
    if len(live) != len(card_ids):
        raise ConflictError("One of these cards was decided or changed meanwhile.")
    return live


async def _join(
    conn: AsyncConnection,
    caller: Caller,
    cards: Sequence[CardRecord],
    *,
    batch_id: str,
    issued: Routing,
) -> None:
    """Puts each card in the batch under the strictest routing, each by one conditional UPDATE;
    a card changed since it was read refuses the whole batch."""
    stored_issued = [i.stored() for i in issued.issued_to]
    for card in cards:
        params = {
            "card": card.card_id,
            "asker": caller.userid,
            "tenant": caller.tenantid,
            "batch": batch_id,
            "issued": stored_issued,
            "needed": issued.approvals,
            "role": issued.role,
            "routed": issued.routed,
            "kept": list(issued.kept_out),
        }
        if (await conn.execute(_JOIN, params)).rowcount != 1:
            raise ConflictError("One of these cards was decided or changed meanwhile.")


async def _insert(
    conn: AsyncConnection,
    caller: Caller,
    card_ids: Sequence[str],
    *,
    batch_id: str,
    digest: str,
    now: datetime,
    expires_at: datetime,
) -> None:
    """Stores the batch: its cards in the order they were proposed, and the digest it signs."""
    await conn.execute(
        BATCHES.insert(),
        {
            "id": batch_id,
            "tenant_id": caller.tenantid,
            "user_id": caller.userid,
            "created_at": now,
            "expires_at": expires_at,
            "digest": digest,
            "items": list(card_ids),
        },
    )


def _joinable(card: CardRecord, caller: Caller, now: datetime) -> bool:
    return (
        card.status is CardStatus.PENDING
        and card.expires_at > now
        and card.batch_id is None
        and (card.userid, card.tenantid) == (caller.userid, caller.tenantid)
    )


async def _strictest(session: AsyncSession, caller: Caller, cards: Sequence[CardRecord]) -> Routing:
    """The routing the strictest card needs: its role, the most approvers any card needs,
    nobody any card kept out.

    Routed afresh through the merchant's policy (``tools.people.routing``), so the people are those
    who hold that role now; a result less strict than any card's own is refused, never used.
    Without the cards' kept-out people, Arjun's "approve requests 3 and 4" was routed as his
    own again, and request 4 is the one he raised.
    """
    role = max((Role(c.needed_role or "staff") for c in cards), key=lambda r: r.rank)
    approvals = max(c.approvals_needed for c in cards)
    kept = {userid for c in cards for userid in c.kept_out}
    policy = await routing.policy(session, caller.tenantid)
    amount = policy.two_approvers_from if approvals > 1 else None
    issued = await routing.routing(session, caller, tool_role=role, amount=amount, kept_out=kept)
    if issued.approvals < approvals or not Role(issued.role or "staff").satisfies(role):
        raise ConflictError("The approval policy changed meanwhile; each card stays on its own.")
    return issued


def _audited(
    caller: Caller, now: datetime, batch_id: str, card_ids: Sequence[str], started: float
) -> AuditEntry:
    return AuditEntry(
        at=now,
        agent="",
        tool=BATCH_TOOL,
        userid=caller.userid,
        tenantid=caller.tenantid,
        scope=str(Scope.WRITE),
        args={"cards": list(card_ids)},
        outcome=Outcome.PROPOSED,
        detail=f"{len(card_ids)} cards shown as one batch",
        rows=len(card_ids),
        card_id=batch_id,
        took_ms=(time.perf_counter() - started) * 1000,
    )
