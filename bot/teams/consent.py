"""Consent cards in Teams: the card in a person's 1:1 chat with the bot, and their Allow or Deny; never issues a token.

As in Slack (``bot.slack.consent``): the buttons carry their own signed value, read with the
consent's own salt, so no consent value approves a card; only the person the card was sent
to, as Teams vouches who pressed, answers it, once, within its 10 minutes. The answer
replaces the card, with no button left.
"""

from __future__ import annotations

from http import HTTPStatus

import structlog
from microsoft_agents.activity import AdaptiveCardInvokeResponse
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.services import Services
from bot.teams import texts
from bot.teams.adaptive import CARD_TYPE
from bot.teams.caller import caller_of
from bot.teams.consent_card import VERB_ALLOW, VERB_DENY, answered_card
from tools import Caller, Consents, ConsentSigner

__all__ = ["register"]

log = structlog.get_logger("bot.teams.consent")


def register(
    application: AgentApplication[TurnState], services: Services, signer: ConsentSigner
) -> None:
    """Adds Allow and Deny (Action.Execute)."""
    consents = Consents(services.db, clock=services.registry.now)

    async def on_press(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        value = data.get("value") if isinstance(data, dict) else None
        pressed = signer.read(str(value or ""))
        presser = await _presser(context)
        decided = await consents.decide(pressed, presser) if pressed and presser else None
        log.info("consent_pressed", decided=decided is not None)
        if decided is None:
            text = texts.consent_too_late()
        elif decided.status == "allowed":
            text = texts.consent_allowed(decided.client_name, decided.short_code or "")
        else:
            text = texts.consent_denied(decided.client_name, decided.short_code or "")
        return AdaptiveCardInvokeResponse(
            status_code=HTTPStatus.OK, type=CARD_TYPE, value=answered_card(text)
        )

    application.adaptive_card.action_execute(VERB_ALLOW)(on_press)
    application.adaptive_card.action_execute(VERB_DENY)(on_press)


async def _presser(context: TurnContext) -> Caller | None:
    once = caller_of(context)
    found = await once.caller() if once is not None else None
    return found if isinstance(found, Caller) else None
