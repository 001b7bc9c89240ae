"""Issues a proposal's card to the right people, and keeps one live card per target; never approves.

Called by ``propose`` inside the transaction that stores the card, so who a card is issued to
is decided from the policy and the roles as they stand when it is made, and stored with it
(``approve`` reads it back, and re-checks the presser's live role). The model never chooses
who approves; neither does the presser.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

from sqlalchemy import and_, bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from tools.caller import Caller, Role
from tools.cards.record import CardRecord, CardStatus, Issuee
from tools.cards.store import CardStore
from tools.db import PROPOSALS, PolicyRow, compiled
from tools.db.prescoped import connection, run, tenant_statement
from tools.errors import CardHeldError, CardLiveError
from tools.people.policy import DAY, Policy, Route, SelfApproval, route
from tools.people.tables import Person
from tools.tool import Proposal, Routing

__all__ = ["for_proposal", "owners", "people", "policy", "replace_live", "routing"]


# Read on every proposal, so built once and run as Core (see ``tools.db.prescoped``).
_PEOPLE = Person.__table__.c
_PEOPLE_OF = tenant_statement(
    select(_PEOPLE.id, _PEOPLE.tenant_id, _PEOPLE.role, _PEOPLE.name).order_by(_PEOPLE.id)
)
_POLICIES = PolicyRow.__table__.c
_POLICY_OF = select(
    _POLICIES.approver_role,
    _POLICIES.two_approvers_from,
    _POLICIES.escalate_after,
    _POLICIES.self_approval,
    _POLICIES.two_approvers_window,
).where(_POLICIES.tenant_id == bindparam("tenant"))
# Taken before what moved is read, so two proposals adding to one tally at once (two expense
# requests of one branch) are counted one after the other: on PostgreSQL each would otherwise
# miss the other's card and both stay under the amount. SQLite's writers queue anyway.
_POLICY_LOCK = (
    select(_POLICIES.tenant_id).where(_POLICIES.tenant_id == bindparam("tenant")).with_for_update()
)
# What one tally already moved or is waiting to move: cards claimed or done within the window
# (an outcome unknown may have moved it too), and live cards on other targets of the tally.
# Those on the card's own target are the ones it replaces, so they do not add to it.
_CARDS = PROPOSALS.c
_MOVED = select(_CARDS.amount).where(
    _CARDS.tenant_id == bindparam("tenant"),
    _CARDS.tally == bindparam("tally"),
    or_(
        and_(
            or_(
                _CARDS.status == CardStatus.DONE.value,
                _CARDS.status == CardStatus.EXECUTING.value,
                _CARDS.status == CardStatus.UNKNOWN.value,
            ),
            _CARDS.decided_at >= bindparam("since", type_=_CARDS.decided_at.type),
        ),
        and_(
            _CARDS.status == CardStatus.PENDING.value,
            _CARDS.expires_at > bindparam("now", type_=_CARDS.expires_at.type),
            _CARDS.target != bindparam("target"),
        ),
    ),
)


async def policy(session: AsyncSession, tenantid: int) -> Policy:
    """The merchant's policy (as ``tools.people.policy.policy_of`` reads a stored row)."""
    conn = await connection(session)
    row = (await compiled.run(conn, _POLICY_OF, {"tenant": tenantid})).first()
    if row is None:
        return Policy()
    return Policy(
        Role(row.approver_role),
        row.two_approvers_from,
        row.escalate_after,
        SelfApproval(row.self_approval or SelfApproval.NOT_OWN_REQUESTS),
        DAY if row.two_approvers_window is None else row.two_approvers_window,
    )


async def people(session: AsyncSession) -> list[Caller]:
    """The people of the session's merchant (the statement is scoped to the session's tenant)."""
    rows = await run(session, _PEOPLE_OF)
    return [Caller(p.id, p.tenant_id, Role(p.role), p.name) for p in rows]


async def routing(
    session: AsyncSession,
    asker: Caller,
    *,
    tool_role: Role,
    amount: int | None,
    kept_out: Collection[int] = (),
) -> Routing:
    """Who the card is issued to, under the merchant's policy and its people's live roles.

    ``kept_out``: people who may not approve it whatever the policy says (a batch keeps out
    whoever its cards kept out).

    Raises:
        ConflictError: nobody (or not two people) may approve it; the message says what to do.
    """
    found = await people(session)
    rules = await policy(session, asker.tenantid)
    decided = route(asker, found, rules, tool_role=tool_role, amount=amount, kept_out=kept_out)
    return _issued(decided, asker, found)


async def for_proposal(
    session: AsyncSession,
    asker: Caller,
    found: Sequence[Caller],
    proposal: Proposal,
    *,
    tool_role: Role,
    now: datetime,
    edited: CardRecord | None = None,
) -> Routing:
    """Who a proposal's card is issued to: the policy applied to its amount added to what the
    same tally moved within the policy's window, to who raised it, and, for an edit, to what
    the edited card needed (never less: an edit cannot halve a card's approvers).

    What moved is read from the cards (claimed or done, and those still waiting), the live
    record every write goes through, whatever tool made it: an MCP tool's writes add up as the
    merchant's own do. Cards stored before cards kept an amount add nothing.

    Raises:
        ConflictError: nobody (or not two people) may approve it; the message says what to do.
    """
    rules = await policy(session, asker.tenantid)
    amount = proposal.amount
    if amount is not None and rules.sums:
        amount += await _moved(session, asker.tenantid, proposal, rules, now)
    role = tool_role
    if edited is not None and edited.needed_role and not role.satisfies(Role(edited.needed_role)):
        role = Role(edited.needed_role)
    decided = route(
        asker,
        found,
        rules,
        tool_role=role,
        amount=amount,
        raised_by=proposal.raised_by,
        at_least=edited.approvals_needed if edited is not None else 1,
    )
    return _issued(decided, asker, found)


