"""The checks between a signed card and a decision about it; never decides or writes anything.

Shared by approval, rejection and withdrawal: the token's signature and expiry, the card row
it names, who it is issued to, and the role the presser holds now. Each raises the refusal a
person reads.
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import schema
from tools.agent import Agent
from tools.approving.trail import Trail
from tools.audit.log import Outcome
from tools.caller import Caller, Role
from tools.cards.record import Approval, CardRecord, CardStatus
from tools.cards.tokens import CardClaims, args_digest
from tools.deps import Deps
from tools.errors import (
    AlreadyApprovedError,
    CardExpiredError,
    CardMismatchError,
    InvalidCardError,
    NotAllowedError,
    NotAWriteError,
    NotYourCardError,
    RoleRequiredError,
    UnknownToolError,
)
from tools.people.tables import Person
from tools.tool import Scope, Tool

__all__ = [
    "check",
    "issued_to",
    "needed_role",
    "qualified",
    "standing_approvals",
    "stored_card",
    "tool_of",
    "verify",
]


async def verify(deps: Deps, trail: Trail, token: str, caller: Caller) -> tuple[CardClaims, Tool]:
    """The checks that need no database: signature and expiry, then the card's owner and tool."""
    try:
        claims = deps.signer.parse(token)
    except CardExpiredError as expired:
        trail.entry.card_id = expired.card_id
        async with deps.db.begin() as conn:
            if expired.card_id:
                await deps.cards.move(
                    expired.card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn
                )
            await trail.add(conn, Outcome.EXPIRED, str(expired))
        raise
    except InvalidCardError as invalid:
        raise await trail.refuse(invalid) from None
    if claims.tenantid != caller.tenantid:
        trail.entry.tool, trail.entry.card_id = claims.tool, claims.card_id
        # Another merchant's card: refused before the database is asked anything about it.
        raise await trail.refuse(
            NotYourCardError(card_id=claims.card_id, owner_userid=claims.userid)
        )
    return claims, await tool_of(deps, trail, claims)


async def tool_of(deps: Deps, trail: Trail, claims: CardClaims) -> Tool:
    """The write tool a card names, or an audited refusal: it must still exist and still write."""
    trail.entry.tool, trail.entry.card_id = claims.tool, claims.card_id
    tool = await deps.card_tool(claims.tenantid, claims.tool)
    if tool is None:
        raise await trail.refuse(UnknownToolError(claims.tool))
    if tool.scope is not Scope.WRITE or tool.execute is None:
        raise await trail.refuse(NotAWriteError(claims.tool, card_id=claims.card_id))
    return tool


def stored_card(claims: CardClaims, record: CardRecord | None) -> CardRecord:
    """The stored card the token names, or a refusal: a token and its row must agree."""
    if record is None or (record.tool, record.userid, record.tenantid) != (
        claims.tool,
        claims.userid,
        claims.tenantid,
    ):
        raise InvalidCardError("no such card was issued")
    return record


def issued_to(record: CardRecord, caller: Caller) -> None:
    """Whether the card is issued to the person pressing it: the one place that decides it.

    A card is not transferable. Who it is issued to was decided by the server when it was
    made (the asker, or the people the merchant's policy routed it to) and stored with it;
    neither the token's bearer nor the model can add anyone. Without this, one person's
    approval could be replayed by another, including by somebody in a different shop.

    Raises:
        NotYourCardError: it is not.
    """
    if not record.issued_to_person(caller.userid, caller.tenantid):
        raise NotYourCardError(card_id=record.card_id, owner_userid=record.userid)


def needed_role(record: CardRecord, tool: Tool) -> Role:
    """The role a person deciding the card must hold now: the stricter of the tool's and the
    one the policy asked for when the card was issued."""
    needed = Role(record.needed_role) if record.needed_role else tool.role
    return needed if needed.satisfies(tool.role) else tool.role


def qualified(record: CardRecord, tool: Tool, caller: Caller) -> None:
    """Whether the presser's role, as it is now, may decide the card.

    Raises:
        RoleRequiredError: it may not (a demotion since the card was issued, say).
    """
    needed = needed_role(record, tool)
    if not caller.role.satisfies(needed):
        raise RoleRequiredError(tool.name, str(needed), str(caller.role))


async def standing_approvals(
    conn: AsyncConnection, record: CardRecord, needed: Role
) -> tuple[Approval, ...]:
    """The card's earlier approvals whose approvers still hold the role in its merchant.

    A first approval counts only while its approver could still give it: Arjun approving
    1 of 2 and then losing the role must not leave Meera's press to run the write alone.
    """
    if not record.approvals:
        return ()
    people = Person.__table__
    rows = await conn.execute(
        select(people.c.id, people.c.role).where(
            people.c.id.in_([a.userid for a in record.approvals]),
            people.c.tenant_id == record.tenantid,
        )
    )
    roles = {row.id: Role(row.role) for row in rows}
    return tuple(
        a for a in record.approvals if a.userid in roles and roles[a.userid].satisfies(needed)
    )


def check(
    deps: Deps,
    *,
    trail: Trail,
    presented: Agent,
    claims: CardClaims,
    tool: Tool,
    record: CardRecord | None,
    caller: Caller,
) -> BaseModel:
    """The stored card against the token, its issuees, the proposer's allow-list, the role,
    the arguments.

    The allow-list is that of the agent that *proposed* the card, stored with it: the agent of
    the surface pressing it could allow tools the proposer never could, and a card must not
    borrow that. Checked again here, not only at proposal: a card must not outlive a narrowed
    allow-list or a demotion. The role is the stricter of the tool's and the one the policy
    asked for when the card was issued, against the presser's role as it is now.

    The stored arguments then go through the schema again. Not a trust check (the card is
    signed, so these are arguments this server sealed) but a types one. They round-trip
    through JSON, and without this a request id sealed as ``41`` reads back as the float
    ``41.0``, which a handler takes for request 0: "request 0 is not waiting for approval"
    reads like a stale card, so it fails silently.
    """
    record = stored_card(claims, record)
    issued_to(record, caller)
    trail.entry.agent = record.agent
    proposer = deps.proposer(record.agent, presented)
    if proposer is None or not proposer.allows(tool.name):
        raise NotAllowedError(record.agent, tool.name)
    qualified(record, tool, caller)
    if record.approved_by(caller.userid):
        raise AlreadyApprovedError(card_id=record.card_id)
    clean = schema.validate(tool.name, tool.args, record.args)
    trail.entry.args = clean.model_dump(mode="json")
    if args_digest(trail.entry.args) != claims.digest:
        raise CardMismatchError(card_id=claims.card_id)
    return clean
