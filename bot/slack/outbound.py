"""Sends a card's Slack messages and keeps them current; never decides what they say or who gets one.

What ``SlackAdapter`` does with the Web API once the core has decided: a card's copy updated in
place (posted anew when its message is gone), the decision's audit lines, a private copy of a
card in a person's DM with the app. Every message goes out with ``parse="none"`` and
no unfurls: what the data says is what the channel sees, and a link in a product name grows no
preview. Slack's errors here are logged and swallowed: a missing update, copy or audit line is
better than a half-told story. An update or audit line Slack failed on its side is reported
back, so the decision is shown again later (``tools.keeping.showing``).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.cards import several
from bot.cards.card import Card
from bot.placement import Placement, SlackPlacement
from bot.slack import rich, texts
from bot.slack.blocks import Block, rich_text
from bot.slack.cards import card_message

__all__ = [
    "POST_OPTIONS",
    "edit_message",
    "post_audit",
    "replace_list",
    "send_copy",
    "slack_error",
    "update_card",
]

POST_OPTIONS: dict[str, Any] = {"parse": "none", "unfurl_links": False, "unfurl_media": False}
# chat.update's answers for a card message that no longer exists: the card is posted anew.
_GONE = frozenset({"message_not_found", "channel_not_found"})
# Slack's own failures, which a later try may not meet: a decision they kept from showing is
# shown again later. Any other refusal (an archived channel, say) would refuse every try.
_PASSING = frozenset(
    {"internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited"}
)
log = structlog.get_logger("bot.slack.outbound")


async def replace_list(
    url: str, *, text: str, blocks: list[Block], session: aiohttp.ClientSession | None = None
) -> bool:
    """Replaces the private message a ``response_url`` answered with; whether Slack took it.

    Slack takes such a URL for 30 minutes and five uses, then answers 404 (``expired_url``,
    ``used_url``): logged and left, since the list is only a view of cards whose own copies
    already tell the truth.
    """
    try:
        sent = await AsyncWebhookClient(url, session=session).send(
            text=text, blocks=blocks, replace_original=True
        )
    except (aiohttp.ClientError, TimeoutError) as failed:
        log.warning("list_unreachable", error=type(failed).__name__)
        return False
    if sent.status_code != HTTPStatus.OK:
        log.info("list_url_refused", status=sent.status_code, said=str(sent.body)[:80])
        return False
    return True


def slack_error(failed: SlackApiError) -> str:
    """Slack's error code (``channel_not_found``), or the HTTP status when there is none."""
    data = failed.response.data
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"http {failed.response.status_code}"


def _lasting(failed: SlackApiError) -> bool:
    """Whether Slack's refusal would meet every later try too (not its own failure)."""
    return slack_error(failed) not in _PASSING and failed.response.status_code < 500


async def edit_message(
    client: AsyncWebClient, channel: str, ts: str, *, text: str, blocks: list[Block] | None
) -> bool:
    """Replaces a message's words in place; False when Slack refused (logged): an answer that
    keeps its old words is less wrong than a decision that is not shown."""
    try:
        await client.chat_update(channel=channel, ts=ts, text=text, parse="none", blocks=blocks)
    except SlackApiError as failed:
        log.warning("answer_edit_failed", channel=channel, ts=ts, error=slack_error(failed))
        return False
    log.info("answer_edited", channel=channel, ts=ts)
    return True


def _reader_approves(card: Card, placement: SlackPlacement) -> bool:
    """Whether the copy's one reader (a card asked for in their DM) may approve it."""
    person = placement.person
    return person is not None and card.lead.issued_to_person(person, card.tenantid)


async def update_card(
    client: AsyncWebClient, card: Card, placement: SlackPlacement
) -> Placement | bool:
    """Shows the card as it stands on one copy; returns the copy's new place if posted anew,
    else whether it is shown (or could never be: False only when a later try may do better)."""
    # A private copy (``conversation`` None: it belongs to no conversation with the model)
    # is only ever seen by someone the card is issued to.
    text, blocks = card_message(
        card,
        token=placement.token,
        for_user=placement.user,
        private=placement.conversation is None,
        approved=placement.approved_by_reader(*card.live),
        reader_approves=_reader_approves(card, placement),
    )
    try:
        await client.chat_update(
            channel=placement.channel, ts=placement.ts, text=text, parse="none", blocks=blocks
        )
    except SlackApiError as failed:
        error = slack_error(failed)
        if error in _GONE:
            return await _post_anew(client, card, placement, text=text, blocks=blocks, error=error)
        log.error(
            "card_update_failed", channel=placement.channel, card_id=card.card_id, error=error
        )
        return _lasting(failed)
    log.info(
        "card_updated",
        tenant=card.tenantid,
        channel=placement.channel,
        user=card.lead.decided_by,
        card_id=card.card_id,
        status=str(card.lead.status),
    )
    return True


