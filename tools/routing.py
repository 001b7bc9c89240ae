"""Issues a proposal's card to the right people, and keeps one live card per target; never approves.

Called by ``propose`` inside the transaction that stores the card, so who a card is issued to
is decided from the policy and the roles as they stand when it is made, and stored with it
(``approve`` reads it back, and re-checks the presser's live role). The model never chooses
who approves; neither does the presser.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from tools.caller import Caller, Role
from tools.card_record import CardRecord, CardStatus, Issuee
from tools.card_store import CardStore
from tools.db import PolicyRow, compiled
from tools.db.prescoped import connection, run, tenant_statement
from tools.errors import CardLiveError
from tools.people import Person
from tools.policy import Policy, route
from tools.tool import Routing

__all__ = ["owners", "policy", "replace_live", "routing"]


# Read on every proposal, so built once and run as Core (see ``tools.db.prescoped``).
_PEOPLE = Person.__table__.c
_PEOPLE_OF = tenant_statement(
    select(_PEOPLE.id, _PEOPLE.tenant_id, _PEOPLE.role, _PEOPLE.name).order_by(_PEOPLE.id)
)
_POLICIES = PolicyRow.__table__.c
_POLICY_OF = select(
    _POLICIES.approver_role, _POLICIES.two_approvers_from, _POLICIES.escalate_after
).where(_POLICIES.tenant_id == bindparam("tenant"))


async def policy(session: AsyncSession, tenantid: int) -> Policy:
    """The merchant's policy (as ``tools.policy.policy_of`` reads a stored row)."""
    conn = await connection(session)
    row = (await compiled.run(conn, _POLICY_OF, {"tenant": tenantid})).first()
    if row is None:
        return Policy()
    return Policy(Role(row.approver_role), row.two_approvers_from, row.escalate_after)


async def _people(session: AsyncSession) -> list[Caller]:
    """The people of the session's merchant (the statement is scoped to the session's tenant)."""
    rows = await run(session, _PEOPLE_OF)
    return [Caller(p.id, p.tenant_id, Role(p.role), p.name) for p in rows]


async def routing(
    session: AsyncSession, asker: Caller, *, tool_role: Role, amount: int | None
) -> Routing:
    """Who the card is issued to, under the merchant's policy and its people's live roles.

    Raises:
        ConflictError: nobody (or not two people) may approve it; the message says what to do.
    """
    people = await _people(session)
    decided = route(
        asker, people, await policy(session, asker.tenantid), tool_role=tool_role, amount=amount
    )
    names = {p.userid: p.name for p in people} | {asker.userid: asker.name}
    return Routing(
        issued_to=tuple(Issuee(userid, names.get(userid, "")) for userid in decided.issued_to),
        approvals=decided.approvals,
        role=str(decided.needed),
        routed=decided.routed,
    )


async def owners(session: AsyncSession) -> list[Issuee]:
    """The merchant's owners: whom a routed card nobody decided is escalated to."""
    return [Issuee(p.userid, p.name) for p in await _people(session) if p.role is Role.OWNER]


async def replace_live(
    cards: CardStore,
    conn: AsyncConnection,
    *,
    tenantid: int,
    target: str,
    tool: str,
    digest: str,
    now: datetime,
    new_card: str,
    summary: str,
    edited: tuple[str, str] | None = None,
) -> list[CardRecord]:
    """One live card per target: the identical write points to its live card; another write
    on the same target replaces it. Returns the cards it ended (replaced, or found expired and
    not yet swept), for the surface to show.

    Two cards for one request used to stay live side by side ("approve request 2" asked twice;
    "refund order 12 250" then "refund order 12"): whichever was pressed second either failed
    its re-check or, worse, ran a second refund. A unique index on the live target backs this
    up when two proposals race (``propose`` turns that into a plain refusal).

    ``edited`` is the card an edit replaces and the outcome it reads ("Replaced by an edited
    card: ₹300.00 → ₹200.00").

    Raises:
        CardLiveError: the identical write is already waiting; no card is made.
    """
    pending = await cards.pending_on(conn, tenantid, target)
    _refuse_identical(pending, tool=tool, digest=digest, now=now)
    ended = []
    for card in pending:
        expired = card.expires_at <= now
        moved = await cards.move(
            card.card_id,
            frm=CardStatus.PENDING,
            to=CardStatus.EXPIRED if expired else CardStatus.SUPERSEDED,
            conn=conn,
            **({} if expired else _replaced(new_card, now, summary, card.card_id, edited)),
        )
        if moved:
            ended.append(card)
    return ended


def _refuse_identical(pending: list[CardRecord], *, tool: str, digest: str, now: datetime) -> None:
    """Refuses a write identical to one of the live cards: that card is the one to press."""
    live = [card for card in pending if card.expires_at > now]
    for card in live:
        if card.tool == tool and card.digest == digest:
            waiting = " or ".join(i.name for i in card.waiting_for if i.name)
            raise CardLiveError(card_id=card.card_id, waiting_for=waiting, at=card.created_at)


def _replaced(
    new_card: str, now: datetime, summary: str, card_id: str, edited: tuple[str, str] | None
) -> dict[str, object]:
    outcome = f"Replaced by a newer card: {summary}"
    if edited is not None and edited[0] == card_id:
        outcome = edited[1]
    return {"replaced_by": new_card, "decided_at": now, "outcome": outcome}
