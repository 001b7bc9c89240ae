"""Answers ``/countersign``: ``help`` and the person's waiting cards, privately; never decides.

The answer goes to the command's ``response_url`` as an ephemeral message, so nobody else in
the channel sees another person's queue.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.slack import texts
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import pending_list
from bot.slack.home import pending_cards
from bot.slack.inbound import installation_of
from bot.surface import Surface

__all__ = ["COMMAND", "register"]

COMMAND = "/countersign"
log = structlog.get_logger("bot.slack.commands")


def register(app: AsyncApp, surface: Surface) -> None:
    async def on_command(
        ack: AsyncAck,
        command: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
        respond: AsyncRespond,
    ) -> None:
        await ack()
        installation, user = installation_of(context), str(command["user_id"])
        word = str(command.get("text") or "").strip().lower()
        surface.tasks.spawn(
            answer(surface, client, respond, installation=installation, user=user, word=word),
            name=f"command {user}",
        )

    app.command(COMMAND)(on_command)


async def answer(
    surface: Surface,
    client: AsyncWebClient,
    respond: AsyncRespond,
    *,
    installation: str,
    user: str,
    word: str,
) -> None:
    """``help`` (or anything unknown) explains; ``pending`` or nothing lists the person's cards."""
    if word not in ("", "pending", "list"):
        await respond(text=texts.HELP, response_type="ephemeral")
        return
    adapter = SlackAdapter(client, Where(installation, user))
    caller = await identity.resolve(surface.directory, adapter, installation, user)
    if isinstance(caller, str):
        await respond(text=identity.tell_unresolved(adapter, caller), response_type="ephemeral")
        return
    cards = await pending_cards(surface, caller)
    await respond(
        text=texts.pending_text(len(cards)) if cards else texts.pending_none(),
        blocks=pending_list(cards, for_user=user),
        response_type="ephemeral",
    )
    log.info("pending_listed", tenant=caller.tenantid, user=caller.userid, cards=len(cards))
