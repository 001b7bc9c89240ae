"""Publishes the App Home tab: a short introduction and the person's waiting cards; never decides.

The cards carry the same buttons as in the channel, so a manager can clear their queue from
one place; a press there is handled like any other and the channel's card is updated too.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.placement import first
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import CardView, home_view
from bot.slack.inbound import installation_of
from bot.surface import Surface
from tools import Caller, CardRecord

__all__ = ["pending_cards", "publish_home", "register"]

log = structlog.get_logger("bot.slack.home")


def register(app: AsyncApp, surface: Surface) -> None:
    async def on_home_opened(
        event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        if event.get("tab", "home") != "home":
            return  # the Messages tab needs nothing from us
        installation, user = installation_of(context), str(event["user"])

        async def work() -> None:
            adapter = SlackAdapter(client, Where(installation, user))
            found = await identity.resolve(surface.directory, adapter, installation, user)
            caller = None if isinstance(found, str) else found
            await publish_home(surface, client, caller=caller, slack_user=user)

        surface.tasks.spawn(work(), name=f"home {user}")

    app.event("app_home_opened")(on_home_opened)


async def pending_cards(surface: Surface, caller: Caller) -> list[CardView]:
    """The cards waiting on this person, with the buttons they were posted with."""
    now = surface.registry.clock()
    records = await surface.registry.cards.pending_for(caller.userid, caller.tenantid, now)
    return [CardView.of_record(r, token=_token(r)) for r in records]


def _token(record: CardRecord) -> str:
    placement = first(record, "slack")
    return placement.token if placement is not None else ""


async def publish_home(
    surface: Surface, client: AsyncWebClient, *, caller: Caller | None, slack_user: str
) -> None:
    cards = await pending_cards(surface, caller) if caller is not None else []
    view = home_view(cards, for_user=slack_user, linked=caller is not None)
    await client.views_publish(user_id=slack_user, view=view)
    log.info(
        "home_published",
        tenant=caller.tenantid if caller else None,
        user=caller.userid if caller else None,
        slack_user=slack_user,
        cards=len(cards),
    )
