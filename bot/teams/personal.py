"""Reaches one person in their 1:1 chat with the bot: a card's private copy, a notice; never decides who.

The core chooses who gets a copy (``bot.presses.copies``); this opens the chat (``Outbound``), sends it
and returns the copy's placement, so every copy is updated when the card changes. A copy Teams
refuses (the app not installed for the person, a connector error) is logged and returns None:
the card stays live where it was posted.
"""

from __future__ import annotations

import structlog

from bot.cards.card import Card
from bot.placement import Placement, TeamsPlacement
from bot.teams import texts
from bot.teams.copy_view import card_activity, decided_card, plain
from bot.teams.outbound import FAILURES, Outbound

__all__ = ["notify", "send_copy"]

log = structlog.get_logger("bot.teams.personal")


async def notify(out: Outbound, user: str, text: str, *, tenant: str) -> bool:
    """A plain message in the person's 1:1 chat with the bot (``user``: their AAD object id);
    False when Teams refused it (logged)."""
    try:
        chat = await out.open_personal(user, tenant)
        await out.send(chat, plain(texts.reply(text)))
    except FAILURES as failed:
        log.error("notify_failed", person=user, error=type(failed).__name__)
        return False
    log.info("notified", person=user)
    return True


async def send_copy(
    out: Outbound, card: Card, user: str, *, tenant: str, token: str, push: str
) -> Placement | None:
    """The card, with the buttons, in a 1:1 chat with the person (``user``: AAD object id).

    Their ``29:`` id, looked up in the new chat, is the copy's refresh: a copy sent with
    Approve still showed it to a manager who had since approved (her press then refused
    as "already approved"); refreshed, Teams asks for her view and she sees the status.
    """
    try:
        chat, placement = await _personal_copy(out, user, tenant=tenant, token=token)
        sent = await out.send(chat, card_activity(decided_card(card, placement), push))
    except FAILURES as failed:
        log.error("copy_failed", card_id=card.card_id, person=user, error=type(failed).__name__)
        return None
    log.info("copy_sent", card_id=card.card_id, tenant=card.tenantid, person=user)
    return placement.model_copy(update={"activity_id": sent})


async def _personal_copy(
    out: Outbound, user: str, *, tenant: str, token: str
) -> tuple[str, TeamsPlacement]:
    """Opens the person's 1:1 chat; returns it and the copy it will hold (no message yet)."""
    chat = await out.open_personal(user, tenant)
    address, name = await out.member(chat, user) or (None, None)
    # No model conversation: the decision is told where the card was asked, once.
    return chat, TeamsPlacement(
        tenant=tenant,
        service_url=out.service_url,
        conversation_id=chat,
        user=address,
        aad=user,
        issued_to=name or None,
        token=token,
    )
