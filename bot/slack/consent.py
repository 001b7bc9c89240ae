"""Consent cards in Slack: the card in a person's DM, and their Allow or Deny; never issues a token.

The card asks whether an agent may connect as the person (``bot.cards.consent``). Its buttons
carry their own signed value, read here with the consent's own key salt: a card's Approve token
is no consent value, and a consent value approves no card. Only the person the card was sent
to, as Slack says who pressed, can answer it, once, within its 10 minutes; the message then
says what was answered, with no buttons left.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.services import Services
from bot.slack.consent_card import ALLOW_ACTION, DENY_ACTION
from bot.slack.inbound import installation_of, user_team
from bot.slack.outbound import slack_error
from bot.slack.texts import consent as words
from tools import Caller, Consents, ConsentSigner

__all__ = ["register"]

log = structlog.get_logger("bot.slack.consent")


def register(app: AsyncApp, services: Services, signer: ConsentSigner) -> None:
    """Adds the Allow and Deny listeners."""
    consents = Consents(services.db, clock=services.registry.now)

    async def on_press(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        services.tasks.press(
            _answer(consents, signer, services, body, action, context, client),
            name=f"consent press by {body['user']['id']}",
        )

    app.action(ALLOW_ACTION)(on_press)
    app.action(DENY_ACTION)(on_press)


async def _answer(  # noqa: PLR0917 (what bolt handed the listener, passed on whole)
    consents: Consents,
    signer: ConsentSigner,
    services: Services,
    body: dict[str, Any],
    action: dict[str, Any],
    context: AsyncBoltContext,
    client: AsyncWebClient,
) -> None:
    """Decides the press (only the person the card was sent to, in time) and shows the answer."""
    pressed = signer.read(str(action.get("value") or ""))
    presser = await _presser(services, client, body, context)
    decided = await consents.decide(pressed, presser) if pressed and presser else None
    log.info("consent_pressed", decided=decided is not None, action=action.get("action_id"))
    if decided is None:
        text = words.too_late()
    else:
        name = decided.client_name
        code = decided.short_code or ""
        allowed = decided.status == "allowed"
        text = words.allowed(name, code) if allowed else words.denied(name, code)
    await _settled(client, body, text)


async def _presser(
    services: Services, client: AsyncWebClient, body: dict[str, Any], context: AsyncBoltContext
) -> Caller | None:
    # Here, not at the top: the adapter posts consent cards through this module.
    from bot.slack.adapter import SlackAdapter, Where

    installation, user = installation_of(context), str(body["user"]["id"])
    adapter = SlackAdapter(client, Where(installation, user), audit_channel=None)
    found = await identity.resolve(
        services.directory, adapter, installation, user, user_team=user_team(body)
    )
    return found if isinstance(found, Caller) else None


async def _settled(client: AsyncWebClient, body: dict[str, Any], text: str) -> None:
    """The card's message says what was answered, and keeps no button."""
    channel = (body.get("channel") or {}).get("id")
    ts = (body.get("message") or {}).get("ts")
    if not channel or not ts:
        return
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}]
    try:
        await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks, parse="none")
    except SlackApiError as failed:
        log.error("consent_update_failed", error=slack_error(failed))
