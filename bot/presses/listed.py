"""Keeps the private lists of a person's cards (``/countersign pending``) true when a card moves; never decides.

A list is one message holding a person's whole queue, shown to them alone, which the platform
lets the app replace through a URL for a while (Slack: the command's ``response_url``, 30
minutes, five uses). Each card on a list keeps that list's ``ListPlacement`` with its copies;
when the card is shown (decided, expired, replaced, withdrawn, escalated), every list that
showed it is drawn again as its reader's queue now stands, the card just decided at the top.
A URL past its time, or one the platform no longer takes, is logged and left: the card's own
copies already tell the truth, and a stale list is not worth an error to anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import structlog

from bot.adapter import Adapter, Listing
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import ListPlacement, lists_of_stored, placements_of_stored, stored
from bot.services import Services
from tools import Caller

__all__ = ["LIST_URL_LIFETIME", "keep_list", "listing", "redraw_lists"]

log = structlog.get_logger("bot.presses.listed")

# How long Slack takes a slash command's response_url.
LIST_URL_LIFETIME = timedelta(minutes=30)


async def listing(services: Services, caller: Caller, *, decided: Card | None = None) -> Listing:
    """The caller's queue now (each card of several once); ``decided`` only once it is."""
    registry = services.registry
    mine = await cards.each_once(registry, await registry.pending_for(caller))
    asked = await cards.each_once(registry, await registry.asked_by(caller))
    shown = decided if decided is not None and not decided.open else None
    return Listing(tuple(mine), tuple(asked), registry.now(), shown)


async def keep_list(services: Services, listed: Sequence[Card], where: ListPlacement) -> None:
    """Records on each listed card that ``where`` showed it; drops lists past their time."""
    now = services.registry.now()

    def add(stored_now: dict[str, Any] | None) -> dict[str, Any]:
        lists = [lst for lst in lists_of_stored(stored_now) if lst.until > now and lst != where]
        return stored(placements_of_stored(stored_now), [*lists, where])

    for card in listed:
        await cards.change_posting(services.registry, card, add)


async def redraw_lists(
    services: Services, adapter: Adapter, card: Card, lists: Sequence[ListPlacement]
) -> None:
    """Draws again every list on the adapter's platform that showed ``card``, as its reader's
    queue now stands; a list whose URL is past its time is skipped."""
    now = services.registry.now()
    for where in lists:
        if where.platform != adapter.platform:
            continue
        if where.until <= now:
            log.info("list_expired", card_id=card.card_id, slack_user=where.user)
            continue
        reader = await services.directory.person(where.person)
        if reader is None or reader.tenantid != card.tenantid:
            continue
        drawn = await adapter.update_list(where, await listing(services, reader, decided=card))
        log.info("list_redrawn", card_id=card.card_id, user=where.user, drawn=drawn)
