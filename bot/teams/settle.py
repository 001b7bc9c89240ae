"""Shows in Teams a card settled without a press (interrupted, outcome unknown); never decides one.

The reconciler settles such cards at start-up, or in a running process after a grace period,
when no Teams request is in flight to answer through. The update is sent proactively, by
continuing the conversation the card was posted in (its service URL and conversation id are
recorded on the card).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from microsoft_agents.activity import Activity, ActivityTypes, ChannelAccount, ConversationAccount
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity

from bot.surface import Surface
from bot.teams.app import Teams
from bot.teams.identity import PLATFORM
from bot.teams.posting import show_decision
from tools import CardRecord

__all__ = ["settler"]

log = structlog.get_logger("bot.teams.settle")


def settler(teams: Teams, surface: Surface, app_id: str) -> Callable[[CardRecord], Awaitable[None]]:
    """The function the server calls with each settled Teams card."""

    async def settle(record: CardRecord) -> None:
        where = record.surface or {}
        if where.get("platform") != PLATFORM or not where.get("service_url"):
            return
        reference = Activity(
            type=ActivityTypes.event,
            name="ContinueConversation",
            channel_id="msteams",
            service_url=str(where["service_url"]),
            conversation=ConversationAccount(
                id=str(where["conversation_id"]), tenant_id=where.get("tenant")
            ),
            recipient=ChannelAccount(id=app_id or "countersign"),
        )

        async def show(context: TurnContext) -> None:
            await show_decision(surface, context, record)

        if teams.auth.ANONYMOUS_ALLOWED:
            # Only the tests' configuration: no app registration, so no token to ask for.
            await teams.adapter.continue_conversation_with_claims(ClaimsIdentity(), reference, show)
        else:
            await teams.adapter.continue_conversation(app_id, reference, show)
        log.info("teams_card_settled", card_id=record.card_id, tenant=record.tenantid)

    return settle
