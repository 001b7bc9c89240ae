"""Answers people in Teams: personal chats and @mentions in channels and group chats; never approves.

Each delivery is claimed once in the ``receipts`` table (Teams redelivers a message the bot was
slow to answer), the sender is resolved to a person, and the assistant runs as them. The answer
and any cards go back into the same chat or channel reply chain.
"""

from __future__ import annotations

import structlog
from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.hosting.core import TurnContext

from bot import receipts
from bot.surface import Surface
from bot.teams import texts
from bot.teams.identity import resolve, who
from bot.teams.posting import conversation_key, post_card, say

__all__ = ["answer", "is_spoken", "receipt_key"]

log = structlog.get_logger("bot.teams.turns")


def is_spoken(activity: Activity) -> bool:
    """A person said something: a message with text (a card's Action.Submit carries a value)."""
    return activity.type == ActivityTypes.message and bool(activity.text) and activity.value is None


def receipt_key(activity: Activity) -> str:
    conversation = activity.conversation.id if activity.conversation else ""
    return f"teams:msg:{conversation}:{activity.id}"


async def answer(surface: Surface, context: TurnContext) -> None:
    """Claims the delivery, finds the person, runs the assistant and posts its reply and cards."""
    activity = context.activity
    db, now = surface.registry.db, surface.registry.clock()
    if not await receipts.claim(db, receipt_key(activity), now):
        log.info("message_duplicate", activity=activity.id)
        return
    sender = who(activity)
    caller = await resolve(surface.directory, context) if sender else None
    if sender is None or caller is None:
        await say(context, texts.not_linked())
        log.info("answered_unlinked", activity=activity.id)
        return
    bound = log.bind(tenant=caller.tenantid, user=caller.userid, installation=sender.tenant)
    conversation = conversation_key(activity, sender.tenant)
    await context.send_activity(Activity(type=ActivityTypes.typing))
    try:
        reply = await surface.assistant.reply(
            conversation=conversation, caller=caller, text=(activity.text or "").strip()
        )
    except Exception:  # noqa: BLE001 — any model failure becomes a polite answer; logged in full
        bound.exception("assistant_failed")
        await say(context, texts.model_failed())
        return
    if reply.text:
        await say(context, texts.reply(reply.text))
    bound.info("answered", proposals=len(reply.proposals))
    for proposal in reply.proposals:
        await post_card(
            surface, context, proposal, caller=caller, sender=sender, conversation=conversation
        )
