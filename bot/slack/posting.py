"""Posts cards and shows their fate in Slack: the card in place, the audit line, the model's note.

Never decides a card; it shows what the engine decided. Every message goes out with
``parse="none"`` and no unfurls: what the data says is what the channel sees, and a link in a
product name does not grow a preview.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import texts
from bot.slack.blocks import CardView, decided_blocks, pending_blocks
from bot.slack.identity import PLATFORM, owner_slack_user, slack_error
from bot.surface import Surface
from tools import Caller, CardRecord, CardStatus, Proposal

__all__ = ["POST_OPTIONS", "Place", "post_card", "show_decision"]

POST_OPTIONS: dict[str, Any] = {"parse": "none", "unfurl_links": False, "unfurl_media": False}
log = structlog.get_logger("bot.slack.posting")

Place = dict[str, Any]


async def post_card(
    surface: Surface, client: AsyncWebClient, proposal: Proposal, *, caller: Caller, place: Place
) -> None:
    """Posts a fresh card where it was asked for and records where, so any process can update it.

    ``place`` holds team, channel, thread_ts, the asker's Slack user and the conversation key.
    """
    view = CardView.of_proposal(proposal)
    response = await client.chat_postMessage(
        channel=place["channel"],
        thread_ts=place.get("thread_ts"),
        text=texts.card_text(proposal.summary, caller.name or "You"),
        blocks=pending_blocks(view, for_user=place.get("user")),
        **POST_OPTIONS,
    )
    # The token is kept beside the card so the App Home and /countersign can show the same
    # buttons later; it is useless to anyone but the person it was issued to.
    where = {"platform": PLATFORM, **place, "ts": response["ts"], "token": proposal.card}
    await surface.registry.cards.attach_surface(proposal.card_id, where)
    log.info(
        "card_posted",
        tenant=caller.tenantid,
        channel=place["channel"],
        user=caller.userid,
        card_id=proposal.card_id,
    )


async def show_decision(surface: Surface, client: AsyncWebClient, record: CardRecord) -> None:
    """Updates the card in place, posts the audit line the channel sees, and tells the model."""
    where = record.surface or {}
    if where.get("platform") != PLATFORM:
        return
    await _update_card(client, record, where)
    if record.status is not CardStatus.EXPIRED:
        await _post_audit(surface, client, record, where)
    note = texts.conversation_note(
        str(record.status),
        record.summary,
        record.decided_by_name or "Someone",
        record.reason,
        record.outcome,
    )
    if where.get("conversation"):
        await surface.assistant.record(conversation=str(where["conversation"]), text=note)


async def _update_card(client: AsyncWebClient, record: CardRecord, where: Place) -> None:
    owner = owner_slack_user(record)
    text = texts.decided_text(str(record.status), record.summary, record.decided_by_name or "")
    try:
        await client.chat_update(
            channel=where["channel"],
            ts=where["ts"],
            text=text,
            parse="none",
            blocks=decided_blocks(record, decided_by_slack=owner),
        )
    except SlackApiError as failed:
        log.error(
            "card_update_failed",
            channel=where["channel"],
            card_id=record.card_id,
            error=slack_error(failed),
        )
        return
    log.info(
        "card_updated",
        tenant=record.tenantid,
        channel=where["channel"],
        user=record.decided_by,
        card_id=record.card_id,
        status=str(record.status),
    )


async def _post_audit(
    surface: Surface, client: AsyncWebClient, record: CardRecord, where: Place
) -> None:
    text = texts.audit_text(
        str(record.status),
        summary=record.summary,
        by=record.decided_by_name or "",
        slack_user=owner_slack_user(record),
        reason=record.reason,
        outcome=record.outcome,
    )
    thread = where.get("thread_ts")
    targets: list[dict[str, Any]] = [
        {"channel": where["channel"], "thread_ts": thread, "reply_broadcast": bool(thread)}
    ]
    if surface.audit_channel and surface.audit_channel != where["channel"]:
        targets.append({"channel": surface.audit_channel})
    for target in targets:
        try:
            await client.chat_postMessage(text=text, **target, **POST_OPTIONS)
        except SlackApiError as failed:
            log.error(
                "audit_post_failed",
                channel=target["channel"],
                card_id=record.card_id,
                error=slack_error(failed),
            )
            continue
        log.info(
            "audit_posted",
            tenant=record.tenantid,
            channel=target["channel"],
            user=record.decided_by,
            card_id=record.card_id,
        )
