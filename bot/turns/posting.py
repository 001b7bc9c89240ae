"""Posts the cards a turn proposed, several writes as one card, and records where; never decides one.

A turn whose model proposed two or more writes (offline: "approve requests 1, 2 and 3") gets
one card listing them all, with one Approve, instead of a card per write. The cards themselves
are made exactly as alone (``tools.proposing.write``); ``tools.batches.grouping`` groups them and mints the
one token the buttons carry. Every card, of one write or several, is then posted the same way:
where the request came from, its placement recorded, the cards it replaced shown replaced, and
a private copy sent to each person it is issued to besides the asker.

More than ``MAX_ITEMS`` writes in one turn: the first twenty are one card and each further
write keeps a card of its own. Refusing them instead would throw away proposals the model has
already been told are waiting (and that are audited as proposed); a card of their own keeps
every one of them decidable, and the model's words stay true.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards import several
from bot.cards.answered import Answer
from bot.cards.card import Fresh
from bot.presses.copies import send_copies
from bot.presses.decisions import show, show_recorded
from bot.services import Services
from tools import MAX_ITEMS, Caller, Proposal
from tools.errors import ConflictError

__all__ = ["post", "post_card", "post_turn_cards"]

log = structlog.get_logger("bot.turns.posting")


async def post_turn_cards(
    services: Services,
    adapter: Adapter,
    proposals: Sequence[Proposal],
    *,
    caller: Caller,
    conversation: str,
    installation: str,
    answer: Answer | None = None,
) -> list[Proposal]:
    """Posts two or more proposals of one turn as one card; returns those left to post one by
    one (all of them when they could not be grouped)."""
    if len(proposals) < 2:
        return list(proposals)
    grouped, rest = list(proposals[:MAX_ITEMS]), list(proposals[MAX_ITEMS:])
    records = [await services.registry.card(p.card_id) for p in grouped]
    why = several.too_long_together([r for r in records if r is not None])
    if why is not None:
        # One card would have to leave out some of what its Approve sends.
        log.info("batch_not_made", why=why)
        return list(proposals)
    try:
        batch = await services.registry.batches.bundle(caller, [p.card_id for p in grouped])
    except ConflictError as refused:
        # A card decided or replaced within the same moment: each keeps its own card.
        log.info("batch_not_made", why=str(refused))
        return list(proposals)
    fresh = cards.fresh_several(batch, grouped)
    await post(
        services,
        adapter,
        fresh,
        caller=caller,
        conversation=conversation,
        installation=installation,
        answer=answer,
    )
    return rest


async def post_card(
    services: Services,
    adapter: Adapter,
    proposal: Proposal,
    *,
    caller: Caller,
    conversation: str,
    installation: str,
    answer: Answer | None = None,
) -> None:
    """Posts a fresh card of one write (see ``post``)."""
    fresh = cards.fresh_one(proposal)
    await post(
        services,
        adapter,
        fresh,
        caller=caller,
        conversation=conversation,
        installation=installation,
        answer=answer,
    )


async def post(
    services: Services,
    adapter: Adapter,
    fresh: Fresh,
    *,
    caller: Caller,
    conversation: str,
    installation: str,
    answer: Answer | None = None,
) -> None:
    """Posts a fresh card and records where, so whichever process decides it can update it.

    The cards it replaced (the same target, another write) are shown replaced; the people it
    is issued to besides the asker get a private copy of it. ``answer`` is the turn's answer
    just above it, edited once the card is decided (``bot.presses.answers``).
    """
    registry = services.registry
    placement = await adapter.post_card(fresh, caller=caller, conversation=conversation)
    above = {"reply": answer.message, "reply_said": answer.said} if answer else {}
    placement = placement.model_copy(update={"editable": fresh.editable, **above})
    recorded = await cards.attach(registry, fresh, placement)
    log.info("card_posted", card_id=fresh.card_id, tenant=caller.tenantid, user=caller.userid)
    if recorded is not None:
        # Pressed as soon as it was posted, before this record: the press found no copy to
        # draw, and the message kept live buttons and no audit line.
        await show_recorded(services, adapter, recorded)
    for replaced in fresh.replaced:
        old = await cards.load(registry, replaced)
        if old is not None:
            await show(services, adapter, old)
    routing = fresh.routing
    others = [i for i in routing.issued_to if i.userid != caller.userid] if routing else []
    card = await cards.load(registry, fresh.card_id) if others else None
    if card is not None:
        await send_copies(
            services, adapter, card, others, installation=installation, token=fresh.token
        )
