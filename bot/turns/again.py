"""Posts a card its turn proposed and never posted, drawn from the stored card with its token signed anew; never decides one.

A turn killed after its words ("Not done yet: waiting on the card below…") and before its card
left the person waiting on a card that was stored, pending, and nowhere to be pressed. The
token its buttons carried went with the process, but a token holds only what the stored card
holds (its id, tool, asker, tenant and the digest of its arguments, ``tools.CardClaims``), so
the card is signed again here, as the engine signed it, and posted as the turn would have
(``bot.turns.posting.post``): recorded where, its copies sent. What runs on Approve is what
the stored card says, which is what the card shows.
"""

from __future__ import annotations

import structlog

from bot.adapter import Adapter
from bot.cards.card import Card, Fresh, fresh_one
from bot.services import Services
from bot.turns.posting import post
from tools import (
    Caller,
    CardRecord,
    CardStatus,
    Proposal,
    ProposalDetail,
    Routing,
)

__all__ = ["post_again"]

log = structlog.get_logger("bot.turns.again")


async def post_again(
    services: Services,
    adapter: Adapter,
    card: Card,
    *,
    caller: Caller,
    conversation: str,
    installation: str,
) -> bool:
    """Posts the card where its turn would have; whether the person has a card to press: not
    when it is decided or past its time, yes when a later card replaced it (nothing posted)."""
    now = services.registry.now()
    if any(c.status is CardStatus.SUPERSEDED for c in card.items):
        # A later card of the same target replaced it: that one is the person's to press.
        log.info("card_not_posted_again", card_id=card.card_id, why="replaced")
        return True
    if card.live != card.items or card.expires_at <= now:
        log.info("card_not_posted_again", card_id=card.card_id, why="not waiting")
        return False
    fresh = await _fresh(services, card)
    if fresh is None:
        log.info("card_not_posted_again", card_id=card.card_id, why="no batch")
        return False
    await post(
        services,
        adapter,
        fresh,
        caller=caller,
        conversation=conversation,
        installation=installation,
    )
    log.info("card_posted_again", card_id=card.card_id)
    return True


async def _fresh(services: Services, card: Card) -> Fresh | None:
    """The card as a fresh one, with a token that verifies as the one first minted would."""
    showing, lead = services.registry.showing, card.lead
    if not card.several:
        tool = await services.registry.card_tool(lead.tenantid, lead.tool)
        editable = tuple(tool.editable) if tool is not None else ()
        return fresh_one(_proposal(lead, showing.token_of(lead), editable))
    batch = await services.registry.batches.get(card.card_id)
    if batch is None:
        return None
    token = showing.batch_token_of(batch)
    return Fresh(card.card_id, token, _routing(lead), card=card)


def _proposal(record: CardRecord, token: str, editable: tuple[str, ...]) -> Proposal:
    """The proposal the engine answered its turn with, as the stored card keeps it."""
    return Proposal(
        summary=record.summary,
        details=tuple(ProposalDetail(label, value) for label, value in record.details),
        warning=record.warning,
        target=record.target,
        amount=record.amount,
        standing=record.standing,
        tally=record.tally,
        card=token,
        card_id=record.card_id,
        expires_at=record.expires_at,
        routing=_routing(record),
        editable=editable,
    )


def _routing(record: CardRecord) -> Routing:
    return Routing(
        issued_to=record.issued_to,
        approvals=record.approvals_needed,
        role=record.needed_role,
        routed=record.routed,
        kept_out=record.kept_out,
    )
