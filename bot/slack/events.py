"""Takes Slack's message events: @mentions in channels, DMs, and follow-ups in threads it is part of; never approves.

Each message becomes a core ``Turn`` run after the ack, in the task set's turn lane
(``bot.turns.answer`` answers it; ``bot.runtime.lanes`` orders it). Its dedupe keys are the event id (Slack retries) and channel+ts (a mention arrives as both
``app_mention`` and ``message.channels``). Messages from bots are ignored: two bots answering
each other never stop.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, replace
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import turns
from bot.runtime import receipts
from bot.services import Services
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.inbound import installation_of

__all__ = ["answerable", "follow_up", "keep", "kept_turn", "queue", "register", "turn_of"]

# Message subtypes that are a person saying something; edits, deletions, joins and the like
# are acknowledged and ignored.
_SPOKEN = {None, "thread_broadcast", "file_share"}
# Events the manifest subscribes to that need no answer; without a listener bolt answers 404
# and Slack retries them.
_IGNORED_EVENTS = ("app_uninstalled", "tokens_revoked")


Listener = Callable[..., Awaitable[None]]
Work = Coroutine[Any, Any, None]


def register(app: AsyncApp, services: Services, *, ignore_uninstall: bool = True) -> None:
    """Adds the event listeners; ``ignore_uninstall`` is False when OAuth handles revocations."""
    app.event("app_mention")(_on_mention(services))
    app.event("message")(_on_message(services))
    if ignore_uninstall:
        for name in _IGNORED_EVENTS:
            app.event(name)(_ignore)


def _on_mention(services: Services) -> Listener:
    """An @mention: always answered, in the thread it starts or is part of."""

    async def on_mention(
        body: dict[str, Any],
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        if _from_bot(event):
            return
        where, turn = turn_of(body, event, context, thread=event.get("thread_ts") or event["ts"])
        turn = await keep(services, where, turn)
        adapter = SlackAdapter(client, where, audit_channel=services.audit_channel)
        typing = turns.Typing(adapter)
        work = turns.answer(services, adapter, turn, typing=typing)
        queue(services, turn, typing, work=work, show=typing.on, name=f"mention {event['ts']}")

    return on_mention


def _on_message(services: Services) -> Listener:
    """A message: answered in a DM, or in a channel thread the bot is already part of."""

    async def on_message(
        body: dict[str, Any],
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        if not answerable(event):
            return
        where, turn = turn_of(body, event, context, thread=event.get("thread_ts"))
        dm = event.get("channel_type") == "im"
        if dm:
            turn = await keep(services, where, turn)
        adapter = SlackAdapter(client, where, audit_channel=services.audit_channel)
        typing = turns.Typing(adapter)
        if dm:
            work, show = turns.answer(services, adapter, turn, typing=typing), typing.on
        else:
            work = follow_up(services, adapter, turn, typing=typing)
            show = partial(_typing_if_ours, services, adapter, typing)
        queue(services, turn, typing, work=work, show=show, name=f"message {event['ts']}")

    return on_message


async def _ignore() -> None:
    return None


def answerable(event: dict[str, Any]) -> bool:
    """A person saying something in a DM or in a thread."""
    if event.get("subtype") not in _SPOKEN or _from_bot(event) or not event.get("user"):
        return False
    # A channel's top level is answered only when mentioned (app_mention).
    return event.get("channel_type") == "im" or bool(event.get("thread_ts"))


def queue(
    services: Services,
    turn: turns.Turn,
    typing: turns.Typing,
    *,
    work: Work,
    show: Callable[[], Work],
    name: str,
) -> None:
    """Runs ``work`` in the turn's conversation lane, with its typing indicator armed."""
    # Shown at once when the turn has to wait for a slot; otherwise only if the answer is
    # not out within ``typing_after`` of the message arriving (a slow model).
    typing.arm(services.tasks, after=services.typing_after, since=turn.arrived, show=show)
    services.tasks.turn(work, name=name, conversation=turn.conversation, queued=show)


async def keep(services: Services, where: Where, turn: turns.Turn) -> turns.Turn:
    """Keeps a message to answer in the inbox before its ack; the turn, knowing it was kept.

    Mentions and DMs, each always answered. A reply in a channel thread is answered only when
    the thread is the bot's, which the ack does not read; it is not kept, and a process dying
    before answering one leaves it unanswered.
    """
    key = turn.receipts[-1]  # the message's own key: the same for every event it arrives as
    said = asdict(turn)
    del said["arrived"]  # this process's clock: the turn answered again starts its own
    message = {"where": asdict(where), "turn": said}
    await services.inbox.keep(
        key, platform="slack", installation=turn.installation, message=message
    )
    return replace(turn, kept=key)


def kept_turn(message: dict[str, Any]) -> tuple[Where, turns.Turn]:
    """Where a kept message came from, and its turn, as ``keep`` stored them."""
    said = dict(message["turn"])
    said["receipts"], said["marks"] = tuple(said["receipts"]), tuple(said["marks"])
    return Where(**message["where"]), turns.Turn(**said)


def _from_bot(event: dict[str, Any]) -> bool:
    return bool(
        event.get("bot_id") or event.get("subtype") == "bot_message" or event.get("bot_profile")
    )


def turn_of(
    body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, *, thread: str | None
) -> tuple[Where, turns.Turn]:
    """Where the message came from, and the turn that answers it."""
    text = str(event.get("text") or "")
    if context.bot_user_id:
        text = re.sub(rf"<@{re.escape(context.bot_user_id)}(\|[^>]*)?>", "", text)
    installation, channel, ts = installation_of(context), str(event["channel"]), str(event["ts"])
    keys = [receipts.message_key(channel, ts)]
    if body.get("event_id"):
        keys.insert(0, receipts.event_key(str(body["event_id"])))
    where = Where(installation, str(event["user"]), channel=channel, thread_ts=thread, ts=ts)
    turn = turns.Turn(
        installation=installation,
        user=where.user,
        text=text.strip(),
        conversation=f"{installation}:{channel}:{thread or 'top'}",
        receipts=tuple(keys),
        marks=(receipts.thread_key(installation, channel, thread),) if thread else (),
        # In a Slack Connect channel the writer's own workspace, which may not be ours. Only
        # the request's word: it reaches a person already linked, and never links anyone
        # (bot.identity asks Slack's profile before a link).
        user_team=event.get("user_team") or event.get("team"),
    )
    return where, turn


async def follow_up(
    services: Services,
    adapter: SlackAdapter,
    turn: turns.Turn,
    *,
    typing: turns.Typing | None = None,
) -> None:
    """A reply in a channel thread: answered only when the bot is already part of the thread."""
    if await _ours(services, adapter):
        await turns.answer(services, adapter, turn, typing=typing)
    elif typing is not None:
        await typing.off()  # not ours: never shown, and its timer goes now


async def _typing_if_ours(services: Services, adapter: SlackAdapter, typing: turns.Typing) -> None:
    """Shows a waiting follow-up as seen only in a thread the bot answers in, not in every thread."""
    if await _ours(services, adapter):
        await typing.on()


async def _ours(services: Services, adapter: SlackAdapter) -> bool:
    where = adapter.where
    assert where.channel is not None
    assert where.thread_ts is not None
    key = receipts.thread_key(where.installation, where.channel, where.thread_ts)
    return await receipts.taken(services.db, key)
