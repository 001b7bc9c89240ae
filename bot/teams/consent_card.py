"""Renders and posts a consent card in Teams (``bot.cards.consent``); never reads a press.

The answer to it is ``bot.teams.consent``'s.
"""

from __future__ import annotations

from typing import Any

import structlog

from bot.cards.consent import ConsentCard
from bot.teams import texts
from bot.teams.adaptive import data_line
from bot.teams.copy_view import card_activity
from bot.teams.outbound import FAILURES, Outbound

__all__ = ["VERB_ALLOW", "VERB_DENY", "answered_card", "consent_card", "post_consent"]

log = structlog.get_logger("bot.teams.consent")

Json = dict[str, Any]
VERB_ALLOW = "consent_allow"
VERB_DENY = "consent_deny"
_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"


def consent_card(card: ConsentCard) -> Json:
    """Who asks, for which merchant, what it may do, the code (as typed), Allow and Deny."""
    asked = texts.consent_asked(card.client_name, card.client_host, card.merchant)
    return {
        "type": "AdaptiveCard",
        "$schema": _SCHEMA,
        "version": "1.5",
        "body": [data_line((asked, False)), data_line((texts.consent_code(card.code), True))],
        "actions": [
            _button(VERB_ALLOW, texts.CONSENT_ALLOW, card.allow, style="positive"),
            _button(VERB_DENY, texts.CONSENT_DENY, card.deny, style="destructive"),
        ],
    }


def _button(verb: str, title: str, value: str, *, style: str) -> Json:
    return {
        "type": "Action.Execute",
        "verb": verb,
        "title": title,
        "style": style,
        "data": {"value": value},
    }


async def post_consent(out: Outbound, user: str, card: ConsentCard, *, tenant: str) -> bool:
    """The card in the person's 1:1 chat (``user``: their AAD object id); False (logged) when
    Teams refused it."""
    try:
        chat = await out.open_personal(user, tenant)
        await out.send(
            chat, card_activity(consent_card(card), texts.consent_push(card.client_name))
        )
    except FAILURES as failed:
        log.error("consent_post_failed", person=user, error=type(failed).__name__)
        return False
    log.info("consent_posted", person=user)
    return True


def answered_card(text: str) -> Json:
    """The card once answered (or answered by nobody it was for): what became of it, no button."""
    return {
        "type": "AdaptiveCard",
        "$schema": _SCHEMA,
        "version": "1.5",
        "body": [data_line((text, False))],
    }
