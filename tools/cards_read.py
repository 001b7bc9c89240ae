"""Lists a person's live cards: those waiting on their decision and those they asked for; never decides one.

A read tool like the merchant's reads, in the caller's tenant session. It tells the model (and
through it the person) what is waiting for them and whom their own cards wait for; deciding or
withdrawing a card stays a press on the card, by the person it is issued to.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict
from sqlalchemy import select

from tools.card_record import CardRecord, CardStatus
from tools.db import ProposalRow
from tools.people import Person
from tools.schema import Args
from tools.tool import Result, Tool, ToolContext

__all__ = ["CARD_TOOLS", "MyCardsArgs"]


class MyCardsArgs(Args):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


CARD_TOOLS: list[Tool] = [
    Tool(
        name="my_cards",
        title="listing your cards",
        description="Approval cards waiting for this person, then those they asked for.",
        args=MyCardsArgs,
        handler=_my_cards,
    )
]
