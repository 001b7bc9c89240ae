"""Slack's assistant threads (the AI split view): prompts and a title when one starts, a status
while a turn works; never approves.

Bolt's ``AsyncAssistant`` middleware takes the events of assistant threads. A thread that starts
gets suggested prompts from what the person's role can do, and a title; both are sent from the
task set after the ack, and a failure is logged, never retried. Its first question becomes its
title, so History tells one thread from another. A person's message in the
thread is a turn like any DM's (``bot.slack.events``), with a ``StatusLine`` that names the step
the agent is on, from the tool it calls. A thread's channel context is not used: bolt's default
would store it by reading the thread back (``conversations.replies``, rate-limited to one call
a minute), so it is acknowledged and dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity, turns
from bot.adapter import Step
from bot.runtime import receipts
from bot.services import Services
from bot.slack import events, texts
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.caller import caller_of
from bot.slack.inbound import installation_of
from bot.slack.outbound import slack_error
from bot.slack.status import StatusLine

__all__ = ["register"]

log = structlog.get_logger("bot.slack.assistant")

Listener = Callable[..., Awaitable[None]]


def register(app: AsyncApp, services: Services) -> None:
    """Adds the assistant middleware with its listeners (before the message listeners see DMs)."""
    assistant = AsyncAssistant()
    assistant.thread_started(_on_started(services))
    assistant.thread_context_changed(_ignore_context)
    assistant.user_message(_on_user_message(services))
    app.assistant(assistant)


def _on_started(services: Services) -> Listener:
    async def on_started(
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        set_title: AsyncSetTitle,
    ) -> None:
        thread = event["assistant_thread"]
        where = Where(
            installation_of(context),
            str(thread["user_id"]),
            channel=str(thread["channel_id"]),
            thread_ts=str(thread["thread_ts"]),
        )
        adapter = SlackAdapter(client, where, audit_channel=services.audit_channel)
        work = _welcome(adapter, caller_of(context), set_suggested_prompts, set_title)
        services.tasks.spawn(work, name=f"assistant thread {where.thread_ts}")

    return on_started


async def _welcome(
    adapter: SlackAdapter,
    person: identity.Once,
    set_suggested_prompts: AsyncSetSuggestedPrompts,
    set_title: AsyncSetTitle,
) -> None:
    """Prompts for what the person's role can do (none for someone not linked), and a title."""
    where = adapter.where
    found = await person.caller()
    caller = None if isinstance(found, str) else found
    try:
        if caller is not None:
            await set_suggested_prompts(prompts=texts.assistant.prompts(caller.role))
        await set_title(texts.assistant.title(caller.name if caller else None))
    except SlackApiError as failed:
        log.warning("assistant_welcome_failed", channel=where.channel, error=slack_error(failed))
        return
    log.info("assistant_thread_started", channel=where.channel, linked=caller is not None)


async def _ignore_context() -> None:
    return None


def _on_user_message(services: Services) -> Listener:
    """A person's message in an assistant thread: a DM's turn, its steps shown as a status."""

    async def on_user_message(
        body: dict[str, Any],
        event: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        if not events.answerable(event):
            return
        thread = str(event["thread_ts"])
        where, turn = events.turn_of(body, event, context, thread=thread)
        # Kept like any DM: bolt's assistant middleware takes every DM message in a thread,
        # so these never reached the DM listener that keeps them, and a server killed after
        # the ack left them unanswered. Answered again, such a turn shows no status.
        turn = await events.keep(services, where, turn)
        status = StatusLine(client, services.tasks, channel=str(event["channel"]), thread_ts=thread)
        adapter = SlackAdapter(client, where, audit_channel=services.audit_channel, status=status)
        typing = turns.Typing(adapter)

        def step(step: Step) -> None:
            status.show(texts.assistant.status(step))

        titling = _titled(
            services, client, channel=str(event["channel"]), thread=thread, text=turn.text
        )
        services.tasks.spawn(titling, name=f"assistant title {thread}")
        work = _closing(turns.answer(services, adapter, turn, typing=typing, steps=step), status)
        events.queue(
            services, turn, typing, work=work, show=typing.on, name=f"assistant {event['ts']}"
        )

    return on_user_message


async def _titled(
    services: Services, client: AsyncWebClient, *, channel: str, thread: str, text: str
) -> None:
    """Titles the thread by its first question, once whichever process gets it (a receipt)."""
    title = texts.assistant.question_title(text)
    registry = services.registry
    if not title or not await receipts.claim(
        services.db, f"slack-title/{channel}/{thread}", registry.now()
    ):
        return
    try:
        await client.assistant_threads_setTitle(channel_id=channel, thread_ts=thread, title=title)
    except SlackApiError as failed:
        log.warning("assistant_title_failed", channel=channel, error=slack_error(failed))


async def _closing(work: Awaitable[None], status: StatusLine) -> None:
    try:
        await work
    finally:
        status.close()
