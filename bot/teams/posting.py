"""Posts in a Teams conversation: answers, fresh cards, and a decided card's update; never decides one.

A card is posted as the status everyone sees, with a refresh for the person it is for; where it
went (conversation, message id, service URL, the issuee's ``29:`` id) is recorded on the card,
so whichever process decides it can update it. A decision updates the message for everyone
(``PUT …/activities/{id}``), posts the audit reply the conversation sees, and tells the model.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import structlog
from microsoft_agents.activity import Activity, ActivityTypes, Attachment, TextFormatTypes
from microsoft_agents.hosting.core import TurnContext

from bot import wording
from bot.cardspec import clip, of_proposal, of_record
from bot.surface import Surface
from bot.teams import texts
from bot.teams.adaptive import CARD_TYPE, render
from bot.teams.identity import PLATFORM, Who
from tools import Caller, CardRecord, CardStatus, Proposal

__all__ = ["card_activity", "conversation_key", "post_card", "say", "show_decision"]

log = structlog.get_logger("bot.teams.posting")
Json = dict[str, Any]


def conversation_key(activity: Activity, tenant: str) -> str:
    """One conversation per Teams chat or channel reply chain (its id carries ``;messageid=``)."""
    conversation = activity.conversation.id if activity.conversation else ""
    return f"teams:{tenant}:{conversation}"


def card_activity(card: Json, summary: str, *, activity_id: str | None = None) -> Activity:
    """A message carrying one Adaptive Card; ``summary`` is the notification's text."""
    return Activity(
        type=ActivityTypes.message,
        id=activity_id,
        summary=clip(summary, 250),
        attachments=[Attachment(content_type=CARD_TYPE, content=card)],
    )


async def say(context: TurnContext, text: str) -> str | None:
    """A plain-text reply in the conversation (Teams reads no markdown in it); its message id."""
    response = await context.send_activity(
        Activity(type=ActivityTypes.message, text=text, text_format=TextFormatTypes.plain)
    )
    return response.id if response else None


async def post_card(
    surface: Surface,
    context: TurnContext,
    proposal: Proposal,
    *,
    caller: Caller,
    sender: Who,
    conversation: str,
) -> None:
    """Posts a fresh card (status for everyone, buttons by refresh for the issuee) and records where."""
    spec = of_proposal(proposal, issued_to=caller.name or sender.name)
    card = render(spec, view="everyone", issuee=sender.address)
    response = await context.send_activity(card_activity(card, spec.notification))
    activity = context.activity
    where = {
        "platform": PLATFORM,
        "tenant": sender.tenant,
        "service_url": activity.service_url,
        "conversation_id": activity.conversation.id if activity.conversation else None,
        "activity_id": response.id if response else None,
        "user": sender.address,
        "aad": sender.aad,
        "issued_to": spec.issued_to,
        "conversation": conversation,
        # Kept so a refresh can give the issuee the buttons again; useless to anyone else.
        "token": proposal.card,
    }
    await surface.registry.cards.attach_surface(proposal.card_id, where)
    log.info(
        "card_posted",
        tenant=caller.tenantid,
        conversation=where["conversation_id"],
        user=caller.userid,
        card_id=proposal.card_id,
    )


def decided_card(record: CardRecord, *, notice: str | None = None) -> Json:
    """The card as everyone sees it now (decided, expired or still pending)."""
    where = record.surface or {}
    spec = of_record(record, token=str(where.get("token") or ""), issued_to=where.get("issued_to"))
    return render(spec, view="everyone", issuee=where.get("user"), notice=notice)


async def show_decision(surface: Surface, context: TurnContext, record: CardRecord) -> Json:
    """Updates the card for everyone, posts the audit reply, tells the model; returns the card."""
    where = record.surface or {}
    card = decided_card(record)
    if where.get("platform") != PLATFORM or not where.get("activity_id"):
        return card
    await _update(context, record, card, str(where["activity_id"]))
    if record.status is not CardStatus.EXPIRED:
        await _audit(context, record)
    note = wording.conversation_note(
        str(record.status),
        record.summary,
        record.decided_by_name or "Someone",
        record.reason,
        record.outcome,
    )
    if where.get("conversation"):
        await surface.assistant.record(conversation=str(where["conversation"]), text=note)
    return card


async def _update(context: TurnContext, record: CardRecord, card: Json, activity_id: str) -> None:
    text = wording.decided_text(str(record.status), record.summary, record.decided_by_name or "")
    try:
        await context.update_activity(card_activity(card, text, activity_id=activity_id))
    except aiohttp.ClientError as failed:
        log.error("card_update_failed", card_id=record.card_id, error=type(failed).__name__)
        return
    log.info(
        "card_updated",
        tenant=record.tenantid,
        user=record.decided_by,
        card_id=record.card_id,
        status=str(record.status),
    )


async def _audit(context: TurnContext, record: CardRecord) -> None:
    text = texts.audit_text(
        str(record.status),
        summary=record.summary,
        by=record.decided_by_name or "",
        reason=record.reason,
        outcome=record.outcome,
    )
    try:
        await say(context, text)
    except aiohttp.ClientError as failed:
        log.error("audit_post_failed", card_id=record.card_id, error=type(failed).__name__)
        return
    log.info("audit_posted", tenant=record.tenantid, user=record.decided_by, card_id=record.card_id)
