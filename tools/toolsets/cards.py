"""Lists a person's live cards: those waiting on their decision and those they asked for; never decides one.

A read tool like the merchant's reads, in the caller's tenant session. It tells the model (and
through it the person) what is waiting for them and whom their own cards wait for; deciding or
withdrawing a card stays a press on the card, by the person it is issued to.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field
from sqlalchemy import select

from tools.caller import Role
from tools.cards.record import CardRecord, CardStatus
from tools.db import ProposalRow
from tools.errors import NotFoundError
from tools.people.tables import Person
from tools.schema import Args
from tools.tool import Result, Tool, ToolContext

__all__ = ["CARD_TOOLS", "CardStatusArgs", "MyCardsArgs"]


class MyCardsArgs(Args):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CardStatusArgs(Args):
    card_id: str = Field(
        min_length=32,
        max_length=32,
        pattern="^[0-9a-f]{32}$",
        description="The card id a proposal gave.",
    )


def _row(card: CardRecord, ctx: ToolContext, names: dict[int, str]) -> dict[str, Any]:
    me = ctx.caller.userid
    waiting = [i.name for i in card.waiting_for if i.userid != me]
    mine = card.issued_to_person(me, ctx.caller.tenantid) and not card.approved_by(me)
    row: dict[str, Any] = {
        "summary": card.summary,
        "waiting_for": "you" if mine else " or ".join(waiting) or "nobody",
        "asked_by": "you" if card.userid == me else names.get(card.userid, "someone"),
        "expires_at": card.expires_at.isoformat(timespec="minutes"),
    }
    if card.approvals_needed > 1:
        row["approvals"] = f"{len(card.approvals)} of {card.approvals_needed}"
    return row


async def _my_cards(ctx: ToolContext, args: MyCardsArgs) -> Result:
    stmt = (
        select(ProposalRow)
        .where(
            ProposalRow.tenant_id == ctx.caller.tenantid,
            ProposalRow.status == CardStatus.PENDING.value,
            ProposalRow.expires_at > ctx.now,
        )
        .order_by(ProposalRow.created_at)
    )
    cards = [CardRecord.of(row) for row in await ctx.session.scalars(stmt)]
    me, tenant = ctx.caller.userid, ctx.caller.tenantid
    for_me = [c for c in cards if c.issued_to_person(me, tenant) and not c.approved_by(me)]
    asked = [c for c in cards if c.userid == me and c not in for_me]
    shown = [*for_me, *asked]
    askers = {card.userid for card in shown}
    people = await ctx.session.execute(select(Person.id, Person.name).where(Person.id.in_(askers)))
    names = {row.id: row.name for row in people}
    rows = [_row(card, ctx, names) for card in shown]
    return Result(
        rows=rows,
        count=len(rows),
        scope=f"{len(for_me)} waiting for you, {len(asked)} you asked for waiting for others",
        note="To approve, reject or withdraw one, press its button on the card.",
    )


# What a card's state means to whoever asked for it, in words an agent can act on.
_STATES = {
    CardStatus.PENDING: "pending",
    CardStatus.EXECUTING: "running",
    CardStatus.DONE: "done",
    CardStatus.FAILED: "failed",
    CardStatus.REJECTED: "not approved",
    CardStatus.EXPIRED: "expired",
    CardStatus.WITHDRAWN: "withdrawn",
    CardStatus.SUPERSEDED: "replaced",
    CardStatus.INTERRUPTED: "interrupted",
    CardStatus.UNKNOWN: "outcome unknown",
}


async def _card_status(ctx: ToolContext, args: CardStatusArgs) -> Result:
    """One card's state, for its asker, the people it is issued to and the merchant's owners."""
    row = await ctx.session.scalar(
        select(ProposalRow).where(
            ProposalRow.id == args.card_id, ProposalRow.tenant_id == ctx.caller.tenantid
        )
    )
    card = CardRecord.of(row) if row is not None else None
    me = ctx.caller.userid
    if card is None or not (
        card.userid == me
        or card.issued_to_person(me, ctx.caller.tenantid)
        or ctx.caller.role is Role.OWNER
    ):
        raise NotFoundError(f"No card {args.card_id} of yours was found at this merchant.")
    status = card.status
    if status is CardStatus.PENDING and card.expires_at <= ctx.now:
        status = CardStatus.EXPIRED
    shown: dict[str, Any] = {
        "card_id": card.card_id,
        "status": _STATES[status],
        "summary": card.summary,
    }
    if status is CardStatus.PENDING:
        shown["waiting_for"] = [i.name for i in card.waiting_for]
        shown["approvals"] = f"{len(card.approvals)} of {card.approvals_needed}"
        shown["expires_at"] = card.expires_at.isoformat(timespec="seconds")
    elif status is CardStatus.EXPIRED:
        shown["expired_at"] = card.expires_at.isoformat(timespec="seconds")
    else:
        if card.decided_by_name:
            shown["decided_by"] = card.decided_by_name
        if card.decided_at:
            shown["decided_at"] = card.decided_at.isoformat(timespec="seconds")
        if status is CardStatus.DONE:
            shown["result"] = card.outcome or "done"
        elif status is CardStatus.REJECTED:
            shown["reason"] = card.reason or "no reason given"
        elif card.outcome:
            shown["reason"] = card.outcome
    return Result(rows=[shown], count=1, scope=f"card {card.card_id}")


CARD_TOOLS: list[Tool] = [
    Tool(
        name="my_cards",
        title="listing your cards",
        description="Approval cards waiting for this person, then those they asked for.",
        args=MyCardsArgs,
        handler=_my_cards,
    ),
    Tool(
        name="card_status",
        title="reading a card's status",
        description="What became of an approval card, by its id.",
        args=CardStatusArgs,
        handler=_card_status,
    ),
]
