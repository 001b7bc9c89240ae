"""Renders and posts a consent card in Slack (``bot.cards.consent``); never reads a press.

The answer to it is ``bot.slack.consent``'s.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.cards.consent import ConsentCard
from bot.slack.outbound import POST_OPTIONS, slack_error
from bot.slack.texts import consent as words

__all__ = ["ALLOW_ACTION", "DENY_ACTION", "consent_blocks", "post_consent"]

log = structlog.get_logger("bot.slack.consent")

ALLOW_ACTION = "consent_allow"
DENY_ACTION = "consent_deny"


def consent_blocks(card: ConsentCard) -> list[dict[str, Any]]:
    """The card: who asks, for which merchant, what it may do, the code, Allow and Deny."""
    return [
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": words.asked(card.client_name, card.client_host, card.merchant),
                "verbatim": True,
            },
        },
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": words.code_line(card.code), "verbatim": True},
        },
        {
            "type": "actions",
            "block_id": f"consent-{card.code}",
            "elements": [
                _button(ALLOW_ACTION, words.ALLOW, card.allow, style="primary"),
                _button(DENY_ACTION, words.DENY, card.deny, style="danger"),
            ],
        },
    ]


def _button(action: str, text: str, value: str, *, style: str) -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action,
        "text": {"type": "plain_text", "text": text},
        "value": value,
        "style": style,
    }


async def post_consent(client: AsyncWebClient, user: str, card: ConsentCard) -> bool:
    """The card in ``user``'s DM with the app; False (logged) when Slack refused it."""
    try:
        await client.chat_postMessage(
            channel=user,
            text=words.push(card.client_name),
            blocks=consent_blocks(card),
            **POST_OPTIONS,
        )
    except SlackApiError as failed:
        log.error("consent_post_failed", slack_user=user, error=slack_error(failed))
        return False
    log.info("consent_posted", slack_user=user)
    return True
