"""Publishes the App Home tab: the cards waiting for the person and those they asked for; never decides.

Two sections: "Waiting for you" (cards issued to them, routed ones included, with Approve,
Edit when the card has values to change, and Reject) and "Waiting for others" (cards they asked for that wait on somebody else, with
Withdraw). A press there is handled like any other and every copy of the card is updated too.
A tab is published when its person opens it, and again for everyone a card concerns whenever
the card moves (a press, an expiry, an escalation), so an open tab never offers a card that
was decided meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.cards import card as cards
from bot.cards.cardspec import CardSpec
from bot.services import Services
from bot.slack.caller import caller_of
from bot.slack.lists import home_view, spec_of
from bot.slack.outbound import slack_error
from tools import Caller, CardRecord

__all__ = ["asked_cards", "pending_cards", "publish_home", "refresh_homes", "register"]

log = structlog.get_logger("bot.slack.home")


def register(app: AsyncApp, services: Services) -> None:
    async def on_home_opened(
        event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        if event.get("tab", "home") != "home":
            return  # the Messages tab needs nothing from us
        user, person = str(event["user"]), caller_of(context)

        async def work() -> None:
            # The event names no workspace of the user's: Slack is asked where they belong
            # (``bot.slack.caller``), or a Slack Connect user is shown the cards of whoever's
            # email he carries.
            found = await person.caller()
            caller = None if isinstance(found, str) else found
            await publish_home(services, client, caller=caller, slack_user=user)

        services.tasks.spawn(work(), name=f"home {user}")

    app.event("app_home_opened")(on_home_opened)


async def _listed(
    services: Services, records: Sequence[CardRecord], now: datetime
) -> list[CardSpec]:
    """Each card once (a card of several where its first item would have been)."""
    return [spec_of(card, now) for card in await cards.each_once(services.registry, records)]


async def pending_cards(services: Services, caller: Caller) -> list[CardSpec]:
    """The cards waiting on this person's decision, routed ones included."""
    now = services.registry.now()
    records = await services.registry.pending_for(caller)
    return await _listed(services, records, now)


async def asked_cards(services: Services, caller: Caller) -> list[CardSpec]:
    """The cards this person asked for that wait on somebody else."""
    now = services.registry.now()
    records = await services.registry.asked_by(caller)
    return await _listed(services, records, now)


async def publish_home(
    services: Services,
    client: AsyncWebClient,
    *,
    caller: Caller | None,
    slack_user: str,
    decided: CardSpec | None = None,
) -> None:
    """Draws the person's App Home; ``decided`` is a card they just decided there, shown first."""
    mine = await pending_cards(services, caller) if caller is not None else []
    theirs = await asked_cards(services, caller) if caller is not None else []
    view = home_view(mine, theirs, linked=caller is not None, decided=decided)
    await client.views_publish(user_id=slack_user, view=view)
    log.info(
        "home_published",
        tenant=caller.tenantid if caller else None,
        user=caller.userid if caller else None,
        slack_user=slack_user,
        cards=len(mine),
        asked=len(theirs),
    )


async def refresh_homes(
    services: Services,
    client: AsyncWebClient,
    record: CardRecord,
    installation: str,
    *,
    pressed_by: str | None = None,
    decided: CardSpec | None = None,
) -> int:
    """Republishes the App Home of everyone ``record`` concerns (those it is issued to and its
    asker) who has a Slack identity in ``installation``; returns how many. The Slack user
    ``pressed_by`` (a press from their Home tab) sees ``decided`` at the top of theirs.

    A person whose tab cannot be published (they left, the app lost a scope) is logged and
    skipped: the others still see the card as it stands.
    """
    people = dict.fromkeys([*(i.userid for i in record.issued_to), record.userid])
    done = 0
    for userid in people:
        caller = await services.directory.person(userid)
        if caller is None or caller.tenantid != record.tenantid:
            continue
        for where, slack_user in await services.directory.addresses(userid, "slack"):
            if where != installation:
                continue
            try:
                shown = decided if slack_user == pressed_by else None
                await publish_home(
                    services, client, caller=caller, slack_user=slack_user, decided=shown
                )
            except SlackApiError as failed:
                log.warning("home_publish_failed", slack_user=slack_user, error=slack_error(failed))
                continue
            done += 1
    return done
