"""Takes what people write in Teams (personal chats, @mentions in channels and group chats); never approves.

Each message becomes a core ``Turn`` (``bot.turns.answer`` answers it). It runs after the HTTP response
(the Bot Framework gives up on a request after about 15 s, and a real model often takes longer),
in the task set, answering through the conversation reference as a proactive message. Its dedupe
key is the activity id: Teams redelivers a message the bot was slow to acknowledge.
"""

from __future__ import annotations

import structlog
from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.hosting.core import TurnContext

from bot import turns
from bot.services import Services
from bot.teams import texts
from bot.teams.adapter import teams_adapter
from bot.teams.identity import Who, who
from bot.teams.stream import INTERVAL

__all__ = ["answer", "conversation_key", "is_spoken", "receipt_key", "turn_of"]

log = structlog.get_logger("bot.teams.turns")


def conversation_key(conversation_id: str, tenant: str) -> str:
    """One model conversation per Teams chat or channel reply chain (its id carries ``;messageid=``)."""
    return f"teams:{tenant}:{conversation_id}"


def is_spoken(activity: Activity) -> bool:
    """A person said something: a message with text (a card's Action.Submit carries a value)."""
    return activity.type == ActivityTypes.message and bool(activity.text) and activity.value is None


def receipt_key(activity: Activity) -> str:
    conversation = activity.conversation.id if activity.conversation else ""
    return f"teams:msg:{conversation}:{activity.id}"


def turn_of(activity: Activity) -> tuple[Who | None, turns.Turn]:
    """Who wrote, and the turn that answers them (an unknown sender is told how to get linked)."""
    sender = who(activity)
    conversation = activity.conversation.id if activity.conversation else ""
    turn = turns.Turn(
        installation=sender.tenant if sender else "",
        user=sender.aad if sender else "",
        text=(activity.text or "").strip(),
        conversation=conversation_key(conversation, sender.tenant if sender else ""),
        receipts=(receipt_key(activity),),
        # The token-checked activity's tenant: the sender's, as the request states it.
        user_team=sender.tenant if sender else None,
    )
    return sender, turn


async def answer(
    services: Services,
    context: TurnContext,
    sender: Who | None,
    turn: turns.Turn,
    *,
    stream_interval: float = INTERVAL,
) -> None:
    """Runs the turn through ``context`` (a continued conversation); a failure still gets an apology.

    In a 1:1 chat the answer streams, each tool the model calls shown as the step it is on,
    ``stream_interval`` seconds at least between two updates.
    """
    adapter = await teams_adapter(services, context, sender, stream_interval=stream_interval)
    try:
        await turns.answer(services, adapter, turn, steps=adapter.step)
    except Exception:  # the person gets an apology; the log keeps the whole story
        # In the request the SDK's turn-error hook did this; a proactive turn has no hook, and
        # without this a failed turn (the database gone) answered nothing at all.
        log.exception("teams_turn_failed")
        await adapter.post(texts.working_failed())
    finally:
        await adapter.end_stream()
