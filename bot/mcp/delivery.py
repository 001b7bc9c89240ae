"""Takes a card an agent elsewhere asked for to the people it is issued to, in their DM with the app.

A card from the chat is posted in the thread it was asked in, with copies for the others. A
card from ``/mcp`` has no thread: every person it is issued to, its asker included when the
policy left them on it, gets it in a DM with the app, through each workspace of the merchant
the process serves. Whatever is decided on one copy is shown on all of them, as for any card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog

from bot.adapter import Adapter, Reach
from bot.cards import card as cards
from bot.cards.card import Fresh
from bot.presses.copies import address, send_copies
from bot.services import Services
from bot.turns.posting import post
from tools import Caller, Connections, Issuee, Proposal

__all__ = ["Delivered", "Reach", "deliver"]

log = structlog.get_logger("bot.mcp.delivery")


@dataclass(frozen=True, slots=True)
class Delivered:
    """Who got the card, and on which platform; who could not be reached."""

    reached: tuple[str, ...]
    platforms: tuple[str, ...]
    unreached: tuple[str, ...]


async def deliver(
    services: Services, reaches: Sequence[Reach], proposal: Proposal, caller: Caller, *, agent: str
) -> Delivered:
    """Posts the fresh card in its asker's DM with the app, as if they had asked there (so it
    has Withdraw for them), with a copy for each other person it is issued to; says who got it.

    An asker the platform cannot find still has their card go to the people it is issued to.
    """
    routing = proposal.routing
    people = list(routing.issued_to) if routing else []
    fresh = replace(cards.fresh_one(proposal), agent=agent)
    connected = await Connections(services.db).listing()
    for reach in reaches:
        installations = [
            c.installation
            for c in connected
            if c.tenantid == caller.tenantid and c.platform == reach.platform
        ]
        for installation in installations:
            if await _post_in_dm(services, reach, installation, fresh, caller):
                got = await _reached(services, proposal.card_id, people)
                return _delivered(people, got, reach.platform)
    # Nobody could post it in the asker's DM: the people it is issued to still get it.
    card = await cards.load(services.registry, proposal.card_id)
    left, platforms = list(people), []
    for reach in reaches if card is not None else ():
        for c in connected:
            if left and c.tenantid == caller.tenantid and c.platform == reach.platform:
                assert card is not None
                got = await _copies(
                    services, reach, c.installation, card, left, token=proposal.card
                )
                if got:
                    platforms.append(reach.platform)
                    left = [p for p in left if p.userid not in got]
    if left:
        log.info("mcp_card_unreached", card_id=proposal.card_id, people=[p.userid for p in left])
    reached = tuple(p.name for p in people if p not in left)
    return Delivered(reached, tuple(dict.fromkeys(platforms)), tuple(p.name for p in left))


async def _post_in_dm(
    services: Services, reach: Reach, installation: str, fresh: Fresh, caller: Caller
) -> bool:
    """The card in the asker's DM (and copies for the others), through one installation."""
    found: list[str] = []

    async def look(adapter: Adapter) -> None:
        user = await address(services, adapter, caller.userid, installation)
        if user is not None:
            found.append(user)

    if not await reach.with_installation(installation, look) or not found:
        return False

    async def post_it(adapter: Adapter) -> None:
        await post(
            services, adapter, fresh, caller=caller, conversation="", installation=installation
        )

    return await reach.with_installation(installation, post_it, user=found[0])


async def _reached(services: Services, card_id: str, people: list[Issuee]) -> set[int]:
    """Who of ``people`` has a copy of the card now (the asker's DM counts for the asker)."""
    card = await cards.load(services.registry, card_id)
    if card is None:
        return set()
    got = {p.person for p in card.placements if p.person is not None}
    return got | {card.lead.userid}


def _delivered(people: list[Issuee], got: set[int], platform: str) -> Delivered:
    reached = tuple(p.name for p in people if p.userid in got)
    unreached = tuple(p.name for p in people if p.userid not in got)
    return Delivered(reached, (platform,), unreached)


async def _copies(
    services: Services,
    reach: Reach,
    installation: str,
    card: cards.Card,
    people: list[Issuee],
    *,
    token: str,
) -> set[int]:
    got: set[int] = set()

    async def work(adapter: Adapter) -> None:
        sent = await send_copies(
            services, adapter, card, people, installation=installation, token=token, asker_too=True
        )
        got.update(p.person for p in sent if p.person is not None)

    await reach.with_installation(installation, work)
    return got
