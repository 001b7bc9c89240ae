"""Answers people: @mentions in channels, DMs, and follow-ups in threads it is part of; never approves.

Each answer runs after the ack, in a task the surface keeps. Before any work a delivery is
claimed in the ``receipts`` table — by event id (Slack retries) and by channel+ts (a mention
arrives as both ``app_mention`` and ``message.channels``) — so it is answered once. Messages
from bots are ignored: two bots answering each other never stop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import receipts
from bot.slack import texts
from bot.slack.identity import installation_of, resolve, slack_error
from bot.slack.posting import POST_OPTIONS, post_card
from bot.surface import Surface
from tools import Caller

__all__ = ["Turn", "register"]

log = structlog.get_logger("bot.slack.events")

# Message subtypes that are a person saying something; edits, deletions, joins and the like
# are acknowledged and ignored.
_SPOKEN = {None, "thread_broadcast", "file_share"}
# Events the manifest subscribes to that need no answer; without a listener bolt answers 404
# and Slack retries them.
_IGNORED_EVENTS = ("app_uninstalled", "tokens_revoked")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message to answer, and where the answer goes."""

    installation: str
    channel: str
    ts: str
    thread_ts: str | None
    user: str
    text: str
    event_id: str

    @property
    def conversation(self) -> str:
        return f"{self.installation}:{self.channel}:{self.thread_ts or 'top'}"


def register(app: AsyncApp, surface: Surface, *, ignore_uninstall: bool = True) -> None:
    """Adds the event listeners; ``ignore_uninstall`` is False when OAuth handles revocations."""

    async def on_mention(
        body: dict[str, Any],
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        if _from_bot(event):
            return
        turn = _turn(body, event, context, thread=event.get("thread_ts") or event["ts"])
        surface.tasks.spawn(answer(surface, client, turn), name=f"mention {turn.ts}")

    async def on_message(
        body: dict[str, Any],
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        if event.get("subtype") not in _SPOKEN or _from_bot(event) or not event.get("user"):
            return
        thread = event.get("thread_ts")
        if event.get("channel_type") != "im" and not thread:
            return  # a channel's top level is answered only when mentioned (app_mention)
        turn = _turn(body, event, context, thread=thread)
        work = answer if event.get("channel_type") == "im" else follow_up
        surface.tasks.spawn(work(surface, client, turn), name=f"message {turn.ts}")

    async def ignore() -> None:
        return None

    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    if ignore_uninstall:
        for name in _IGNORED_EVENTS:
            app.event(name)(ignore)


def _from_bot(event: dict[str, Any]) -> bool:
    return bool(
        event.get("bot_id") or event.get("subtype") == "bot_message" or event.get("bot_profile")
    )


def _turn(
    body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, *, thread: str | None
) -> Turn:
    text = str(event.get("text") or "")
    if context.bot_user_id:
        text = re.sub(rf"<@{re.escape(context.bot_user_id)}(\|[^>]*)?>", "", text)
    return Turn(
        installation=installation_of(context),
        channel=event["channel"],
        ts=event["ts"],
        thread_ts=thread,
        user=event["user"],
        text=text.strip(),
        event_id=str(body.get("event_id", "")),
    )


async def follow_up(surface: Surface, client: AsyncWebClient, turn: Turn) -> None:
    """A reply in a channel thread: answered only when the bot is already part of the thread."""
    assert turn.thread_ts is not None
    key = receipts.thread_key(turn.installation, turn.channel, turn.thread_ts)
    if not await receipts.taken(surface.registry.db, key):
        return
    await answer(surface, client, turn)


async def answer(surface: Surface, client: AsyncWebClient, turn: Turn) -> None:
    """Claims the delivery, finds the person, runs the assistant and posts its reply and cards."""
    db, now = surface.registry.db, surface.registry.clock()
    bound = log.bind(channel=turn.channel, slack_user=turn.user, ts=turn.ts)
    if turn.event_id and not await receipts.claim(db, receipts.event_key(turn.event_id), now):
        bound.info("event_duplicate", event_id=turn.event_id)
        return
    if not await receipts.claim(db, receipts.message_key(turn.channel, turn.ts), now):
        bound.info("message_duplicate")
        return
    caller = await resolve(surface.directory, client, turn.installation, turn.user)
    if caller is None:
        await _say(client, turn, texts.not_linked())
        bound.info("answered_unlinked")
        return
    if turn.thread_ts:
        await receipts.claim(
            db, receipts.thread_key(turn.installation, turn.channel, turn.thread_ts), now
        )
    await _run(surface, client, turn, caller)


async def _run(surface: Surface, client: AsyncWebClient, turn: Turn, caller: Caller) -> None:
    bound = log.bind(tenant=caller.tenantid, channel=turn.channel, user=caller.userid)
    await _react(client, turn, add=True)
    try:
        reply = await surface.assistant.reply(
            conversation=turn.conversation, caller=caller, text=turn.text
        )
    except Exception:  # noqa: BLE001 — any model failure becomes a polite answer; logged in full
        bound.exception("assistant_failed")
        await _say(client, turn, texts.model_failed())
        return
    finally:
        await _react(client, turn, add=False)
    if reply.text:
        await _say(client, turn, texts.esc(reply.text))
    bound.info("answered", proposals=len(reply.proposals))
    place = {
        "team": turn.installation,
        "channel": turn.channel,
        "thread_ts": turn.thread_ts,
        "user": turn.user,
        "conversation": turn.conversation,
    }
    for proposal in reply.proposals:
        await post_card(surface, client, proposal, caller=caller, place=place)


async def _say(client: AsyncWebClient, turn: Turn, text: str) -> None:
    await client.chat_postMessage(
        channel=turn.channel, thread_ts=turn.thread_ts, text=text, **POST_OPTIONS
    )


async def _react(client: AsyncWebClient, turn: Turn, *, add: bool) -> None:
    """Shows the thread that work is under way; a missing reaction is never worth failing over."""
    call = client.reactions_add if add else client.reactions_remove
    try:
        await call(channel=turn.channel, timestamp=turn.ts, name=texts.HOURGLASS)
    except SlackApiError as failed:
        log.warning("reaction_failed", channel=turn.channel, error=slack_error(failed))
