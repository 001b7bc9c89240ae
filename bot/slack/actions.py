"""Handles Approve and Reject presses; never runs a write except through ``Registry.approve``.

Every press is acked at once and decided in a task the surface keeps. Nothing here reads the
card token: the engine verifies it, and every refusal comes back as an error whose message is
shown to the presser (privately) or, when the card itself changed (expired, failed), on the
card for everyone.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.slack import texts
from bot.slack.blocks import (
    APPROVE_ACTION,
    REASON_BLOCK,
    REASON_INPUT,
    REJECT_ACTION,
    REJECT_VIEW,
    card_id_of_block,
    reject_modal,
)
from bot.slack.home import publish_home
from bot.slack.identity import installation_of, owner_slack_user, resolve
from bot.slack.posting import show_decision
from bot.surface import Surface
from tools import Caller, Decision
from tools.errors import CardExpiredError, CountersignError, NotYourCardError

__all__ = ["Press", "register"]

log = structlog.get_logger("bot.slack.actions")

Decide = Callable[[Caller], Awaitable[Decision]]

# What a press meets when the database is unreachable: SQLAlchemy's errors once connected, the
# driver's refused or reset connection while connecting.
DATABASE_DOWN = (SQLAlchemyError, ConnectionError)


@dataclass(frozen=True, slots=True)
class Press:
    """Who pressed which card, and where to answer them privately."""

    installation: str
    user: str
    token: str
    channel: str | None
    thread_ts: str | None
    from_home: bool = False


def _press(body: dict[str, Any], context: AsyncBoltContext, token: str) -> Press:
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    message = body.get("message") or {}
    return Press(
        installation=installation_of(context),
        user=body["user"]["id"],
        token=token,
        channel=channel,
        thread_ts=message.get("thread_ts"),
        from_home=container.get("type") == "view",
    )


def register(app: AsyncApp, surface: Surface) -> None:
    async def on_approve(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        press = _press(body, context, str(action.get("value", "")))
        surface.tasks.spawn(approve(surface, client, press), name=f"approve by {press.user}")

    async def on_reject(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        press = _press(body, context, str(action.get("value", "")))
        await open_reject(
            surface, client, press, body["trigger_id"], str(action.get("block_id", ""))
        )

    async def on_reject_submit(
        ack: AsyncAck,
        body: dict[str, Any],
        view: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        meta = json.loads(view.get("private_metadata") or "{}")
        value = (view["state"]["values"].get(REASON_BLOCK) or {}).get(REASON_INPUT) or {}
        press = Press(
            installation_of(context),
            body["user"]["id"],
            str(meta.get("token", "")),
            meta.get("channel"),
            meta.get("thread_ts"),
        )
        reason = str(value.get("value") or "")
        surface.tasks.spawn(reject(surface, client, press, reason), name=f"reject by {press.user}")

    app.action(APPROVE_ACTION)(on_approve)
    app.action(REJECT_ACTION)(on_reject)
    app.view(REJECT_VIEW)(on_reject_submit)


async def approve(surface: Surface, client: AsyncWebClient, press: Press) -> None:
    """Approve: the engine runs the card once if it is the presser's; everyone sees the result."""

    async def run(caller: Caller) -> Decision:
        return await surface.registry.approve(surface.agent, press.token, caller)

    await _decide(surface, client, press, run)


async def reject(surface: Surface, client: AsyncWebClient, press: Press, reason: str) -> None:
    """Reject, with the reason from the modal; the model is told it was not done and why."""

    async def run(caller: Caller) -> Decision:
        return await surface.registry.reject(surface.agent, press.token, caller, reason)

    await _decide(surface, client, press, run)


async def open_reject(
    surface: Surface, client: AsyncWebClient, press: Press, trigger: str, block_id: str
) -> None:
    """Opens the reason modal, or tells someone else's presser at once whose card it is.

    The owner check here is a courtesy (no modal for a card that is not yours); the engine
    checks again, and authoritatively, when the rejection is submitted.
    """
    card_id = card_id_of_block(block_id)
    record = await surface.registry.card(card_id) if card_id else None
    owner = owner_slack_user(record)
    if owner is not None and owner != press.user:
        await _tell(client, press, texts.not_your_card(owner))
        return
    summary = record.summary if record else ""
    modal = reject_modal(
        token=press.token, channel=press.channel, thread_ts=press.thread_ts, summary=summary
    )
    await client.views_open(trigger_id=trigger, view=modal)


async def _decide(surface: Surface, client: AsyncWebClient, press: Press, run: Decide) -> None:
    try:
        await _decide_once(surface, client, press, run)
    except DATABASE_DOWN as unreachable:
        # With the database stopped, a press used to end in a logged traceback and silence:
        # the presser saw nothing happen and could not tell a lost press from a slow one.
        # Whatever was half-done is the engine's to settle (the claim and the write each
        # commit or roll back whole); here the person learns to press again later.
        log.warning(
            "press_failed_database",
            channel=press.channel,
            slack_user=press.user,
            error=type(unreachable).__name__,
        )
        await _tell(client, press, texts.database_unreachable())


async def _decide_once(surface: Surface, client: AsyncWebClient, press: Press, run: Decide) -> None:
    caller = await resolve(surface.directory, client, press.installation, press.user)
    if caller is None:
        await _tell(client, press, texts.not_linked())
        return
    bound = log.bind(tenant=caller.tenantid, channel=press.channel, user=caller.userid)
    try:
        decision = await run(caller)
    except NotYourCardError as refused:
        record = await surface.registry.card(refused.card_id) if refused.card_id else None
        await _tell(client, press, texts.not_your_card(owner_slack_user(record)))
        bound.info("press_refused", card_id=refused.card_id, why="not_your_card")
        return
    except CardExpiredError as expired:
        await _expired(surface, client, press, expired)
        bound.info("press_refused", card_id=expired.card_id, why="expired")
        return
    except CountersignError as refused:
        await _tell(client, press, texts.refused(str(refused)))
        bound.info(
            "press_refused", card_id=getattr(refused, "card_id", None), why=type(refused).__name__
        )
        return
    bound.info("card_decided", card_id=decision.card.card_id, status=str(decision.card.status))
    await show_decision(surface, client, decision.card)
    if press.from_home:
        await publish_home(surface, client, caller=caller, slack_user=press.user)


async def _expired(
    surface: Surface, client: AsyncWebClient, press: Press, expired: CardExpiredError
) -> None:
    """An expired card says so on the card itself, for everyone; the presser learns it privately too."""
    record = await surface.registry.card(expired.card_id) if expired.card_id else None
    if record is not None and record.surface:
        await show_decision(surface, client, record)
    await _tell(client, press, texts.refused(str(expired)))


async def _tell(client: AsyncWebClient, press: Press, text: str) -> None:
    """A private answer: ephemeral in the channel, or a DM when the press came from the App Home."""
    if press.channel:
        await client.chat_postEphemeral(
            channel=press.channel, user=press.user, text=text, thread_ts=press.thread_ts
        )
    else:
        await client.chat_postMessage(channel=press.user, text=text, parse="none")
    log.info("told_privately", channel=press.channel, slack_user=press.user)