async def _post_anew(
    client: AsyncWebClient,
    card: Card,
    placement: SlackPlacement,
    *,
    text: str,
    blocks: list[Block],
    error: str,
) -> Placement | bool:
    """Posts the card as it stands at the channel's top level; returns its new place.

    For a card chat.update cannot find (message_not_found, after a restart that lost the
    workspace or a person deleting it): otherwise the press is decided but nobody sees it, and
    the audit line replies into a thread that does not exist. When the channel itself is gone
    (channel_not_found), the card goes to the person it was issued to, in their DM.
    """
    channel = placement.user if error == "channel_not_found" and placement.user else None
    try:
        response = await client.chat_postMessage(
            channel=channel or placement.channel, text=text, blocks=blocks, **POST_OPTIONS
        )
    except SlackApiError as failed:
        log.error(
            "card_update_failed",
            channel=placement.channel,
            card_id=card.card_id,
            error=f"{error}, then {slack_error(failed)}",
        )
        return _lasting(failed)
    where = str(response.get("channel") or placement.channel)
    log.info(
        "card_posted_anew",
        tenant=card.tenantid,
        channel=where,
        card_id=card.card_id,
        was=error,
    )
    return placement.model_copy(
        update={"channel": where, "ts": str(response["ts"]), "thread_ts": None}
    )


async def post_audit(
    client: AsyncWebClient, card: Card, placement: SlackPlacement, *, audit: str | None
) -> bool:
    """Posts the card's decision in its thread and in the ``audit`` channel when set; False
    when Slack failed a post in a way a later try may not meet.

    The line is rich_text, its push text the same words escaped: the audit line was mrkdwn
    alone, and a reason or a name holding ``*``, ``_`` or ``~`` could not be shown as typed.
    """
    text, line = _audit(card)
    blocks = [rich_text([line], "audit")]
    posted = True
    for target in _audit_targets(placement, audit):
        try:
            await client.chat_postMessage(text=text, blocks=blocks, **target, **POST_OPTIONS)
        except SlackApiError as failed:
            log.error(
                "audit_post_failed",
                channel=target["channel"],
                card_id=card.card_id,
                error=slack_error(failed),
            )
            posted = posted and _lasting(failed)
            continue
        log.info(
            "audit_posted",
            tenant=card.tenantid,
            channel=target["channel"],
            user=card.lead.decided_by,
            card_id=card.card_id,
        )
    return posted


def _audit(card: Card) -> tuple[str, rich.Line]:
    """The decision's line as push text and as typed: a card's own, or one line for all the
    writes of a card of several (the core's words)."""
    record = card.single
    if record is None:
        by = next((c.decided_by_name for c in card.items if c.decided_by_name), "") or ""
        titles = [(str(c.status), c.summary, c.outcome) for c in card.items]
        mark = several.batch_mark([status for status, _, _ in titles])
        return texts.batch_audit(several.audit_text(by, titles), mark)
    about: dict[str, Any] = {
        "summary": record.summary,
        "by": record.decided_by_name or "",
        "standing": record.standing,
        "reason": record.reason,
        "outcome": record.outcome,
    }
    status = str(record.status)
    return texts.audit_text(status, **about), texts.audit_line(status, **about)


def _audit_targets(placement: SlackPlacement, audit: str | None) -> list[dict[str, Any]]:
    """The card's thread (broadcast to the channel), and the audit channel when set: the
    workspace's own (``/countersign audit here``), else ``COUNTERSIGN_AUDIT_CHANNEL``."""
    thread = placement.thread_ts
    targets: list[dict[str, Any]] = [
        {"channel": placement.channel, "thread_ts": thread, "reply_broadcast": bool(thread)}
    ]
    if audit and audit != placement.channel:
        targets.append({"channel": audit})
    return targets


async def send_copy(
    client: AsyncWebClient,
    card: Card,
    user: str,
    *,
    installation: str,
    token: str,
    push: str,
) -> Placement | None:
    """Posts the card, with Approve and Reject, in the person's DM with the app.

    ``push`` is the text their phone shows (what, and who asked), so it must say it alone.
    """
    _, blocks = card_message(card, token=token, for_user=user, private=True)
    try:
        channel, ts = await _post_in_dm(client, user, text=texts.notification(push), blocks=blocks)
    except SlackApiError as failed:
        log.error("copy_failed", card_id=card.card_id, slack_user=user, error=slack_error(failed))
        return None
    log.info("copy_sent", tenant=card.tenantid, card_id=card.card_id, slack_user=user)
    return _private_copy(installation, channel, ts, user=user, token=token)


async def _post_in_dm(
    client: AsyncWebClient, user: str, *, text: str, blocks: list[Block]
) -> tuple[str, str]:
    """Opens the person's DM with the app and posts there; returns its channel and ts."""
    opened = await client.conversations_open(users=user)
    channel = str(opened["channel"]["id"])
    response = await client.chat_postMessage(
        channel=channel, text=text, blocks=blocks, **POST_OPTIONS
    )
    return channel, str(response["ts"])


def _private_copy(
    installation: str, channel: str, ts: str, *, user: str, token: str
) -> SlackPlacement:
    """A DM copy's placement: its one reader, and no conversation with the model."""
    return SlackPlacement(
        team=installation, channel=channel, ts=ts, user=user, conversation=None, token=token
    )