def tally_of(proposal: Proposal) -> str | None:
    """What a proposal's amount adds up with: the tool's tally, else its target."""
    return proposal.tally or proposal.target


async def _moved(
    session: AsyncSession, tenantid: int, proposal: Proposal, rules: Policy, now: datetime
) -> int:
    """What the proposal's tally moved within the window, or waits to move on other cards."""
    tally = tally_of(proposal)
    if tally is None:
        return 0
    conn = await connection(session)
    await compiled.run(conn, _POLICY_LOCK, {"tenant": tenantid})
    params = {
        "tenant": tenantid,
        "tally": tally,
        "since": now - timedelta(seconds=rules.two_approvers_window),
        "now": now,
        "target": proposal.target or "",
    }
    return sum(row.amount or 0 for row in await compiled.run(conn, _MOVED, params))


def _issued(decided: Route, asker: Caller, found: Sequence[Caller]) -> Routing:
    names = {p.userid: p.name for p in found} | {asker.userid: asker.name}
    return Routing(
        issued_to=tuple(Issuee(userid, names.get(userid, "")) for userid in decided.issued_to),
        approvals=decided.approvals,
        role=str(decided.needed),
        routed=decided.routed,
        kept_out=decided.kept_out,
        kept_asker=decided.kept_asker,
    )


async def owners(session: AsyncSession) -> list[Issuee]:
    """The merchant's owners: whom a routed card nobody decided is escalated to."""
    return [Issuee(p.userid, p.name) for p in await people(session) if p.role is Role.OWNER]


async def replace_live(
    cards: CardStore,
    conn: AsyncConnection,
    *,
    asker: Caller,
    found: Sequence[Caller],
    target: str,
    tool: str,
    digest: str,
    now: datetime,
    new_card: str,
    summary: str,
    edited: tuple[str, str] | None = None,
) -> list[CardRecord]:
    """One live card per target: the identical write points to its live card; another write
    on the same target replaces it, when its asker may end that card. Returns the cards it
    ended (replaced, or found expired and not yet swept), for the surface to show.

    Two cards for one request never stay live side by side ("approve request 2" asked twice;
    "refund order 12 250" then "refund order 12"): whichever was pressed second would fail its
    re-check or, worse, run a second refund. A unique index on the live target backs this
    up when two proposals race (``propose`` turns that into a plain refusal).

    ``edited`` is the card an edit replaces and the outcome it reads ("Replaced by an edited
    card: ₹300.00 → ₹200.00").

    Raises:
        CardLiveError: the identical write is already waiting; no card is made.
        CardHeldError: a live card on the target is one the asker may not end; no card is made.
    """
    pending = await cards.pending_on(conn, asker.tenantid, target)
    _refuse_identical(pending, tool=tool, digest=digest, now=now)
    _refuse_held(pending, asker, found, now=now)
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
            raise CardLiveError(
                card_id=card.card_id, waiting_for=waiting, at=card.created_at, summary=card.summary
            )


def _refuse_held(
    pending: list[CardRecord], asker: Caller, found: Sequence[Caller], *, now: datetime
) -> None:
    """Refuses to replace a live card its asker may not end.

    Without this, Ravi (staff) asking "approve request 2" ends Arjun's pending "reject
    request 2" card, and with it a first of two approvals already given: anyone could undo a
    manager's card by asking for something else on the same thing.
    """
    roles = {p.userid: p.role for p in found}
    for card in pending:
        if card.expires_at > now and not _may_end(card, asker, roles):
            asked_by = next((p.name for p in found if p.userid == card.userid), "")
            waiting = " or ".join(i.name for i in card.waiting_for if i.name)
            raise CardHeldError(
                card_id=card.card_id,
                asked_by=asked_by or f"person {card.userid}",
                summary=card.summary,
                waiting_for=waiting,
                at=card.created_at,
            )


def _may_end(card: CardRecord, asker: Caller, roles: dict[int, Role]) -> bool:
    """Its asker, someone of at least its asker's role now, or someone who may decide it
    (they could reject it anyway) may replace a card."""
    if card.userid == asker.userid:
        return True
    theirs = roles.get(card.userid)
    if theirs is None or asker.role.satisfies(theirs):
        return True  # its asker is no longer among the merchant's people
    needed = Role(card.needed_role) if card.needed_role else asker.role
    return card.issued_to_person(asker.userid, asker.tenantid) and asker.role.satisfies(needed)


def _replaced(
    new_card: str, now: datetime, summary: str, card_id: str, edited: tuple[str, str] | None
) -> dict[str, object]:
    outcome = f"Replaced by a newer card: {summary}"
    if edited is not None and edited[0] == card_id:
        outcome = edited[1]
    return {"replaced_by": new_card, "decided_at": now, "outcome": outcome}
