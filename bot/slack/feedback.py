"""Takes a thumbs up or down on one of the model's answers and records it; never touches a card.

The press arrives through the real /slack/events as a ``block_actions`` of the feedback buttons
(``bot.slack.thumbs``). It is acked at once and recorded after the ack, in the press lane: the
presser is found as for any press (a stranger is told how to get linked, and nothing is
recorded), and the audit log gets the conversation, the person, their merchant and which
answer (its channel and message ts). The presser alone is thanked, ephemerally.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.services import Services
from bot.slack import texts
from bot.slack.adapter import SlackAdapter
from bot.slack.caller import caller_of
from bot.slack.inbound import pressed_where
from bot.slack.thumbs import BAD, FEEDBACK_ACTION, GOOD
from tools import FeedbackLog

__all__ = ["register"]

log = structlog.get_logger("bot.slack.feedback")

Listener = Callable[..., Awaitable[None]]


def register(app: AsyncApp, services: Services) -> None:
    """Adds the feedback buttons' listener."""
    app.action(FEEDBACK_ACTION)(_on_feedback(services))


def _on_feedback(services: Services) -> Listener:
    async def on_feedback(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        rating = action.get("value")
        message = body.get("message") or {}
        where = pressed_where(body, context)
        if rating not in (GOOD, BAD) or not (where.channel and message.get("ts")):
            log.info("feedback_ignored", rating=rating)
            return
        adapter = SlackAdapter(client, where, audit_channel=services.audit_channel)
        presser = caller_of(context)
        work = _record(services, adapter, presser, answer=str(message["ts"]), good=rating == GOOD)
        services.tasks.press(work, name=f"feedback by {where.user}")

    return on_feedback


async def _record(
    services: Services, adapter: SlackAdapter, presser: identity.Once, *, answer: str, good: bool
) -> None:
    where = adapter.where
    assert where.channel is not None
    found = await presser.caller()
    if isinstance(found, str):
        await adapter.post_privately(identity.tell_unresolved(adapter, found))
        return
    # The key the answer's turn was kept under (``bot.slack.events.turn_of``).
    conversation = f"{where.installation}:{where.channel}:{where.thread_ts or 'top'}"
    await FeedbackLog(services.db).record(
        found,
        platform="slack",
        conversation=conversation,
        answer=f"{where.channel}/{answer}",
        good=good,
        at=services.registry.now(),
    )
    log.info("feedback_recorded", good=good, tenant=found.tenantid, person=found.userid)
    await adapter.post_privately(texts.assistant.feedback_thanks(good))
